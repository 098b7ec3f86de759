//go:build !wasm

package e2e

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
)

// What a reader on a phone sees after each Next: the step's main figure
// and its marked element on screen, above the narration sheet and below
// anything fixed at the top, not scrolled away inside a picture that pans
// sideways; and the sheet's text readable without scrolling inside it (or
// folded to one line that a tap opens). TestPhoneNext checks that the top
// of a figure or a mark lies between the screen's edges; this test checks
// the rectangle a learner can actually see.

// phoneSeesJS waits for step n and for the page's scrolling to settle,
// then reports what a reader cannot see: []string, empty when all is well.
// At the step the page opens at (opened), not reached by Next, the
// lesson's title comes first: the figure's top must show, not its marks.
func phoneSeesJS(n int, opened bool) string {
	return `(async () => {
  const opened = ` + strconv.FormatBool(opened) + `;
  const q = (s) => document.querySelector(s);
  const want = "` + strconv.Itoa(n) + `";
  for (let i = 0; i < 500 && q("#lab")?.dataset.step !== want; i++) await new Promise((r) => setTimeout(r, 20));
  if (q("#lab")?.dataset.step !== want) return ["step " + want + " not shown"];
  // the figure's own movements ended (a node gliding to its place), then
  // every scroll (the page's and a picture's) settled for 8 frames
  const fig = q("#lab .scenes > figure.scene");
  if (fig) await Promise.race([Promise.all(fig.getAnimations({subtree: true}).map((a) => a.finished.catch(() => {}))), new Promise((r) => setTimeout(r, 2000))]);
  const boxes = () => [window, ...document.querySelectorAll("#lab .scenes *")].filter((b) => b === window || b.scrollWidth > b.clientWidth || b.scrollHeight > b.clientHeight);
  let last = "", same = 0;
  for (let i = 0; i < 200 && same < 8; i++) {
    await new Promise((r) => requestAnimationFrame(r));
    const now = boxes().map((b) => b === window ? scrollX + "," + scrollY : b.scrollLeft + "," + b.scrollTop).join(";");
    same = now === last ? same + 1 : 0;
    last = now;
  }
  const out = [];
  const fmt = (r) => "[" + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + "]";
  const fixedBox = (el) => {
    if (!el || el.hidden || !el.getClientRects().length) return null;
    const p = getComputedStyle(el).position;
    return p === "fixed" || p === "sticky" ? el.getBoundingClientRect() : null;
  };
  // The visible area: the screen, less what is fixed at its top (a sticky
  // header) and at its bottom (the toolbar, the narration sheet).
  let top = 0, bottom = innerHeight;
  for (const el of document.querySelectorAll(".site-header, #controls, #narration-panel")) {
    const r = fixedBox(el);
    if (!r || r.height === 0) continue;
    if (r.top + r.bottom < innerHeight) top = Math.max(top, r.bottom);
    else bottom = Math.min(bottom, r.top);
  }
  const view = {left: 0, right: innerWidth, top, bottom};
  // box: what the scrolling ancestors of el (up to #lab) and the view let show
  const box = (el) => {
    const c = {...view};
    for (let a = el.parentElement; a && a.id !== "lab"; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.overflowX === "visible" && cs.overflowY === "visible") continue;
      const b = a.getBoundingClientRect();
      if (cs.overflowX !== "visible") { c.left = Math.max(c.left, b.left); c.right = Math.min(c.right, b.right); }
      if (cs.overflowY !== "visible") { c.top = Math.max(c.top, b.top); c.bottom = Math.min(c.bottom, b.bottom); }
    }
    return c;
  };
  const cut = (r, c) => ({left: Math.max(r.left, c.left), right: Math.min(r.right, c.right), top: Math.max(r.top, c.top), bottom: Math.min(r.bottom, c.bottom)});
  const main = q("#lab .scenes > figure.scene");
  if (!main) return ["no main figure"];
  const avail = view.bottom - view.top;
  if (avail < 200) out.push("only " + Math.round(avail) + " px of the screen show the page between the header and the sheet");
  const fr = main.getBoundingClientRect();
  if (opened) {
    if (fr.top < view.top - 0.5 || fr.top + 40 > view.bottom + 0.5) out.push("the main figure's top " + fmt(fr) + " is not on screen (visible area " + fmt(view) + ")");
    return out;
  }
  // The main figure: at least 60% of it, or of the visible area when it is taller.
  const fv = cut(fr, box(main));
  const shown = Math.max(0, fv.bottom - fv.top);
  const need = 0.6 * Math.min(fr.height, avail);
  if (shown < need) out.push("the main figure " + fmt(fr) + " shows " + Math.round(shown) + " px, want ≥ " + Math.round(need) + " (visible area " + fmt(view) + ")");
  // The marked elements: the narrowest (the most specific: a chosen worker
  // rather than the router across the top) always, and every one when
  // together they fit the visible area and their frame; each whole, or, where it is wider
  // or taller than what its frame shows, filling that.
  const marks = [...main.querySelectorAll(".marked, .sys-mark")].map((el) => ({el, r: el.getBoundingClientRect()})).filter((m) => m.r.width > 0 && m.r.height > 0).sort((a, b) => a.r.width - b.r.width);
  const span = marks.length ? Math.max(...marks.map((m) => m.r.bottom)) - Math.min(...marks.map((m) => m.r.top)) : 0;
  const wide = marks.length ? Math.max(...marks.map((m) => m.r.right)) - Math.min(...marks.map((m) => m.r.left)) : 0;
  const narrowest = marks.length ? Math.min(...marks.map((m) => box(m.el).right - box(m.el).left)) : 0;
  for (const m of span <= avail - 12 && wide <= narrowest - 16 ? marks : marks.slice(0, 1)) {
    const c = box(m.el);
    const v = cut(m.r, c);
    const w = Math.max(0, v.right - v.left), h = Math.max(0, v.bottom - v.top);
    if (w < Math.min(m.r.width, c.right - c.left) - 2 || h < Math.min(m.r.height, c.bottom - c.top) - 2) {
      const name = (m.el.getAttribute("data-ref") || m.el.getAttribute("class") || m.el.tagName).slice(0, 40);
      out.push("the marked element " + name + " " + fmt(m.r) + " shows " + Math.round(w) + "×" + Math.round(h) + " px of " + Math.round(m.r.width) + "×" + Math.round(m.r.height) + " (visible area " + fmt(view) + ")");
    }
  }
  // The sheet: its text whole, or folded to a line a tap opens.
  const panel = q("#narration-panel");
  if (panel && getComputedStyle(panel).position === "fixed") {
    const folded = document.documentElement.classList.contains("narration-folded");
    if (folded) {
      if (panel.getBoundingClientRect().height > 64) out.push("the folded sheet is " + Math.round(panel.getBoundingClientRect().height) + " px tall");
      if (q("#btn-sheet")?.getAttribute("aria-expanded") !== "false") out.push("the sheet is folded but #btn-sheet does not say so");
    } else if (panel.scrollHeight > panel.clientHeight + 1) {
      out.push("the narration needs scrolling inside its sheet: " + panel.scrollHeight + " px of text in " + panel.clientHeight);
    }
  }
  return out;
})()`
}

