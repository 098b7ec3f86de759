//go:build !wasm

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/server"
)

// Light until it is used (docs/ARCHITECTURE.md): a first visit reads and
// steps a lesson from its prerendered page; the page's WebAssembly, the
// simulation worker and the service worker load only once the reader uses
// something only the app does. These tests count what goes over the wire,
// on the server's side, so every request is counted: the page's, the
// workers' and the service worker's.

// firstVisitBudget is the most a first visit to a lesson page may move
// before a knob is touched (docs/ARCHITECTURE.md#budgets). Bytes, not
// time: the same build sends the same bytes.
const firstVisitBudget = 400 << 10

// wire records every response of a handler: its path with query, status
// and the bytes written (headers as sent, and the body as encoded).
type wire struct {
	mu   sync.Mutex
	reqs []wireReq
}

type wireReq struct {
	URL    string
	Status int
	Bytes  int
}

func (w *wire) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: rw, status: http.StatusOK}
		h.ServeHTTP(cw, r)
		if !cw.wrote {
			cw.countHeader()
		}
		w.mu.Lock()
		w.reqs = append(w.reqs, wireReq{URL: r.URL.RequestURI(), Status: cw.status, Bytes: cw.n})
		w.mu.Unlock()
	})
}

// take returns the responses recorded since the last take.
func (w *wire) take() []wireReq {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.reqs
	w.reqs = nil
	return out
}

func (w *wire) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.reqs)
}

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int
	wrote  bool
}

// countHeader adds the status line and the header fields as HTTP/1.1
// writes them.
func (c *countingWriter) countHeader() {
	c.wrote = true
	c.n += len("HTTP/1.1 200 OK\r\n") + len("\r\n")
	for k, vs := range c.ResponseWriter.Header() {
		for _, v := range vs {
			c.n += len(k) + 2 + len(v) + 2
		}
	}
}

