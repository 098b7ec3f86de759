//go:build !wasm

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
)

// The player on a phone and on a laptop (docs/ARCHITECTURE.md, "One screen
// per step"): a reader who only taps Next sees, at every step, the main
// figure and its marked elements above the narration sheet, whose text
// reads whole or folds to a line (phoneSeesJS);
// the main figure's text is legible (≥ 11 px on a 375 px phone, ≥ 10 px at
// 1280×800); every step change moves something (none under reduced
// motion); axe-core finds nothing on any lesson.

// minPhoneLabel and minLaptopLabel are the smallest text, in CSS px, a
// main figure may draw.
const (
	minPhoneLabel  = 11.0
	minLaptopLabel = 10.0
)

// figureTextJS returns, for the main figure (the first in .scenes), the
// smallest text drawn ({px, what}): each non-empty text node whose element
// is rendered, HTML at its computed font size, SVG at its font size times
// the element's scale on screen.
const figureTextJS = `(() => {
  const fig = document.querySelector("#lab .scenes > figure.scene");
  if (!fig) return {px: 0, what: "no main figure"};
  let px = Infinity, what = "";
  const walk = document.createTreeWalker(fig, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const t = n.textContent.trim();
    const el = n.parentElement;
    if (!t || !el || el.closest("title, script, style, .sr-only, [hidden]")) continue;
    if (!el.getClientRects().length) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility !== "visible" || parseFloat(cs.opacity) === 0) continue;
    let size = parseFloat(cs.fontSize);
    if (el instanceof SVGElement) {
      const m = el.getScreenCTM();
      if (!m) continue;
      size *= Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    }
    if (size < px) { px = size; what = t.slice(0, 40) + " (" + (el.getAttribute("class") || el.tagName.toLowerCase()) + ")"; }
  }
  return {px: px === Infinity ? 99 : px, what};
})()`

type textSize struct {
	Px   float64 `json:"px"`
	What string  `json:"what"`
}

