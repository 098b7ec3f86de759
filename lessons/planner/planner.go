// Package planner holds the lesson planner: Dynamo's SLA planner over a load
// that rises and falls, within a fixed GPU budget, against a static
// prefill/decode split and one monolithic pool of the same GPUs (the report's
// "Dynamic GPU scheduling": low load one monolithic engine, medium load
// disaggregation, high load scale the engines to demand).
package planner

import (
	"fmt"
	"math"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/planner"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "planner",
	Title:   "The SLA planner: scaling prefill and decode with the load",
	Part:    "Report 003: Dynamic GPU scheduling",
	Summary: "Every adjustment interval Dynamo's SLA planner observes TTFT, ITL and load, predicts the next interval and sets the prefill and decode workers by its formula, within a GPU budget; new workers serve only after their start-up. Over a day of load it meets the three regimes: monolithic at low load, disaggregation at medium, the budget at high.",
	Engine: "NVIDIA Dynamo's SLA planner (components/planner/src/dynamo/planner/utils/planner_core.py @ b6f3161; budget clamp after core/budget.py @ 15a72ce; defaults.py @ 0112772) in core/planner, choosing the pools of Dynamo's disaggregated serving (core/cluster) over vLLM v1 workers (core/scheduler) priced by core/hardware. " +
		"Simplified: each interval is served as a sample of its first seconds from an idle cluster (no queue carried over), and the planner's profiles are priced by the lab's step model instead of pre-deployment profiling.",
	Group: "cluster", Rank: 25, Thumb: scene.KindChart,
	Terms: []lessons.Term{
		{Term: "SLA planner", Aliases: []string{"planner", "autoscaling"}, Definition: "Dynamo's autoscaler: each adjustment interval it predicts the load and sets the number of prefill and decode workers that meet the TTFT and ITL targets.", Find: "adjustment interval"},
		{Term: "correction factor", Definition: "The SLA planner's observed ÷ profiled latency (TTFT for prefill, ITL for decode), which scales its next decision.", Find: "correction"},
		{Term: "GPU budget", Aliases: []string{"max_gpu_budget"}, Definition: "The most GPUs the planner may use; above it, its choice is scaled down.", Find: "budget"},
	},
	Params: []lessons.Param{
		kit.GPUParam,
		{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: lessons.Choice, Choices: kit.ChoicesFirst(kit.ModelIDs(), "llama-3.1-70b")},
		{Key: "weight_dtype", Label: kit.WeightParam.Label, Help: kit.WeightParam.Help, Kind: lessons.Choice, Choices: []string{"fp8", "bf16"}},
		{Key: "tp", Label: "GPUs per worker (TP)", Unit: "GPUs", Help: "Every worker, prefill, decode or monolithic, is a tensor-parallel group of this many GPUs (Dynamo's prefill_engine_num_gpu and decode_engine_num_gpu).", Kind: lessons.Int, Default: 2, Min: 1, Max: 8, Step: 1},
		{Key: "budget_gpus", Label: "GPU budget", Unit: "GPUs", Help: "Dynamo's max_gpu_budget (default 8): the planner's workers never hold more. The static split and the monolithic pool use all of it.", Kind: lessons.Int, Default: planner.DefaultBudget, Min: 2, Max: 32, Step: 1},
		{Key: "static_prefill", Label: "Static split: prefill workers", Help: "The fixed deployment's prefill workers; the rest of the budget decodes. The planner starts from this split too.", Kind: lessons.Int, Default: 2, Min: 1, Max: 31, Step: 1},
		{Key: "curve", Label: "Load curve", Help: "diurnal: a day's rise and fall, lowest at the ends and highest in the middle. azure-conv: the arrival rate of Azure's 2023 conversation trace over its first 300 s (CC-BY 4.0), in as many bins as intervals, scaled to span the low and peak rates. Its load stays high for most of the window: at the default rates, sample_s 1.5 keeps it within the work bound.", Kind: lessons.Choice, Choices: []string{"diurnal", "azure-conv"}},
		{Key: "low_rate", Label: "Lowest load", Unit: "req/s", Kind: lessons.Float, Default: 0.3, Min: 0.1, Max: 50, Step: 0.1},
		{Key: "peak_rate", Label: "Peak load", Unit: "req/s", Kind: lessons.Float, Default: 13, Min: 0.1, Max: 50, Step: 0.1},
		{Key: "intervals", Label: "Adjustment intervals", Help: "How many intervals the day has.", Kind: lessons.Int, Default: 12, Min: 3, Max: 24, Step: 1},
		{Key: "interval_s", Label: "Adjustment interval", Unit: "s", Help: "Dynamo's adjustment_interval (default 180 s): how often the planner observes and decides.", Kind: lessons.Int, Default: planner.DefaultInterval, Min: 10, Max: 3600, Step: 10},
		{Key: "sample_s", Label: "Simulated seconds per interval", Unit: "s", Help: "Each interval is served as a sample: this many seconds of its arrivals, the start-up phase scaled into it.", Kind: lessons.Float, Default: 2.5, Min: 1, Max: 60, Step: 0.5},
		{Key: "startup_s", Label: "Worker start-up time", Unit: "s", Help: "A new worker serves only this long after the planner asks for it (loading weights, capturing CUDA graphs). Workers removed stop at once.", Kind: lessons.Int, Default: 60, Min: 0, Max: 3600, Step: 10},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: lessons.Int, Default: 2500, Min: 16, Max: 16384, Step: 16},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: lessons.Int, Default: 3500, Min: 16, Max: 16384, Step: 16},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: lessons.Int, Default: 100, Min: 2, Max: 1024, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: lessons.Int, Default: 200, Min: 2, Max: 1024, Step: 1},
		{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Help: "The SLO each request is held to. Dynamo's planner default is 500 ms; here 1,000 ms, since a 3,000-token prompt alone takes about 250 ms on the default workers.", Kind: lessons.Float, Default: 1000, Min: 10, Max: 60000, Step: 10},
		{Key: "slo_itl_ms", Label: "SLO: ITL", Unit: "ms", Help: "The planner's ITL target; a request meets the SLO when its mean gap between tokens (TPOT) is within it. Dynamo's default is 50 ms; here 25 ms, since the default decode step is about 17 ms and 50 ms lets even monolithic stalls pass.", Kind: lessons.Float, Default: 25, Min: 1, Max: 1000, Step: 1},
		{Key: "link", Label: "Prefill → decode link", Help: "Measured GPU-to-GPU paths the KV crosses.", Kind: lessons.Choice, Choices: []string{"ib-ndr", "nvlink4", "rdma-8x400", "tcpxo"}},
		kit.SeedParam,
	},
	Check:   checkPlanner,
	Sim:     sim{},
	MaxWork: kit.ServingMaxWork,
	HeavyCorners: []map[string]string{
		// The most requests (an 8B model on single GPUs), the longest
		// prompts, the longest outputs, and the trace's curve.
		{"low_rate": "4", "peak_rate": "4", "sample_s": "1", "intervals": "24", "model": "llama-3.1-8b", "tp": "1"},
		{"low_rate": "5", "peak_rate": "5", "sample_s": "3", "intervals": "3", "prompt_min": "16384", "prompt_max": "16384", "output_min": "2", "output_max": "2"},
		{"low_rate": "3", "peak_rate": "3", "sample_s": "15", "intervals": "3", "output_min": "1024", "output_max": "1024", "prompt_min": "16", "prompt_max": "16"},
		{"curve": "azure-conv", "sample_s": "1.5", "startup_s": "3600", "interval_s": "10"},
	},
}

