package hardware

import (
	"fmt"
	"math"
	"strings"
)

// This file sizes the KV-cache pool the way vLLM v1 does at start-up
// [VLLM-WORKER], [VLLM-KVSPEC], [VLLM-13596]:
//
//	requested  = total_memory · gpu_memory_utilization
//	non-KV     = weights + torch activation peak + non-torch memory   (measured by a profiling run)
//	available  = requested − non-KV  (− the CUDA-graph estimate, when enabled)
//	page       = block_size · kv_heads_per_gpu · head_size · 2 · dtype   one layer's block (MLA: block · 576 · dtype)
//	num_blocks = available // page // layers
//	"GPU KV cache size" = num_blocks · block_size tokens
//	"Maximum concurrency for L tokens per request" = num_blocks / ⌈L / block_size⌉
//
// KVBudget reproduces that arithmetic from its inputs exactly; NewKVBudget
// fills the inputs the engine would measure with the lab's estimates
// (weights from the parameter count, ActivationReserve for the profiling
// run), which is what docs/VALIDATION.md's KV-capacity section compares
// with engines' own start-up logs.

// GiB is 2^30 bytes, the unit vLLM logs memory in.
const GiB = 1 << 30

// engineMemory is the total device memory the engine sees
// (torch.cuda.mem_get_info's total, which vLLM logs as total_memory and
// PyTorch's out-of-memory message prints as "a total capacity of"), for
// the parts where a log gives it. It is not the datasheet's figure: on
// HBM parts sold in decimal gigabytes it is more (79.15 GiB on an
// A100-80GB, 139.80 GiB on an H200, not 74.51 and 131.32), and a little
// less than NVML's (nvidia-smi: 81,559 MiB = 79.65 GiB on an H100 SXM,
// 143,771 MiB = 140.40 GiB on an H200).
var engineMemory = map[string]struct {
	gib float64
	// source is a KVSource tag or a URL; what says in words where the
	// figure was read.
	source, what string
}{
	"h100-sxm": {79.19, "LLMD-V019", "vLLM v0.19's start-up log, total_memory=79.19GiB"},
	"a100-80gb-sxm": {79.15, "https://github.com/vllm-project/vllm/issues/8903",
		"PyTorch's out-of-memory message in a vLLM start-up on A100-80GB, \"a total capacity of 79.15 GiB\""},
	"h200-sxm": {139.80, "https://thundergolfer.com/blog/nvidia-gpu-memory-capacity",
		"PyTorch's out-of-memory message on H200 in public logs, \"a total capacity of 139.80 GiB\", against NVML's 143,771 MiB = 140.40 GiB"},
}

// EngineMemory is the device memory an engine on g sees, in bytes, and the
// citation it comes from (a KVSource tag or a URL); for a part without a
// logged figure it is the datasheet's MemoryBytes and the citation is empty.
//
// A reader's own GPU (custom_gpu.go) states its memory as the engine sees
// it: its figure is that, cited as the memory_gib given.
func EngineMemory(g GPU) (int64, string) {
	if e, ok := engineMemory[g.ID]; ok {
		return int64(math.Round(e.gib * GiB)), e.source
	}
	if strings.HasPrefix(g.ID, CustomGPUPrefix) {
		return g.MemoryBytes, customMemorySource
	}
	return g.MemoryBytes, ""
}

// customMemorySource cites a custom GPU's memory.
const customMemorySource = "memory_gib"

// EngineMemoryWhere says in words where EngineMemory's figure for g was
// read, "" for the datasheet's.
func EngineMemoryWhere(g GPU) string {
	if strings.HasPrefix(g.ID, CustomGPUPrefix) {
		return "the memory_gib given for it"
	}
	return engineMemory[g.ID].what
}

// WeightFormat is how a checkpoint's weights are stored in GPU memory.
type WeightFormat string

// Weight formats.
const (
	// WeightsBF16 stores every parameter in 2 bytes.
	WeightsBF16 WeightFormat = "bf16"
	// WeightsFP8 stores the linear layers in 1 byte and keeps the
	// embedding and the output projection in BF16, as FP8-dynamic
	// checkpoints (llm-compressor's FP8_DYNAMIC ignores lm_head) and
	// DeepSeek-V3's release do.
	WeightsFP8 WeightFormat = "fp8"
)

// LoadedWeightBytes is the memory m's weights take in format f, all GPUs
// together.
func LoadedWeightBytes(m Model, f WeightFormat) (int64, error) {
	switch f {
	case WeightsBF16:
		return m.WeightBytes(2), nil
	case WeightsFP8:
		return m.NonEmbeddingParams + 2*(m.Params-m.NonEmbeddingParams), nil
	}
	return 0, fmt.Errorf("hardware: weight format %q, want %q or %q", f, WeightsBF16, WeightsFP8)
}

// ReserveParts splits ActivationReserve into the profiling run's torch
// activation peak and the non-torch memory (CUDA context, NCCL and
// all-reduce buffers), the two figures vLLM logs.
func ReserveParts(m Model, tp, batchedTokens int) (activation, nonTorch int64) {
	nonTorch = ActivationReserve(m, tp, 0)
	return ActivationReserve(m, tp, batchedTokens) - nonTorch, nonTorch
}

