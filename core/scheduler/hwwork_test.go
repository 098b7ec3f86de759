package scheduler_test

import (
	"errors"
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

// TestDiscardSteps runs the same 600 requests keeping the steps and with
// DiscardSteps: the run must hand RunEach the steps Steps() holds, in
// order, keep none, and give the same requests' metrics and Summary (its
// step figures included).
func TestDiscardSteps(t *testing.T) {
	cfg, timer, err := scenario.H100()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NumBlocks = 2000 // preemptions, so that the steps' lists are not empty
	reqs := scenario.ChatRequests(600)
	kept, err := scheduler.New(cfg, timer, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := kept.Run(); err != nil {
		t.Fatal(err)
	}
	discard, err := scheduler.New(cfg, timer, reqs)
	if err != nil {
		t.Fatal(err)
	}
	discard.DiscardSteps = true
	var seen []scheduler.Step
	if err := discard.RunEach(func(st scheduler.Step) error {
		seen = append(seen, st)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(discard.Steps()); n != 0 {
		t.Errorf("DiscardSteps kept %d steps", n)
	}
	if !reflect.DeepEqual(seen, kept.Steps()) {
		t.Errorf("RunEach handed %d steps, differing from the %d Steps() keeps", len(seen), len(kept.Steps()))
	}
	if !reflect.DeepEqual(discard.Requests(), kept.Requests()) {
		t.Error("requests' metrics differ with DiscardSteps")
	}
	slo := scheduler.SLO{TTFT: 1, TPOT: 0.05}
	if a, b := discard.Summary(slo), kept.Summary(slo); a != b {
		t.Errorf("Summary with DiscardSteps %+v, keeping the steps %+v", a, b)
	}
}

// TestRunEachStops: an error from RunEach's function ends the run there.
func TestRunEachStops(t *testing.T) {
	cfg, timer, err := scenario.H100()
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(cfg, timer, scenario.ChatRequests(50))
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.RunEach(func(scheduler.Step) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	}); err != stop {
		t.Fatalf("RunEach returned %v, want the function's error", err)
	}
	if len(s.Steps()) != 10 || s.Done() {
		t.Errorf("%d steps run (done %v), want 10 and requests left", len(s.Steps()), s.Done())
	}
}
