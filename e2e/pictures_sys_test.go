//go:build !wasm

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// TestPicturesSystems steps through the lessons drawn with the systems
// pictures (radix tree, cluster, tiers, journey) at 1280×800 and at
// 375×740 and checks, at every step, what a reader relies on:
//   - every element a step's scenes mark is drawn in its figure, with the
//     same data-ref, flagged "marked", and ringed in the marks layer; every
//     mention of the narration names an element drawn in the page;
//   - the radix tree shows depth: each node's box lies right of or below its
//     parent's;
//   - at 375 px nothing overflows sideways (the figures scale down);
//   - the tree moves when an edge splits (a transition or animation runs).
//
// With INFERLAB_SHOTS=DIR it also saves a screenshot of every step at both
// sizes under DIR (for looking at the pictures; nothing is compared), in
// the theme INFERLAB_SHOTS_THEME (dark or light) when set.
func TestPicturesSystems(t *testing.T) {
	slugs := []string{"prefix-cache", "smart-routing", "disaggregation", "kv-tiers", "sandbox"}
	shots := os.Getenv("INFERLAB_SHOTS")
	query := "?step=1"
	if th := os.Getenv("INFERLAB_SHOTS_THEME"); th != "" {
		query += "&theme=" + th // the light theme, to look at
	}
	site := startSite(t)
	b := newBrowser(t)
	for _, slug := range slugs {
		subtest(t, b, slug, func(t *testing.T) {
			_, _, s := nativeDefaults(t, slug)
			sizes := []struct {
				name string
				w, h int64
			}{{"wide", 1280, 800}, {"phone", 375, 740}}
			for _, size := range sizes {
				b.do("viewport", changeTimeout, chromedp.EmulateViewport(size.w, size.h))
				b.navigate(site + "/lesson/" + slug + query)
				var stepMs []float64
				for n := 1; n <= len(s.Steps); n++ {
					if n > 1 {
						evalJS[bool](b, motionProbeJS+` && (window.inferlabStepMs = -1, true)`)
						b.pressNext()
					}
					b.waitStep("after Next", n)
					if n > 1 {
						b.waitFor("the step's render time", `window.inferlabStepMs >= 0`)
						stepMs = append(stepMs, evalJS[float64](b, `window.inferlabStepMs`))
					}
					b.nextFrame()
					if slug == "prefix-cache" && n == 3 && size.w > 500 {
						// R2 splits R1's edge: the cut node slides one column right
						// and the new nodes fade in.
						b.awaitCondition("a transition or animation in the tree", changeTimeout, `window.__sysMotion > 0`)
					}
					// The layout is judged once it has moved there.
					b.settle()
					for _, p := range picturesProblems(b, s.Steps[n-1], size.w) {
						t.Errorf("%s step %d at %d×%d: %s", slug, n, size.w, size.h, p)
					}
					if shots != "" {
						b.saveShot(filepath.Join(shots, fmt.Sprintf("%s-%s-step%02d.png", slug, size.name, n)), chromedp.CaptureScreenshot())
						if size.w < 500 {
							b.saveShot(filepath.Join(shots, fmt.Sprintf("%s-%s-step%02d-figure.png", slug, size.name, n)), chromedp.Screenshot(chromedp.CSS(".scenes > figure")))
						}
					}
				}
				if size.w > 500 && len(stepMs) > 0 {
					sortFloats(stepMs)
					recordTiming(t, fmt.Sprintf("E2E_TIMING step_change %s steps=%d median_ms=%.1f max_ms=%.1f", slug, len(stepMs)+1, stepMs[len(stepMs)/2], stepMs[len(stepMs)-1]))
				}
			}
			b.do("viewport", changeTimeout, chromedp.EmulateViewport(1200, 900))
		})
	}
}

// motionProbeJS counts the transitions and animations that start in a
// radix-tree figure from now on.
const motionProbeJS = `(() => {
  window.__sysMotion = 0;
  if (!window.__sysProbe) {
    window.__sysProbe = true;
    const count = (e) => { if (e.target.closest && e.target.closest('figure[data-kind="radix-tree"]')) window.__sysMotion++; };
    document.addEventListener("transitionrun", count, true);
    document.addEventListener("animationstart", count, true);
  }
  return true;
})()`

