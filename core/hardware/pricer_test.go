package hardware

import (
	"math"
	"math/rand/v2"
	"testing"
)

// mixedDispatch issues decode-only batches of up to 8 sequences with one
// launch and streams the rest in one of three modes, each with its own
// launch cost: a dispatcher whose steps take every path of Seconds, with
// several streamed modes.
type mixedDispatch struct{}

func (mixedDispatch) Dispatch(b Batch, ks []Kernel) Dispatch {
	return Eager{PerLaunch: 9e-6}.Dispatch(b, ks)
}

func (mixedDispatch) OneLaunch(b Batch) (Dispatch, bool) {
	if b.Tokens() != len(b.Seqs) || len(b.Seqs) > 8 {
		return Dispatch{}, false
	}
	// Padded to a power of two, as a captured graph pads.
	pad := 1
	for pad < len(b.Seqs) {
		pad *= 2
	}
	// The launch's cost hangs on something the step's shape does not hold.
	d := Dispatch{Mode: "one", CPUTime: 40e-6}
	if b.Seqs[0].Context%3 == 0 {
		d.CPUTime = 55e-6
	}
	if pad > len(b.Seqs) {
		d.PaddedTokens = pad
	}
	return d, true
}

func (mixedDispatch) Stream(b Batch) (Dispatch, LaunchStream) {
	if b.Tokens() != len(b.Seqs) {
		return Dispatch{Mode: "prefill"}, &eagerStream{per: 17e-6}
	}
	// The mode hangs on something the step's shape does not hold.
	if b.Seqs[0].Context%2 == 0 {
		return Dispatch{Mode: "eager"}, &eagerStream{per: 9e-6}
	}
	return Dispatch{Mode: "slow"}, &eagerStream{per: 15e-6}
}

// pricerBatches are n batches of one to 12 sequences, a few of them
// prefill chunks, with contexts drawn from a narrow range so that shapes
// recur, as a small-batch run's do.
func pricerBatches(n int, seed uint64) []Batch {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]Batch, n)
	for i := range out {
		seqs := make([]Chunk, 1+rng.IntN(12))
		for j := range seqs {
			seqs[j] = Chunk{NewTokens: 1, Context: 100 + rng.IntN(40)}
		}
		if rng.IntN(4) == 0 {
			seqs[0] = Chunk{NewTokens: 64, Context: 64 * rng.IntN(4)}
		}
		out[i] = Batch{Seqs: seqs}
	}
	return out
}

// A Pricer's prices are StepModel.Seconds' to the last bit, found
// remembered or priced afresh, for every dispatch path (one launch,
// streamed in several modes, the kernel list), dense and MoE models, TP
// and pipeline stages.
func TestPricerMatchesSecondsBitForBit(t *testing.T) {
	type setup struct {
		name  string
		model Model
		tp    int
		stage bool
	}
	setups := []setup{
		{"llama-3.1-8b tp1", MustModel("llama-3.1-8b"), 1, false},
		{"llama-3.1-70b tp8", MustModel("llama-3.1-70b"), 8, false},
		{"mixtral tp2", mixtral(), 2, false},
		{"llama-3.1-70b tp4 stage", MustModel("llama-3.1-70b"), 4, true},
	}
	dispatchers := []Dispatcher{mixedDispatch{}, Replay{Launch: 80e-6}, Replay{}, Eager{PerLaunch: 13e-6}, nil}
	batches := pricerBatches(3000, 7)
	for _, s := range setups {
		sm, err := NewStepModel(MustGPU("h100-sxm"), s.model, s.tp, BF16)
		if err != nil {
			t.Fatal(err)
		}
		sm.SeqDevice, sm.NoEmbedding, sm.NoOutput = 3e-6, s.stage, s.stage
		for _, overlap := range []bool{false, true} {
			sm.OverlapHost = overlap
			for _, disp := range dispatchers {
				sm.Dispatcher = disp
				p := NewPricer(sm)
				for i, b := range batches {
					got, want := p.Seconds(b), sm.Seconds(b)
					if math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("%s overlap %v %T, batch %d: Pricer %v (%x), Seconds %v (%x)", s.name, overlap, disp, i, got, math.Float64bits(got), want, math.Float64bits(want))
					}
				}
				if _, list := disp.(Eager); !list && disp != nil && p.hits == 0 {
					t.Errorf("%s %T: no price found remembered over %d recurring batches", s.name, disp, len(batches))
				}
			}
		}
	}
}

// A Pricer keeps its own copy of the model: a change to the caller's
// StepModel after NewPricer moves neither its remembered prices nor its
// new ones.
func TestPricerCopiesTheModel(t *testing.T) {
	sm, err := NewStepModel(MustGPU("h100-sxm"), MustModel("llama-3.1-8b"), 1, BF16)
	if err != nil {
		t.Fatal(err)
	}
	sm.Dispatcher = mixedDispatch{}
	b, c := DecodeBatch(3, 100), DecodeBatch(5, 700)
	want := sm.Seconds(b)
	wantC := sm.Seconds(c)
	p := NewPricer(sm)
	p.Seconds(b)
	sm.Host = HostOverhead{PerStep: 1}
	if got := p.Seconds(b); got != want {
		t.Errorf("remembered price %v after the caller's change, want %v", got, want)
	}
	if got := p.Seconds(c); got != wantC {
		t.Errorf("new price %v after the caller's change, want %v", got, wantC)
	}
}

// When the first pricerTrial steps' shapes seldom recur (large batches
// whose contexts all differ), the Pricer stops remembering and goes on
// pricing as Seconds does.
func TestPricerStopsRememberingShapesThatDoNotRecur(t *testing.T) {
	sm, err := NewStepModel(MustGPU("h100-sxm"), MustModel("llama-3.1-8b"), 1, BF16)
	if err != nil {
		t.Fatal(err)
	}
	sm.Dispatcher = Replay{Launch: 80e-6}
	p := NewPricer(sm)
	for i := range pricerTrial + 100 {
		b := DecodeBatch(64, 1000+i)
		if got, want := p.Seconds(b), sm.Seconds(b); got != want {
			t.Fatalf("step %d: Pricer %v, Seconds %v", i, got, want)
		}
	}
	if p.prices != nil {
		t.Errorf("still remembering after %d steps with %d found", p.priced, p.hits)
	}
}
