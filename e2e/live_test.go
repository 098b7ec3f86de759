//go:build !wasm

package e2e

// Live knobs and a page that never blocks: sliders and steppers
// re-simulate without Apply, in the simulation worker; typed text applies on
// Enter; an invalid value is reported at its field and leaves the figure; the
// page answers keys while the heaviest re-simulation runs; a shared link with
// other knobs never shows the prerendered defaults unmarked; off-screen
// embeds wait until they are scrolled to.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/app"
	"github.com/inferlab/inferlab/lessons"
)

// metricJS reads #metrics [data-metric=KEY]'s text.
func metricJS(key string) string {
	return `(document.querySelector('#metrics [data-metric="` + key + `"]')?.textContent ?? "").trim()`
}

// settledJS is true once the page shows the state it wants: no simulation
// running, the figure not stale.
const settledJS = `(() => { const l = document.querySelector("#lab"); return !!l && l.dataset.busy === "false" && l.dataset.stale === "false"; })()`

// simStats reads the worker client's counters (web/lab.js inferlab.sim),
// the page-thread ones included.
type simStats struct {
	Broken      bool    `json:"broken"`
	Workers     int     `json:"workers"`
	Terminated  int     `json:"terminated"`
	Replies     int     `json:"replies"`
	PageRuns    int     `json:"pageRuns"`
	PageStarts  int     `json:"pageStarts"`
	PageStartMs float64 `json:"pageStartMs"`
	LastMs      float64 `json:"lastMs"`
}

func (b *browser) simStats() simStats {
	b.t.Helper()
	return evalJS[simStats](b, `(() => { const s = window.inferlab.sim; return {broken: s.broken, ...s.stats}; })()`)
}

// countHistoryWrites makes the page count pushState and replaceState calls
// in window.__e2eWrites.
func (b *browser) countHistoryWrites() {
	b.t.Helper()
	evalJS[bool](b, `(() => {
  window.__e2eWrites = 0;
  for (const f of ["pushState", "replaceState"]) {
    const orig = history[f].bind(history);
    history[f] = (...a) => { window.__e2eWrites++; return orig(...a); };
  }
  return true;
})()`)
}

// typeInto focuses a field, selects its text and types text as a keyboard
// does (InputEvents with an inputType: typing, which does not apply live).
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	evalJS[bool](b, `(() => { const el = document.querySelector(`+jsString(sel)+`); el.focus(); el.select(); return true; })()`)
	b.do("type "+text+" into "+sel, changeTimeout, chromedp.SendKeys(chromedp.CSS(sel), text))
}

