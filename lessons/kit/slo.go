package kit

import (
	"fmt"
	"strings"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/lessons"
)

// The SLO kit: what the lessons that search a capacity under an objective
// (core/slo) share — the objective's knobs beyond the per-request TTFT and
// TPOT limits, the objective those knobs set, its wording and a run's
// latencies in core/slo's terms. Each lesson declares its own TTFT and TPOT
// knobs, whose ranges and help differ (the sandbox allows 0 for none).

// SLOKnobs are the SLO's knobs beyond the per-request TTFT and TPOT
// limits: Sarathi-Serve's p99 TBT and DistServe's attainment target.
var SLOKnobs = []lessons.Param{
	{Key: "slo_p99_tbt_ms", Label: "SLO: p99 time between tokens", Unit: "ms", Help: "The 99th percentile of every gap between output tokens, over all requests (Sarathi-Serve's capacity SLO); 0 for none.", Kind: lessons.Float, Default: 0, Min: 0, Max: 10000, Step: 1, Zero: "none"},
	{Key: "slo_attainment_pct", Label: "SLO: attainment target", Unit: "%", Help: "Share of requests that must meet the TTFT and TPOT limits for a rate to count (DistServe uses 90%).", Kind: lessons.Float, Default: 90, Min: 1, Max: 100, Step: 1},
}

// ObjectiveOf is the SLO the knobs set, in seconds.
func ObjectiveOf(v lessons.Values) slo.Objective {
	return slo.Objective{TTFT: v.Float("slo_ttft_ms") / 1000, TPOT: v.Float("slo_tpot_ms") / 1000,
		P99TBT: v.Float("slo_p99_tbt_ms") / 1000, Target: v.Float("slo_attainment_pct") / 100}
}

// SLOText states an objective, e.g. "TTFT ≤ 450 ms and TPOT ≤ 40 ms for
// 90% of requests, p99 TBT ≤ 100 ms"; a limit of 0 is left out.
func SLOText(o slo.Objective) string {
	var per []string
	if o.TTFT > 0 {
		per = append(per, fmt.Sprintf("TTFT ≤ %g ms", 1000*o.TTFT))
	}
	if o.TPOT > 0 {
		per = append(per, fmt.Sprintf("TPOT ≤ %g ms", 1000*o.TPOT))
	}
	var parts []string
	if len(per) > 0 {
		parts = append(parts, fmt.Sprintf("%s for %g%% of requests", strings.Join(per, " and "), 100*o.Target))
	}
	if o.P99TBT > 0 {
		parts = append(parts, fmt.Sprintf("p99 TBT ≤ %g ms", 1000*o.P99TBT))
	}
	if len(parts) == 0 {
		return "no latency limit"
	}
	return strings.Join(parts, ", ")
}

// Latencies converts a run's finished requests for core/slo.
func Latencies(ms []scheduler.RequestMetrics) []slo.Latency {
	out := make([]slo.Latency, len(ms))
	for i, m := range ms {
		out[i] = slo.Latency{TTFT: m.TTFT, TPOT: m.TPOT, Gaps: m.ITL}
	}
	return out
}

// RateText is an offered rate, e.g. "8 req/s".
func RateText(rate float64) string { return fmt.Sprintf("%.3g req/s", rate) }
