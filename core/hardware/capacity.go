package hardware

import (
	"errors"
	"fmt"
	"math"
)

// Capacity is how much KV cache one GPU of a tensor-parallel group can hold
// for one model, and the inputs that produced it. Byte and token figures are
// per GPU.
type Capacity struct {
	GPU   GPU
	Model Model
	// MemUtilization is the fraction of GPU memory the engine may use
	// (vLLM's gpu_memory_utilization).
	MemUtilization float64
	// BlockSize is tokens per paged-cache block.
	BlockSize int
	// TP is the tensor-parallel degree.
	TP int
	// UsableBytes is MemoryBytes · MemUtilization, to the nearest byte.
	UsableBytes int64
	// WeightBytes is this GPU's share of the weights: total / TP, rounded up.
	WeightBytes int64
	// KVBudgetBytes is UsableBytes − WeightBytes.
	KVBudgetBytes int64
	// BytesPerToken is this GPU's share of S_entry.
	BytesPerToken int64
	// Tokens is floor(KVBudgetBytes / BytesPerToken).
	Tokens int64
	// Blocks is floor(Tokens / BlockSize): only whole blocks are allocated.
	Blocks int64
}

// ErrWeightsDoNotFit is wrapped by KVCapacity when a GPU's share of the
// weights leaves no room for KV cache.
var ErrWeightsDoNotFit = errors.New("hardware: weights do not fit")

// KVCapacity estimates the KV-cache capacity of one GPU in a group of tp
// GPUs serving m, following the outline of how vLLM sizes its block pool
// (memUtilization is its gpu_memory_utilization):
//
//	budget = memory · memUtilization − weights / tp
//	tokens = floor(budget / per-GPU bytes per token)
//	blocks = floor(tokens / blockSize)
//
// Tensor parallelism splits KV heads across GPUs. With tp ≤ kv_heads each GPU
// stores kv_heads/tp heads; with tp > kv_heads each head is replicated and
// every GPU stores one. Either way the per-GPU bytes per token are S_entry
// divided by min(tp, kv_heads). Engines require one of tp and kv_heads to
// divide the other, and so does this function.
//
// What this first cut leaves out, plainly: a real engine also subtracts the
// activation peak it measures in a profiling forward pass, the memory CUDA
// graphs capture, and non-torch allocations (NCCL buffers, the CUDA
// context). It also treats the weights as sharding evenly, though engines
// replicate some small tensors (norms) on every GPU, and vLLM keeps one
// block aside as a null block (docs/SOURCES.md#vllm-block-pool). So these
// figures are upper bounds; real pools are smaller.
// Fit.Pool sizes the pool with all of that but the CUDA graphs (KVBudget);
// the lessons use it, and KVCapacity stays the outline core/scenario's
// reference workload runs on.
//
// kvBytesPerElement is 2 for a BF16/FP16 cache and 1 for FP8;
// weightBytesPerParam is 2 for BF16 weights, 1 for FP8, about 0.5 for 4-bit.
func KVCapacity(g GPU, m Model, memUtilization float64, blockSize int, tp int, kvBytesPerElement int, weightBytesPerParam float64) (Capacity, error) {
	if err := checkCapacityArgs(m, memUtilization, blockSize, tp, kvBytesPerElement, weightBytesPerParam); err != nil {
		return Capacity{}, err
	}
	c := Capacity{GPU: g, Model: m, MemUtilization: memUtilization, BlockSize: blockSize, TP: tp}

	// Rounded rather than truncated, so that 141e9 · 0.9 is 126.9e9 bytes
	// and not one byte less from binary floating point.
	c.UsableBytes = int64(math.Round(float64(g.MemoryBytes) * memUtilization))
	weights := m.WeightBytes(weightBytesPerParam)
	c.WeightBytes = (weights + int64(tp) - 1) / int64(tp)
	if c.WeightBytes >= c.UsableBytes {
		return Capacity{}, fmt.Errorf("%w: %s needs %d bytes of weights per GPU at tp=%d, but %s at memUtilization=%g offers %d bytes (%d bytes short, with nothing left for KV cache)",
			ErrWeightsDoNotFit, m.Name, c.WeightBytes, tp, g.Name, memUtilization, c.UsableBytes, c.WeightBytes-c.UsableBytes)
	}
	c.KVBudgetBytes = c.UsableBytes - c.WeightBytes

	c.BytesPerToken = m.KVBytesPerToken(kvBytesPerElement) / int64(min(tp, m.KVHeads))
	c.Tokens = c.KVBudgetBytes / c.BytesPerToken
	c.Blocks = c.Tokens / int64(blockSize)
	return c, nil
}

// checkCapacityArgs rejects inputs KVCapacity cannot give a meaningful
// answer for, naming the argument, its value and what is allowed.
func checkCapacityArgs(m Model, memUtilization float64, blockSize, tp, kvBytesPerElement int, weightBytesPerParam float64) error {
	switch {
	case !(memUtilization > 0 && memUtilization <= 1): // also rejects NaN
		return fmt.Errorf("hardware: memUtilization = %g, want 0 < memUtilization ≤ 1", memUtilization)
	case blockSize < 1:
		return fmt.Errorf("hardware: blockSize = %d, want blockSize ≥ 1", blockSize)
	case tp < 1:
		return fmt.Errorf("hardware: tp = %d, want tp ≥ 1", tp)
	case kvBytesPerElement < 1:
		return fmt.Errorf("hardware: kvBytesPerElement = %d, want kvBytesPerElement ≥ 1 (2 for BF16, 1 for FP8)", kvBytesPerElement)
	case !(weightBytesPerParam > 0) || math.IsInf(weightBytesPerParam, 0):
		return fmt.Errorf("hardware: weightBytesPerParam = %g, want a finite value > 0 (2 for BF16, 1 for FP8)", weightBytesPerParam)
	case m.Layers < 1 || m.KVHeads < 1 || m.HeadDim < 1:
		return fmt.Errorf("hardware: model %q has layers=%d, kvHeads=%d, headDim=%d, want all ≥ 1", m.ID, m.Layers, m.KVHeads, m.HeadDim)
	case m.KVHeads%tp != 0 && tp%m.KVHeads != 0:
		return fmt.Errorf("hardware: tp = %d with %d KV heads, want tp to divide %d or be a multiple of it", tp, m.KVHeads, m.KVHeads)
	}
	return nil
}
