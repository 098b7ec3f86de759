package replay

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

func experiment(t *testing.T, name string) Experiment {
	t.Helper()
	m, ok := MeasuredByName(name)
	if !ok {
		t.Fatalf("no measured run %s", name)
	}
	x, err := m.Experiment(hardware.MustGPU("h100-sxm"))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestLengthsMatchMeasured: the prompts the workload builds have the
// measured mean length of every visible run within 2%, and every request
// asks for exactly output_len tokens, which inference-perf's output
// statistic (the streamed text tokenized again, BOS included) has as its
// median within one token.
func TestLengthsMatchMeasured(t *testing.T) {
	for _, m := range Measured {
		x, err := m.Experiment(hardware.MustGPU("h100-sxm"))
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		ps := x.Workload.Prompts()
		for _, p := range ps {
			sum += p.Tokens
		}
		mean := float64(sum) / float64(len(ps))
		for i, s := range m.Stages {
			if e := mean/s.PromptMean - 1; math.Abs(e) > 0.02 {
				t.Errorf("%s stage %d: prompts of %.1f tokens, measured %.1f (%+.1f%%)", m.Name, i, mean, s.PromptMean, 100*e)
			}
			if n := float64(x.Workload.Data.OutputLen); math.Abs(s.OutputMedian-n) > 1 {
				t.Errorf("%s stage %d: outputs of %g tokens, measured median %g", m.Name, i, n, s.OutputMedian)
			}
		}
	}
}

// TestReplayCodegen replays one measured run whole (Llama-2-70B on four
// H100s, 9,000 requests in two stages) and holds it to the accuracy the
// lab claims: TTFT mean within 12%, end-to-end mean and TPOT within 5%.
func TestReplayCodegen(t *testing.T) {
	x := experiment(t, "20260217-203421-llama-2-70b-hf-tp4-codegen")
	m, _ := MeasuredByName(x.Name)
	r, err := Run(x)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(x.Workload.Data.OutputLen)
	for i, s := range r.Stages {
		ms := m.Stages[i]
		if s.Sent != ms.Sent || s.Failed != 0 || s.Overloaded {
			t.Errorf("stage %d: sent %d, failed %d, overloaded %v; measured %d sent, none failed", i, s.Sent, s.Failed, s.Overloaded, ms.Sent)
		}
		tpot, mtpot := (s.E2E.Mean-s.TTFT.Mean)/(n-1), (ms.E2E.Mean-ms.TTFT.Mean)/(n-1)
		for _, c := range []struct {
			what      string
			sim, meas float64
			tol       float64
		}{
			{"TTFT mean", s.TTFT.Mean, ms.TTFT.Mean, 0.12},
			{"E2E mean", s.E2E.Mean, ms.E2E.Mean, 0.05},
			{"TPOT", tpot, mtpot, 0.05},
		} {
			if e := c.sim/c.meas - 1; math.Abs(e) > c.tol {
				t.Errorf("stage %d: %s %.1f ms, measured %.1f (%+.1f%%, want within %.0f%%)", i, c.what, c.sim, c.meas, 100*e, 100*c.tol)
			}
		}
	}
}

// TestReplayOverloaded replays the overloaded reasoning run: 4 req/s of
// 1,448-token outputs on Llama-2-7B. The queue grows for the whole stage,
// requests time out after 300 s as inference-perf's did (4,068 of 4,800),
// and the stage is reported overloaded, its TTFT within 50%.
func TestReplayOverloaded(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 4,800 requests of 1,448 tokens")
	}
	x := experiment(t, "20260217-170634-llama-2-7b-tp1-reasoning")
	m, _ := MeasuredByName(x.Name)
	r, err := Run(x)
	if err != nil {
		t.Fatal(err)
	}
	s, ms := r.Stages[0], m.Stages[0]
	if !s.Overloaded || s.PeakWaiting < 500 {
		t.Errorf("overloaded %v, peak queue %d: want an overloaded stage whose queue grows to hundreds", s.Overloaded, s.PeakWaiting)
	}
	if e := float64(s.Failed)/float64(ms.Failed) - 1; math.Abs(e) > 0.05 {
		t.Errorf("%d requests failed, measured %d (%+.1f%%)", s.Failed, ms.Failed, 100*e)
	}
	if e := s.TTFT.Mean/ms.TTFT.Mean - 1; math.Abs(e) > 0.5 {
		t.Errorf("TTFT mean %.0f ms, measured %.0f (%+.0f%%)", s.TTFT.Mean, ms.TTFT.Mean, 100*e)
	}
}

// TestReplayDeterministic: the same experiment gives the same figures.
func TestReplayDeterministic(t *testing.T) {
	x := experiment(t, "20260217-203421-llama-2-70b-hf-tp4-codegen")
	x.Workload.Stages = x.Workload.Stages[:1]
	x.Workload.Stages[0].Duration = 60
	a, err := Run(x)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(x)
	if a.Stages[0] != b.Stages[0] || a.Steps != b.Steps {
		t.Errorf("two runs differ: %+v / %+v", a.Stages[0], b.Stages[0])
	}
}
