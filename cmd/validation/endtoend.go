package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/inferlab/inferlab/lessons"
)

// endToEnd is one published end-to-end serving result beside the lab's
// figure for the closest setup a lesson can express. The lab's figure is
// computed by running the lesson (Run); nothing is typed in but the
// published figure.
type endToEnd struct {
	// Source cites the publication (upstream URL).
	Source string
	// Result says what was measured, and in which setup.
	Result string
	// Lesson and Set are the lab's closest setup, as `inferlab run
	// Lesson --set k=v ...` takes it.
	Lesson string
	Set    []string
	// Figure reads the lab's figure from the run's metrics.
	Figure func(m map[string]float64) float64
	// What names the lab's figure (the metrics it comes from).
	What string
	Unit string
	// Published is the publication's figure; Tolerance the allowed
	// |lab − published| / published.
	Published, Tolerance float64
	// Miss, when set, says why the lab is expected outside the
	// tolerance; the test then holds the miss to its direction (Below).
	Miss  string
	Below bool
}

// metric reads one metric.
func metric(key string) func(map[string]float64) float64 {
	return func(m map[string]float64) float64 { return m[key] }
}

// ratio reads a quotient of two metrics.
func ratio(num, den string) func(map[string]float64) float64 {
	return func(m map[string]float64) float64 { return m[num] / m[den] }
}

// sarathiSet is the Sarathi-Serve-like setup of measuring: Mistral-7B on
// one A100, a p99 TBT SLO of 50 ms (five times the lab's decode step
// without prefills), chunks of 512 tokens against 8,192 (whole prompts).
var sarathiSet = []string{"gpu=a100-80gb-sxm", "model=mistral-7b-v0.1", "max_num_seqs=128", "max_num_batched_tokens=512", "compare_budget=8192",
	"slo_p99_tbt_ms=50", "slo_ttft_ms=2000", "slo_tpot_ms=100", "rate_min=0.5", "rate_max=64", "points=8", "duration_s=10"}

