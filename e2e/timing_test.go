//go:build !wasm

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInteractiveTime measures, for the pages the budgets name (garage and
// smart-routing, lesson pages and embeds), the time from navigation to
// interactive (#lab[data-live=true]: the app mounted and shows the requested
// state), cold (fresh profile: no HTTP cache, no service worker) and warm (the
// service worker serves the app), INFERLAB_TIMING_RUNS times each, and records
// the medians in e2e/test-output/timing.log. It is a measurement, not a check
// (speed is never asserted), so it only runs when asked:
//
//	INFERLAB_TIMING_RUNS=5 go test ./e2e/ -run TestInteractiveTime -v -timeout 30m
//
// Page-time marks of each load (ms since navigation start) say where the time
// goes: fcp (prerendered page painted), dcl (scripts in <head> ran), wasm
// (app.wasm received), load (the load event ended: chromedp.Navigate, and
// so the wall clock, waits for it), and the app's own performance marks
// (inferlab:*).
func TestInteractiveTime(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("INFERLAB_TIMING_RUNS"))
	if runs <= 0 {
		t.Skip("set INFERLAB_TIMING_RUNS=N to measure interactive time (N fresh browsers per page)")
	}
	site := startSite(t)
	warmCompression(site)
	pages := []string{"/lesson/garage", "/lesson/smart-routing", "/embed/garage", "/embed/smart-routing"}
	for _, p := range pages {
		var cold, warm []float64
		var coldMarks, warmMarks []map[string]float64
		for i := 0; i < runs; i++ {
			t.Run(fmt.Sprintf("%s/%d", strings.TrimPrefix(p, "/"), i), func(t *testing.T) {
				b := newBrowser(t)
				b.installLiveProbe()
				c := b.navigate(site + p)
				cold = append(cold, float64(c.Milliseconds()))
				coldMarks = append(coldMarks, timingMarks(b))
				b.waitServiceWorker()
				w := b.navigate(site + p)
				warm = append(warm, float64(w.Milliseconds()))
				warmMarks = append(warmMarks, timingMarks(b))
				b.checkConsole()
			})
		}
		recordTiming(t, fmt.Sprintf("E2E_INTERACTIVE page=%s runs=%d cold_median_ms=%.0f warm_median_ms=%.0f cold_ms=%v warm_ms=%v cold_marks{%s} warm_marks{%s}",
			p, runs, timingMedian(cold), timingMedian(warm), cold, warm, medianMarks(coldMarks), medianMarks(warmMarks)))
	}
}

// warmCompression asks for both wasm files once: the server compresses each
// on its first request (`make build` writes them precompressed, the e2e
// build does not), and no measured load should wait for that.
func warmCompression(site string) {
	for _, f := range []string{"/web/app.wasm", "/web/sim.wasm"} {
		req, _ := http.NewRequest("GET", site+f, nil)
		req.Header.Set("Accept-Encoding", "br, gzip")
		if res, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
}

// timingMarks reads the page-time marks of the current load: paint and
// navigation timings, app.wasm's arrival, the live probe, and every
// performance.mark the app set (names starting with "inferlab:").
func timingMarks(b *browser) map[string]float64 {
	b.t.Helper()
	const js = `(() => {
  const out = {};
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  const wasm = performance.getEntriesByType("resource").find((e) => e.name.includes("app.wasm"));
  if (fcp) out.fcp = fcp.startTime;
  if (nav) out.dcl = nav.domContentLoadedEventEnd;
  if (nav && nav.loadEventEnd > 0) out.load = nav.loadEventEnd;
  if (wasm) out.wasm = wasm.responseEnd;
  for (const m of performance.getEntriesByType("mark")) {
    if (m.name.startsWith("inferlab:")) out[m.name.slice(9)] = m.startTime;
  }
  if (window.__e2eLiveAt !== undefined) out.live = window.__e2eLiveAt;
  return out;
})()`
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	m, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](js))
	if err != nil {
		b.t.Errorf("reading the timing marks: %v", err)
	}
	return m
}

