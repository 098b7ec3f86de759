//go:build !wasm

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
)

// compareRow is one row of #compare-metrics as the page shows it.
type compareRow struct {
	Key     string `json:"key"`
	A       string `json:"a"`
	B       string `json:"b"`
	Diff    string `json:"diff"`
	Verdict string `json:"verdict"`
	Better  string `json:"better"` // the better cell's text
}

// compareView is what a test reads of compare mode (docs/DOM.md).
type compareView struct {
	Step      string       `json:"step"`  // #lab[data-step]
	BStep     string       `json:"bStep"` // #compare-b[data-step]
	BSteps    string       `json:"bSteps"`
	Stale     string       `json:"stale"`
	FiguresA  int          `json:"figuresA"`
	FiguresB  int          `json:"figuresB"`
	LabelA    string       `json:"labelA"`
	LabelB    string       `json:"labelB"`
	SceneB    string       `json:"sceneB"` // B's figures' markup
	Rows      []compareRow `json:"rows"`
	Search    string       `json:"search"`
	Side      bool         `json:"side"` // B's first figure is to the right of A's, at the same height
	Stacked   bool         `json:"stacked"`
	Overflows string       `json:"overflows"` // the page scrolls sideways: what sticks out ("" when it does not)
	TablePan  int          `json:"tablePan"`  // px the A | B table's frame scrolls sideways (0: it fits)
}

const compareJS = `(() => {
  const q = (s) => document.querySelector(s);
  const text = (s) => { const e = q(s); return e ? e.textContent.trim().replace(/\s+/g, " ") : ""; };
  const cb = q("#compare-b");
  const fa = q("#scenes > figure.scene"), fb = q("#scenes-b > figure.scene");
  const ra = fa && fa.getBoundingClientRect(), rb = fb && fb.getBoundingClientRect();
  return {
    step: q("#lab")?.dataset.step || "",
    bStep: cb?.dataset.step || "", bSteps: cb?.dataset.steps || "", stale: cb?.dataset.stale || "",
    figuresA: document.querySelectorAll("#scenes > figure.scene").length,
    figuresB: document.querySelectorAll("#scenes-b > figure.scene").length,
    labelA: text("#compare-label-a"), labelB: text("#compare-label-b"),
    sceneB: q("#scenes-b")?.innerHTML || "",
    rows: [...document.querySelectorAll("#compare-metrics tbody tr[data-metric]")].map((tr) => ({
      key: tr.dataset.metric, verdict: tr.dataset.verdict || "",
      a: tr.querySelector("[data-side=a]").dataset.value, b: tr.querySelector("[data-side=b]").dataset.value,
      diff: tr.querySelector("[data-side=diff]").dataset.value,
      better: tr.querySelector("[data-side=better]").textContent.trim(),
    })),
    search: location.search,
    tablePan: (() => { const w = q("#compare-metrics-panel .table-wrap"); return w ? Math.max(0, w.scrollWidth - w.clientWidth) : -1; })(),
    side: !!(ra && rb) && rb.left >= ra.right - 1 && Math.abs(rb.top - ra.top) < 40,
    stacked: !!(ra && rb) && rb.top >= ra.bottom - 1,
    overflows: document.documentElement.scrollWidth > window.innerWidth + 1 ?
      [...document.querySelectorAll("#lab *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest(".table-wrap, .sys-scroll, .notice")).slice(0, 3).map((e) => e.tagName + "#" + e.id + "." + e.className).join(" ") || "yes" : "",
  };
})()`

func (b *browser) compareView() compareView {
	b.t.Helper()
	return evalJS[compareView](b, compareJS)
}

// compareReady is true once both runs are shown: the page live, B's script
// answered for B's knobs and its figures and the A | B table drawn.
const compareReady = `(() => {
  const lab = document.querySelector("#lab"), cb = document.querySelector("#compare-b");
  return lab && lab.dataset.live === "true" && lab.dataset.busy === "false" && lab.dataset.ready === "true" &&
    cb && cb.dataset.stale === "false" && document.querySelector("#scenes-b > figure.scene") &&
    document.querySelector("#compare-metrics tbody tr[data-metric] [data-side=a][data-value]:not([data-value=''])");
})()`

// waitCompare waits for compareReady and extra (a predicate, "" none); on
// a timeout it says what run B shows. It allows a navigation's time: B's
// answer needs the simulation worker, which took up to 2.6 s to start on a
// loaded machine (BENCHMARKS.md), then A's run and B's.
func (b *browser) waitCompare(what, extra string) {
	b.t.Helper()
	pred := compareReady
	if extra != "" {
		pred += " && " + extra
	}
	ctx, cancel := context.WithTimeout(b.ctx, liveTimeout+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(liveTimeout))); err != nil {
		b.fatal("waiting for %s: %v\nrun B: %s", what, err,
			evalJS[string](b, `(() => { const c = document.querySelector("#compare-b"); return (c ? JSON.stringify(c.dataset) + " " + c.textContent.slice(0, 300) : "no #compare-b") + " worker client " + JSON.stringify(window.inferlab.sim.stats); })()`))
	}
}