// endToEndCases are the published results, papers first.
func endToEndCases() []endToEnd {
	return []endToEnd{
		{Source: "vLLM, Kwon et al., SOSP'23, Fig. 2 (https://arxiv.org/abs/2309.06180)", Result: "share of KV memory holding token states under vLLM's paging",
			Lesson: "garage", Set: []string{"max_context=2048"}, Figure: metric("paged_utilization_pct"), What: "paged_utilization_pct", Unit: "%", Published: 96.3, Tolerance: 0.05},
		{Source: "vLLM, Kwon et al., SOSP'23, Fig. 2 (https://arxiv.org/abs/2309.06180)", Result: "share of KV memory holding token states when each request reserves the maximum length (Orca (Max))",
			Lesson: "garage", Set: []string{"max_context=2048", "reserve=max"}, Figure: metric("contiguous_utilization_pct"), What: "contiguous_utilization_pct", Unit: "%", Published: 20.4, Tolerance: 0.25,
			Miss: "the lab's prompts (512–1,536 tokens) fill a 2,048-token reservation far more than the paper's traces do; the share is mean length over reservation"},
		{Source: "Sarathi-Serve, Agrawal et al., OSDI'24, §5 (https://arxiv.org/abs/2403.02310)", Result: "serving capacity of chunked prefill over vLLM without chunking, Mistral-7B on one A100, P99 TBT SLO",
			Lesson: "measuring", Set: sarathiSet, Figure: metric("capacity_ratio"), What: "capacity_ratio (capacity_req_s / capacity_compare_req_s)", Unit: "×", Published: 2.6, Tolerance: 0.3},
		{Source: "TensorRT-LLM v0.5, docs/source/performance.md (https://github.com/NVIDIA/TensorRT-LLM)", Result: "first-token latency, LLaMA-7B FP16, A100, batch 1, 2,048-token prompt",
			Lesson: "roofline", Set: []string{"gpu=a100-80gb-sxm", "model=llama-2-7b", "prompt=2048"}, Figure: metric("prefill_ms"), What: "prefill_ms", Unit: "ms", Published: 133, Tolerance: 0.10},
		{Source: "TensorRT-LLM v0.5, docs/source/performance.md (https://github.com/NVIDIA/TensorRT-LLM)", Result: "first-token latency, LLaMA-7B FP16, A100, batch 1, 128-token prompt",
			Lesson: "roofline", Set: []string{"gpu=a100-80gb-sxm", "model=llama-2-7b", "prompt=128"}, Figure: metric("prefill_ms"), What: "prefill_ms", Unit: "ms", Published: 16, Tolerance: 0.25, Below: true,
			Miss: "roofline prices the kernels alone; a 128-token prefill is short enough that the engine's fixed per-step cost (launches, sampling), which the lesson leaves out, is a third of it"},
		{Source: "gpt-fast README (https://github.com/pytorch-labs/gpt-fast)", Result: "decode speed, Llama-2-7B bf16, batch 1, one A100-80GB",
			Lesson: "roofline", Set: []string{"gpu=a100-80gb-sxm", "model=llama-2-7b", "batch=1", "context=205"}, Figure: metric("decode_tokens_per_s"), What: "decode_tokens_per_s", Unit: "tok/s", Published: 104.9, Tolerance: 0.10},
		{Source: "TensorRT-LLM v0.6.1, docs/source/performance.md (https://github.com/NVIDIA/TensorRT-LLM)", Result: "output throughput, LLaMA-7B FP16, A100, batch 60, 128 in / 2,048 out",
			Lesson: "roofline", Set: []string{"gpu=a100-80gb-sxm", "model=llama-2-7b", "batch=60", "context=1152"}, Figure: metric("decode_tokens_per_s"), What: "decode_tokens_per_s (decode at the mean context, 128 + 2,048 / 2; the one prefill is under 1% of the run)", Unit: "tok/s", Published: 1928, Tolerance: 0.15},
		{Source: "vLLM v0.19.0 start-up log, llm-d-planner accuracy/results/v0.19.0 @ d3121e0 (https://github.com/llm-d-incubation/llm-d-planner)", Result: "GPU KV cache size, Llama-3.1-8B bf16, one H100, gpu_memory_utilization 0.95, max_model_len 16,384",
			Lesson: "kv-budget", Set: []string{"gpu_memory_utilization=0.95", "max_model_len=16384"}, Figure: metric("kv_tokens"), What: "kv_tokens", Unit: "tokens", Published: 476016, Tolerance: 0.05},
		{Source: "vLLM v0.19.0 start-up log, llm-d-planner accuracy/results/v0.19.0 @ d3121e0 (https://github.com/llm-d-incubation/llm-d-planner)", Result: "GPU KV cache size, Qwen2.5-7B-Instruct bf16, one H100, gpu_memory_utilization 0.95, max_model_len 8,192",
			Lesson: "kv-budget", Set: []string{"model=qwen2.5-7b", "gpu_memory_utilization=0.95"}, Figure: metric("kv_tokens"), What: "kv_tokens", Unit: "tokens", Published: 1096000, Tolerance: 0.05},
		{Source: "vLLM v0.19.0 start-up log, llm-d-planner accuracy/results/v0.19.0 @ d3121e0 (https://github.com/llm-d-incubation/llm-d-planner)", Result: "GPU KV cache size, Llama-3.1-8B bf16 weights, fp8 KV, one H100, gpu_memory_utilization 0.95, max_model_len 8,192",
			Lesson: "kv-budget", Set: []string{"gpu_memory_utilization=0.95", "kv_cache_dtype=fp8"}, Figure: metric("kv_tokens"), What: "kv_tokens", Unit: "tokens", Published: 952032, Tolerance: 0.05},
		{Source: "NVIDIA Dynamo architecture (https://github.com/ai-dynamo/dynamo/blob/main/docs/architecture/architecture.md)", Result: "throughput per GPU, disaggregated over aggregated, R1-Distill-Llama-70B FP8 on H100, one node",
			Lesson: "disaggregation", Set: []string{"link=nvlink4"}, Figure: ratio("throughput_per_gpu_disagg", "throughput_per_gpu_monolithic"), What: "throughput_per_gpu_disagg / throughput_per_gpu_monolithic", Unit: "×", Published: 1.3, Tolerance: 0.15, Below: true,
			Miss: "the lesson serves bf16 weights with one TP for both pools at a load both deployments keep up with, so both serve every request; Dynamo's gain is measured at saturation with FP8 and per-pool TP"},
		{Source: "SGLang v0.4 blog (https://lmsys.org/blog/2024-12-04-sglang-v0-4/)", Result: "cache hit rate of the cache-aware router over round robin",
			Lesson: "smart-routing", Set: nil, Figure: ratio("hit_rate_pct_kv_aware", "hit_rate_pct_round_robin"), What: "hit_rate_pct_kv_aware / hit_rate_pct_round_robin", Unit: "×", Published: 3.8, Tolerance: 0.25, Below: true,
			Miss: "the lesson's four system prompts over eight workers leave round robin a 35% hit rate already; SGLang's benchmark has many more shared prefixes than workers, where round robin hits far less"},
		{Source: "NVIDIA Dynamo architecture (https://github.com/ai-dynamo/dynamo/blob/main/docs/architecture/architecture.md)", Result: "TTFT of KV-aware routing over random routing, R1-Distill-Llama-70B, 100K real requests",
			Lesson: "smart-routing", Set: nil, Figure: ratio("ttft_mean_ms_round_robin", "ttft_mean_ms_kv_aware"), What: "ttft_mean_ms_round_robin / ttft_mean_ms_kv_aware", Unit: "×", Published: 3, Tolerance: 0.25, Below: true,
			Miss: "the lesson's Llama-3.1-8B prefills 2,048–4,096-token prompts in tens of ms at a light load, so a miss costs little; Dynamo's 70B under load queues behind recomputed prefixes"},
	}
}

