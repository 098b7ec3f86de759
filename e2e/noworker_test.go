//go:build !wasm

package e2e

// A browser without Web Workers: inferlab.sim (web/lab.js) loads sim.wasm
// into the page itself and simulates on the page's thread, so the page
// still goes live in the state its address asks for and re-simulates when a
// knob moves.

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/lessons"
)

// nativeMetric is a lesson's metric at knobs, as the CLI computes it, in
// the page's number format.
func nativeMetric(t *testing.T, slug string, knobs map[string]string, key string) string {
	t.Helper()
	s, _, err := lessons.Get(slug).Run(knobs)
	if err != nil {
		t.Fatalf("%s %v: %v", slug, knobs, err)
	}
	v, ok := s.Metric(key)
	if !ok {
		t.Fatalf("%s has no metric %s", slug, key)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// TestNoWorker: with window.Worker removed before any script runs, a link
// with non-default knobs goes live showing them, and a dragged slider
// re-simulates, both simulated by lab.js on the page's thread (pageRuns),
// never in a worker.
func TestNoWorker(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	addScriptOnNewDocument(b, "delete window.Worker;")

	b.navigate(site + "/lesson/garage?step=3&requests=12")
	if evalJS[string](b, `typeof Worker`) != "undefined" {
		t.Fatal("the page still has Worker: the test does not test a browser without workers")
	}
	b.awaitCondition("the figure for requests=12", liveTimeout,
		settledJS+` && new URLSearchParams(document.querySelector("#lab").dataset.query).get("requests") === "12"`)
	s := b.simStats()
	if !s.Broken || s.Workers != 0 {
		t.Errorf("without Worker: broken %v (want true), workers %d (want 0)", s.Broken, s.Workers)
	}
	if s.PageRuns < 1 || s.PageStartMs <= 0 {
		t.Fatalf("lab.js did not simulate on the page's thread (%+v): the app built the state itself", s)
	}
	recordTiming(t, fmt.Sprintf("E2E_PAGE_THREAD_SIM lesson=garage knobs=requests=12 sim_wasm_start_ms=%.0f first_sim_ms=%.0f", s.PageStartMs, s.LastMs))
	if st := b.mustState(); st.Step != "3" || st.ErrorPanel != "" || st.Notice != "" {
		t.Errorf("live without workers: step %s (want 3), error %q, notice %q", st.Step, st.ErrorPanel, st.Notice)
	}
	want := nativeMetric(t, "garage", map[string]string{"requests": "12"}, "paged_admitted")
	if got := evalJS[string](b, metricJS("paged_admitted")); got != want {
		t.Errorf("requests=12: paged_admitted shows %q, the native run gives %s", got, want)
	}

	// A drag of the block-size slider re-simulates, on the page again.
	runs := s.PageRuns
	// All 12 requests are admitted at any block size: the waste moves.
	before := evalJS[string](b, metricJS("paged_waste_pct"))
	b.dragSlider("block_size", 520, 560, 600)
	b.waitFor("the slider's value in #param-block_size", `document.querySelector("#param-block_size").value !== "16"`)
	final := evalJS[string](b, `document.querySelector("#param-block_size").value`)
	b.awaitCondition("the figure for block_size="+final, 30*time.Second, settledJS+
		` && new URLSearchParams(document.querySelector("#lab").dataset.query).get("block_size") === `+jsString(final)+
		` && `+metricJS("paged_waste_pct")+` !== `+jsString(before))
	want = nativeMetric(t, "garage", map[string]string{"requests": "12", "block_size": final}, "paged_waste_pct")
	if got := evalJS[string](b, metricJS("paged_waste_pct")); got != want {
		t.Errorf("requests=12 block_size=%s: paged_waste_pct shows %q, the native run gives %s", final, got, want)
	}
	s = b.simStats()
	if s.PageRuns <= runs || !s.Broken || s.Workers != 0 {
		t.Errorf("after the drag: %+v; want more page runs than %d, broken, no worker", s, runs)
	}
	recordTiming(t, fmt.Sprintf("E2E_PAGE_THREAD_SIM lesson=garage knobs=requests=12,block_size=%s sim_ms=%.0f page_runs=%d", final, s.LastMs, s.PageRuns))

	// A Go instance that stops mid-call (here: its function returns
	// nothing, as a stopped program's does) fails that request, and the
	// next one starts a fresh instance.
	evalJS[bool](b, `(window.inferlabSimulate = () => undefined, true)`)
	b.typeInto("#param-requests", "14")
	b.keys(kb.Enter)
	b.awaitCondition("the stopped simulation reported", 30*time.Second,
		`/stopped/.test(document.querySelector("#error-panel")?.textContent ?? "")`)
	b.typeInto("#param-requests", "15")
	b.keys(kb.Enter)
	b.awaitCondition("the figure for requests=15", 30*time.Second, settledJS+
		` && new URLSearchParams(document.querySelector("#lab").dataset.query).get("requests") === "15"`)
	if got := b.simStats(); got.PageStarts != 2 {
		t.Errorf("after a stopped instance: %d instances started on the page, want 2 (a fresh one)", got.PageStarts)
	}
	want = nativeMetric(t, "garage", map[string]string{"requests": "15", "block_size": final}, "paged_waste_pct")
	if got := evalJS[string](b, metricJS("paged_waste_pct")); got != want {
		t.Errorf("requests=15 block_size=%s: paged_waste_pct shows %q, the native run gives %s", final, got, want)
	}
}
