package scheduler

import "testing"

// TestTimes: Times agrees with Requests' first and last token times.
func TestTimes(t *testing.T) {
	reqs := []Request{{ID: 0, Prompt: 40, Output: 30}, {ID: 1, Arrival: 0.01, Prompt: 300, Output: 5}, {ID: 2, Arrival: 0.02, Prompt: 20, Output: 1}}
	s := mustNew(t, cfg(64, 2, 64), reqs)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	ms, ts := s.Requests(), s.Times()
	if len(ms) != 3 || len(ts) != 3 {
		t.Fatalf("%d requests, %d times", len(ms), len(ts))
	}
	for i, m := range ms {
		x := ts[i]
		if x.ID != m.ID || x.First-x.Arrival != m.TTFT || x.Last-x.Arrival != m.E2E || x.Output != m.Output {
			t.Errorf("request %d: times %+v, metrics TTFT %g E2E %g", m.ID, x, m.TTFT, m.E2E)
		}
	}
}