// KVHeadsPerGPU is the KV heads one GPU of a TP group caches: 1 for MLA
// (the latent is not split) and MQA, else kv_heads / tp and at least 1
// (a head is replicated when tp exceeds the KV heads), as vLLM's
// get_num_kv_heads.
func KVHeadsPerGPU(m Model, tp int) int {
	if m.KVLoraRank > 0 {
		return 1
	}
	return max(1, m.KVHeads/max(tp, 1))
}

// KVBytesPerTokenPerGPU is one token's KV over all layers on one GPU of a
// TP group: the latent for MLA (never split), else 2 · KVHeadsPerGPU ·
// head_dim · bytesPerElement per layer.
func KVBytesPerTokenPerGPU(m Model, tp, bytesPerElement int) int64 {
	if m.KVLoraRank > 0 {
		return m.KVBytesPerToken(bytesPerElement)
	}
	return 2 * int64(KVHeadsPerGPU(m, tp)) * int64(m.HeadDim) * int64(bytesPerElement) * int64(m.Layers)
}

// KVBudget is the input of vLLM v1's KV-pool sizing on one GPU of a TP
// group. Byte figures are per GPU.
type KVBudget struct {
	Model Model
	TP    int
	// TotalBytes is the device memory the engine sees (EngineMemory).
	TotalBytes int64
	// MemUtilization is gpu_memory_utilization.
	MemUtilization float64
	// WeightBytes is this GPU's share of the weights as loaded.
	WeightBytes int64
	// ActivationBytes is the torch peak the profiling run adds,
	// NonTorchBytes the memory outside torch's allocator.
	ActivationBytes, NonTorchBytes int64
	// CUDAGraphBytes is the CUDA-graph estimate taken off the pool when
	// VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS is on (the default since
	// v0.21); 0 when graphs come out of the 1 − utilization headroom.
	CUDAGraphBytes int64
	// KVBytesPerElement is 2 for a BF16 cache, 1 for FP8.
	KVBytesPerElement int
	// BlockSize is tokens per block (16 by default).
	BlockSize int
	// MaxModelLen is the longest sequence one request may reach.
	MaxModelLen int
}

// KVPool is what KVBudget.Size computes, per GPU.
type KVPool struct {
	// Requested is TotalBytes · MemUtilization; NonKV the weights,
	// activation peak and non-torch memory; Available what is left for the
	// pool after the CUDA-graph estimate.
	Requested, NonKV, Available int64
	// HeadsPerGPU is KVHeadsPerGPU; PageBytes one block of one layer.
	HeadsPerGPU int
	PageBytes   int64
	// BytesPerToken is one token's KV over all layers on this GPU.
	BytesPerToken int64
	// Blocks is num_blocks (block 0, the null block, included, as the log
	// counts it); Tokens is Blocks · BlockSize, the "GPU KV cache size".
	Blocks, Tokens int64
	// BlocksPerRequest is ⌈MaxModelLen / BlockSize⌉; Concurrency is
	// Blocks / BlocksPerRequest, the "Maximum concurrency" figure.
	BlocksPerRequest int64
	Concurrency      float64
	// UsedBytes is the bytes the blocks take, Blocks · PageBytes · layers
	// (at most Available: the rest is less than one block per layer).
	UsedBytes int64
}

// Size sizes the pool. It fails, with vLLM's own wording, when nothing is
// left for the cache or when one request of MaxModelLen tokens does not
// fit; the error is a *FitError (LimitWeights or LimitKV).
func (b KVBudget) Size() (KVPool, error) {
	if err := b.check(); err != nil {
		return KVPool{}, err
	}
	m := b.Model
	p := KVPool{HeadsPerGPU: KVHeadsPerGPU(m, b.TP)}
	p.Requested, p.NonKV = b.memory()
	p.Available = p.Requested - p.NonKV - b.CUDAGraphBytes
	p.BytesPerToken = KVBytesPerTokenPerGPU(m, b.TP, b.KVBytesPerElement)
	p.PageBytes = int64(b.BlockSize) * p.BytesPerToken / int64(m.Layers)
	p.BlocksPerRequest = int64((b.MaxModelLen + b.BlockSize - 1) / b.BlockSize)
	if p.Available <= 0 {
		return p, &FitError{Limit: LimitWeights, Need: p.NonKV + b.CUDAGraphBytes, Have: p.Requested,
			msg: fmt.Sprintf("no available memory for the cache blocks: %s of weights, activations and non-torch memory%s per GPU leave nothing of the %s requested (%s × gpu_memory_utilization %g)",
				gibText(p.NonKV), graphText(b.CUDAGraphBytes), gibText(p.Requested), gibText(b.TotalBytes), b.MemUtilization)}
	}
	p.Blocks = p.Available / p.PageBytes / int64(m.Layers)
	p.Tokens = p.Blocks * int64(b.BlockSize)
	p.UsedBytes = p.Blocks * p.PageBytes * int64(m.Layers)
	p.Concurrency = float64(p.Blocks) / float64(p.BlocksPerRequest)
	if need := p.BlocksPerRequest * p.PageBytes * int64(m.Layers); need > p.Available {
		return p, &FitError{Limit: LimitKV, Need: need, Have: p.Available,
			msg: fmt.Sprintf("to serve at least one request with the model's max seq len (%s), %s KV cache is needed, which is larger than the available KV cache memory (%s)",
				comma(int64(b.MaxModelLen)), gibText(need), gibText(p.Available))}
	}
	return p, nil
}

