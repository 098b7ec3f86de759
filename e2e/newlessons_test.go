//go:build !wasm

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// TestNewLessons plays the lessons drawn as a memory stack, slot lanes and a
// token strip (kv-budget, batching, speculative-decoding) with the lesson
// driver of TestLessons: load, step,
// a knob changed through the form, a reload, and their main figure: the
// memory stack, the slot lanes and the token strip drawn with the elements
// the narration names marked (data-ref and class "marked") as the native
// scene marks them.
func TestNewLessons(t *testing.T) {
	cases := []lessonCase{{
		slug:       "kv-budget",
		knobs:      []ldKnob{{"kv_cache_dtype", "fp8"}},
		metric:     "kv_tokens",
		sceneStep:  8, // MHA, GQA, MQA and MLA
		sceneCheck: expectFigure(scene.KindMemoryStack, "memory", ".mem-part", 6),
	}, {
		slug:       "batching",
		knobs:      []ldKnob{{"max_queue_delay_us", "0"}},
		metric:     "throughput_tok_s_dynamic",
		sceneStep:  5, // continuous batching: a request leaves, the next takes its slot
		sceneCheck: expectFigure(scene.KindSlots, "slots", ".slot-bar", 100),
	}, {
		slug:       "speculative-decoding",
		knobs:      []ldKnob{{"alpha", "0.9"}},
		metric:     "expected_tokens_per_pass",
		sceneStep:  3, // the target verifies round 1: rejected and the target's own token marked
		sceneCheck: expectFigure(scene.KindTokens, "tokens", ".tok", 5),
	}}
	site := startSite(t)
	b := newBrowser(t)
	d := &lessonsDriver{browser: b, site: site}
	for _, c := range cases {
		t.Run(c.slug, func(st *testing.T) {
			b.t = st
			defer func() { b.t = t }()
			if lessons.Get(c.slug) == nil {
				st.Skipf("lesson %q is not registered", c.slug)
			}
			start := time.Now()
			d.playLesson(c)
			b.checkConsole()
			recordTiming(st, fmt.Sprintf("E2E_TIMING lesson %s total_ms=%d", c.slug, time.Since(start).Milliseconds()))
		})
	}
}

// drawnFigure is what a figure of those lessons' kinds shows: how many
// elements match the kind's element selector, and which references are
// drawn and which marked.
type drawnFigure struct {
	Elements int      `json:"elements"`
	Refs     []string `json:"refs"`
	Marked   []string `json:"marked"`
}

// expectFigure checks the step's figure id of kind k: at least min
// elements matching sel, and every reference the native scene marks drawn
// with class "marked" (and nothing else marked).
func expectFigure(k scene.Kind, id, sel string, min int) func(d *lessonsDriver, s *lessons.Script, v ldView) {
	return func(d *lessonsDriver, s *lessons.Script, v ldView) {
		native := nativeScene(s, v.stepIndex(), k, id)
		js := `(() => {
  const f = document.querySelector('#lab figure.scene[data-kind=` + jsString(string(k)) + `][data-scene-id=` + jsString(id) + `]');
  if (!f) return {elements: -1, refs: [], marked: []};
  const refs = [...f.querySelectorAll("[data-ref]")].map((e) => e.dataset.ref);
  const marked = [...f.querySelectorAll("[data-ref].marked")].map((e) => e.dataset.ref);
  return {elements: f.querySelectorAll(` + jsString(sel) + `).length, refs, marked};
})()`
		got, err := chromedp.Run(d.ctx, chromedp.Evaluate[drawnFigure](js))
		if err != nil {
			d.fatal("reading figure %s: %v", id, err)
		}
		if got.Elements < min {
			d.errorf("step %s: figure %s shows %d %s, want at least %d", v.Step, id, got.Elements, sel, min)
		}
		var want []string
		for _, m := range native.Marks {
			want = append(want, m.Ref)
		}
		if len(want) == 0 {
			d.errorf("test data: step %s's %s marks nothing natively", v.Step, id)
		}
		marked := slices.Compact(slices.Sorted(slices.Values(got.Marked)))
		slices.Sort(want)
		if !slices.Equal(marked, slices.Compact(want)) {
			d.errorf("step %s: figure %s marks %v, want %v (drawn refs: %d)", v.Step, id, marked, want, len(got.Refs))
		}
	}
}