// expectDiff checks the page's A | B table against the lesson run natively
// with A's knobs and with B's: the rows of `inferlab diff --format json`
// (export.DiffMetrics, what diff prints), value for value, the better side
// marked in words.
func expectDiff(t *testing.T, v compareView, slug string, setA, setB map[string]string) {
	t.Helper()
	l := lessons.Get(slug)
	sa, _, err := l.Run(setA)
	if err != nil {
		t.Fatal(err)
	}
	sb, _, err := l.Run(setB)
	if err != nil {
		t.Fatal(err)
	}
	want := export.DiffMetrics(sa.Metrics, sb.Metrics)
	if len(v.Rows) != len(want) {
		t.Fatalf("%d rows in #compare-metrics, diff has %d", len(v.Rows), len(want))
	}
	verdicts := 0
	for i, w := range want {
		g := v.Rows[i]
		if g.Key != w.Key || g.A != figOf(w.A) || g.B != figOf(w.B) || g.Diff != figOf(w.Diff) || g.Verdict != w.Verdict {
			js, _ := json.Marshal(w)
			t.Errorf("row %d: page %+v, diff %s", i, g, js)
			continue
		}
		switch w.Verdict {
		case export.VerdictA, export.VerdictB:
			verdicts++
			if want := strings.ToUpper(w.Verdict) + " is better"; !strings.Contains(g.Better, want) {
				t.Errorf("%s: better cell %q, want %q", w.Key, g.Better, want)
			}
		case "":
			if g.Better != "—" {
				t.Errorf("%s: no direction, better cell %q, want —", w.Key, g.Better)
			}
		}
	}
	if verdicts == 0 {
		t.Errorf("no figure names a better side: %+v", v.Rows)
	}
}

// scrollShot scrolls the element of sel to the top of the screen and takes
// a screenshot (to look at: compare mode's figures and table).
func (b *browser) scrollShot(sel, name string) {
	b.t.Helper()
	evalJS[bool](b, `(() => { const e = document.querySelector(`+jsString(sel)+`); if (e) window.scrollTo(0, window.scrollY + e.getBoundingClientRect().top - 70); return true; })()`)
	b.nextFrame()
	b.screenshot(name)
	evalJS[bool](b, `(window.scrollTo(0, 0), true)`)
}

// figOf is a figure as the page's data-value writes it ("" for none).
func figOf(x *float64) string {
	if x == nil {
		return ""
	}
	return export.Figure(*x)
}

