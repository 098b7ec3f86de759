package planner

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the planner
// lesson: its narrated counts recomputed from the runs.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runPlanner(v)
			if err != nil {
				return nil, err
			}
			return plannerNarration(r), nil
		},
	})
}

func plannerNarration(r *plannerRun) (out lessontest.Problems) {
	total := 0
	for k, iv := range r.intervals {
		n := 0
		for _, s := range iv.segments {
			n += s.requests
		}
		if n != iv.requests || iv.static.requests != iv.requests || iv.mono.requests != iv.requests {
			out.Addf("interval %d: %d requests narrated; planner served %d, static %d, monolithic %d", k+1, iv.requests, n, iv.static.requests, iv.mono.requests)
		}
		total += iv.requests
	}
	if total != r.day.planned.requests {
		out.Addf("narrated %d requests over the day; the intervals hold %d", r.day.planned.requests, total)
	}
	regimes := len(r.regimes.low) + len(r.regimes.medium) + len(r.regimes.high)
	if regimes != len(r.intervals) {
		out.Addf("%d intervals classified of %d", regimes, len(r.intervals))
	}
	return out
}
