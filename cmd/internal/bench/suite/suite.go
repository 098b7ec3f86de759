// Package suite is the full list of the lab's timed scenarios: package
// bench's core workloads, then what the browser redoes when a knob moves
// (the garage lesson with 1,000 requests and one build of every lesson with
// its defaults). `inferlab bench` and the WebAssembly comparison
// (cmd/benchrun, `make bench-wasm`) both take their scenarios from here, so
// both measure the same code.
package suite

import (
	"github.com/inferlab/inferlab/cmd/internal/bench"
	"github.com/inferlab/inferlab/lessons"
)

// Scenarios is the core scenarios, then lesson-garage-1000, then
// lesson-SLUG for every lesson in index order.
func Scenarios() []bench.Scenario {
	out := append(bench.CoreScenarios(), bench.Scenario{
		Name: "lesson-garage-1000",
		What: "the garage lesson with 1,000 requests (budget: at most 50 ms in WebAssembly after warm-up)",
		Run:  LessonRun(lessons.Get("garage"), map[string]string{"requests": "1000"}),
	})
	for _, l := range lessons.All() {
		out = append(out, bench.Scenario{Name: "lesson-" + l.Slug, What: "the " + l.Slug + " lesson with its defaults", Run: LessonRun(l, nil)})
	}
	return out
}

// LessonRun builds the lesson with the given knobs; the work reported is
// its steps and its "requests" metric where it has one.
func LessonRun(l *lessons.Lesson, set map[string]string) func() (bench.Work, error) {
	return func() (bench.Work, error) {
		s, _, err := l.Run(set)
		if err != nil {
			return bench.Work{}, err
		}
		w := bench.Work{Steps: len(s.Steps)}
		if v, ok := s.Metric("requests"); ok {
			w.Requests = int(v)
		}
		return w, nil
	}
}