// memory is the memory vLLM requests on each GPU (total ×
// gpu_memory_utilization, rounded to the byte) and the non-KV memory its
// profiling run finds (weights, activation peak, non-torch); Fit's memory
// limits use the same two figures.
func (b KVBudget) memory() (requested, nonKV int64) {
	return int64(math.Round(float64(b.TotalBytes) * b.MemUtilization)), b.WeightBytes + b.ActivationBytes + b.NonTorchBytes
}

// check rejects inputs Size cannot give a meaningful answer for.
func (b KVBudget) check() error {
	m := b.Model
	switch {
	case m.Layers < 1 || m.KVHeads < 1 || m.HeadDim < 1:
		return fmt.Errorf("hardware: model %q has layers=%d, kvHeads=%d, headDim=%d, want all ≥ 1", m.ID, m.Layers, m.KVHeads, m.HeadDim)
	case b.TP < 1:
		return fmt.Errorf("hardware: tp = %d, want tp ≥ 1", b.TP)
	case b.TotalBytes < 1:
		return fmt.Errorf("hardware: TotalBytes = %d, want ≥ 1", b.TotalBytes)
	case !(b.MemUtilization > 0 && b.MemUtilization <= 1):
		return fmt.Errorf("hardware: MemUtilization = %g, want 0 < MemUtilization ≤ 1", b.MemUtilization)
	case b.WeightBytes < 0 || b.ActivationBytes < 0 || b.NonTorchBytes < 0 || b.CUDAGraphBytes < 0:
		return fmt.Errorf("hardware: negative memory figure (weights %d, activation %d, non-torch %d, CUDA graphs %d)", b.WeightBytes, b.ActivationBytes, b.NonTorchBytes, b.CUDAGraphBytes)
	case b.KVBytesPerElement < 1:
		return fmt.Errorf("hardware: KVBytesPerElement = %d, want ≥ 1 (2 for BF16, 1 for FP8)", b.KVBytesPerElement)
	case b.BlockSize < 1:
		return fmt.Errorf("hardware: BlockSize = %d, want ≥ 1", b.BlockSize)
	case b.MaxModelLen < 1:
		return fmt.Errorf("hardware: MaxModelLen = %d, want ≥ 1", b.MaxModelLen)
	}
	return nil
}

// NewKVBudget is the lab's prediction of the budget for m on one of tp
// GPUs g: the engine's memory (EngineMemory), this GPU's share of the
// weights in format f (rounded up), and the activation and non-torch
// reserve of ActivationReserve at batchedTokens, the dummy tokens vLLM's
// profiling run uses (max_num_batched_tokens). No CUDA-graph estimate.
func NewKVBudget(g GPU, m Model, tp int, f WeightFormat, kvBytesPerElement int, memUtilization float64, batchedTokens, maxModelLen int) (KVBudget, error) {
	if tp < 1 {
		return KVBudget{}, fmt.Errorf("hardware: tp = %d, want tp ≥ 1", tp)
	}
	w, err := LoadedWeightBytes(m, f)
	if err != nil {
		return KVBudget{}, err
	}
	total, _ := EngineMemory(g)
	act, nonTorch := ReserveParts(m, tp, batchedTokens)
	return KVBudget{Model: m, TP: tp, TotalBytes: total, MemUtilization: memUtilization,
		WeightBytes: ceilDiv(w, int64(tp)), ActivationBytes: act, NonTorchBytes: nonTorch,
		KVBytesPerElement: kvBytesPerElement, BlockSize: 16, MaxModelLen: maxModelLen}, nil
}

// Fit is the budget as a hardware.Fit of kvTokens resident tokens: the
// same memory, weights and reserve, so that Fit.Check accepts it exactly
// when the pool holds them (to within one block per layer).
func (b KVBudget) Fit(g GPU, batchedTokens int, kvTokens int64, positions int) Fit {
	bpp := 2.0
	if b.Model.Params > 0 {
		bpp = float64(b.WeightBytes) * float64(b.TP) / float64(b.Model.Params)
	}
	return Fit{GPU: g, Model: b.Model, TP: b.TP, WeightBytesPerParam: bpp, KVBytesPerElement: b.KVBytesPerElement,
		MemUtilization: b.MemUtilization, MemoryBytes: b.TotalBytes, BatchedTokens: batchedTokens, KVTokens: kvTokens, Positions: positions}
}

// gibText is bytes in GiB with two decimals, as vLLM logs them.
func gibText(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/GiB) }

func graphText(b int64) string {
	if b == 0 {
		return ""
	}
	return " and " + gibText(b) + " of CUDA graphs"
}
