package scheduler_test

import (
	"reflect"
	"testing"

	"github.com/inferlab/inferlab/core/scenario"
	"github.com/inferlab/inferlab/core/scheduler"
)

// TestHardwareTimerWorkKept runs 600 chat requests on the H100 step model
// (preemptions, requests finishing out of order and in order) with and
// without RecordWork: the scheduler builds the step's Work only where it is
// read, so both must make the same steps, and the recorded Work must be
// the batch the step model priced (its token counts).
func TestHardwareTimerWorkKept(t *testing.T) {
	cfg, timer, err := scenario.H100()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NumBlocks = 2000 // a small pool, so that running requests are preempted
	reqs := scenario.ChatRequests(600)
	run := func(record bool) []scheduler.Step {
		s, err := scheduler.New(cfg, timer, reqs)
		if err != nil {
			t.Fatal(err)
		}
		s.RecordWork, s.CheckInvariants = record, true
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		return s.Steps()
	}
	with, without := run(true), run(false)
	if len(with) != len(without) {
		t.Fatalf("%d steps with RecordWork, %d without", len(with), len(without))
	}
	preempted := 0
	for i := range with {
		a, b := with[i], without[i]
		prefill, decode := 0, 0
		for _, w := range a.Work {
			if w.Prefill {
				prefill += w.NewTokens
			} else {
				decode += w.NewTokens
			}
		}
		if prefill != a.PrefillTokens || decode != a.DecodeTokens {
			t.Fatalf("step %d: Work has %d prefill and %d decode tokens, the step %d and %d", i, prefill, decode, a.PrefillTokens, a.DecodeTokens)
		}
		if b.Work != nil {
			t.Fatalf("step %d: Work kept without RecordWork", i)
		}
		a.Work = nil
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("step %d differs with RecordWork:\n%+v\n%+v", i, a, b)
		}
		preempted += len(a.Preempted)
	}
	if preempted == 0 {
		t.Fatal("no preemption: the pool is too large for this test")
	}
}
