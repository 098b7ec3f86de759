package lessons

import (
	"math"
	"strings"
	"testing"
)

// The sweep's cost: idle GPUs are paid for, so a million output tokens cost
// most at the lowest rate and least near saturation; every figure the cost
// step states is the run's; the energy is board power × GPUs × the
// makespan over the tokens.
func TestMeasuringCostAgainstLoad(t *testing.T) {
	v, errs := measuring.Resolve(map[string]string{"duration_s": "10", "rate_min": "0.5", "rate_max": "128", "points": "5"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	_, costs := r.costs()
	lo, best := costs[0], costs[cheapest(costs)]
	if lo.outputPerM() < 3*best.outputPerM() {
		t.Errorf("$%g per million output tokens at %v req/s, $%g at the cheapest rate: want idle GPUs to make light load dear", lo.outputPerM(), r.first().rate, best.outputPerM())
	}
	usd, watts := costRates(v, r.gpu)
	for _, p := range r.points {
		out := p.sum.OutputTokensPerS * p.sum.Makespan
		if want := watts * float64(r.gpus) * p.sum.Makespan / out; math.Abs(p.cost.joulesPerOutput()-want) > 1e-6*want {
			t.Errorf("%v req/s: %g J per output token, want %g W × %d GPUs × %g s / %g tokens = %g", p.rate, p.cost.joulesPerOutput(), watts, r.gpus, p.sum.Makespan, out, want)
		}
		if want := usd * float64(r.gpus) * p.sum.Makespan / 3600; math.Abs(p.cost.inputUSD+p.cost.outputUSD-want) > 1e-9*want {
			t.Errorf("%v req/s: $%g in all, want the GPU-hours' $%g", p.rate, p.cost.inputUSD+p.cost.outputUSD, want)
		}
	}
	st := r.costStep()
	for _, want := range []string{
		usdText(lo.outputPerM()), sig3Text(lo.joulesPerOutput()),
		usdText(best.outputPerM()), usdText(best.inputPerM()),
		usdText(r.last().cost.outputPerM()), sig3Text(r.last().cost.joulesPerOutput()),
		usdText(lo.usdPerHour), comma64(lo.output), rateText(r.points[cheapest(costs)].rate),
	} {
		if !strings.Contains(st.Narration, want) {
			t.Errorf("the cost step does not state %q: %s", want, st.Narration)
		}
	}
	s, _, err := measuring.Run(map[string]string{"duration_s": "10", "rate_min": "0.5", "rate_max": "128", "points": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if got := metricOf(t, s, "usd_per_m_output_tokens"); got != sig4(r.last().cost.outputPerM()) {
		t.Errorf("usd_per_m_output_tokens = %g, want the highest rate's %g", got, sig4(r.last().cost.outputPerM()))
	}
}
