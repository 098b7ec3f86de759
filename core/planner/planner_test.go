package planner

import (
	"math"
	"testing"
)

// flat is a profile with fixed figures: prefill 10,000 tokens/s per GPU
// and TTFT isl/10,000 s; decode ITL 10 ms + 1 ms per request, 1,000
// tokens/s per GPU whatever the target.
type flat struct{}

func (flat) PrefillTTFT(isl float64) float64                 { return isl / 10000 }
func (flat) PrefillThroughputPerGPU(float64) float64         { return 10000 }
func (flat) DecodeITL(conc, _ float64) float64               { return 0.010 + 0.001*conc }
func (flat) BestDecodeThroughputPerGPU(_, _ float64) float64 { return 1000 }

func TestPlanFollowsDynamosFormula(t *testing.T) {
	cfg := Config{Interval: 100, PrefillGPUs: 2, DecodeGPUs: 1, Budget: 16, MinEndpoint: 1, ITL: 0.05}
	for _, c := range []struct {
		name     string
		obs      Observation
		next     Load
		p, d     int
		pCorr    float64
		clamped  bool
		wantGPUs int
	}{
		// 1,000 requests × 3,000 tokens / 100 s = 30,000 tok/s over 20,000
		// per engine: 2 prefill; 1,000 × 150 / 100 = 1,500 tok/s over 1,000:
		// 2 decode.
		{"no observation", Observation{}, Load{Requests: 1000, ISL: 3000, OSL: 150}, 2, 2, 1, false, 6},
		// TTFT half the profile's: the prefill load halves (min(1, 0.5)).
		{"fast prefill", Observation{Load: Load{Requests: 1000, ISL: 3000, OSL: 150}, TTFT: 0.15, ITL: 0.02, RequestDuration: 3, DecodeWorkers: 3}, Load{Requests: 1000, ISL: 3000, OSL: 150}, 1, 2, 0.5, false, 4},
		// Queueing (TTFT above the profile) never adds prefill replicas.
		{"queueing", Observation{Load: Load{Requests: 1000, ISL: 3000, OSL: 150}, TTFT: 3, ITL: 0.02, RequestDuration: 3, DecodeWorkers: 3}, Load{Requests: 1000, ISL: 3000, OSL: 150}, 2, 2, 10, false, 6},
		// Nothing to serve: min_endpoint of each.
		{"idle", Observation{}, Load{}, 1, 1, 1, false, 3},
		// 8 prefill (16 GPUs) + 3 decode: 19 > 16, scale 16/19: prefill
		// min(⌊(16−1)/2⌋, ⌊8 × 0.842⌋) = 6, decode ⌊(16 − 12)/1⌋ = 4.
		{"over budget", Observation{}, Load{Requests: 5000, ISL: 3000, OSL: 50}, 6, 4, 1, true, 19},
	} {
		d := cfg.Plan(c.obs, c.next, flat{})
		if d.Prefill != c.p || d.Decode != c.d || d.Clamped != c.clamped || d.WantGPUs != c.wantGPUs || math.Abs(d.PCorrection-c.pCorr) > 1e-9 {
			t.Errorf("%s: %d prefill + %d decode (clamped %v, wanted %d GPUs, p %.3f); want %d + %d (%v, %d, %.3f)",
				c.name, d.Prefill, d.Decode, d.Clamped, d.WantGPUs, d.PCorrection, c.p, c.d, c.clamped, c.wantGPUs, c.pCorr)
		}
		if used := d.Prefill*cfg.PrefillGPUs + d.Decode*cfg.DecodeGPUs; used > cfg.Budget {
			t.Errorf("%s: %d GPUs chosen, budget %d", c.name, used, cfg.Budget)
		}
	}
}

// The decode correction: observed ITL over the profile's at the
// concurrency Little's law gives (requests/s × duration / decode workers).
func TestPlanCorrectsDecodeByLittlesLaw(t *testing.T) {
	cfg := Config{Interval: 100, PrefillGPUs: 1, DecodeGPUs: 1, Budget: 8, MinEndpoint: 1, ITL: 0.05}
	obs := Observation{Load: Load{Requests: 1000, ISL: 1000, OSL: 100}, TTFT: 0.1, ITL: 0.06, RequestDuration: 4, DecodeWorkers: 2}
	d := cfg.Plan(obs, obs.Load, flat{})
	// 10 req/s × 4 s / 2 workers = 20 running: 10 + 20 = 30 ms expected.
	if math.Abs(d.ExpectedITL-0.030) > 1e-12 || math.Abs(d.DCorrection-2) > 1e-9 || math.Abs(d.CorrectedITL-0.025) > 1e-12 {
		t.Errorf("expected ITL %g, correction %g, corrected target %g; want 0.03, 2, 0.025", d.ExpectedITL, d.DCorrection, d.CorrectedITL)
	}
}

func TestConstantPredictsTheLastLoad(t *testing.T) {
	if got := Constant(nil); got != (Load{}) {
		t.Errorf("no history: %+v", got)
	}
	h := []Load{{Requests: 1}, {Requests: 7, ISL: 2, OSL: 3}}
	if got := Constant(h); got != h[1] {
		t.Errorf("Constant = %+v, want %+v", got, h[1])
	}
}

func TestValidateRefusesAnUnusableBudget(t *testing.T) {
	if err := (Config{Interval: 180, PrefillGPUs: 4, DecodeGPUs: 4, Budget: 7, MinEndpoint: 1, ITL: 0.05}).Validate(); err == nil {
		t.Error("a 7-GPU budget for two 4-GPU engines was accepted")
	}
	if err := (Config{Interval: 180, PrefillGPUs: 4, DecodeGPUs: 4, Budget: 8, MinEndpoint: 1, ITL: 0.05}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestPoolServesNewWorkersAfterStartup(t *testing.T) {
	p := NewPool(2)
	p.Scale(100, 4, 60)
	if p.Serving(100) != 2 || p.Serving(159) != 2 || p.Serving(160) != 4 || p.Target() != 4 {
		t.Errorf("serving %d at 100 s, %d at 159 s, %d at 160 s, target %d; want 2, 2, 4, 4", p.Serving(100), p.Serving(159), p.Serving(160), p.Target())
	}
	if ch := p.Changes(100, 280); len(ch) != 1 || ch[0] != 160 {
		t.Errorf("changes %v, want [160]", ch)
	}
	// Scaled down to 3 before the new ones serve: one starting worker goes.
	p.Scale(120, 3, 60)
	if p.Serving(120) != 2 || p.Serving(200) != 3 {
		t.Errorf("after scaling to 3: %d serving at 120 s, %d at 200 s; want 2, 3", p.Serving(120), p.Serving(200))
	}
	// Down to 1: the starting worker first, then one serving, at once.
	p.Scale(130, 1, 60)
	if p.Serving(130) != 1 || p.Serving(1000) != 1 {
		t.Errorf("after scaling to 1: %d serving, %d later; want 1, 1", p.Serving(130), p.Serving(1000))
	}
}
