//go:build !wasm

package e2e

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Step animation: a step change moves what changed in 200–600
// ms; steps coming faster than that (a held arrow key) jump, so no movement
// queues and the latest step wins; under reduced motion every step jumps.

// animsJS lists the CSS animations and transitions running in the figures:
// their duration plus delay (ms) and whether they still run.
const animsJS = `(() => document.getAnimations()
  .filter((a) => a.effect && a.effect.target instanceof Element && a.effect.target.closest("#lab .scenes") && a.playState === "running")
  .map((a) => { const t = a.effect.getComputedTiming(); return t.delay + t.activeDuration; }))()`

// pressRight dispatches n → presses gap ms apart (a held key), resolving
// after the last.
func pressRightJS(n, gapMs int) string {
	return fmt.Sprintf(`new Promise((done) => {
  document.activeElement?.blur();
  let i = 0;
  const press = () => {
    window.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));
    if (++i < %d) setTimeout(press, %d); else done(true);
  };
  press();
})`, n, gapMs)
}

func TestStepMotion(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	_, _, s := nativeDefaults(t, "prefix-cache")

	subtest(t, b, "one step animates within 600 ms", func(t *testing.T) {
		b.navigate(site + "/lesson/prefix-cache?step=1")
		awaitJS[bool](b, pressRightJS(1, 0))
		b.waitStep("after →", 2)
		b.nextFrame()
		if m := evalJS[string](b, `document.querySelector("#lab").dataset.motion`); m != "animate" {
			t.Errorf("a single step change: data-motion=%q, want animate", m)
		}
		ends := evalJS[[]float64](b, animsJS)
		if len(ends) == 0 {
			t.Error("nothing moves after a step change of the radix tree")
		}
		longest := 0.0
		for _, e := range ends {
			if e > 600 || e < 150 {
				t.Errorf("an animation of the step lasts %.0f ms, want 200–600", e)
			}
			longest = max(longest, e)
		}
		recordTiming(t, fmt.Sprintf("E2E_TIMING step_motion prefix-cache 1->2 animations=%d longest_ms=%.0f", len(ends), longest))
	})

	subtest(t, b, "held arrow key: the latest step wins", func(t *testing.T) {
		b.navigate(site + "/lesson/prefix-cache?step=1")
		n := len(s.Steps) - 1
		awaitJS[bool](b, pressRightJS(n, 40))
		b.waitStep("after the held key", n+1)
		b.nextFrame()
		if m := evalJS[string](b, `document.querySelector("#lab").dataset.motion`); m != "jump" {
			t.Errorf("after %d presses 40 ms apart: data-motion=%q, want jump", n, m)
		}
		ends := evalJS[[]float64](b, animsJS)
		if len(ends) > 0 {
			t.Errorf("%d animations still run a frame after a held key's last step (a backlog)", len(ends))
		}
		recordTiming(t, fmt.Sprintf("E2E_TIMING step_motion prefix-cache held_key presses=%d gap_ms=40 running_after_last=%d", n, len(ends)))
		b.waitFor("motion back once stepping paused", `document.querySelector("#lab").dataset.motion === "animate"`)
	})

	subtest(t, b, "reduced motion jumps", func(t *testing.T) {
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
			t.Fatal(err)
		}
		defer chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		b.navigate(site + "/lesson/prefix-cache?step=1")
		awaitJS[bool](b, pressRightJS(1, 0))
		b.waitStep("after →", 2)
		b.nextFrame()
		if ends := evalJS[[]float64](b, animsJS); len(ends) > 0 {
			t.Errorf("%d animations run under prefers-reduced-motion", len(ends))
		}
	})
}

// stepTimingJS steps once (→, or ← when back) and resolves with the time
// from the key press to the step's DOM updated (window.inferlabStepMs, set
// by the player after the grid and chart patches) and to the next frame
// after it (two animation frames: the frame that paints it has begun).
func stepTimingJS(back bool) string {
	key := "ArrowRight"
	if back {
		key = "ArrowLeft"
	}
	return `new Promise((done) => {
  const lab = document.querySelector("#lab"), before = lab.dataset.step;
  window.inferlabStepMs = -1;
  const t0 = performance.now();
  window.dispatchEvent(new KeyboardEvent("keydown", {key: "` + key + `", bubbles: true}));
  const wait = () => {
    if (lab.dataset.step !== before && window.inferlabStepMs >= 0) {
      requestAnimationFrame(() => done([window.inferlabStepMs, performance.now() - t0]));
      return;
    }
    requestAnimationFrame(wait);
  };
  requestAnimationFrame(wait);
})`
}

// TestStepTiming records (never asserts) how long a step change takes, on
// lessons at their defaults and on garage at 1,024 and 2,048 blocks: the
// median of at least 20 changes each (forward to the end, then back).
// BENCHMARKS.md ("Step change and animation") quotes it. Set
// INFERLAB_STEP_BENCH=1 to run it.
func TestStepTiming(t *testing.T) {
	if os.Getenv("INFERLAB_STEP_BENCH") == "" {
		t.Skip("set INFERLAB_STEP_BENCH=1 to measure step changes")
	}
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	cases := []struct{ name, query string }{
		{"garage-1024-blocks", "garage?pool_tokens=16384"},
		{"garage-2048-blocks", "garage"},
		{"block-table", "block-table"},
		{"prefix-cache", "prefix-cache"},
		{"batching", "batching"},
		{"chunked-prefill", "chunked-prefill"},
		{"smart-routing", "smart-routing"},
		{"kv-budget", "kv-budget"},
	}
	for _, c := range cases {
		subtest(t, b, c.name, func(t *testing.T) {
			b.navigate(site + "/lesson/" + c.query)
			n := evalJS[int](b, `+document.querySelector("#scrubber").max`)
			var dom, frame []float64
			step, back := 1, false
			for len(dom) < 24 {
				if step == n {
					back = true
				} else if step == 1 {
					back = false
				}
				r := awaitJS[[]float64](b, stepTimingJS(back))
				if back {
					step--
				} else {
					step++
				}
				dom, frame = append(dom, r[0]), append(frame, r[1])
			}
			// The mentions' tooltips (inferlab.annotate) run after the step's
			// DOM is updated, outside inferlabStepMs: timed on their own.
			ann := evalJS[[]float64](b, `(() => { const out = []; for (let i = 0; i < 21; i++) { const t0 = performance.now(); inferlab.annotate(); out.push(performance.now() - t0); } return out; })()`)
			recordTiming(t, fmt.Sprintf("E2E_TIMING step_change %s steps=%d changes=%d dom_median_ms=%.1f dom_p90_ms=%.1f frame_median_ms=%.1f frame_p90_ms=%.1f annotate_median_ms=%.2f",
				c.name, n, len(dom), pct(dom, 50), pct(dom, 90), pct(frame, 50), pct(frame, 90), pct(ann, 50)))
		})
	}
}

// pct is the p-th percentile of x (nearest rank).
func pct(x []float64, p int) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}
