//go:build !wasm

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// The memory and timing pictures: block grids, the garage's
// pools, block tables, timelines and charts. Each lesson is stepped through
// at 1280×800 and every mark of the native script is checked on the page.

// memLessons are the lessons whose pictures this file checks.
var memLessons = []string{"garage", "block-table", "cow-fork", "chunked-prefill", "cuda-graphs", "roofline", "measuring"}

// tickTitle is the title pacing forbids: a step named after a tick.
var tickTitle = regexp.MustCompile(`^Tick \d+`)

// TestPicturesMem steps through each lesson at 1280×800 and checks, at every
// step: no title "Tick N"; every subject the step marks (scene.Mark) is drawn
// in its figure with data-ref, outlined (class marked) and labelled with the
// mark's text (a callout at the element, or the chart's list of marked
// points); timeline and bracket labels are drawn whole or not at all.
func TestPicturesMem(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	for _, slug := range memLessons {
		subtest(t, b, slug, func(t *testing.T) {
			_, _, s := nativeDefaults(t, slug)
			b.navigate(site + "/lesson/" + slug)
			for i, st := range s.Steps {
				if i > 0 {
					b.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
				}
				b.waitStep("after Next", i+1)
				if tickTitle.MatchString(st.Title) {
					t.Errorf("step %d is titled %q: say what happens", i+1, st.Title)
				}
				b.waitPictures(st)
				for _, p := range evalJS[[]string](b, marksCheckJS(st)) {
					t.Errorf("step %d (%s): %s", i+1, st.Title, p)
				}
				for _, p := range evalJS[[]string](b, cutLabelsJS) {
					t.Errorf("step %d (%s): %s", i+1, st.Title, p)
				}
			}
		})
	}
}

// TestPicturesGaragePools: at 1280×800, garage's first step shows both
// pools whole, side by side, with their queues, without scrolling.
func TestPicturesGaragePools(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	b.navigate(site + "/lesson/garage")
	b.waitStep("on load", 1)
	b.waitFor("the paged pool's cells", `document.querySelectorAll(".scene-pools .block-grid .blocks-svg path").length > 0`)
	type box struct {
		Sel                      string
		Top, Bottom, Left, Right float64
		W, H                     float64
	}
	boxes := evalJS[[]box](b, `[".pool-paged .pool-area", ".pool-contiguous .pool-area", ".pool-paged .queue-wrap", ".pool-contiguous .queue-wrap"].map((sel) => {
  const e = document.querySelector(sel);
  const r = e ? e.getBoundingClientRect() : {top: -1, bottom: -1, left: -1, right: -1, width: 0, height: 0};
  return {sel, top: r.top, bottom: r.bottom, left: r.left, right: r.right, w: r.width, h: r.height};
})`)
	for _, x := range boxes {
		if x.W < 100 || x.H < 10 || x.Top < 0 || x.Bottom > 800 || x.Left < 0 || x.Right > 1280 {
			t.Errorf("%s is not in view at 1280×800: %+v", x.Sel, x)
		}
	}
	if len(boxes) == 4 && !(boxes[1].Left >= boxes[0].Right && boxes[0].Top < boxes[1].Bottom && boxes[1].Top < boxes[0].Bottom) {
		t.Errorf("the pools are not side by side: paged %+v, contiguous %+v", boxes[0], boxes[1])
	}
	b.screenshot("pictures-garage-pools")
}

// viewport sets the page's viewport.
func (b *browser) viewport(w, h int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("viewport %d×%d", w, h), changeTimeout, chromedp.EmulateViewport(w, h))
}

// waitPictures waits until the step's figures are drawn: its charts ready
// and each figure present.
func (b *browser) waitPictures(st lessons.Step) {
	b.t.Helper()
	var ids []string
	for _, sc := range st.Scenes {
		sel := `figure.scene[data-scene-id=` + strconv.Quote(sc.ID) + `]`
		if sc.Kind == scene.KindChart {
			sel = `#chart-` + sc.ID + `[data-ready="true"]`
		}
		ids = append(ids, `!!document.querySelector(`+jsString(sel)+`)`)
	}
	if len(ids) > 0 {
		b.waitFor("the step's figures", strings.Join(ids, " && "))
	}
	b.nextFrame()
	// Bars move and grow into place (CSS transitions): check where they land.
	b.waitFor("the step's transitions to end", `document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== "running")`)
}

// markCheck is one mark the page must show.
type markCheck struct {
	Scene string `json:"scene"`
	Kind  string `json:"kind"`
	Ref   string `json:"ref"`
	Label string `json:"label"`
}

// marksCheckJS returns a script listing what is wrong with the step's marks
// on the page.
func marksCheckJS(st lessons.Step) string {
	checks := []markCheck{}
	for _, sc := range st.Scenes {
		for _, m := range sc.Marks {
			checks = append(checks, markCheck{Scene: sc.ID, Kind: string(sc.Kind), Ref: m.Ref, Label: m.Label})
		}
	}
	js, _ := json.Marshal(checks)
	return `(() => {
  const out = [];
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility === "visible"; };
  for (const c of ` + string(js) + `) {
    const fig = document.querySelector('figure.scene[data-scene-id="' + CSS.escape(c.scene) + '"]');
    if (!fig) { out.push("no figure " + c.scene + " for the mark " + c.ref); continue; }
    const els = Array.from(fig.querySelectorAll('[data-ref="' + CSS.escape(c.ref) + '"]'));
    if (els.length === 0) { out.push(c.scene + ": no element with data-ref " + c.ref); continue; }
    if (!els.some((e) => e.classList.contains("marked") && shown(e))) out.push(c.scene + ": " + c.ref + " is not outlined (class marked) or not visible");
    if (!c.label) continue;
    const labels = c.kind === "chart"
      ? els.filter((e) => e.tagName === "LI")
      : Array.from(fig.querySelectorAll('.callout[data-for="' + CSS.escape(c.ref) + '"]'));
    if (!labels.some((e) => e.textContent.trim() === c.label && shown(e))) {
      out.push(c.scene + ": " + c.ref + " has no visible label " + JSON.stringify(c.label) + " (found " + JSON.stringify(labels.map((e) => e.textContent.trim())) + ")");
    }
  }
  return out;
})()`
}

