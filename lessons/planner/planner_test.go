package planner

import (
	"testing"

	"github.com/inferlab/inferlab/core/workload"
)

func plannerAt(t *testing.T, set map[string]string) *plannerRun {
	t.Helper()
	v, err := lesson.ResolveChecked(set)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runPlanner(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The default day meets the report's three regimes, in the order the
// load rises: low at the ends, high only at the peak, and the monolithic
// pool as good or better wherever the regime is low.
func TestPlannerDefaultDayShowsTheThreeRegimes(t *testing.T) {
	r := plannerAt(t, nil)
	g := r.regimes
	if len(g.low) == 0 || len(g.medium) == 0 || len(g.high) == 0 {
		t.Fatalf("regimes low %v, medium %v, high %v: want all three", g.low, g.medium, g.high)
	}
	if g.of[0] != "low" || g.of[len(g.of)-1] != "low" {
		t.Errorf("the day's ends are %s and %s, want low", g.of[0], g.of[len(g.of)-1])
	}
	for _, k := range g.high {
		if d := r.intervals[k].decision; d.WantGPUs <= r.cfg.Budget || !d.Clamped {
			t.Errorf("high interval %d: the formula asked %d GPUs of %d (clamped %v)", k+1, d.WantGPUs, r.cfg.Budget, d.Clamped)
		}
	}
	for _, k := range g.low {
		iv := r.intervals[k]
		if iv.mono.attainment < iv.planned.attainment || iv.mono.attainment < iv.static.attainment {
			t.Errorf("low interval %d: monolithic %.2f below planner %.2f or static %.2f", k+1, iv.mono.attainment, iv.planned.attainment, iv.static.attainment)
		}
	}
	for _, k := range g.medium {
		iv := r.intervals[k]
		if max(iv.planned.attainment, iv.static.attainment) <= iv.mono.attainment {
			t.Errorf("medium interval %d: no disaggregated deployment beat monolithic %.2f", k+1, iv.mono.attainment)
		}
	}
	// Over the day the planner beats both fixed deployments on fewer GPUs.
	if d := r.day; d.planned.attainment <= d.static.attainment || d.planned.attainment <= d.mono.attainment || d.meanGPUs >= float64(r.cfg.Budget) {
		t.Errorf("day: planner %.2f on %.1f GPUs, static %.2f, monolithic %.2f on %d", d.planned.attainment, d.meanGPUs, d.static.attainment, d.mono.attainment, r.cfg.Budget)
	}
}

// The planner never holds more GPUs than the budget, and its pools serve
// what it asked for once the start-up time has passed.
func TestPlannerStaysWithinTheBudgetAndServesAfterStartup(t *testing.T) {
	r := plannerAt(t, nil)
	for k, iv := range r.intervals {
		for _, s := range iv.segments {
			if (s.prefill+s.decode)*r.tp > r.cfg.Budget {
				t.Errorf("interval %d: %d + %d workers of %d GPUs over the %d budget", k+1, s.prefill, s.decode, r.tp, r.cfg.Budget)
			}
		}
		if k == 0 {
			continue
		}
		prev := r.intervals[k-1].decision
		last := iv.segments[len(iv.segments)-1]
		if last.prefill != prev.Prefill || last.decode != prev.Decode {
			t.Errorf("interval %d ends with %d + %d serving; the planner asked for %d + %d", k+1, last.prefill, last.decode, prev.Prefill, prev.Decode)
		}
		if up := prev.Prefill > iv.segments[0].prefill; up && (len(iv.segments) < 2 || iv.segments[1].from != r.startup) {
			t.Errorf("interval %d: a new prefill worker served at %v, want after %g s", k+1, iv.segments, r.startup)
		}
	}
}

// A reader would notice: with no start-up time the planner's new workers
// serve at once, and its day meets the SLO at least as often as with a
// start-up of a whole interval.
func TestPlannerStartupTimeCosts(t *testing.T) {
	fast := plannerAt(t, map[string]string{"startup_s": "0"})
	slow := plannerAt(t, map[string]string{"startup_s": "180"})
	if fast.lagInterval() >= 0 {
		t.Errorf("start-up 0: interval %d still had a start-up segment", fast.lagInterval()+1)
	}
	if fast.day.planned.attainment < slow.day.planned.attainment {
		t.Errorf("planner met %.3f with no start-up, %.3f with 180 s", fast.day.planned.attainment, slow.day.planned.attainment)
	}
}

func TestPlannerAzureCurveIsThePresets(t *testing.T) {
	reqs, err := workload.LoadPreset("azure-conv", workload.PresetWindow)
	if err != nil {
		t.Fatal(err)
	}
	var want [300]uint8
	for _, q := range reqs {
		want[min(len(want)-1, int(q.Arrival-reqs[0].Arrival))]++
	}
	if want != azureConvPerSecond {
		t.Error("azureConvPerSecond differs from the azure-conv preset's arrivals per second")
	}
	shape := presetShape(12)
	lo, hi := 1.0, 0.0
	for _, s := range shape {
		lo, hi = min(lo, s), max(hi, s)
	}
	if lo != 0 || hi != 1 {
		t.Errorf("the azure-conv shape spans %g to %g, want 0 to 1", lo, hi)
	}
}

func TestPlannerRefusesABudgetWithoutADecodeWorker(t *testing.T) {
	_, _, err := lesson.Run(map[string]string{"budget_gpus": "8", "tp": "2", "static_prefill": "4"})
	if err == nil {
		t.Fatal("a static split of 4 prefill workers in a 4-worker budget was accepted")
	}
}
