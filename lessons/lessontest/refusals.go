package lessontest

import (
	"maps"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// checkRefusals: a lesson's refusals (Checks.Refusals), settings that
// were once accepted and then failed or simulated what a GPU could not
// hold, are refused by Check with a knob error on the knob at fault,
// saying why.
func checkRefusals(t *testing.T, l *lessons.Lesson, refusals []Refusal) {
	for _, c := range refusals {
		_, _, err := l.Run(c.Set)
		pe, ok := err.(*lessons.ParamError)
		if !ok || pe.Key != c.Key || !strings.Contains(err.Error(), c.Want) {
			t.Errorf("%s %v: error %v, want one on %s saying %q", l.Slug, c.Set, err, c.Key, c.Want)
		}
	}
}

// sweepGPUsAndModels builds l at every GPU × model choice, with knobs set
// too (Checks.SweepGPUsAndModels): each either builds or is refused by
// Check with a knob error; none fails inside Build, so no lesson simulates
// what a GPU could not hold.
func sweepGPUsAndModels(t *testing.T, l *lessons.Lesson, knobs map[string]string) {
	gp, _ := l.Param("gpu")
	mp, _ := l.Param("model")
	built := 0
	for _, g := range gp.Choices {
		for _, m := range mp.Choices {
			set := map[string]string{"gpu": g, "model": m}
			maps.Copy(set, knobs)
			v, err := l.ResolveChecked(set)
			if err != nil {
				if _, ok := err.(*lessons.ParamError); !ok {
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
