package measuring

import (
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// The sweep's cost: idle GPUs are paid for, so a million output tokens cost
// most at the lowest rate and least near saturation; every figure the cost
// step states is the run's; the energy is board power × GPUs × the
// makespan over the tokens.
func TestMeasuringCostAgainstLoad(t *testing.T) {
	v, errs := lesson.Resolve(map[string]string{"duration_s": "10", "rate_min": "0.5", "rate_max": "128", "points": "5"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	_, costs := r.costs()
	lo, best := costs[0], costs[kit.Cheapest(costs)]
	if lo.OutputPerM() < 3*best.OutputPerM() {
		t.Errorf("$%g per million output tokens at %v req/s, $%g at the cheapest rate: want idle GPUs to make light load dear", lo.OutputPerM(), r.first().rate, best.OutputPerM())
	}
	usd, watts := kit.CostRates(v, r.gpu)
	for _, p := range r.points {
		out := p.sum.OutputTokensPerS * p.sum.Makespan
		if want := watts * float64(r.gpus) * p.sum.Makespan / out; math.Abs(p.cost.JoulesPerOutput()-want) > 1e-6*want {
			t.Errorf("%v req/s: %g J per output token, want %g W × %d GPUs × %g s / %g tokens = %g", p.rate, p.cost.JoulesPerOutput(), watts, r.gpus, p.sum.Makespan, out, want)
		}
		if want := usd * float64(r.gpus) * p.sum.Makespan / 3600; math.Abs(p.cost.InputUSD+p.cost.OutputUSD-want) > 1e-9*want {
			t.Errorf("%v req/s: $%g in all, want the GPU-hours' $%g", p.rate, p.cost.InputUSD+p.cost.OutputUSD, want)
		}
	}
	st := r.costStep()
	for _, want := range []string{
		kit.USDText(lo.OutputPerM()), kit.Sig3Text(lo.JoulesPerOutput()),
		kit.USDText(best.OutputPerM()), kit.USDText(best.InputPerM()),
		kit.USDText(r.last().cost.OutputPerM()), kit.Sig3Text(r.last().cost.JoulesPerOutput()),
		kit.USDText(lo.USDPerHour), kit.Comma64(lo.Output), kit.RateText(r.points[kit.Cheapest(costs)].rate),
	} {
		if !strings.Contains(st.Narration, want) {
			t.Errorf("the cost step does not state %q: %s", want, st.Narration)
		}
	}
	s, _, err := lesson.Run(map[string]string{"duration_s": "10", "rate_min": "0.5", "rate_max": "128", "points": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if got := lessontest.MetricOf(t, s, "usd_per_m_output_tokens"); got != kit.Sig4(r.last().cost.OutputPerM()) {
		t.Errorf("usd_per_m_output_tokens = %g, want the highest rate's %g", got, kit.Sig4(r.last().cost.OutputPerM()))
	}
}
