package hardware

import (
	"maps"
	"slices"
)

// costSources resolves the tags the step-time model and its validation
// cite, entries of docs/SOURCES.md like sources. They are kept apart from
// sources because sources_test.go requires every tag there to be cited by a
// GPU or Model profile, which these measurement and overhead tags are not.
// Cite looks in both.
var costSources = map[string]Source{
	// Per-operator and overhead measurements.
	"VIDUR-NET":    {Ref: "microsoft/vidur @ 7d47513, data/profiling/network/{h100_dgx,a100_dgx}/{all_reduce,send_recv}.csv", Note: "NCCL all-reduce and send/recv latency and bus bandwidth, 8×H100 and 8×A100"},
	"VIDUR-CPU":    {Ref: "microsoft/vidur @ 6d98aa8 (parent of bee57da), data/profiling/a100/cpu_overheads.csv", Note: "vLLM 0.2/0.3 host overhead per step on A100: schedule, prepare, sample, process outputs, graph launch"},
	"SGL-2904":     {Ref: "https://github.com/sgl-project/sglang/pull/2904", Note: "custom one-shot all-reduce latency on H100, TP 2/4/8"},
	"HAZY":         {Ref: "https://hazyresearch.stanford.edu/blog/2025-05-27-no-bubbles", Note: "≈1.3 µs GPU gap per kernel inside a CUDA graph on H100"},
	"PEGA-3":       {Ref: "https://susun-blog.com/blog/pegainfer-3-cuda-graph", Note: "cudaLaunchKernel costs 4–6 µs of CPU from a C++/Rust engine"},
	"NUMBA-3003":   {Ref: "https://github.com/numba/numba/issues/3003", Note: "empty-kernel launch from Python: 20.5 µs"},
	"GPTFAST-BLOG": {Ref: "https://pytorch.org/blog/accelerating-generative-ai-2/", Note: "gpt-fast eager baseline 25.5 tok/s vs compiled 107 tok/s: PyTorch eager overhead per op"},
	"AZ-GB200":     {Ref: "https://techcommunity.microsoft.com/blog/azurehighperformancecomputingblog/azure%E2%80%99s-nd-gb200-v6-delivers-record-performance-for-inference-workloads/4399253", Note: "GB200 HBM microbenchmark at 92% of peak"},
	"NVBW-42":      {Ref: "https://github.com/NVIDIA/nvbandwidth/issues/42", Note: "A100 H2D over PCIe Gen4: 25.13 GB/s of 31.5"},
	"AZ-NHC":       {Ref: "https://github.com/Azure/azurehpc-health-checks/pull/38", Note: "health thresholds: PCIe 24/52 GB/s, NCCL 228/460 GB/s"},
	"VLLM-CAR":     {Ref: "vllm-project/vllm, vllm/distributed/device_communicators/custom_all_reduce.py", Note: "CustomAllreduce: world sizes 2, 4, 6, 8; max_size 8 MiB; full NVLink required above two GPUs (two PCIe GPUs with P2P allowed)"},
	"VLLM-2192":    {Ref: "https://github.com/vllm-project/vllm/pull/2192", Note: "custom all-reduce under CUDA graphs: Llama 70B TP4 A100-80G, 256 in/out, batch 64, 16.37 s → 14.57 s"},
	"VLLM-10058":   {Ref: "https://github.com/vllm-project/vllm/pull/10058", Note: "V1 piecewise CUDA graphs: benchmark_latency Llama-3.1-8B bf16 (batch 8, 32 in / 128 out): V1 1.26 s without / 1.04 s with piecewise graphs; V0 1.10 s without / 0.99 s with graphs"},
	"VLLM-10511":   {Ref: "https://github.com/vllm-project/vllm/pull/10511", Note: "vLLM memory profiling log, Meta-Llama-3-8B on H100: weights 14.96 GiB, non_torch_memory 1.79 GiB (TP 1) / 3.58 GiB (TP 2), PyTorch activation peak 1.26 GiB"},
	"VLLM-LLAMA":   {Ref: "vllm-project/vllm, vllm/model_executor/models/llama.py", Note: "LlamaDecoderLayer: the kernels one layer issues"},
	"TRT-OVERLAP":  {Ref: "https://nvidia.github.io/TensorRT-LLM/latest/features/overlap-scheduler.html", Note: "TensorRT-LLM overlap scheduler hides host work behind the GPU step"},

	// Serving measurements used as validation points.
	"TRT-PERF":    {Ref: "NVIDIA/TensorRT-LLM, docs/source/performance.md", Note: "TensorRT-LLM first-token latency (v0.5) and peak throughput (v0.6.1) on A100, H100, L40S"},
	"LAMBDA-VLLM": {Ref: "LambdaLabsML/vllm-benchmark, benchmark_v0.md", Note: "vLLM 0.5.4 vs 0.6.0 on H100: throughput and median TPOT"},
	// TensorRT-LLM's note on its GQA decode kernel,
	// which explains the pre-v0.8 70B long-output throughputs.
	"TRT-XQA": {Ref: "NVIDIA/TensorRT-LLM, docs/source/blogs/XQA-kernel.md", Note: "XQA kernel for MQA/GQA generation: 1.9–2.4× Llama-70B throughput at 128 in / 2048 out (v0.8)"},
}

// Cite resolves any tag this package cites: a profile's source (see
// SourceByTag) or one of the step-time model's. The second result is false
// for an unknown tag.
func Cite(tag string) (Source, bool) {
	if s, ok := SourceByTag(tag); ok {
		return s, true
	}
	s, ok := costSources[tag]
	if !ok {
		return Source{}, false
	}
	s.Tag = tag
	return s, true
}

// CiteWith resolves tag through Cite, then through extra: a package that
// cites sources of its own (core/cudagraph, core/cluster) keeps them in a
// map and resolves every tag it uses with this.
func CiteWith(extra map[string]Source, tag string) (Source, bool) {
	if s, ok := Cite(tag); ok {
		return s, true
	}
	s, ok := extra[tag]
	if !ok {
		return Source{}, false
	}
	s.Tag = tag
	return s, true
}

// CostSourceTags returns the step-time model's own tags in sorted order.
func CostSourceTags() []string {
	return slices.Sorted(maps.Keys(costSources))
}
