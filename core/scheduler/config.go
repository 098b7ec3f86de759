package scheduler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/inferlab/inferlab/core/hardware"
)

// Config holds the scheduler and cache knobs, named as in vLLM.
type Config struct {
	MaxNumBatchedTokens       int  // token budget per step
	MaxNumSeqs                int  // most requests holding KV at once
	LongPrefillTokenThreshold int  // 0: off; else a prompt chunk is at most this long
	ChunkedPrefill            bool // false: a prompt is prefilled whole, in one step
	BlockSize                 int  // tokens per KV block
	NumBlocks                 int  // KV blocks in the pool
	PrefixCaching             bool // reuse cached full blocks of identical prefixes
	KVEvents                  bool // keep the pool's events (stored/removed blocks) for DrainKVEvents
	// Capacity is the admission policy: vLLM's (the zero value) or
	// TensorRT-LLM's GUARANTEED_NO_EVICT.
	Capacity CapacityPolicy
}

// CapacityPolicy decides whether a waiting request may start.
//
// TensorRT-LLM's capacity scheduler (cpp/tensorrt_llm/batch_manager/
// capacityScheduler.cpp @ cf6abc4; docs/SOURCES.md#trtllm-capacity-scheduler)
// has two policies, and the scheduler models both:
//
//   - PackForStep (vLLM v1, and TensorRT-LLM's MAX_UTILIZATION): a request
//     starts when blocks for this step's tokens are free; when a running
//     request later finds none, the last one started is freed and resumes
//     from scratch (vLLM's recompute preemption, TensorRT-LLM's pause).
//   - GuaranteedNoEvict (TensorRT-LLM's default): every running request
//     keeps a claim on the blocks it needs to reach its full length, and a
//     waiting request starts only if the blocks for its whole prompt and
//     output (less the cached prefix blocks others already hold) fit in
//     what those claims leave free; the first that does not fit stops
//     admission for the step. Nothing is ever preempted.
type CapacityPolicy uint8

const (
	// PackForStep admits on this step's blocks and preempts by recompute.
	PackForStep CapacityPolicy = iota
	// GuaranteedNoEvict admits only what can run to completion.
	GuaranteedNoEvict
)

// Validate checks the knobs, naming the one that is wrong.
func (c Config) Validate() error {
	switch {
	case c.MaxNumBatchedTokens < 1:
		return fmt.Errorf("scheduler: MaxNumBatchedTokens = %d, want ≥ 1", c.MaxNumBatchedTokens)
	case c.MaxNumSeqs < 1:
		return fmt.Errorf("scheduler: MaxNumSeqs = %d, want ≥ 1", c.MaxNumSeqs)
	case c.LongPrefillTokenThreshold < 0:
		return fmt.Errorf("scheduler: LongPrefillTokenThreshold = %d, want ≥ 0", c.LongPrefillTokenThreshold)
	case c.BlockSize < 1:
		return fmt.Errorf("scheduler: BlockSize = %d, want ≥ 1", c.BlockSize)
	case c.NumBlocks < 1:
		return fmt.Errorf("scheduler: NumBlocks = %d, want ≥ 1", c.NumBlocks)
	case c.Capacity > GuaranteedNoEvict:
		return fmt.Errorf("scheduler: Capacity = %d, want PackForStep or GuaranteedNoEvict", c.Capacity)
	case c.MaxNumBatchedTokens < c.MaxNumSeqs:
		return fmt.Errorf("%w: MaxNumBatchedTokens = %d, MaxNumSeqs = %d", ErrBudgetBelowSeqs, c.MaxNumBatchedTokens, c.MaxNumSeqs)
	}
	return nil
}

// ErrBudgetBelowSeqs is vLLM's SchedulerConfig check (vllm/config/scheduler.py,
// _verify_args): "max_num_batched_tokens must be greater than or equal to
// max_num_seqs". A running sequence needs at least one token of a step's
// budget, so more sequences than tokens could never all advance.
var ErrBudgetBelowSeqs = errors.New("scheduler: max_num_batched_tokens must be at least max_num_seqs, as vLLM requires")

// UsageContext is how vLLM was started; its batch defaults depend on it.
type UsageContext int

const (
	// APIServer is `vllm serve`, the OpenAI-compatible server
	// (UsageContext.OPENAI_API_SERVER): what the lessons model.
	APIServer UsageContext = iota
	// LLMClass is offline batch inference through vllm.LLM
	// (UsageContext.LLM_CLASS).
	LLMClass
)

// BatchDefaults are vLLM's max_num_batched_tokens and max_num_seqs when
// the user sets neither (EngineArgs.get_batch_defaults,
// vllm/engine/arg_utils.py; docs/SOURCES.md#vllm-batch-defaults): on a GPU
// with at least 70 GiB that is not an A100 (H100, H200, B200, MI300x),
// 8,192 tokens and 1,024 sequences for the API server, 16,384 and 1,024
// for the LLM class; on other GPUs (A100s included: a large budget lowered
// their throughput, vLLM PR #17885), 2,048 and 256, and 8,192 and 256.
// TPUs and CPUs, which vLLM also tunes, are not modelled. vLLM then caps
// max_num_seqs at the budget and the budget at max_num_seqs ×
// max_model_len; neither cap binds at these values for the lab's models.
func BatchDefaults(g hardware.GPU, usage UsageContext) (maxNumBatchedTokens, maxNumSeqs int) {
	const gib = 1 << 30
	if g.MemoryBytes >= 70*gib && !strings.Contains(strings.ToLower(g.Name+" "+g.ID), "a100") {
		if usage == LLMClass {
			return 16384, 1024
		}
		return 8192, 1024
	}
	if usage == LLMClass {
		return 8192, 256
	}
	return 2048, 256
}

// Work is one request's share of a step: NewTokens computed on top of
// Context tokens already in its KV cache (a decode has NewTokens = 1), with
// Prefill set for a prompt's tokens and a recompute after preemption. It is
// the step model's batch chunk itself, so a step is priced from the list
// the scheduler built, with nothing converted.
type Work = hardware.Chunk

// Timer prices a step: the seconds a batch takes on the modelled hardware.
// The batch is valid only during the call.
type Timer interface {
	StepSeconds(batch []Work) float64
}

// TimerFunc adapts a function to Timer.
type TimerFunc func([]Work) float64

// StepSeconds calls f.
func (f TimerFunc) StepSeconds(b []Work) float64 { return f(b) }
