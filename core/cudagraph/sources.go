package cudagraph

import (
	"maps"
	"slices"

	"github.com/inferlab/inferlab/core/hardware"
)

// sources resolves the tags this package cites that core/hardware does not:
// vLLM's CUDA-graph design and published capture and speed-up figures, each
// an entry of docs/SOURCES.md under its tag. Cite looks in core/hardware first.
var sources = map[string]hardware.Source{
	"VLLM-CG": {Ref: "vllm-project/vllm, vllm/config/compilation.py, vllm/config/vllm.py (_set_cudagraph_sizes), vllm/v1/cudagraph_dispatcher.py, docs/design/cuda_graphs.md",
		Note: "CUDAGraphMode, splitting ops, default capture sizes, padding and dispatch"},
	"VLLM-CGSIZES": {Ref: "vllm-project/vllm @ 000fc94b, vllm/config/vllm.py (VllmConfig._set_cudagraph_sizes)",
		Note: "newest default capture sizes: max_num_batched_tokens appended when it is within the maximum capture size; 1,024 ceiling on Blackwell data-centre GPUs"},
	"VLLM-CGSPEC": {Ref: "vllm-project/vllm, vllm/config/vllm.py @ 09f030e (_set_cudagraph_sizes: decode_query_len = 1 + num_speculative_tokens), vllm/config/compilation.py @ 002284d (adjust_cudagraph_sizes_for_spec_decode), vllm/v1/cudagraph_dispatcher.py @ 009eec3 (initialize_cudagraph_keys)",
		Note: "with speculative decoding the largest capture size is min(2·max_num_seqs·(1 + k), 512, max_num_batched_tokens), sizes are rounded up to multiples of 1 + k for full decode graphs, and full decode keys run from 1 + k to (1 + k)·max_num_seqs"},
	"VLLM-23739": {Ref: "https://github.com/vllm-project/vllm/issues/23739",
		Note: "vLLM log: 53/53 shapes captured, \"Graph capturing finished in 2 secs, took 0.45 GiB\""},
	"VLLM-25444": {Ref: "https://github.com/vllm-project/vllm/pull/25444",
		Note: "FULL_AND_PIECEWISE made the default; Qwen3-0.6B startup 21.7 s → 25.0 s with full graphs"},
	"VLLM-16072": {Ref: "https://github.com/vllm-project/vllm/pull/16072",
		Note: "full CUDA graph in v1: median TPOT −7% vs piecewise for small models"},
	"VLLM-1440": {Ref: "https://github.com/vllm-project/vllm/pull/1440",
		Note: "CUDA graphs for Llama in vLLM 0.2: Llama-2-7B, batch 1, 5 in / 100 out, about 1.05 s with graphs vs 1.2 s without, one GPU (not stated)"},
	"GPTFAST-MODEL": {Ref: "pytorch-labs/gpt-fast @ 03e10bc, model.py and generate.py (sample)",
		Note: "the plain PyTorch Llama block and sampler whose ops eager mode launches one by one"},
}

// Cite resolves a citation tag: core/hardware's (hardware.Cite) or one of
// this package's. The second result is false for an unknown tag.
func Cite(tag string) (hardware.Source, bool) { return hardware.CiteWith(sources, tag) }

// SourceTags returns this package's own tags in sorted order.
func SourceTags() []string { return slices.Sorted(maps.Keys(sources)) }