func init() { lessons.Register(lesson) }

// The report's regimes, as its "Engine Count" recipe states them.
const (
	reportLow    = "Low Load: Single monolithic engine."
	reportMedium = "Medium Load: Disaggregation for better ITL and TTFT."
	reportHigh   = "High Load: Scale engines to meet KV cache demand and queue reduction."
)

// plannerBlock is the KV block size (vLLM's default).
const plannerBlock = 16

// checkPlanner holds the knobs' relations: ordered lengths and rates, a
// budget of whole workers with room for the static split's decode pool,
// a worker that fits, and the work bound.
func checkPlanner(v lessons.Values) error {
	if err := kit.CheckOrdered(v, kit.LengthPairs...); err != nil {
		return err
	}
	if err := kit.CheckOrdered(v, [2]string{"low_rate", "peak_rate"}); err != nil {
		return err
	}
	tp, budget := v.Int("tp"), v.Int("budget_gpus")
	if budget < 2*tp {
		return lessons.Relation("budget_gpus", v.TextOf("budget_gpus"), fmt.Sprintf("at least two workers of %d GPUs (one prefill, one decode): ≥ %d", tp, 2*tp), "tp")
	}
	if sp := v.Int("static_prefill"); sp >= budget/tp {
		return lessons.Relation("static_prefill", v.TextOf("static_prefill"), fmt.Sprintf("fewer than the budget's %d workers, leaving at least one to decode: ≤ %d", budget/tp, budget/tp-1), "budget_gpus")
	}
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	if !kit.TPSplits(m, tp) {
		return kit.TPRelation(m, tp)
	}
	n := v.Int("prompt_max") + v.Int("output_max")
	budgetTokens, _ := kit.VLLMBatch(g)
	fit := hardware.Fit{GPU: g, Model: m, TP: tp, Weights: kit.WeightFormat(v), BatchedTokens: budgetTokens, KVTokens: int64(n), Positions: n}
	if err := kit.CheckFit(v, fit, kit.FitKnobs{hardware.LimitWeights: "tp", hardware.LimitKV: "prompt_max", hardware.LimitPositions: "prompt_max"}); err != nil {
		return err
	}
	reqs, work := plannerWork(v)
	return kit.WorkBound(v, "sample_s", fmt.Sprintf("(3 × prompt + 16 × output tokens) twice, for the planner's and the static split's pools (a prompt is admitted on a prefill and on a decode worker), and (2 × prompt + 16 × output) once, monolithic, over the %d requests sampled from the day", reqs),
		work, kit.ServingCheckWork)
}

