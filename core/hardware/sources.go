package hardware

import (
	"maps"
	"slices"
)

// Source resolves one citation tag: an entry of docs/SOURCES.md under the
// tag's name.
type Source struct {
	// Tag is the bracketed name used in comments, without brackets,
	// e.g. "HPC-H100" (docs/SOURCES.md#hpc-h100).
	Tag string
	// Ref is where the figure can be checked: a URL, or a repository and
	// path when the source is a file rather than a page.
	Ref string
	// Note says what the source is, or what it contributes, in a few words.
	Note string
}

// sources lists every tag a profile in this package cites. The entries are
// those of docs/SOURCES.md; docs/docs_test.go fails when a tag has no entry
// there.
var sources = map[string]Source{
	// GPU specifications.
	"HPC-H100":    {Ref: "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html", Note: "NVIDIA H100 SXM/PCIe spec table with the \"shown with sparsity\" footnote"},
	"KLK-H100":    {Ref: "https://glennklockwood.com/garden/processors/h100", Note: "H100 summary (dense/sparse columns shifted)"},
	"KLK-A100":    {Ref: "https://glennklockwood.com/garden/processors/A100", Note: "A100 summary citing the NVIDIA datasheet"},
	"UPB-A100":    {Ref: "https://upb-pc2.atlassian.net/wiki/spaces/PC2DOK/pages/1900609/NVIDIA+A100+40GB+with+NVLINK", Note: "A100 40GB with NVLink, cluster documentation"},
	"TC-A100":     {Ref: "https://www.thundercompute.com/blog/nvidia-a100-specs-full-guide", Note: "A100 variants: memory, bandwidth, power"},
	"FUD-A100":    {Ref: "https://fudzilla.com./news/ai/50832-nvidia-unveils-the-a100-tensor-core-gpu", Note: "12 NVLink links, 600 GB/s; PCIe Gen4 31.5 GB/s per direction"},
	"H100PCIE-PB": {Ref: "https://manuals.plus/m/56b0c3ef7d0a1c470c0af8f05a0bd1f29a778007472ba941201fbbb185c9bccd", Note: "NVIDIA H100 PCIe product brief PB-11133-001"},
	"LZW-H200":    {Ref: "https://lzwjava.github.io/nvidia-h200-gpu-specs-en", Note: "H200: 141 GB HBM3e, 4.8 TB/s"},
	"GEEK-H200":   {Ref: "https://geektopia.es/es/technology/2023/11/13/noticias/nvidia-anuncia-la-aceleradora-h200-tiene-141-gb-de-hbm3e.html", Note: "H200 announcement: 141 GB HBM3e"},
	"MLP-LENOVO":  {Ref: "mlcommons/inference_results_v4.1, closed/Lenovo/results/H200_SXM_141GBx8_TRT/README.md", Note: "MLPerf system description: 18x NVLink4 900 GB/s, PCIe Gen5 x16"},
	"KLK-B200":    {Ref: "https://glennklockwood.com/garden/processors/B200", Note: "B200 at 1,000 W and GB200 at 1,200 W"},
	"VERDA":       {Ref: "https://verda.com/blog/gb300-nvl72-architecture", Note: "dense per-GPU table for B200/GB200/B300/GB300"},
	"VULTR-B200":  {Ref: "https://docs.vultr.com/inference-cookbook/cuda/getting-started/hardware-overview", Note: "HGX B200: 179 GB per nvidia-smi, 8 TB/s, NV18, 1000 W"},
	"GROK-L4":     {Ref: "https://grokipedia.com/page/NVIDIA_L4_vs_L40S", Note: "L4 vs L40S specifications"},
	"SC-L4":       {Ref: "https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820", Note: "L4 specifications"},
	"FPS-L4":      {Ref: "https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40", Note: "L4 specifications"},
	"MULLET-L40S": {Ref: "https://www.mullet.se/product.html?product_id=355414", Note: "NVIDIA L40/L40S table, \"* With Sparsity\""},
	"OMEGA-L40S":  {Ref: "https://omegaco.ae/shop/gpu-cards-edge-ai/nvidia-l40s", Note: "L40S specifications"},

	// Board power: the vendors' datasheets (product pages).
	"NV-A100": {Ref: "https://www.nvidia.com/en-us/data-center/a100/", Note: "NVIDIA A100 specifications: max TDP 400W for the SXM module"},
	"NV-H100": {Ref: "https://www.nvidia.com/en-us/data-center/h100/", Note: "NVIDIA H100 specifications: max TDP up to 700W (SXM), 300-350W (PCIe)"},
	"NV-H200": {Ref: "https://www.nvidia.com/en-us/data-center/h200/", Note: "NVIDIA H200 specifications: max TDP up to 700W (SXM)"},
	"NV-L4":   {Ref: "https://www.nvidia.com/en-us/data-center/l4/", Note: "NVIDIA L4 specifications: max thermal design power 72W"},
	"NV-L40S": {Ref: "https://www.nvidia.com/en-us/data-center/l40s/", Note: "NVIDIA L40S specifications: max power consumption 350W"},

	// Prices: one public on-demand list per GPU, each read on a stated
	// date (docs/SOURCES.md#gpu-prices); editable in every lesson.
	"LAMBDA-PRICE":      {Ref: "https://lambda.ai/pricing", Note: "Lambda on-demand per-GPU-hour prices as of 2026-09-20/25: 8x B200 $6.69, 8x H100 SXM $3.99, 8x A100 SXM 80 GB $2.79, 8x A100 SXM 40 GB $1.99, 1x H100 PCIe $3.29"},
	"RUNPOD-PRICE":      {Ref: "https://www.runpod.io/pricing", Note: "RunPod Pods on-demand prices as of 2026-10-07: H200 $4.59 an hour"},
	"RUNPOD-SERVERLESS": {Ref: "https://docs.runpod.io/serverless/pricing", Note: "RunPod Serverless flex-worker prices per second: L4 $0.00019, L40S $0.00053 (× 3,600 = $0.684 and $1.908 an hour)"},

	// Links.
	"HT-PM1743": {Ref: "https://hardwaretimes.com/samsung-teases-pm1743-ssd-w-theoretical-speeds-of-up-to-15-7-gb-s/", Note: "PCIe 5.0 x4 about 15.76 GB/s theoretical, so x16 about 63 GB/s per direction"},

	// Model configurations (faithful public copies of gated HF configs).
	"HF-L31-8B":   {Ref: "https://huggingface.co/NbAiLab/nb-llama-3.1-8B/blob/main/config.json", Note: "config.json of meta-llama/Llama-3.1-8B (official: https://huggingface.co/meta-llama/Llama-3.1-8B)"},
	"HF-L31-70B":  {Ref: "https://huggingface.co/NarrativAI/Cakrawala-70B/blob/main/config.json", Note: "config.json from Llama-3.1-70B-Instruct"},
	"HF-L31-405B": {Ref: "https://huggingface.co/uiuc-convai/CoALM-405B", Note: "snapshot of meta-llama/Llama-3.1-405B-Instruct, kv heads 8, head_dim 128"},
	"HF-405-OLD":  {Ref: "https://huggingface.co/migtissera/Meta-Llama-3.1-405B/blob/main/config.json", Note: "early upload listing 16 KV heads (superseded)"},
	"HF-MIS7B":    {Ref: "https://huggingface.co/dmayboroda/42_mistral_0.1/blob/main/config.json", Note: "config.json from mistralai/Mistral-7B-v0.1"},
	"HF-Q25-7B":   {Ref: "https://huggingface.co/osllmai-community/Qwen2.5-7B-Instruct/blob/main/config.json", Note: "Qwen2.5-7B-Instruct config.json"},
	"HF-Q2-7B":    {Ref: "https://huggingface.co/Qwen/Qwen2-7B/blob/main/config.json", Note: "same dimensions; base max_position_embeddings 131072"},
	"HF-Q25-72B":  {Ref: "https://huggingface.co/m8than/banana-2-b-72b/blob/main/config.json", Note: "config.json from Qwen/Qwen2.5-72B-Instruct"},
	"HF-L2-7B":    {Ref: "https://huggingface.co/NousResearch/Llama-2-7b-hf/blob/main/config.json", Note: "ungated copy of meta-llama/Llama-2-7b-hf's config.json: 32 layers, 32 KV heads, intermediate 11008, vocab 32000, max_position_embeddings 4096"},
	"HF-Q2-72B":   {Ref: "https://huggingface.co/Qwen/Qwen2-72B/blob/c03367ee2f85a5f870d5aa3feb9928c9156e048f/config.json", Note: "Qwen2-72B config.json, same dimensions"},

	// Measurements whose weight sizes pin down the Llama-2-7B shape.
	"VIDUR-MLP":      {Ref: "microsoft/vidur @ 7d47513, data/profiling/compute/{h100,a100}/meta-llama/{Llama-2-7b-hf,Llama-2-70b-hf,Meta-Llama-3-8B}/mlp.csv", Note: "per-op GEMM profiles with fp16 weight sizes"},
	"GPTFAST-README": {Ref: "pytorch-labs/gpt-fast, README.md", Note: "Llama-2-7B and -70B batch-1 decode figures on A100-80GB (330 W): validation cases VC3, VC4 and M10"},
}

// Sources returns every citation tag this package uses, resolved. The map is
// a copy; changing it does not change the package.
func Sources() map[string]Source {
	out := make(map[string]Source, len(sources))
	for tag, s := range sources {
		s.Tag = tag
		out[tag] = s
	}
	return out
}

// SourceByTag resolves one tag, e.g. "HPC-H100". The second result is false
// for a tag this package does not cite.
func SourceByTag(tag string) (Source, bool) {
	s, ok := sources[tag]
	s.Tag = tag
	if !ok {
		return Source{}, false
	}
	return s, true
}

// SourceTags returns the cited tags in sorted order.
func SourceTags() []string {
	return slices.Sorted(maps.Keys(sources))
}