// TestPhoneNext opens every lesson at 375×740 and taps Next through every
// step without scrolling, before the app runs (what a reader arriving from
// a post does) and checks what the screen shows; then steps it at 1280×800
// for the laptop's text sizes.
func TestPhoneNext(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	for _, size := range []struct {
		name  string
		w, h  int64
		least float64
	}{{"phone", 375, 740, minPhoneLabel}, {"laptop", 1280, 800, minLaptopLabel}} {
		b.viewport(size.w, size.h)
		for _, l := range lessons.All() {
			subtest(t, b, size.name+"/"+l.Slug, func(t *testing.T) {
				s, _, err := l.Run(nil)
				if err != nil {
					t.Fatalf("native %s: %v", l.Slug, err)
				}
				b.do("open "+l.Slug, liveTimeout, chromedp.Navigate(site+"/lesson/"+l.Slug),
					chromedp.WaitVisible(chromedp.CSS("#btn-next")))
				worst := textSize{Px: 99}
				for i := range s.Steps {
					if i > 0 {
						b.do("tap Next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
					}
					if size.name == "phone" {
						for _, p := range awaitJS[[]string](b, phoneSeesJS(i+1, i == 0)) {
							t.Errorf("step %d (%s): %s", i+1, s.Steps[i].Title, p)
						}
					} else {
						b.waitStep("after Next", i+1)
						b.nextFrame()
					}
					got := evalJS[textSize](b, figureTextJS)
					if got.Px < size.least-0.05 {
						t.Errorf("step %d (%s): the main figure draws %q at %.1f px, want ≥ %.0f", i+1, s.Steps[i].Title, got.What, got.Px, size.least)
					}
					if got.Px < worst.Px {
						worst = got
					}
				}
				t.Logf("E2E_LABELS %s %s smallest %.1f px (%s)", size.name, l.Slug, worst.Px, worst.What)
			})
		}
	}
}

// stepMotionJS presses Next and counts the animations the step change
// starts in the figures: CSS transitions and animations (their run and
// start events) and script animations (Element.animate), recorded from the
// press on, plus any found running in the frames after it. Events, not only
// document.getAnimations: on a loaded machine a 320 ms fade can end before
// the test's next frame, and an animation still running from the step
// before is not one this change started.
const stepMotionJS = `(async () => {
  const inFigures = (t) => t instanceof Element && t.closest("#lab .scenes, #lab .stage");
  if (!window.__stepMotion) {
    window.__stepMotion = {n: 0};
    const note = (e) => { if (inFigures(e.target)) window.__stepMotion.n++; };
    document.addEventListener("transitionrun", note, true);
    document.addEventListener("animationstart", note, true);
    const animate = Element.prototype.animate;
    Element.prototype.animate = function (...args) {
      if (inFigures(this)) window.__stepMotion.n++;
      return animate.apply(this, args);
    };
  }
  const lab = document.querySelector("#lab");
  const before = lab.dataset.step;
  const running = new Set(document.getAnimations());
  window.__stepMotion.n = 0;
  document.querySelector("#btn-next").click();
  for (let i = 0; i < 500 && lab.dataset.step === before; i++) await new Promise((r) => setTimeout(r, 10));
  let n = 0;
  for (let i = 0; i < 6 && !n; i++) {
    await new Promise((r) => requestAnimationFrame(r));
    n = window.__stepMotion.n + document.getAnimations().filter((a) => !running.has(a) && a.playState === "running" && inFigures(a.effect?.target)).length;
  }
  return n;
})()`

// sameScenes reports whether two steps draw the same figures: a change
// between them has nothing to move.
func sameScenes(a, b lessons.Step) bool {
	x, err1 := json.Marshal(a.Scenes)
	y, err2 := json.Marshal(b.Scenes)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// TestStepAnimates: in every lesson, with its app live, each step change
// starts an animation in the figures (a movement, a fill, a cross-fade);
// under reduced motion none does. The rule, as a reader sees it: a step
// change whose figures change moves something (a figure that changed moves
// or cross-fades; a figure the previous step did not show fades in: web/
// lab.js stepShown); a step drawing exactly its predecessor's figures has
// nothing to move (today no lesson has one: every step changes a mark or a
// cursor at least).
func TestStepAnimates(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	// The app once, on the index, before the first lesson: a cold start
	// (the wasm compiled, the service worker installed) on a loaded machine
	// can outlast the first lesson's wait for its live page.
	b.navigateIndex(site + "/")
	for _, reduced := range []bool{false, true} {
		name := map[bool]string{false: "motion", true: "reduced"}[reduced]
		value := map[bool]string{false: "no-preference", true: "reduce"}[reduced]
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{
			{Name: "prefers-reduced-motion", Value: value}}}); err != nil {
			t.Fatal(err)
		}
		for _, l := range lessons.All() {
			subtest(t, b, name+"/"+l.Slug, func(t *testing.T) {
				s, _, err := l.Run(nil)
				if err != nil {
					t.Fatal(err)
				}
				b.navigate(site + "/lesson/" + l.Slug)
				steps := len(s.Steps) - 1
				if reduced {
					steps = min(steps, 3)
				}
				var still []int
				for i := 1; i <= steps; i++ {
					// Steps 250 ms apart at least: faster ones jump on purpose.
					awaitJS[bool](b, `new Promise((r) => setTimeout(() => r(true), 300))`)
					n := awaitJS[int](b, stepMotionJS)
					if reduced && n > 0 {
						t.Errorf("step %d→%d: %d animations under reduced motion", i, i+1, n)
					}
					if !reduced && n == 0 && !sameScenes(s.Steps[i-1], s.Steps[i]) {
						still = append(still, i)
					}
				}
				if len(still) > 0 {
					t.Errorf("no animation on the step changes from %v to the next", still)
				}
			})
		}
	}
}

// axeResult is what axe-core reports of one page: each violation's rule
// and its first nodes.
type axeResult struct {
	Violations []struct {
		ID    string   `json:"id"`
		Nodes []string `json:"nodes"`
	} `json:"violations"`
}

// axeSource is axe-core's script from the npm package pinned in
// package.json (make deps), given to the page by the test itself.
func axeSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core is missing (npm ci, or make deps): %v", err)
	}
	return string(b)
}

// runAxe runs axe-core over the page as it is and reports its violations.
func (b *browser) runAxe(src, where string) {
	b.t.Helper()
	if !evalJS[bool](b, `typeof window.axe === "object"`) {
		evalJS[bool](b, src+";true")
	}
	r := awaitJS[axeResult](b, `axe.run(document, {resultTypes: ["violations"]}).then((r) => ({violations: r.violations.map((v) => ({id: v.id, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + ": " + (n.failureSummary || "").split("\n").slice(0, 2).join(" "))}))}))`)
	for _, v := range r.Violations {
		b.t.Errorf("%s: axe %s: %s", where, v.ID, strings.Join(v.Nodes, " | "))
	}
}