func (c *countingWriter) WriteHeader(code int) {
	if !c.wrote {
		c.status = code
		c.countHeader()
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if !c.wrote {
		c.countHeader()
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += n
	return n, err
}

// quiet waits until the page has loaded and no request reached the server
// for 1.5 s (the page asks for nothing more on its own).
func (b *browser) quiet(w *wire) {
	b.t.Helper()
	b.awaitCondition("the page's load event", liveTimeout, `document.readyState === "complete"`)
	last, since := w.count(), time.Now()
	for deadline := time.Now().Add(liveTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n := w.count(); n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) > 1500*time.Millisecond {
			return
		}
	}
	b.fatal("the page kept requesting files for %v", liveTimeout)
}

// lightSite serves the lab through a wire counter.
func lightSite(t *testing.T) (string, *wire) {
	t.Helper()
	log := &testLog{t: t}
	h, err := server.New(webDir, server.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	w := &wire{}
	srv := httptest.NewServer(w.wrap(h))
	t.Cleanup(func() {
		srv.Close()
		log.close()
	})
	return srv.URL, w
}

// embedShows is a predicate true once a lesson page or an embed shows step
// n, live or from its prerendered steps (web/lab.js), with nothing marked
// pending.
func embedShows(n int) string {
	return `document.querySelector("#lab")?.dataset.step === ` + jsString(strconv.Itoa(n)) +
		` && !document.documentElement.matches(".inferlab-pending, .inferlab-step-pending")`
}

// appFiles are the files that only the app's start may fetch.
var appFiles = []string{"/web/app.wasm", "/app.wasm", "/web/sim.wasm", "/web/sim-worker.js", "/app-worker.js"}

func fetchedAppFile(reqs []wireReq) string {
	for _, r := range reqs {
		for _, f := range appFiles {
			if r.URL == f || strings.HasPrefix(r.URL, f+"?") {
				return r.URL
			}
		}
	}
	return ""
}

func total(reqs []wireReq) int {
	n := 0
	for _, r := range reqs {
		n += r.Bytes
	}
	return n
}

// TestFirstVisitWeight visits every lesson page, every embed and the index
// with an empty cache and counts the bytes until the page rests: each
// lesson page within firstVisitBudget, and none fetches the app's
// WebAssembly, the simulation worker or the service worker.
func TestFirstVisitWeight(t *testing.T) {
	b := newBrowser(t)
	site, w := lightSite(t)
	paths := []string{"/"}
	for _, l := range lessons.All() {
		paths = append(paths, "/lesson/"+l.Slug, "/embed/"+l.Slug)
	}
	var rows []string
	for _, p := range paths {
		if _, err := chromedp.Call(b.ctx, network.ClearBrowserCache, struct{}{}); err != nil {
			t.Fatalf("clearing the cache: %v", err)
		}
		w.take()
		b.do("navigate to "+p, liveTimeout, chromedp.Navigate(site+p))
		b.quiet(w)
		reqs := w.take()
		if f := fetchedAppFile(reqs); f != "" {
			t.Errorf("%s: the first visit fetched %s before anything was used", p, f)
		}
		n := total(reqs)
		if strings.HasPrefix(p, "/lesson/") && n > firstVisitBudget {
			t.Errorf("%s: the first visit moved %d bytes, over the %d-byte budget: %v", p, n, firstVisitBudget, reqs)
		}
		rows = append(rows, fmt.Sprintf("%s %d requests %d bytes", p, len(reqs), n))
	}
	for _, r := range rows {
		recordTiming(t, "E2E_WEIGHT "+r)
	}
	b.checkConsole()
}

// TestStepsBeforeTheApp draws measuring's chart from its prerendered
// options, then steps garage's prerendered page with the buttons,
// the keys and the scrubber, without its WebAssembly: each step shows its
// own narration and figure, and the address follows. Then a knob is
// touched: the app starts, shows the step the reader was at with the
// knob's new value, and no file is fetched twice on the way (the service
// worker's install included).
func TestStepsBeforeTheApp(t *testing.T) {
	b := newBrowser(t)
	site, w := lightSite(t)
	// A chart in view is prerendered as markup: its series, ticks and
	// step line, with neither the app nor ECharts.
	b.do("open measuring", liveTimeout, chromedp.Navigate(site+"/lesson/measuring"))
	b.quiet(w)
	b.awaitCondition("measuring's chart drawn before the app", liveTimeout, `(() => {
		const c = document.querySelector("#scenes .chart[data-static] .chart-static");
		return !!c && c.querySelectorAll(".cs-svg polyline").length > 0 && c.querySelectorAll(".cs-xticks span").length > 2 &&
			document.querySelector("#lab").dataset.live === "false";
	})()`)
	for _, r := range w.take() {
		if strings.Contains(r.URL, "echarts") || fetchedAppFile([]wireReq{r}) != "" {
			t.Fatalf("a first visit to a chart fetched %s", r.URL)
		}
	}

	_, _, sc := nativeDefaults(t, "garage")
	b.do("open garage", liveTimeout, chromedp.Navigate(site+"/lesson/garage"))
	b.quiet(w)
	text := func(sel string) string {
		return evalJS[string](b, `(document.querySelector(`+jsString(sel)+`) || {textContent: ""}).textContent.trim().replace(/\s+/g, " ")`)
	}
	want := func(i int) {
		b.t.Helper()
		b.waitFor("step "+strconv.Itoa(i+1), `document.querySelector("#lab").dataset.step === `+jsString(strconv.Itoa(i+1)))
		if got := text("#step-title"); got != sc.Steps[i].Title {
			t.Errorf("step %d before the app: title %q, want %q", i+1, got, sc.Steps[i].Title)
		}
		if got, label := text("#step-label"), fmt.Sprintf("Step %d of %d", i+1, len(sc.Steps)); got != label {
			t.Errorf("step %d before the app: label %q, want %q", i+1, got, label)
		}
	}
	b.do("Next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
	want(1)
	b.keys(kb.ArrowRight)
	want(2)
	b.do("the scrubber", changeTimeout, chromedp.Evaluate[chromedp.Void](`(() => {
  const s = document.querySelector("#scrubber");
  s.value = "6";
  s.dispatchEvent(new Event("input", {bubbles: true}));
})()`))
	want(5)
	b.do("Prev", changeTimeout, chromedp.Click(chromedp.CSS("#btn-prev")))
	want(4)
	b.waitFor("the address at step 5", urlStepIs(5))
	// The grid: one SVG, its blocks named by the step's data (grid_svg.go).
	owners := evalJS[string](b, `document.querySelector(".scene-pools .blocks-svg").dataset.owners`)
	if n := strings.Count(owners, ",") + 1; n != 2048 {
		t.Errorf("step 5's paged pool names %d blocks, want 2048", n)
	}
	if els := evalJS[int](b, `document.querySelectorAll("*").length`); els > 800 {
		t.Errorf("garage at step 5 has %d elements, over 800", els)
	}
	if f := fetchedAppFile(w.take()); f != "" {
		t.Fatalf("stepping before the app fetched %s", f)
	}

	// A knob: the app starts, at step 5, with the value typed.
	b.do("type a block size", changeTimeout,
		chromedp.Click(chromedp.CSS("#param-block_size")),
		chromedp.Evaluate[chromedp.Void](`(() => {
  const f = document.querySelector("#param-block_size");
  f.value = "32";
  f.dispatchEvent(new Event("input", {bubbles: true}));
})()`))
	b.do("the app, live", liveTimeout, chromedp.WaitVisible(chromedp.CSS(liveSelector)))
	b.awaitCondition("the typed value in the field", changeTimeout, `document.querySelector("#param-block_size").value === "32"`)
	b.do("apply it", changeTimeout, chromedp.Click(chromedp.CSS("#params-apply")))
	b.waitFor("block_size=32 shown at step 5", `document.querySelector("#lab").dataset.query.includes("block_size=32") && document.querySelector("#lab").dataset.step === "5"`)
	b.waitServiceWorker()
	b.waitCached("/lesson/prefix-cache")
	b.quiet(w)
	seen := map[string]int{}
	for _, r := range w.take() {
		if r.Status == http.StatusOK {
			seen[r.URL]++
		}
	}
	var twice []string
	for u, n := range seen {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", u, n))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("after a knob, files fetched more than once: %v", twice)
	}
	b.checkConsole()
}
