package kit

import (
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
)

// LatencyReport is a serving run's latencies as engines' own benchmarks
// report them: vLLM's benchmark_serving and inference-perf print the mean
// beside the percentiles of time to first token and time per output token,
// and the end-to-end latency of a request (arrival to last token). A
// lesson's own percentiles stay in the lesson; LatencyReport's metrics are
// what it adds to them: mean TTFT, mean TPOT, and end-to-end mean, p50 and
// p99. Every figure is lower-is-better.
type LatencyReport struct {
	// TTFT is arrival to first token; TPOT is (last − first token) /
	// (outputs − 1) per request of more than one output (vLLM's TPOT,
	// averaged over requests, not tokens); E2E is arrival to last token.
	TTFT, TPOT, E2E scheduler.Percentiles
}

// LatencyReportOf is the report of a run already summarised.
func LatencyReportOf(s scheduler.Summary) LatencyReport {
	return LatencyReport{TTFT: s.TTFT, TPOT: s.TPOT, E2E: s.E2E}
}

// LatencyReportFrom is the report of a run's finished requests. It reads
// one figure per request, never the gaps between tokens, so a lesson that
// summarised its gaps itself does not sort them twice.
func LatencyReportFrom(ms []scheduler.RequestMetrics) LatencyReport {
	ttft, tpot, e2e := make([]float64, 0, len(ms)), make([]float64, 0, len(ms)), make([]float64, 0, len(ms))
	for _, m := range ms {
		ttft, e2e = append(ttft, m.TTFT), append(e2e, m.E2E)
		if m.Output > 1 {
			tpot = append(tpot, m.TPOT)
		}
	}
	return LatencyReport{TTFT: scheduler.Summarise(ttft), TPOT: scheduler.Summarise(tpot), E2E: scheduler.Summarise(e2e)}
}

// Metrics are the report's figures for a lesson that runs one server.
func (l LatencyReport) Metrics() []lessons.Metric { return l.MetricsAt("", "") }

// MetricsAt are the figures of one of several settings a lesson runs,
// keyed "e2e_mean_ms" + suffix and labelled with where appended ("_low",
// " at the lowest rate").
func (l LatencyReport) MetricsAt(suffix, where string) []lessons.Metric {
	ms := []lessons.Metric{
		{Key: "ttft_mean_ms", Label: "Mean TTFT", Value: Ms(l.TTFT.Mean)},
		{Key: "tpot_mean_ms", Label: "Mean TPOT (per request)", Value: Ms(l.TPOT.Mean)},
		{Key: "e2e_mean_ms", Label: "Mean end-to-end latency", Value: Ms(l.E2E.Mean)},
		{Key: "e2e_p50_ms", Label: "End-to-end latency p50", Value: Ms(l.E2E.P50)},
		{Key: "e2e_p99_ms", Label: "End-to-end latency p99", Value: Ms(l.E2E.P99)},
	}
	for i := range ms {
		ms[i].Key += suffix
		ms[i].Label += where
		ms[i].Unit, ms[i].Better = "ms", lessons.LowerIsBetter
	}
	return ms
}

// MetricsOf are the figures of one of several servers a lesson compares,
// keyed "KEY_e2e_mean_ms" and labelled "NAME: Mean end-to-end latency".
func (l LatencyReport) MetricsOf(key, name string) []lessons.Metric {
	ms := l.Metrics()
	for i := range ms {
		ms[i].Key = key + "_" + ms[i].Key
		ms[i].Label = name + ": " + ms[i].Label
	}
	return ms
}

// MetricsSuffixed are MetricsOf with the key's suffix after the figure:
// "e2e_mean_ms_kv_aware".
func (l LatencyReport) MetricsSuffixed(suffix, name string) []lessons.Metric {
	ms := l.MetricsAt(suffix, "")
	for i := range ms {
		ms[i].Label = name + ": " + ms[i].Label
	}
	return ms
}
