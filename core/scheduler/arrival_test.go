package scheduler

import (
	"math"
	"testing"
)

// TestAddKeepsArrival: a request submitted while a step runs keeps the
// time it arrived, so its time to first token counts the wait for the step
// in flight (a real engine's request waits for it too). Submitted at 5 ms
// into a 10.1 ms step, it is admitted when the step ends and its first
// token comes one step later: TTFT ≈ 5.1 + 10.x ms, not 10.x ms.
func TestAddKeepsArrival(t *testing.T) {
	s := mustNew(t, cfg(64, 8, 64), []Request{{ID: 0, Arrival: 0, Prompt: 8, Output: 4}})
	first := mustStep(t, s)
	if s.Clock() <= 0.005 {
		t.Fatalf("the first step ended at %g s, want after 5 ms", s.Clock())
	}
	if err := s.Add(Request{ID: 1, Arrival: 0.005, Prompt: 8, Output: 4}); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	var late RequestMetrics
	for _, m := range s.Requests() {
		if m.ID == 1 {
			late = m
		}
	}
	if late.Arrival != 0.005 {
		t.Errorf("request 1 arrived at %g s, recorded %g s", 0.005, late.Arrival)
	}
	wait := first.Start + first.Duration - 0.005
	if got := late.TTFT; got < wait+0.010 || math.IsNaN(got) {
		t.Errorf("TTFT = %.4f s, want at least the %.4f s left of the step in flight plus a step of its own", got, wait)
	}
}
