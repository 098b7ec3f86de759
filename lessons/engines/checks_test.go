package engines

import (
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the engines
// lesson. Its narration check: each snapshot's counts are the engine's steps
// up to that moment, and the final figures and leads are the requests' own
// metrics, summarised again here.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runEngines(v)
			if err != nil {
				return nil, err
			}
			return enginesNarration(r), nil
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "vLLM narrated with a preemption more than its requests had", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runEngines(v)
				lessontest.MustRun(t, err)
				if alter {
					r.eng[0].sum.Preemptions++
				}
				return enginesNarration(r)
			}},
			{Name: "a lead given to an engine that does not lead", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runEngines(v)
				lessontest.MustRun(t, err)
				if alter {
					r.leads[0].best = (r.leads[0].best + 1) % 3
				}
				return enginesNarration(r)
			}},
		},
	})
}

func enginesNarration(r *enginesRun) (out lessontest.Problems) {
	for i, e := range r.eng {
		sum := scheduler.SummariseRequests(e.reqs, scheduler.SLO{})
		if sum.Preemptions != e.sum.Preemptions || sum.Requests != len(r.requests) || sum.TTFT.P50 != e.sum.TTFT.P50 || sum.PrefixHitRate != e.sum.PrefixHitRate {
			out.Addf("%s: narrated %d preemptions, %d requests, median TTFT %g, hit rate %g; its requests say %d, %d, %g, %g",
				e.name, e.sum.Preemptions, len(r.requests), e.sum.TTFT.P50, e.sum.PrefixHitRate, sum.Preemptions, sum.Requests, sum.TTFT.P50, sum.PrefixHitRate)
		}
		for _, t := range r.times {
			s := stateAt(e, t)
			// Requests finished by the end of the last step started by t,
			// counted from the requests' own finish times.
			end, done := 0.0, 0
			for _, st := range e.steps {
				if st.Start <= t {
					end = st.Start + st.Duration
				}
			}
			for _, m := range e.reqs {
				if m.Arrival+m.E2E <= end+1e-12 {
					done++
				}
			}
			if s.finished != done || s.preempted > sum.Preemptions {
				out.Addf("engine %d at %g s: narrated %d done and %d preempted; %d had finished by %g s, %d preempted in all", i, t, s.finished, s.preempted, done, end, sum.Preemptions)
			}
		}
	}
	for _, l := range r.leads {
		for _, m := range engineMetrics {
			if m.key != l.metric {
				continue
			}
			for j, e := range r.eng {
				v := m.of(e)
				if l.best >= 0 && j != l.best && ((m.lower && v <= l.value) || (!m.lower && v >= l.value)) {
					out.Addf("%s narrated as leading on %s with %g, but %s has %g", r.eng[l.best].name, l.label, l.value, e.name, v)
				}
			}
		}
	}
	return out
}
