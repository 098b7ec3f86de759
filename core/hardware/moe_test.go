package hardware

import (
	"math"
	"testing"
)

func TestActiveExperts(t *testing.T) {
	for _, c := range []struct {
		e, k, n int
		want    float64
	}{
		{8, 2, 0, 0},
		{8, 2, 1, 2},
		{8, 2, 2, 8 * (1 - 0.75*0.75)},
		{8, 2, 64, 8 * (1 - math.Pow(0.75, 64))},
		{8, 8, 3, 8},
		{64, 8, 1, 8},
	} {
		if got := ActiveExperts(c.e, c.k, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("ActiveExperts(%d, %d, %d) = %g, want %g", c.e, c.k, c.n, got, c.want)
		}
	}
}

// mixtral is Mixtral-8x7B's shape (its config.json).
func mixtral() Model {
	return Model{ID: "mixtral-8x7b", Name: "Mixtral-8x7B", Layers: 32, Hidden: 4096, QHeads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 32000, MaxPositions: 32768, Params: 46_700_000_000,
		Experts: 8, ExpertsPerToken: 2, ExpertIntermediate: 14336}
}

// TestMoEStepReadsRoutedExperts: one decode reads two experts' weights per
// layer, a batch of 64 reads all eight, and compute follows the tokens'
// two experts, not all eight.
func TestMoEStepReadsRoutedExperts(t *testing.T) {
	m := mixtral()
	sm, err := NewStepModel(MustGPU("h100-sxm"), m, 2, BF16)
	if err != nil {
		t.Fatal(err)
	}
	expertBytes := func(b Batch) (bytes, flops float64) {
		for _, k := range sm.Kernels(b) {
			if k.Layer == 0 && (k.Name == "experts_gate_up" || k.Name == "experts_down") {
				bytes += k.Bytes
				flops += k.FLOPs
			}
		}
		return
	}
	one := 3 * 4096.0 * 14336 / 2 * 2 // one expert's weights on one of two GPUs, BF16
	b1, f1 := expertBytes(DecodeBatch(1, 100))
	b64, f64 := expertBytes(DecodeBatch(64, 100))
	if r := b1 / one; r < 2 || r > 2.05 {
		t.Errorf("one decode reads %.2f experts' weights per layer, want 2", r)
	}
	if r := b64 / one; r < 7.9 || r > 8.05 {
		t.Errorf("64 decodes read %.2f experts' weights per layer, want about 8", r)
	}
	if r := f64 / f1; math.Abs(r-64) > 0.5 {
		t.Errorf("64 decodes cost %.1f× one decode's expert FLOPs, want 64×", r)
	}
	// A decode of the MoE model is slower than a dense model with the two
	// routed experts' MLP and faster than one with all eight.
	dense := func(inter int) float64 {
		d := m
		d.Experts, d.ExpertsPerToken, d.ExpertIntermediate, d.Intermediate = 0, 0, 0, inter
		s, _ := NewStepModel(MustGPU("h100-sxm"), d, 2, BF16)
		return s.Step(DecodeBatch(32, 500)).Total
	}
	moe := sm.Step(DecodeBatch(32, 500)).Total
	if lo, hi := dense(2*14336), dense(8*14336); moe <= lo || moe >= hi {
		t.Errorf("MoE decode of 32 %.2f ms, want between dense top-2 %.2f and dense all-8 %.2f ms", 1e3*moe, 1e3*lo, 1e3*hi)
	}
}

// TestMoESecondsIsStep: the layout walk prices a MoE step as the kernel
// timeline does, to the last bit, for one launch and for eager launches.
func TestMoESecondsIsStep(t *testing.T) {
	sm, _ := NewStepModel(MustGPU("h100-sxm"), mixtral(), 2, BF16)
	sm.SeqDevice = 10e-6
	b := Batch{Seqs: []Chunk{{NewTokens: 1, Context: 700}, {NewTokens: 37, Context: 512}, {NewTokens: 1, Context: 40}}}
	for _, d := range []Dispatcher{Replay{Launch: GraphLaunch}, Eager{PerLaunch: PerLaunchPython}} {
		sm.Dispatcher = d
		if s, st := sm.Seconds(b), sm.Step(b).Total; s != st {
			t.Errorf("%T: Seconds %.17g, Step %.17g", d, s, st)
		}
	}
}
