// Package hardware holds the first cut of GPU and model profiles for the
// serving simulator, and the arithmetic that ties them together: how many
// bytes one token of KV cache costs, how much the weights weigh, and how many
// tokens of KV cache fit in what is left of a GPU's memory.
//
// # The model
//
// A GPU is six numbers: memory capacity, HBM (or GDDR) bandwidth, dense
// BF16/FP16 peak FLOP/s, dense FP8 peak FLOP/s (zero where the part has no
// FP8 tensor cores), scale-up link bandwidth to peer GPUs (NVLink; zero where
// there is none) and host link bandwidth (PCIe). Its ridge point, peak FLOP/s
// divided by bandwidth, is the arithmetic intensity at which a kernel stops
// being memory-bound.
//
// A model is the transformer shape from its Hugging Face config.json:
// layers, hidden size, query and KV heads, head_dim, MLP intermediate size,
// vocabulary, maximum positions, plus published parameter counts, and for
// multi-head latent attention (MLA: DeepSeek-V2/V3) the latent rank and the
// rope dimension. From it:
//
//	S_entry      = 2 · layers · kv_heads · head_dim · bytes_per_element   (K and V, every layer)
//	S_entry(MLA) = layers · (kv_lora_rank + qk_rope_head_dim) · bytes_per_element   (one latent, never split over TP)
//	weight bytes = params · bytes_per_weight
//	KV tokens    = floor((memory · utilization − weight bytes / tp) / (S_entry / min(tp, kv_heads)))
//
// KVCapacity documents the last line, including what it leaves out. The
// lessons size their pools as vLLM v1 does instead (KVBudget, through
// Fit.Budget and Fit.Pool): the memory the engine sees, less the weights and
// the activation reserve of its profiling run, the same budget Fit.Check
// holds every setting to.
//
// # Units
//
// GB means 1e9 bytes and TB/s means 1e12 bytes per second; a figure quoted
// in GiB says so. FLOP/s figures are dense: datasheets often print the 2:4
// sparsity figure, which is twice the dense one, and this package never uses
// it. Link bandwidths are per direction; NVLink marketing figures are
// bidirectional and are halved here.
//
// # Provenance
//
// Every constant comes from a cited source: datasheets for the GPUs, the
// models' config.json files, measurements for links and efficiencies
// (docs/SOURCES.md; the derived figures, such as parameter counts and KV
// bytes per token, in docs/SOURCES.md#model-shapes and
// #kv-bytes-per-token). Each profile lists its source tags in Sources, and
// sources.go resolves every tag to its URL or repository path, so a user
// interface can show a citation next to any number.
//
// Each GPU also carries a price and a power, which the simulation never
// reads: one public on-demand list price per GPU-hour (USDPerHour, from a
// named and dated list, docs/SOURCES.md#gpu-prices) and the datasheet's
// board power (BoardPowerW, the TDP). The serving lessons turn them into
// dollars per million input and output tokens and joules per token, and
// let the reader replace both, since on-demand prices for one part differ
// several-fold between clouds.
//
// # Adding a profile
//
// A GPU or a model is one entry in GPUs (gpu.go) or Models (model.go): the
// entry carries everything the cost models read, including the GPU's
// efficiency factors (Eff) and NCCL all-reduce figures (NCCL), so no other
// file switches on IDs. A profile without them is refused by NewStepModel
// and fails TestGPUsHaveCostFigures. A citation tag not yet in sources.go
// is added there once, with its URL. Code that names a profile by a literal
// ID uses MustGPU and MustModel, which panic with the ID if it is renamed.
//
// A reader's own GPU (custom_gpu.go) is five datasheet figures
// (CustomGPUSpec: memory in GiB as the engine sees it, HBM bandwidth, dense
// BF16 and FP8 peaks, the GPU-to-GPU link per direction), each held to
// bounds, with the rest derived from the lab's defaults for a part without
// measurements (CustomGPUSpec.GPU says which); RegisterCustomGPU makes it
// resolvable by GPUByID as "custom:NAME", as RegisterCustomModel does for a
// model read from a config.json (core/modelconfig).
//
// What is covered where: the KV arithmetic (KVBytesPerToken, KVBudget)
// sizes MHA, GQA, MQA and MLA caches, the last as vLLM's MLAAttentionSpec
// pages a latent row. Mixture-of-experts models are sized by all their
// parameters (every expert sits in memory), and SizingModels holds such
// profiles (DeepSeek-V2-Lite, DeepSeek-V3) for memory only: the step-time
// model prices Llama-like dense decoders, not expert routing or latent
// attention's compute. Sliding-window layers (Mistral-7B-v0.1, gpt-oss,
// Gemma 2) are sized as full attention, which is what an engine without
// sliding-window support stores.
package hardware