// TestLiveKnobs drives garage's knobs as a learner does.
func TestLiveKnobs(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	l := lessons.Get("garage")

	subtest(t, b, "dragging a slider re-simulates without Apply", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=3")
		if s := b.simStats(); s.Broken {
			t.Fatalf("the simulation worker is unavailable: %+v", s)
		}
		b.countHistoryWrites()
		before := evalJS[string](b, metricJS("paged_admitted"))
		b.dragSlider("block_size", 520, 540, 560, 580, 600) // ends at position 600
		b.waitFor("the slider's value in #param-block_size", `document.querySelector("#param-block_size").value !== "16"`)
		final := evalJS[string](b, `document.querySelector("#param-block_size").value`)
		b.waitFor("the figure for block_size="+final, settledJS+` && `+metricJS("paged_admitted")+` !== `+jsString(before))
		b.waitFor("block_size="+final+" in the address", `new URLSearchParams(location.search).get("block_size") === `+jsString(final))
		if s := b.mustState(); s.Step != "3" || s.Notice != "" {
			t.Errorf("after the drag: step %s (want 3, kept), notice %q", s.Step, s.Notice)
		}
		if w := evalJS[int](b, `window.__e2eWrites`); w != 1 {
			t.Errorf("the drag wrote the address %d times, want once when it settled", w)
		}
		if s := b.simStats(); s.Replies < 1 {
			t.Errorf("the worker answered no simulation: %+v", s)
		}
		// The figure is garage at that block size, as the CLI computes it.
		s, _, err := l.Run(map[string]string{"block_size": final})
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Metric("paged_admitted"); evalJS[string](b, metricJS("paged_admitted")) != strconv.FormatFloat(v, 'f', -1, 64) {
			t.Errorf("paged_admitted shows %q, the native run gives %v", evalJS[string](b, metricJS("paged_admitted")), v)
		}
		b.screenshot("live-slider")
	})

	subtest(t, b, "typed text applies on Enter; the stepper live", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=2")
		replies := b.simStats().Replies
		before := evalJS[string](b, metricJS("paged_admitted"))
		b.typeInto("#param-requests", "12")
		if evalJS[bool](b, `document.querySelector("#lab").dataset.busy === "true"`) || b.simStats().Replies != replies {
			t.Fatal("typing simulated before Enter")
		}
		b.keys(kb.Enter)
		b.waitFor("the figure for requests=12", settledJS+` && `+metricJS("paged_admitted")+` !== `+jsString(before))
		if s := b.mustState(); s.Step != "2" {
			t.Errorf("Enter moved the step to %s, want 2", s.Step)
		}
		// ↑ in the field steps it and re-simulates with no Enter.
		b.keys(kb.ArrowUp)
		b.waitFor("requests=13 simulated", settledJS+` && new URLSearchParams(document.querySelector("#lab").dataset.query).get("requests") === "13"`)
	})

	subtest(t, b, "an invalid value is reported at its field, the figure stays", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=2")
		replies := b.simStats().Replies
		query := evalJS[string](b, `document.querySelector("#lab").dataset.query`)
		b.typeInto("#param-block_size", "0")
		b.keys(kb.Enter)
		b.waitFor("#param-block_size[aria-invalid=true]", `document.querySelector("#param-block_size").getAttribute("aria-invalid") === "true"`)
		msg := evalJS[string](b, `(() => { const e = document.querySelector("#error-block_size"); return e && !e.hidden && e.getClientRects().length ? e.textContent : ""; })()`)
		if !strings.Contains(msg, "from 1 to 256") {
			t.Errorf("#error-block_size = %q, want a visible message naming the range", msg)
		}
		if d := evalJS[string](b, `document.querySelector("#param-block_size").getAttribute("aria-describedby")`); !strings.Contains(d, "error-block_size") {
			t.Errorf("the field is not described by its error (aria-describedby %q)", d)
		}
		b.nextFrame()
		if q := evalJS[string](b, `document.querySelector("#lab").dataset.query`); q != query || b.simStats().Replies != replies ||
			evalJS[string](b, `document.querySelector("#lab").dataset.busy`) != "false" {
			t.Errorf("an invalid value touched the figure: shown %q (was %q), busy or simulated", q, query)
		}
		b.screenshot("live-invalid")
		// Fixing it clears the message.
		b.typeInto("#param-block_size", "32")
		b.keys(kb.Enter)
		b.waitFor("the field valid again and simulated", settledJS+` && document.querySelector("#param-block_size").getAttribute("aria-invalid") === "false" && document.querySelector("#error-block_size").hidden`)
	})
}

// heavyKnobs is the heaviest re-simulation the test runs: of smart-routing's
// declared heavy corners (lessons.Lesson.HeavyCorners), the one whose
// counted work (Script.Work) is largest natively; without declared corners,
// its largest request count.
func heavyKnobs(t *testing.T) map[string]string {
	t.Helper()
	l := lessons.Get("smart-routing")
	if l == nil {
		t.Fatal("no smart-routing lesson")
	}
	var best map[string]string
	var most int64 = -1
	for _, c := range l.HeavyCorners {
		s, _, err := l.Run(c)
		if err != nil {
			t.Fatalf("heavy corner %v: %v", c, err)
		}
		if s.Work > most {
			best, most = c, s.Work
		}
	}
	if best != nil {
		return best
	}
	p, ok := l.Param("requests")
	if !ok {
		t.Fatal("smart-routing has no requests knob")
	}
	return map[string]string{"requests": strconv.Itoa(int(p.Max))}
}