// cutLabelsJS lists the visible labels of timeline bars and brackets that
// are cut (wider than their bar).
const cutLabelsJS = `(() => {
  const out = [];
  for (const e of document.querySelectorAll("figure.scene .tl-text")) {
    const bar = e.parentElement;
    if (getComputedStyle(e).visibility !== "visible" || bar.classList.contains("out")) continue;
    if (e.scrollWidth > e.clientWidth + 1 || e.clientWidth > bar.clientWidth + 1) {
      out.push("label " + JSON.stringify(e.textContent) + " is cut: " + e.scrollWidth + " px of text in " + Math.min(e.clientWidth, bar.clientWidth) + " px");
    }
  }
  return out;
})()`

// stepTiming is one step change measured in the page: t0 just before the
// click, updated = the player's window.inferlabStepMs (the render and the
// grid and chart patches), layout = t0 to the same moment plus a forced
// style and layout, frame = t0 to the start of the frame after the one
// that drew the change. go-app renders a dispatch's updates at its next
// frame tick, 1/120 s later (app.go: engine.Start(120)), with the page idle
// meanwhile; busy = the task that did the work: from the last moment the
// page was free before it (a MessageChannel ping loop runs between tasks)
// to the end of the forced layout.
type stepTiming struct {
	Updated, Layout, Frame, Busy float64
	Step                         string
}

// measureStepJS clicks sel and measures the step change it causes.
func measureStepJS(sel string) string {
	return `new Promise((resolve) => {
  let t1 = -1, t0 = 0, free = 0;
  const ch = new MessageChannel();
  ch.port1.onmessage = () => { if (t1 < 0) { free = performance.now(); ch.port2.postMessage(0); } };
  Object.defineProperty(window, "inferlabStepMs", {configurable: true,
    set(v) { this.__stepMs = v; if (v >= 0 && t1 < 0) { void document.body.offsetHeight; t1 = performance.now(); } },
    get() { return this.__stepMs; }});
  const wait = () => {
    if (t1 < 0) { requestAnimationFrame(wait); return; }
    requestAnimationFrame(() => resolve({updated: window.__stepMs, layout: t1 - t0, frame: performance.now() - t0, busy: t1 - Math.max(free, t0), step: document.querySelector("#lab").dataset.step}));
  };
  ch.port2.postMessage(0);
  t0 = performance.now();
  document.querySelector(` + jsString(sel) + `).click();
  requestAnimationFrame(wait);
})`
}

// TestPicturesMemStepTiming records (never asserts) how long a step change
// takes in the page for the memory and timing pictures: 24 changes per
// lesson, forward then back, at 1280×800 (BENCHMARKS.md, "Step change:
// memory and timing pictures").
func TestPicturesMemStepTiming(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	for _, c := range []struct{ name, slug, query string }{
		{"garage-2048", "garage", ""},
		{"garage-1024", "garage", "&pool_tokens=16384"},
		{"block-table", "block-table", ""},
		{"cow-fork", "cow-fork", ""},
		{"chunked-prefill", "chunked-prefill", ""},
		{"cuda-graphs", "cuda-graphs", ""},
		{"roofline", "roofline", ""},
		{"measuring", "measuring", ""},
	} {
		subtest(t, b, c.name, func(t *testing.T) {
			b.navigate(site + "/lesson/" + c.slug + "?step=1" + c.query)
			evalJS[bool](b, `(document.activeElement?.blur(), true)`)
			n := evalJS[int](b, `Number(document.querySelector("#scrubber").max)`)
			var up, lay, fr, busy []float64
			step, dir := 1, 1
			for i := 0; i < 24; i++ {
				if step+dir < 1 || step+dir > n {
					dir = -dir
				}
				sel := "#btn-next"
				if dir < 0 {
					sel = "#btn-prev"
				}
				m := awaitJS[stepTiming](b, measureStepJS(sel))
				step += dir
				if m.Step != strconv.Itoa(step) {
					t.Fatalf("after %s the page shows step %s, want %d", sel, m.Step, step)
				}
				up, lay, fr, busy = append(up, m.Updated), append(lay, m.Layout), append(fr, m.Frame), append(busy, m.Busy)
				b.nextFrame()
			}
			med := func(x []float64) (float64, float64) {
				s := append([]float64(nil), x...)
				sortFloats(s)
				return s[len(s)/2], s[len(s)*9/10]
			}
			um, u9 := med(up)
			lm, l9 := med(lay)
			fm, f9 := med(fr)
			bm, b9 := med(busy)
			recordTiming(t, fmt.Sprintf("E2E_TIMING step_change_mem %s steps=%d changes=%d busy_median_ms=%.1f busy_p90_ms=%.1f updated_median_ms=%.1f updated_p90_ms=%.1f layout_median_ms=%.1f layout_p90_ms=%.1f frame_median_ms=%.1f frame_p90_ms=%.1f",
				c.name, n, len(up), bm, b9, um, u9, lm, l9, fm, f9))
		})
	}
}
