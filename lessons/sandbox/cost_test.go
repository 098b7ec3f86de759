package sandbox

import (
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// The sandbox's cost is every GPU of the cluster (workers × TP) held from
// the first arrival to the last token; its cost step states the capacity
// search's runs' figures.
func TestSandboxCost(t *testing.T) {
	set := map[string]string{"requests": "60", "workers": "2", "tp": "2", "workload": "plain", "usd_per_gpu_hour": "2", "board_power_w": "500"}
	v, errs := lesson.Resolve(set)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w, _ := sandboxGenerated(v)
	r, err := runSandbox(v, w, "")
	if err != nil {
		t.Fatal(err)
	}
	var in, out int64
	start, end := math.Inf(1), math.Inf(-1)
	for _, m := range r.res.Requests {
		in, out = in+int64(m.Prompt), out+int64(m.Output)
		start, end = min(start, m.Arrival), max(end, m.Arrival+m.E2E)
	}
	gpus := 4.0
	if want := 500 * gpus * (end - start) / float64(in+out); math.Abs(r.cost.JoulesPerToken()-want) > 1e-9*want {
		t.Errorf("%g J per token, want 500 W × 4 GPUs × %g s / %d tokens = %g", r.cost.JoulesPerToken(), end-start, in+out, want)
	}
	if want := 2 * gpus * (end - start) / 3600; math.Abs(r.cost.InputUSD+r.cost.OutputUSD-want) > 1e-9*want {
		t.Errorf("$%g in all, want $2 × 4 GPUs × %g s = $%g", r.cost.InputUSD+r.cost.OutputUSD, end-start, want)
	}
	if r.cost.InputUSD <= 0 || r.cost.OutputUSD <= 0 {
		t.Errorf("cost %+v: both phases ran, so both should pay", r.cost)
	}
	s, _, err := lesson.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	if got := lessontest.MetricOf(t, s, "joules_per_token"); got != kit.Sig4(r.cost.JoulesPerToken()) {
		t.Errorf("joules_per_token = %g, want %g", got, kit.Sig4(r.cost.JoulesPerToken()))
	}
	var step *lessons.Step
	for i := range s.Steps {
		if s.Steps[i].Title == "Price and energy against load" {
			step = &s.Steps[i]
		}
	}
	if step == nil {
		t.Fatal("no cost step")
	}
	if !strings.Contains(step.Narration, kit.USDText(r.cost.OutputPerM())) {
		t.Errorf("the cost step does not state the run at the rate's %s: %s", kit.USDText(r.cost.OutputPerM()), step.Narration)
	}
}