// TestLiveNeverBlocks: while the heaviest re-simulation runs, a timer on the
// page keeps firing and a key press moves the step; a newer value cancels a
// running one (latest wins).
func TestLiveNeverBlocks(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.navigate(site + "/lesson/smart-routing?step=2")
	defaults := mustQuery(t, evalJS[string](b, `document.querySelector("#lab").dataset.query`))
	heavy := heavyKnobs(t)
	// The heavy knobs, applied like a learner: numbers typed (no
	// simulation yet), choices picked, then the form submitted (Enter).
	apply := func(knobs map[string]string) {
		var js strings.Builder
		js.WriteString("(() => {\n")
		for k, v := range knobs {
			fmt.Fprintf(&js, `  { const el = document.querySelector(%s); el.value = %s;
    if (el.tagName === "SELECT") el.dispatchEvent(new Event("change", {bubbles: true}));
    else el.dispatchEvent(new InputEvent("input", {bubbles: true, inputType: "insertText", data: el.value})); }
`, jsString("#param-"+k), jsString(v))
		}
		js.WriteString("  document.querySelector(\"#params\").requestSubmit(); return true;\n})()")
		evalJS[bool](b, js.String())
		b.waitFor("the re-simulation to start", `document.querySelector("#lab").dataset.busy === "true"`)
	}
	evalJS[bool](b, `(window.__ticks = 0, setInterval(() => window.__ticks++, 20), true)`)
	apply(heavy)
	evalJS[float64](b, `(window.__busyTicks = window.__ticks, window.__busyAt = performance.now(), window.__ticks)`)
	// 15 ticks of a 20 ms timer: the page's thread ran its timers for 300 ms
	// or more while the simulation ran (a blocked thread runs none).
	b.waitFor("15 timer ticks during the re-simulation", `window.__ticks - window.__busyTicks >= 15`)
	if evalJS[string](b, `document.querySelector("#lab").dataset.busy`) != "true" {
		t.Fatalf("the re-simulation of %v ended within 15 timer ticks: too light to show the page stays responsive", heavy)
	}
	evalJS[bool](b, `(document.activeElement.blur(), true)`)
	b.keys(kb.ArrowRight)
	b.waitStep("after → during the re-simulation", 3)
	if evalJS[string](b, `document.querySelector("#lab").dataset.busy`) != "true" {
		t.Errorf("the key was answered only after the re-simulation ended")
	}
	b.screenshot("live-busy")
	// The busy period so far, measured (not asserted): how long, and the
	// timer ticks the page ran meanwhile. With declared (bounded) heavy
	// corners, the whole period until the figure comes.
	if len(lessons.Get("smart-routing").HeavyCorners) > 0 {
		b.awaitCondition("the heavy re-simulation's figure", 3*time.Minute, settledJS)
		if s := b.mustState(); s.Step != "3" {
			t.Errorf("step %s once the heavy figure came, want 3 (kept)", s.Step)
		}
	}
	busy := evalJS[[3]float64](b, `[performance.now() - window.__busyAt, window.__ticks - window.__busyTicks, document.querySelector("#lab").dataset.busy === "true" ? 1 : 0]`)
	recordTiming(t, fmt.Sprintf("E2E_BUSY lesson=smart-routing knobs=%v busy_ms=%.0f timer_ticks_20ms=%.0f still_busy=%v key_answered_while_busy=true",
		heavy, busy[0], busy[1], busy[2] == 1))

	// Latest wins: the heavy knobs with another seed while the first runs
	// stop the first (its worker is terminated), and the defaults at once
	// after them win too.
	other := map[string]string{"seed": "43"}
	for k, v := range heavy {
		other[k] = v
	}
	apply(map[string]string{"requests": "9"}) // away from the heavy state shown, if it came
	b.awaitCondition("a light state", changeTimeout, settledJS)
	apply(heavy)
	stats := b.simStats()
	apply(other)
	b.do("reset", changeTimeout, chromedp.Click(chromedp.CSS("#params-reset")))
	b.waitFor("the defaults shown again", settledJS+` && new URLSearchParams(document.querySelector("#lab").dataset.query).get("requests") === `+
		jsString(defaults.Get("requests")))
	if s := b.simStats(); s.Terminated <= stats.Terminated {
		t.Errorf("the running heavy simulation was not stopped by newer values (terminated %d → %d)", stats.Terminated, s.Terminated)
	}
}

func mustQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// staleProbe records, every animation frame from the first, whether the
// page shows figures of another state than the address asks for without
// marking them: a dimmed figure and a visible "Computing your settings…".
const staleProbe = `(() => {
  window.__stale = {frames: 0, shownOther: 0, marked: 0, unmarked: 0, example: ""};
  const skip = new Set(["hide", "theme"]);
  const frame = () => {
    const st = window.__stale;
    st.frames++;
    const lab = document.getElementById("lab");
    const figs = lab ? lab.querySelectorAll(".scenes > figure") : [];
    if (lab && figs.length) {
      const asked = new URLSearchParams(location.search);
      const shown = new URLSearchParams(lab.dataset.query || "");
      let other = false;
      for (const [k, v] of asked) if (!skip.has(k) && shown.get(k) !== v) other = true;
      if (other) {
        st.shownOther++;
        const status = document.getElementById("sim-status");
        const cs = status && getComputedStyle(status);
        const label = status && (status.textContent.trim() || getComputedStyle(status, "::after").content.replace(/^["']|["']$/g, ""));
        const dim = parseFloat(getComputedStyle(figs[0]).opacity) < 0.9;
        if (cs && cs.display !== "none" && cs.visibility === "visible" && /computing your settings/i.test(label || "") && dim) st.marked++;
        else { st.unmarked++; if (!st.example) st.example = "shown " + lab.dataset.query + " live=" + lab.dataset.live; }
      }
    }
    if (!(lab && lab.dataset.live === "true")) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})();`

// TestStaleLinkMarked: a shared link with other knobs than the defaults (the
// server prerenders each page at its defaults only) never shows the default
// figures unmarked, cold and warm, for a lesson whose page carries its default
// script (smart-routing) and one that does not (garage).
func TestStaleLinkMarked(t *testing.T) {
	srv := httptest.NewServer(labHandler(t, "stale-v1"))
	defer srv.Close()
	b := newBrowser(t)
	addScriptOnNewDocument(b, staleProbe)
	type stale struct {
		Frames     int    `json:"frames"`
		ShownOther int    `json:"shownOther"`
		Marked     int    `json:"marked"`
		Unmarked   int    `json:"unmarked"`
		Example    string `json:"example"`
	}
	for i, path := range []string{
		"/lesson/smart-routing?step=3&workers=4&requests=100",
		"/lesson/garage?step=4&block_size=32",
		"/embed/smart-routing?step=2&workers=4",
		"/lesson/smart-routing?step=3&workers=4&requests=100", // warm: the service worker serves the page
	} {
		if i == 3 {
			b.waitServiceWorker()
		}
		b.navigate(srv.URL + path)
		st := evalJS[stale](b, `window.__stale`)
		if st.Unmarked > 0 {
			t.Errorf("%s: %d of %d frames showed another state's figures unmarked (%s)", path, st.Unmarked, st.Frames, st.Example)
		}
		if st.Frames == 0 {
			t.Errorf("%s: the probe saw no frame", path)
		}
		want := mustQuery(t, strings.SplitN(path, "?", 2)[1])
		shown := mustQuery(t, evalJS[string](b, `document.querySelector("#lab").dataset.query`))
		for k := range want {
			if shown.Get(k) != want.Get(k) {
				t.Errorf("%s: live, the page shows %s=%s", path, k, shown.Get(k))
			}
		}
		t.Logf("%s: %d frames, %d showing the defaults (all marked)", path, st.Frames, st.ShownOther)
		if i == 0 {
			b.screenshot("stale-live")
		}
	}
}