// plannerWork bounds the day's simulated work: every interval's sampled
// requests, served by the three deployments.
func plannerWork(v lessons.Values) (reqs int, work int64) {
	for k, rate := range plannerRates(v) {
		for _, q := range plannerStream(v, k, rate) {
			reqs++
			p, o := int64(q.Prompt), int64(q.Output)
			work += 2*(3*p+cluster.DecodeWeight*o) + 2*p + cluster.DecodeWeight*o
		}
	}
	return reqs, work
}

// plannerCount is the requests an interval's sample holds at rate: at
// least one.
func plannerCount(rate, sample float64) int { return max(1, int(math.Round(rate*sample))) }

// plannerRates is the load curve: each interval's arrival rate.
func plannerRates(v lessons.Values) []float64 {
	n, lo, hi := v.Int("intervals"), v.Float("low_rate"), v.Float("peak_rate")
	shape := diurnalShape(n)
	if v.Choice("curve") == "azure-conv" {
		shape = presetShape(n)
	}
	out := make([]float64, n)
	for i, s := range shape {
		out[i] = kit.Round4(lo + (hi-lo)*s)
	}
	return out
}

// diurnalShape rises from 0 to 1 and falls back: (1 − cos 2π(k + ½)/n) / 2
// at each interval's middle.
func diurnalShape(n int) []float64 {
	out := make([]float64, n)
	for k := range out {
		out[k] = (1 - math.Cos(2*math.Pi*(float64(k)+0.5)/float64(n))) / 2
	}
	return out
}

// presetShape is the azure-conv curve's arrivals per bin, n bins over its
// 300 s, scaled to span 0 to 1 (flat at 1 when every bin holds the same).
func presetShape(n int) []float64 {
	counts := make([]float64, n)
	for sec, c := range azureConvPerSecond {
		counts[sec*n/len(azureConvPerSecond)] += float64(c)
	}
	lo, hi := counts[0], counts[0]
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	out := make([]float64, n)
	for k, c := range counts {
		out[k] = 1
		if hi > lo {
			out[k] = (c - lo) / (hi - lo)
		}
	}
	return out
}

// plannerStream is interval k's sample: its arrivals at rate over
// sample_s seconds, with the knobs' lengths, seeded by the seed and k.
func plannerStream(v lessons.Values, k int, rate float64) []workload.Request {
	return workload.Poisson(plannerCount(rate, v.Float("sample_s")), rate, workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")},
		workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}, uint64(v.Int("seed"))*1_000_003+uint64(k))
}
