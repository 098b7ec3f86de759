package measuring

import (
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons/kit"
)

// TestRunProbeCountsAsWholeRun: a probe keeps no steps and sums its work
// and search cost over a few records at a time; both must equal
// kit.Engine.WorkAndSearchCost over every step of the same run kept whole,
// with graph_mode piecewise so that some steps are streamed.
func TestRunProbeCountsAsWholeRun(t *testing.T) {
	v, errs := lesson.Resolve(map[string]string{"graph_mode": "piecewise", "max_num_seqs": "4", "max_num_batched_tokens": "256"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	seqs, budget := v.Int("max_num_seqs"), v.Int("max_num_batched_tokens")
	e, err := kit.NewEngineAt(v, 16, budget)
	if err != nil {
		t.Fatal(err)
	}
	lengths, err := lengthsOf(v, e.Model)
	if err != nil {
		t.Fatal(err)
	}
	var in []scheduler.Request
	for _, q := range lengths.draw(300, 8, 1) {
		in = append(in, scheduler.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output})
	}
	cfg := scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: 16, NumBlocks: e.KVBlocks}
	run := func() *scheduler.Scheduler {
		s, err := scheduler.New(cfg, e.Timer(seqs, budget), in)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	whole := run()
	if err := whole.Run(); err != nil {
		t.Fatal(err)
	}
	wantWork, wantCost := e.WorkAndSearchCost(whole.Steps(), seqs, budget)
	if streamed := wantWork - kit.StepsWork(whole.Steps()); streamed == 0 {
		t.Fatal("no step streamed: the test would not see the streamed steps' share")
	}
	buf := make([]scheduler.Step, 0, 37) // a run of thousands of steps, 37 at a time
	probe := run()
	work, cost, err := runProbe(e, probe, seqs, budget, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if work != wantWork || cost != wantCost {
		t.Errorf("probe: work %d, cost %d; the whole run's: %d, %d", work, cost, wantWork, wantCost)
	}
	if n := len(probe.Steps()); n != 0 {
		t.Errorf("probe kept %d steps", n)
	}
	if len(whole.Steps()) < 10*cap(buf) {
		t.Errorf("only %d steps: too few to cross many counts", len(whole.Steps()))
	}
}