// TestPhoneSees taps Next through five lessons whose figures are tall or
// wide at 375×740 with the app live (TestPhoneNext walks every lesson
// before it runs), and checks at every step what phoneSeesJS checks. The
// screens are saved as e2e/test-output/phone-sees-*.png.
func TestPhoneSees(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(375, 740)
	for _, slug := range []string{"planner", "chunked-prefill", "prefix-cache", "smart-routing", "garage"} {
		subtest(t, b, slug, func(t *testing.T) {
			_, _, s := nativeDefaults(t, slug)
			b.navigate(site + "/lesson/" + slug)
			for i := range s.Steps {
				if i > 0 {
					b.clickNow("#btn-next")
				}
				probs := awaitJS[[]string](b, phoneSeesJS(i+1, i == 0))
				b.screenshot(fmt.Sprintf("phone-sees-%s-%02d", slug, i+1))
				for _, p := range probs {
					t.Errorf("step %d (%s): %s", i+1, s.Steps[i].Title, p)
				}
			}
		})
	}
}

// maxPhoneEmbed is the tallest a lesson's embed may be at 375 px wide, in
// CSS px: a phone's screen and a bit, so that a post stays a post.
const maxPhoneEmbed = 800

// TestEmbedOnPhone: every lesson's embed at 375 px wide, stepped through
// before the app runs, keeps one height at every step (the article under
// it does not move), at most maxPhoneEmbed, with the main figure first
// (only the lesson's title line above it).
func TestEmbedOnPhone(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(375, 740)
	for _, l := range lessons.All() {
		subtest(t, b, l.Slug, func(t *testing.T) {
			_, _, s := nativeDefaults(t, l.Slug)
			b.do("open the embed", liveTimeout, chromedp.Navigate(site+"/embed/"+l.Slug), chromedp.WaitVisible(chromedp.CSS("#btn-next")))
			lo, hi, figTop := 1<<30, 0, 0
			for i := range s.Steps {
				if i > 0 {
					b.clickNow("#btn-next")
				}
				b.waitStep("after Next", i+1)
				b.nextFrame()
				// the height the embed reports to its page (web/lab.js reportHeight)
				h := evalJS[int](b, `Math.ceil(document.documentElement.getBoundingClientRect().height)`)
				lo, hi = min(lo, h), max(hi, h)
				figTop = max(figTop, evalJS[int](b, `Math.round(document.querySelector("#lab .scenes > figure.scene").getBoundingClientRect().top + scrollY)`))
			}
			t.Logf("E2E_EMBED_PHONE %s %d–%d px, main figure at %d px", l.Slug, lo, hi, figTop)
			if hi-lo > 1 {
				t.Errorf("the embed's height changes from step to step: %d to %d px", lo, hi)
			}
			if hi > maxPhoneEmbed {
				t.Errorf("the embed is %d px tall, want ≤ %d", hi, maxPhoneEmbed)
			}
			if figTop > 80 {
				t.Errorf("the main figure starts %d px down the embed, want it first (≤ 80 px: the title line above it)", figTop)
			}
		})
	}
}