// TestCompare: an address with b. keys shows A | B in three lessons: both
// figures drawn, side by side at 1280 px and stacked on a phone, labelled
// with the knob that differs; stepping moves both; the table's figures are
// inferlab diff's for the same knobs; axe-core finds no violation. The Compare control copies A to B,
// B's form changes B, and back restores the earlier comparison.
func TestCompare(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	src := axeSource(t)
	// Each A is its knob's default.
	for _, tc := range []struct {
		slug, key, a, b string
	}{
		{"garage", "block_size", "16", "32"},
		{"batching", "max_batch_size", "32", "8"},
		{"kv-budget", "kv_cache_dtype", "auto", "fp8"},
	} {
		subtest(t, b, tc.slug, func(t *testing.T) {
			b.viewport(1280, 800)
			start := time.Now()
			b.navigate(fmt.Sprintf("%s/lesson/%s?%s=%s&b.%s=%s", site, tc.slug, tc.key, tc.a, tc.key, tc.b))
			b.waitCompare("both runs", "")
			// A at its defaults is the page's own script: the worker
			// prefetches nothing, so B's run goes to the worker already
			// started instead of one started after the first is stopped.
			st := evalJS[map[string]any](b, `window.inferlab.sim.stats`)
			t.Logf("E2E_COMPARE %s both runs shown after %v: workers=%v terminated=%v prefetched=%v", tc.slug, time.Since(start).Round(time.Millisecond), st["workers"], st["terminated"], st["prefetched"])
			if st["terminated"] != float64(0) {
				t.Errorf("A at its defaults: %v simulation workers stopped before B's answer, want 0 (nothing to prefetch)", st["terminated"])
			}
			v := b.compareView()
			if v.FiguresA == 0 || v.FiguresB == 0 {
				t.Fatalf("figures A %d, B %d", v.FiguresA, v.FiguresB)
			}
			if !strings.Contains(v.LabelA, tc.key+"="+tc.a) || !strings.Contains(v.LabelB, tc.key+"="+tc.b) {
				t.Errorf("labels %q | %q, want %s=%s | %s=%s", v.LabelA, v.LabelB, tc.key, tc.a, tc.key, tc.b)
			}
			if !v.Side || v.Overflows != "" {
				t.Errorf("at 1280 px: B beside A %v, page scrolls sideways: %q", v.Side, v.Overflows)
			}
			expectDiff(t, v, tc.slug, map[string]string{tc.key: tc.a}, map[string]string{tc.key: tc.b})
			b.waitFor("the address with B's knobs", `location.search.includes(`+jsString("b."+tc.key+"="+tc.b)+`)`)
			b.waitFor("the animations done", `document.getAnimations().every((a) => a.playState !== "running")`)
			b.runAxe(src, tc.slug+" compare mode at 1280×800")
			b.screenshot("compare-" + tc.slug + "-1280")
			b.scrollShot("#compare-label-a", "compare-"+tc.slug+"-1280-figures")
			b.scrollShot("#compare-metrics-panel", "compare-"+tc.slug+"-1280-table")

			// Stepping moves both runs.
			before := v.SceneB
			b.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
			b.waitStep("after Next", 2)
			b.waitFor("B at step 2", `document.querySelector("#compare-b")?.dataset.step === "2"`)
			if after := b.compareView(); after.SceneB == before {
				t.Errorf("B's figures did not change with the step")
			}

			b.viewport(375, 740)
			b.nextFrame()
			b.waitFor("the step's animations done", `document.getAnimations().every((a) => a.playState !== "running")`)
			if v := b.compareView(); !v.Stacked || v.Overflows != "" {
				t.Errorf("at 375 px: B under A %v, page scrolls sideways: %q", v.Stacked, v.Overflows)
			}
			// The table is a card per figure on a phone: nothing to pan.
			if v := b.compareView(); v.TablePan != 0 {
				t.Errorf("at 375 px the A | B table scrolls sideways by %d px, want it to fit (0)", v.TablePan)
			}
			b.runAxe(src, tc.slug+" compare mode at 375×740")
			b.screenshot("compare-" + tc.slug + "-375")
			b.scrollShot("#compare-label-b", "compare-"+tc.slug+"-375-b")
			b.scrollShot("#compare-metrics-panel", "compare-"+tc.slug+"-375-table")
			b.viewport(1200, 900)
		})
	}

	subtest(t, b, "control", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?seed=7")
		b.do("click #btn-compare", changeTimeout, chromedp.Click(chromedp.CSS("#btn-compare")))
		b.waitCompare("B a copy of A", `location.search.includes("b.block_size=16")`)
		if v := b.compareView(); !strings.Contains(v.LabelB, "same knobs as A") {
			t.Errorf("B's label %q, want it to say B has A's knobs", v.LabelB)
		}
		evalJS[bool](b, `(() => { const f = document.querySelector("#b-param-block_size"); f.value = "32"; f.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
		b.waitCompare("B at block_size 32", `document.querySelector("#compare-label-b").textContent.includes("block_size=32") && location.search.includes("b.block_size=32")`)
		expectDiff(t, b.compareView(), "garage", map[string]string{"seed": "7"}, map[string]string{"seed": "7", "block_size": "32"})
		// Reload restores both runs; back returns to the copy of A.
		b.do("reload", liveTimeout, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(liveSelector)))
		b.waitCompare("both runs after a reload", `document.querySelector("#compare-label-b").textContent.includes("block_size=32")`)
		evalJS[bool](b, `(history.back(), true)`)
		b.waitFor("back to B = A", `location.search.includes("b.block_size=16")`)
		b.waitCompare("B shown with A's knobs", `document.querySelector("#compare-label-b").textContent.includes("same knobs as A")`)
		b.do("click #btn-compare", changeTimeout, chromedp.Click(chromedp.CSS("#btn-compare")))
		b.waitFor("no comparison", `!document.querySelector("#compare-b") && !location.search.includes("&b.")`)
	})

	subtest(t, b, "embed", func(t *testing.T) {
		b.navigate(site + "/embed/garage?b.block_size=32")
		b.waitCompare("both runs in the embed", "")
		v := b.compareView()
		if v.FiguresA == 0 || v.FiguresB == 0 {
			t.Errorf("embed: figures A %d, B %d", v.FiguresA, v.FiguresB)
		}
		expectDiff(t, v, "garage", nil, map[string]string{"block_size": "32"})
		if href := evalJS[string](b, `document.querySelector("a.open-full").getAttribute("href")`); !strings.Contains(href, "b.block_size=32") {
			t.Errorf("the embed's full-lab link %q drops B's knobs", href)
		}
	})

	subtest(t, b, "bad b. value", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?block_size=32&b.block_size=0&b.colour=blue")
		for _, want := range []string{`(b.block_size) = "0" is not allowed`, "1 to 256", "Using A's value, 32.", "b.colour is not a parameter of this lesson"} {
			b.waitFor(want, noticeHas(want))
		}
		b.waitCompare("B shown at A's value", `document.querySelector("#compare-label-b").textContent.includes("same knobs as A")`)
		b.screenshot("compare-bad-value")
	})
}