// addScriptOnNewDocument runs js in every document the tab loads, first.
func addScriptOnNewDocument(b *browser, js string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: js}); err != nil {
		b.t.Fatalf("adding a script to every document: %v", err)
	}
}

// TestEmbedLazy: of three embeds in a post, the two far below the fold load
// nothing (no page, no wasm) until the reader scrolls to them.
func TestEmbedLazy(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	lab := labHandler(t, "lazy-v1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/embed/") {
			mu.Lock()
			seen[r.URL.Query().Get("step")]++
			mu.Unlock()
		}
		lab.ServeHTTP(w, r)
	}))
	defer srv.Close()
	labOrigin := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) // another site than the post
	l, v, _ := nativeDefaults(t, "garage")
	var frames []string
	for step := 1; step <= 3; step++ {
		src := labOrigin + "/embed/garage?" + app.EncodeQuery(l, v, step)
		frames = append(frames, app.EmbedSnippet(src, l.Title, labOrigin+"/web/embed.js"))
	}
	post := `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Post</title></head><body style="margin:0">
<h1>A post with three embeds</h1>` + frames[0] + `<div style="height:9000px">text</div>` + frames[1] + `<div style="height:9000px">more text</div>` + frames[2] + `</body></html>`
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, post)
	}))
	defer host.Close()
	count := func(step string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[step]
	}

	b := newBrowser(t)
	b.do("open the post", liveTimeout, chromedp.Navigate(host.URL+"/"), chromedp.WaitVisible(chromedp.CSS("iframe[data-inferlab]")))
	first := b.frameContext("step=1")
	if _, err := chromedp.Run(first, chromedp.Poll[chromedp.Void](embedShows(1),
		chromedp.WithPollingTimeout(liveTimeout))); err != nil {
		b.fatal("the first embed did not show its step: %v", err)
	}
	if count("1") == 0 || count("2") != 0 || count("3") != 0 {
		t.Errorf("with the first embed live, the embeds were requested %d, %d, %d times; want the off-screen ones not at all", count("1"), count("2"), count("3"))
	}
	evalJS[bool](b, `(document.querySelectorAll("iframe[data-inferlab]")[2].scrollIntoView(), true)`)
	third := b.frameContext("step=3")
	if _, err := chromedp.Run(third, chromedp.Poll[chromedp.Void](embedShows(3),
		chromedp.WithPollingTimeout(liveTimeout))); err != nil {
		b.fatal("the third embed did not show its step once scrolled to: %v", err)
	}
	if count("3") == 0 {
		t.Error("the third embed was never requested after scrolling to it")
	}
}

// Every slider sits at its knob's value on load (go-app sets a range's value
// before its max at random; a value past the default max of 100 was clamped).
func TestSlidersAtTheirValues(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	l := lessons.Get("garage")
	for _, path := range []string{"/lesson/garage?max_context=2048&pool_tokens=65536", "/embed/garage?step=2&requests=300"} {
		b.navigate(site + path)
		for _, p := range l.Params {
			if _, ok := app.SliderPosition(p, p.Default); !ok {
				continue
			}
			val := evalJS[string](b, `document.querySelector("#param-`+p.Key+`").value`)
			pos := evalJS[string](b, `document.querySelector("#slider-`+p.Key+`").value`)
			x, err := strconv.ParseFloat(val, 64)
			if err != nil {
				t.Fatalf("%s: #param-%s = %q", path, p.Key, val)
			}
			if want, _ := app.SliderPosition(p, x); pos != strconv.Itoa(want) {
				t.Errorf("%s: #slider-%s at %s for %s, want %d", path, p.Key, pos, val, want)
			}
		}
	}
}
