package lessontest

import (
	"errors"
	"maps"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
)

// The feasibility rule for the lessons that serve a model on a GPU (their
// Checks.ServingFits, checkServingFits): walking every GPU × model choice, a setting is
// either refused by Check on a knob of the lesson, or the model's weights
// fit the worker's GPUs and every simulated request (prompt + output) fits
// the model's positions. Before, kv-tiers priced a 33,000-token prompt on
// Llama-2-7B (4,096 positions) and smart-routing served 4,224-token
// requests on it.
// ServingFit is a knob setting of a serving lesson to walk over every GPU ×
// model: its tensor-parallel degree, the longest request it simulates, and
// whether some GPU × model must be accepted.
type ServingFit struct {
	Set          map[string]string
	TP           int
	Longest      func(lessons.Values) int
	MayRefuseAll bool
}

// checkServingFits walks c over every GPU × model choice of l.
func checkServingFits(t *testing.T, l *lessons.Lesson, c ServingFit) {
	t.Helper()
	gpu, _ := l.Param("gpu")
	model, _ := l.Param("model")
	accepted := 0
	for _, g := range gpu.Choices {
		for _, m := range model.Choices {
			set := map[string]string{"gpu": g, "model": m}
			maps.Copy(set, c.Set)
			s, v, err := l.Run(set)
			if err != nil {
				var pe *lessons.ParamError
				if !errors.As(err, &pe) {
					t.Errorf("%s %v: refused without naming a knob: %v", l.Slug, set, err)
				} else if _, ok := l.Param(pe.Key); !ok {
					t.Errorf("%s %v: refusal names %q, not a knob of the lesson", l.Slug, set, pe.Key)
				}
				continue
			}
			accepted++
			gp, mp := hardware.MustGPU(v.Choice("gpu")), hardware.MustModel(v.Choice("model"))
			if w := mp.WeightBytes(2) / int64(c.TP); w > gp.MemoryBytes {
				t.Errorf("%s %v: %d B of weights per GPU on a %d B GPU", l.Slug, set, w, gp.MemoryBytes)
			}
			if n := c.Longest(v); n > mp.MaxPositions {
				t.Errorf("%s %v: a %d-token request on %s's %d positions", l.Slug, set, n, mp.ID, mp.MaxPositions)
			}
			if len(s.Steps) == 0 {
				t.Errorf("%s %v: no steps", l.Slug, set)
			}
		}
	}
	if accepted == 0 && !c.MayRefuseAll {
		t.Errorf("%s %v: no GPU × model accepted", l.Slug, c.Set)
	}
}