// endToEndResult is a case with the lab's figure.
type endToEndResult struct {
	endToEnd
	Lab, Error float64
	Within     bool
}

// command is the case's CLI line.
func (c endToEnd) command() string {
	var b strings.Builder
	b.WriteString("inferlab run " + c.Lesson)
	for _, kv := range c.Set {
		b.WriteString(" --set " + kv)
	}
	return b.String()
}

// runEndToEnd runs every case through the lessons package.
func runEndToEnd() ([]endToEndResult, error) {
	var out []endToEndResult
	for _, c := range endToEndCases() {
		l := lessons.Get(c.Lesson)
		if l == nil {
			return nil, fmt.Errorf("validation: no lesson %q", c.Lesson)
		}
		raw := map[string]string{}
		for _, kv := range c.Set {
			k, v, _ := strings.Cut(kv, "=")
			raw[k] = v
		}
		s, _, err := l.Run(raw)
		if err != nil {
			return nil, fmt.Errorf("validation: %s: %w", c.command(), err)
		}
		m := map[string]float64{}
		for _, x := range s.Metrics {
			m[x.Key] = x.Value
		}
		lab := c.Figure(m)
		e := (lab - c.Published) / c.Published
		out = append(out, endToEndResult{endToEnd: c, Lab: lab, Error: e, Within: math.Abs(e) <= c.Tolerance})
	}
	return out, nil
}

// figure formats a value in its unit.
func figure(x float64, unit string) string {
	switch unit {
	case "tokens":
		return fmt.Sprintf("%.0f tokens", x)
	case "×":
		return fmt.Sprintf("%.2f×", x)
	case "%":
		return fmt.Sprintf("%.1f%%", x)
	}
	return fmt.Sprintf("%.3g %s", x, unit)
}

// endToEndMarkdown renders the cases as a section of docs/VALIDATION.md.
func endToEndMarkdown(rs []endToEndResult) string {
	var sb strings.Builder
	within := 0
	for _, r := range rs {
		if r.Within {
			within++
		}
	}
	sb.WriteString("\n# End-to-end validation\n\n")
	sb.WriteString("Each row puts a published end-to-end serving result beside the lab's figure for the closest setup a lesson can express,\n")
	sb.WriteString("computed by running the command shown (cmd/validation runs each through the lessons package). Error is\n")
	sb.WriteString("(lab − published) / published. The test (`go test ./cmd/validation`) fails when a row expected within its tolerance\n")
	fmt.Fprintf(&sb, "drifts out of it, or a named miss changes direction. %d of %d rows are within their tolerance.\n\n", within, len(rs))
	sb.WriteString("| Source | Published result | Lab command | Lab figure | Lab | Published | Error | Tolerance | Verdict |\n")
	sb.WriteString("|---|---|---|---|---:|---:|---:|---:|---|\n")
	for _, r := range rs {
		verdict := "within"
		if !r.Within {
			dir := "above"
			if r.Lab < r.Published {
				dir = "below"
			}
			verdict = dir + ": " + r.Miss
		}
		fmt.Fprintf(&sb, "| %s | %s | `%s` | %s | %s | %s | %+.1f%% | ±%.0f%% | %s |\n",
			r.Source, r.Result, r.command(), r.What, figure(r.Lab, r.Unit), figure(r.Published, r.Unit), 100*r.Error, 100*r.Tolerance, verdict)
	}
	return sb.String()
}
