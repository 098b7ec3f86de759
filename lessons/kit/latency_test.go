package kit

import (
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
)

// The report of three requests worked by hand: means over requests, TPOT
// only over requests of more than one output, end-to-end from arrival to
// the last token, keys and labels by the naming each form promises.
func TestLatencyReportByHand(t *testing.T) {
	ms := []scheduler.RequestMetrics{
		{ID: 0, TTFT: 0.010, TPOT: 0.020, E2E: 0.010 + 9*0.020, Output: 10},  // 190 ms
		{ID: 1, TTFT: 0.030, TPOT: 0.040, E2E: 0.030 + 4*0.040, Output: 5},   // 190 ms
		{ID: 2, TTFT: 0.050, TPOT: 0, E2E: 0.050, Output: 1},                 // no TPOT
		{ID: 3, TTFT: 0.110, TPOT: 0.030, E2E: 0.110 + 19*0.030, Output: 20}, // 680 ms
	}
	l := LatencyReportFrom(ms)
	want := map[string]float64{
		"ttft_mean_ms": 50,                          // (10+30+50+110)/4
		"tpot_mean_ms": 30,                          // (20+40+30)/3, the one-token request left out
		"e2e_mean_ms":  (190 + 190 + 50 + 680) / 4., // 277.5
		"e2e_p50_ms":   190,                         // nearest rank: the 2nd of 4
		"e2e_p99_ms":   680,
	}
	got := l.Metrics()
	if len(got) != len(want) {
		t.Fatalf("%d metrics, want %d", len(got), len(want))
	}
	for _, m := range got {
		if w, ok := want[m.Key]; !ok || !near(m.Value, w) {
			t.Errorf("%s = %g, want %g (known %v)", m.Key, m.Value, w, ok)
		}
		if m.Unit != "ms" || m.Better != lessons.LowerIsBetter {
			t.Errorf("%s: unit %q, better %q; want ms, lower", m.Key, m.Unit, m.Better)
		}
	}
	if s := scheduler.SummariseRequests(ms, scheduler.SLO{}); LatencyReportOf(s) != l {
		t.Errorf("from a Summary %+v, from the requests %+v", LatencyReportOf(s), l)
	}
	for _, c := range []struct {
		ms         []lessons.Metric
		key, label string
	}{
		{l.MetricsAt("_low", " at the lowest rate"), "e2e_mean_ms_low", "Mean end-to-end latency at the lowest rate"},
		{l.MetricsOf("vllm", "vLLM"), "vllm_e2e_mean_ms", "vLLM: Mean end-to-end latency"},
		{l.MetricsSuffixed("_disagg", "Disaggregated"), "e2e_mean_ms_disagg", "Disaggregated: Mean end-to-end latency"},
	} {
		if m := c.ms[2]; m.Key != c.key || m.Label != c.label || !near(m.Value, want["e2e_mean_ms"]) {
			t.Errorf("got %q %q %g, want %q %q", m.Key, m.Label, m.Value, c.key, c.label)
		}
	}
}
