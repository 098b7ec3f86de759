//go:build !wasm

package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/server"
)

// First edits kept: what a reader types, picks, answers or opens while the
// app is still starting is applied once it runs, never dropped; a number
// typed half way is not judged before it is finished.

// wasmGate holds every request for the app's WebAssembly until opened, so
// that a test acts on the page before the app can run, as a reader on a
// slow connection does.
type wasmGate struct {
	mu   sync.Mutex
	open chan struct{}
	hits int
}

func (g *wasmGate) close() {
	g.mu.Lock()
	g.open, g.hits = make(chan struct{}), 0
	g.mu.Unlock()
}

func (g *wasmGate) release() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

func (g *wasmGate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hits
}

func (g *wasmGate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "/web/app.wasm" || p == "/app.wasm" || p == "/goapp.wasm" {
			g.mu.Lock()
			ch := g.open
			g.hits++
			g.mu.Unlock()
			select {
			case <-ch:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func gatedSite(t *testing.T) (string, *wasmGate) {
	t.Helper()
	log := &testLog{t: t}
	h, err := server.New(webDir, server.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	g := &wasmGate{open: make(chan struct{})}
	close(g.open)
	srv := httptest.NewServer(g.wrap(h))
	t.Cleanup(func() {
		srv.Close()
		log.close()
	})
	return srv.URL, g
}

// TestFirstEdits, on garage with the app held back: a number typed and
// entered, a select changed, a <details> opened and a number half typed;
// then, on a fresh load, a checkpoint answered with Enter. Each is applied
// once the app runs: the knobs re-simulate, the panel stays open, the half
// typed number waits (no error) for the rest of it, the answer is judged.
func TestFirstEdits(t *testing.T) {
	site, gate := gatedSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	notLive := func(what string) {
		b.t.Helper()
		if evalJS[string](b, `document.querySelector("#lab").dataset.live`) == "true" {
			t.Fatalf("%s: the app ran before the wasm was let through", what)
		}
	}

	gate.close()
	b.do("open garage", liveTimeout, chromedp.Navigate(site+"/lesson/garage"), chromedp.WaitVisible(chromedp.CSS("#param-requests")))
	b.typeInto("#param-requests", "60")
	b.keys(kb.Enter)
	b.do("pick a reservation", changeTimeout, chromedp.Evaluate[chromedp.Void](`(() => {
  const s = document.querySelector("#param-reserve");
  s.focus();
  s.value = "pow2";
  s.dispatchEvent(new Event("input", {bubbles: true}));
  s.dispatchEvent(new Event("change", {bubbles: true}));
})()`))
	b.do("open the embed panel", changeTimeout, chromedp.Click(chromedp.CSS("#embed-panel > summary")))
	b.typeInto("#param-block_size", "3")
	notLive("knobs")
	if gate.held() == 0 {
		t.Fatal("touching a knob did not ask for the app's WebAssembly")
	}
	gate.release()
	b.awaitCondition("the app, live and ready", liveTimeout, `!!document.querySelector(`+jsString(liveSelector)+`)`)
	b.waitFor("requests=60 and reserve=pow2 simulated", `(() => {
  const l = document.querySelector("#lab");
  return l.dataset.query.includes("requests=60") && l.dataset.query.includes("reserve=pow2") && l.dataset.stale !== "true";
})()`)
	if got := evalJS[string](b, `document.querySelector("#param-requests").value`); got != "60" {
		t.Errorf("the requests field shows %q after the app started, want 60", got)
	}
	if got := evalJS[string](b, `document.querySelector("#param-reserve").value`); got != "pow2" {
		t.Errorf("the reserve select shows %q after the app started, want pow2", got)
	}
	if !evalJS[bool](b, `document.querySelector("#embed-panel").open && !!document.querySelector("#embed-panel textarea")`) {
		t.Error("the embed panel opened before the app ran is closed (or empty) once it runs")
	}
	// The half-typed block size: kept, focused, not judged yet.
	if got := evalJS[string](b, `document.querySelector("#param-block_size").value`); got != "3" {
		t.Errorf("the block size typed before the app shows %q, want 3", got)
	}
	if got := evalJS[string](b, `document.activeElement ? document.activeElement.id : ""`); got != "param-block_size" {
		t.Errorf("the focus is on %q once the app runs, want the field being typed in (param-block_size)", got)
	}
	if msg := evalJS[string](b, `(() => { const e = document.querySelector("#error-block_size"); return e && !e.hidden ? e.textContent : ""; })()`); msg != "" {
		t.Errorf("a block size typed half way was judged before it was finished: %q", msg)
	}
	b.keys("2")
	b.keys(kb.Enter)
	b.waitFor("block_size=32 simulated", `document.querySelector("#lab").dataset.query.includes("block_size=32") && document.querySelector("#lab").dataset.stale !== "true"`)
	if msg := evalJS[string](b, `(() => { const e = document.querySelector("#error-block_size"); return e && !e.hidden ? e.textContent : ""; })()`); msg != "" {
		t.Errorf("block_size=32 shows an error: %q", msg)
	}

	b.checkConsole()

	// A checkpoint answered before the app runs (garage asks step 2's
	// question at step 1), in a fresh browser: this one holds the app in
	// its cache now.
	b = newBrowser(t)
	b.viewport(1280, 800)
	gate.close()
	b.do("open garage again", liveTimeout, chromedp.Navigate(site+"/lesson/garage"), chromedp.WaitVisible(chromedp.CSS("#quiz-answer")))
	b.typeInto("#quiz-answer", "4")
	b.keys(kb.Enter)
	notLive("quiz")
	gate.release()
	b.awaitCondition("the app, live and ready", liveTimeout, `!!document.querySelector(`+jsString(liveSelector)+`)`)
	b.waitFor("the answer judged", `(document.querySelector("#quiz-verdict")?.textContent || "").includes("4")`)
	if v := evalJS[string](b, `document.querySelector("#quiz-verdict").dataset.verdict`); v != "correct" {
		t.Errorf("the answer 4 typed before the app got the verdict %q, want correct", v)
	}
	if got := evalJS[string](b, `document.querySelector("#lab").dataset.step`); got != "2" {
		t.Errorf("after the answer the page shows step %s, want 2 (the step the question was about)", got)
	}
	if u := evalJS[string](b, `location.search`); strings.Contains(u, "quiz-answer") {
		t.Errorf("a form was submitted to the address: %s", u)
	}
	b.checkConsole()
}
