package lessons

import (
	"maps"
	"strings"
	"testing"
)

// Each lesson's registered refusals (Checks.refusals): settings that
// were once accepted and then failed or simulated what a GPU could not hold
// are refused by Check with a knob error on the knob at fault, saying why.
func TestLessonsRefuse(t *testing.T) {
	for _, l := range All() {
		refusals := lessonTests[l.Slug].Refusals
		if len(refusals) == 0 {
			continue
		}
		t.Run(l.Slug, func(t *testing.T) {
			for _, c := range refusals {
				_, _, err := l.Run(c.Set)
				pe, ok := err.(*ParamError)
				if !ok || pe.Key != c.Key || !strings.Contains(err.Error(), c.Want) {
					t.Errorf("%s %v: error %v, want one on %s saying %q", l.Slug, c.Set, err, c.Key, c.Want)
				}
			}
		})
	}
}

// Every GPU × model choice of the lessons that register the sweep
// (Checks.sweepGPUsAndModels) either builds or is refused by Check
// with a knob error; none fails inside Build: no lesson simulates what a
// GPU could not hold.
func TestEveryGPUAndModelBuildsOrIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every GPU × model combination of several lessons")
	}
	for _, l := range All() {
		c := lessonTests[l.Slug]
		if c.SweepGPUsAndModels {
			t.Run(l.Slug, func(t *testing.T) { sweepGPUsAndModels(t, l, c.SweepKnobs) })
		}
	}
}

// SweepGPUsAndModels builds l at every GPU × model choice, with knobs set
// too (TestEveryGPUAndModelBuildsOrIsRefused).
func sweepGPUsAndModels(t *testing.T, l *Lesson, knobs map[string]string) {
	gp, _ := l.Param("gpu")
	mp, _ := l.Param("model")
	built := 0
	for _, g := range gp.Choices {
		for _, m := range mp.Choices {
			set := map[string]string{"gpu": g, "model": m}
			maps.Copy(set, knobs)
			v, err := l.ResolveChecked(set)
			if err != nil {
				if _, ok := err.(*ParamError); !ok {
					t.Errorf("%s %v: refused with %T %v, want a knob error", l.Slug, set, err, err)
				}
				continue
			}
			if _, err := l.Build(v); err != nil {
				t.Errorf("%s %v: Check accepted but Build failed: %v", l.Slug, set, err)
			}
			built++
		}
	}
	if built < len(gp.Choices) {
		t.Errorf("%s: only %d combinations build", l.Slug, built)
	}
}