// TestAxe: axe-core (pinned in package.json) finds no violation on any
// lesson at its first, a middle and its last step, at 1280×800 and
// 375×740, with the app live; nor on the index and an embed before the
// app runs.
func TestAxe(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	src := axeSource(t)
	for _, size := range [][2]int64{{1280, 800}, {375, 740}} {
		b.viewport(size[0], size[1])
		at := fmt.Sprintf("%dx%d", size[0], size[1])
		subtest(t, b, at+"/index", func(t *testing.T) {
			b.do("open the index", liveTimeout, chromedp.Navigate(site+"/"), chromedp.WaitVisible(chromedp.CSS("#index")))
			b.runAxe(src, "/ at "+at)
		})
		subtest(t, b, at+"/embed", func(t *testing.T) {
			b.do("open an embed", liveTimeout, chromedp.Navigate(site+"/embed/smart-routing"), chromedp.WaitVisible(chromedp.CSS("#lab")))
			b.runAxe(src, "/embed/smart-routing at "+at)
		})
		for _, l := range lessons.All() {
			subtest(t, b, at+"/"+l.Slug, func(t *testing.T) {
				s, _, err := l.Run(nil)
				if err != nil {
					t.Fatal(err)
				}
				n := len(s.Steps)
				for _, step := range uniqueInts(1, (n+1)/2, n) {
					b.navigate(fmt.Sprintf("%s/lesson/%s?step=%d", site, l.Slug, step))
					b.waitFor("the page ready", `document.querySelector("#lab")?.dataset.ready === "true"`)
					b.nextFrame()
					b.runAxe(src, fmt.Sprintf("%s step %d at %s", l.Slug, step, at))
				}
			})
		}
	}
}

func uniqueInts(xs ...int) []int {
	var out []int
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// maxEmbedHeight is the tallest an embed may be at its defaults, in CSS px
// at a blog column's 760 px.
const maxEmbedHeight = 900

// TestEmbedFits: every lesson's embed at its defaults, 760 px wide, is at
// most maxEmbedHeight tall at every step before the app runs (its other
// figures folded), and one tap unfolds them.
func TestEmbedFits(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(760, 700)
	for _, l := range lessons.All() {
		subtest(t, b, l.Slug, func(t *testing.T) {
			s, _, err := l.Run(nil)
			if err != nil {
				t.Fatal(err)
			}
			b.do("open the embed", liveTimeout, chromedp.Navigate(site+"/embed/"+l.Slug), chromedp.WaitVisible(chromedp.CSS("#btn-next")))
			tallest, at := 0, 0
			for i := range s.Steps {
				if i > 0 {
					b.clickNow("#btn-next")
				}
				b.waitStep("after Next", i+1)
				b.nextFrame()
				if h := evalJS[int](b, `document.documentElement.scrollHeight`); h > tallest {
					tallest, at = h, i+1
				}
			}
			t.Logf("E2E_EMBED %s tallest %d px at step %d", l.Slug, tallest, at)
			if tallest > maxEmbedHeight {
				t.Errorf("the embed is %d px tall at step %d, want ≤ %d", tallest, at, maxEmbedHeight)
			}
			// At the last step: other figures unfold with one tap, and fold
			// back with another; the button says which.
			if evalJS[bool](b, `document.querySelectorAll("#lab .scenes > figure.scene").length > 1`) {
				b.clickNow("#btn-more-figures")
				if !evalJS[bool](b, `[...document.querySelectorAll("#lab .scenes > figure.scene")].every((f) => f.getClientRects().length > 0)`) {
					t.Error("tapping #btn-more-figures did not show the step's other figures")
				}
				if got := evalJS[string](b, `document.querySelector("#btn-more-figures").getAttribute("aria-expanded")`); got != "true" {
					t.Errorf("unfolded, #btn-more-figures has aria-expanded=%q", got)
				}
				b.clickNow("#btn-more-figures")
				if evalJS[bool](b, `[...document.querySelectorAll("#lab .scenes > figure.scene")].slice(1).some((f) => f.getClientRects().length > 0)`) {
					t.Error("tapping #btn-more-figures again did not fold the step's other figures")
				}
			}
		})
	}
}

// clickNow clicks the element that matches sel at the moment of the click.
// chromedp.Click resolves a node first: when the app mounts in between, go-app
// redraws the prerendered page and the node is gone ("Could not find node
// with given id"), a race of the test, not something a reader meets.
func (b *browser) clickNow(sel string) {
	b.t.Helper()
	if !evalJS[bool](b, `(() => { const e = document.querySelector(`+jsString(sel)+`); if (!e || e.disabled) return false; e.click(); return true; })()`) {
		b.t.Fatalf("%s: not there or disabled", sel)
	}
}