// timingMedian is the median of xs (0 when empty).
func timingMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianMarks is the median of each mark over the loads that have it, in
// time order, as "name=ms ...".
func medianMarks(loads []map[string]float64) string {
	by := map[string][]float64{}
	for _, l := range loads {
		for k, v := range l {
			by[k] = append(by[k], v)
		}
	}
	type kv struct {
		k string
		v float64
	}
	var out []kv
	for k, vs := range by {
		out = append(out, kv{k, timingMedian(vs)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].v < out[j].v })
	var parts []string
	for _, e := range out {
		parts = append(parts, fmt.Sprintf("%s=%.0f", e.k, e.v))
	}
	return strings.Join(parts, " ")
}

// TestBusyPeriod measures what the page's thread does while smart-routing's
// heaviest declared corner re-simulates: in the simulation worker (how the
// page runs it), and on the page's own thread (how it ran before the worker,
// and still runs where no worker can start: inferlab.sim.broken). It records
// the busy period's length and the ticks a 20 ms timer managed meanwhile (a
// free thread: about one per 20 ms; a blocked one: none until the end). A
// measurement, opt-in like TestInteractiveTime:
//
//	INFERLAB_TIMING_RUNS=1 go test ./e2e/ -run TestBusyPeriod -v
func TestBusyPeriod(t *testing.T) {
	if n, _ := strconv.Atoi(os.Getenv("INFERLAB_TIMING_RUNS")); n <= 0 {
		t.Skip("set INFERLAB_TIMING_RUNS=N to measure the busy period")
	}
	site := startSite(t)
	warmCompression(site)
	heavy := heavyKnobs(t)
	for _, where := range []string{"worker", "page thread"} {
		b := newBrowser(t)
		b.navigate(site + "/lesson/smart-routing?step=2")
		if where == "page thread" {
			evalJS[bool](b, `(window.inferlab.sim.broken = true, true)`)
		} else {
			// A started worker: its start (measured apart) is not the
			// simulation's time.
			evalJS[bool](b, `(window.inferlab.sim.warm(), true)`)
			b.awaitCondition("a started worker", time.Minute, `window.inferlab.sim.stats.startMs > 0`)
			recordTiming(t, fmt.Sprintf("E2E_WORKER_START start_ms=%.0f", evalJS[float64](b, `window.inferlab.sim.stats.startMs`)))
		}
		var js strings.Builder
		js.WriteString("(() => {\n")
		for k, v := range heavy {
			fmt.Fprintf(&js, "  { const el = document.querySelector(%s); el.value = %s; if (el.tagName !== \"SELECT\") el.dispatchEvent(new InputEvent(\"input\", {bubbles: true, inputType: \"insertText\"})); }\n",
				jsString("#param-"+k), jsString(v))
		}
		js.WriteString(`  window.__ticks = 0; setInterval(() => window.__ticks++, 20);
  window.__t0 = performance.now();
  document.querySelector("#params").requestSubmit();
  return true;
})()`)
		evalJS[bool](b, js.String())
		var shown []string
		for k, v := range heavy {
			shown = append(shown, "q.get("+jsString(k)+") === "+jsString(v))
		}
		b.awaitCondition("the heavy figure", 3*time.Minute, `(() => { const l = document.querySelector("#lab"); const q = new URLSearchParams(l.dataset.query);
  return l.dataset.busy === "false" && l.dataset.stale === "false" && `+strings.Join(shown, " && ")+`; })()`)
		got := evalJS[[2]float64](b, `[performance.now() - window.__t0, window.__ticks]`)
		recordTiming(t, fmt.Sprintf("E2E_BUSY_PERIOD where=%q knobs=%v busy_ms=%.0f timer_ticks_20ms=%.0f", where, heavy, got[0], got[1]))
	}
}