// pressNext presses → (a quiz ahead does not stop a step by hand).
func (b *browser) pressNext() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, changeTimeout)
	defer cancel()
	// Blur any focused field (a quiz's answer box takes → otherwise).
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur && document.activeElement.blur()`)); err != nil {
		b.fatal("blur: %v", err)
	}
	for _, ev := range []input.DispatchKeyEventParams{
		{Type: input.DispatchKeyEventTypeKeyDown, Key: "ArrowRight", Code: "ArrowRight", WindowsVirtualKeyCode: 39},
		{Type: input.DispatchKeyEventTypeKeyUp, Key: "ArrowRight", Code: "ArrowRight", WindowsVirtualKeyCode: 39},
	} {
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
			b.fatal("pressing →: %v", err)
		}
	}
}

// settle waits until the page runs no animation or transition.
func (b *browser) settle() {
	b.t.Helper()
	b.awaitCondition("no running animation", changeTimeout, `document.getAnimations().every((a) => a.playState !== "running")`)
}

// saveShot writes a screenshot (of the viewport or an element) to path.
func (b *browser) saveShot(path string, shot chromedp.Action[[]byte]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		b.t.Errorf("screenshot %s: %v", path, err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Error(err)
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Error(err)
	}
}

// picRect is an element's box in the page.
type picRect struct {
	Found  bool    `json:"found"`
	Marked bool    `json:"marked"`
	Ringed bool    `json:"ringed"`
	L      float64 `json:"l"`
	T      float64 `json:"t"`
	R      float64 `json:"r"`
	B      float64 `json:"b"`
}

// picturesJS reads, for each [scene id, ref], the element's box and whether
// it is marked and ringed, plus the page's horizontal overflow.
const picturesJS = `((pairs) => {
  const out = {};
  for (const [id, ref] of pairs) {
    const fig = document.querySelector('figure.scene[data-scene-id="' + CSS.escape(id) + '"]');
    const sel = '[data-ref="' + CSS.escape(ref) + '"]';
    const el = fig && fig.querySelector(sel);
    const ring = fig && fig.querySelector('.sys-marks [data-for="' + CSS.escape(ref) + '"]');
    const r = el ? el.getBoundingClientRect() : null;
    out[id + " " + ref] = {found: !!el, marked: !!el && el.classList.contains("marked"), ringed: !!ring,
      l: r ? r.left : 0, t: r ? r.top : 0, r: r ? r.right : 0, b: r ? r.bottom : 0};
  }
  out["#overflow"] = {found: document.scrollingElement.scrollWidth > window.innerWidth + 1, r: document.scrollingElement.scrollWidth};
  return out;
})`

// picturesProblems checks one step's marks, mentions and radix depth in
// the page.
func picturesProblems(b *browser, st lessons.Step, width int64) []string {
	var pairs [][2]string
	type edge struct{ scene, child, parent string }
	var edges []edge
	marked := map[string]bool{}
	for _, sc := range st.Scenes {
		for _, m := range sc.Marks {
			pairs = append(pairs, [2]string{sc.ID, m.Ref})
			marked[sc.ID+" "+m.Ref] = true
		}
		if sc.Kind == scene.KindRadixTree && sc.Radix != nil {
			for _, n := range sc.Radix.Nodes {
				if n.Parent < 0 || n.State == scene.NodeEvicted {
					continue
				}
				c, p := "node:"+strconv.Itoa(n.ID), "node:"+strconv.Itoa(n.Parent)
				edges = append(edges, edge{sc.ID, c, p})
				pairs = append(pairs, [2]string{sc.ID, c}, [2]string{sc.ID, p})
			}
		}
	}
	for _, m := range st.Mentions {
		pairs = append(pairs, [2]string{m.Scene, m.Ref})
	}
	var sb strings.Builder
	sb.WriteString("[")
	for i, p := range pairs {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("[" + jsString(p[0]) + "," + jsString(p[1]) + "]")
	}
	sb.WriteString("]")
	got := evalJS[map[string]picRect](b, picturesJS+"("+sb.String()+")")
	var problems []string
	for _, p := range pairs {
		k := p[0] + " " + p[1]
		r := got[k]
		switch {
		case !r.Found:
			problems = append(problems, fmt.Sprintf("scene %s draws no element data-ref=%q", p[0], p[1]))
		case marked[k] && (!r.Marked || !r.Ringed):
			problems = append(problems, fmt.Sprintf("scene %s: %s is marked in the script but class marked=%v, ring=%v", p[0], p[1], r.Marked, r.Ringed))
		}
	}
	for _, e := range edges {
		c, p := got[e.scene+" "+e.child], got[e.scene+" "+e.parent]
		if !c.Found || !p.Found {
			continue
		}
		if !(c.L >= p.R-0.5 || c.T >= p.B-0.5) {
			problems = append(problems, fmt.Sprintf("radix %s: %s (box %.0f,%.0f) is neither right of nor below its parent %s (box %.0f,%.0f–%.0f,%.0f)",
				e.scene, e.child, c.L, c.T, e.parent, p.L, p.T, p.R, p.B))
		}
	}
	if o := got["#overflow"]; o.Found && width < 500 {
		problems = append(problems, fmt.Sprintf("the page scrolls sideways: scrollWidth %.0f at width %d", o.R, width))
	}
	return problems
}
