package cudagraph

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// Seconds prices a step from its layout (one launch, or launches streamed
// kernel by kernel) instead of Step's kernel and launch lists, and a
// hardware.Pricer as Seconds does or from memory. They must agree to the
// last bit for every mode and batch shape: the lessons' figures are
// compared byte for byte.
func TestSecondsMatchesStepBitForBit(t *testing.T) {
	batches := []hardware.Batch{
		hardware.DecodeBatch(1, 0),
		hardware.DecodeBatch(3, 1000),
		hardware.DecodeBatch(250, 4096),
		hardware.DecodeBatch(600, 100), // above the largest capture size
		hardware.PrefillBatch(1, 2048),
		{Seqs: []hardware.Chunk{{NewTokens: 1, Context: 10}, {NewTokens: 97, Context: 5}, {NewTokens: 1, Context: 3000}}},
		{Seqs: []hardware.Chunk{{NewTokens: 300, Context: 0}, {NewTokens: 1, Context: 77}}},
	}
	checked := 0
	for _, g := range hardware.GPUs() {
		for _, id := range []string{"llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b"} {
			m := hardware.MustModel(id)
			for _, tp := range []int{1, 2, 8} {
				sm, err := hardware.NewStepModel(g, m, tp, hardware.BF16)
				if err != nil {
					continue
				}
				for _, overlap := range []bool{false, true} {
					sm.OverlapHost = overlap
					for _, mode := range Modes() {
						d := New(mode, 256, 8192)
						d.PieceLaunch = 7e-6
						for _, disp := range []hardware.Dispatcher{d, hardware.Eager{PerLaunch: 13e-6}, hardware.Replay{Launch: 80e-6}, hardware.Replay{}, nil} {
							sm.Dispatcher = disp
							p := hardware.NewPricer(sm)
							for _, b := range batches {
								got, want := sm.Seconds(b), sm.Step(b).Total
								if math.Float64bits(got) != math.Float64bits(want) {
									t.Fatalf("%s %s tp%d %s %T: Seconds %v (%x) vs Step %v (%x)", g.ID, id, tp, mode, disp, got, math.Float64bits(got), want, math.Float64bits(want))
								}
								// A Pricer's, priced afresh and then found remembered.
								for range 2 {
									if got := p.Seconds(b); math.Float64bits(got) != math.Float64bits(want) {
										t.Fatalf("%s %s tp%d %s %T: Pricer %v (%x) vs Step %v (%x)", g.ID, id, tp, mode, disp, got, math.Float64bits(got), want, math.Float64bits(want))
									}
								}
								checked++
							}
						}
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d cases checked", checked)
	}
}

// A dispatcher that is neither OneLaunch nor Streaming takes Step's path.
type listOnly struct{ d Dispatcher }

func (l listOnly) Dispatch(b hardware.Batch, ks []hardware.Kernel) hardware.Dispatch {
	return l.d.Dispatch(b, ks)
}

func TestSecondsFallsBackToStep(t *testing.T) {
	sm, err := hardware.NewStepModel(hardware.MustGPU("h100-sxm"), hardware.MustModel("llama-3.1-8b"), 1, hardware.BF16)
	if err != nil {
		t.Fatal(err)
	}
	sm.Dispatcher = listOnly{New(FullAndPiecewise, 256, 8192)}
	b := hardware.DecodeBatch(9, 100)
	if got, want := sm.Seconds(b), sm.Step(b).Total; got != want {
		t.Errorf("Seconds %v, Step %v", got, want)
	}
}
