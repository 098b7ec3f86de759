// Package scheduler models how serving engines schedule continuous
// batches: vLLM v1's scheduler with chunked prefill, TensorRT-LLM's
// capacity scheduler and SGLang's, over one serving loop.
//
// The loop (batchLoop) is what every engine shares: requests served by
// arrival, a waiting queue and a running list, a clock that advances by
// each step's price (a Timer: core/hardware's step-time model), and the
// steps with the times of the tokens they made (Steps, Requests, Summary;
// a caller that needs only sums over the steps, such as a capacity
// search's probes, sets DiscardSteps and reads each step from RunEach).
// Each step it asks its engine, a small strategy type, to form the batch
// and to settle it once it ran. The engines:
//
//   - Scheduler is vLLM v1's (vllm/v1/core/sched/scheduler.py, v0.8–v0.10;
//     docs/SOURCES.md#vllm-scheduler) over core/allocator's paged pool.
//     There are no prefill and decode phases: each request has a number of
//     tokens (prompt plus outputs so far) and a number already computed,
//     and every step hands out at most MaxNumBatchedTokens tokens so that
//     computed catches up. Running requests are served first, in admission
//     order; then, only if nothing was preempted in this step, waiting
//     requests are admitted in arrival order while the budget, MaxNumSeqs
//     and free KV blocks allow. A prompt is chunked by whatever budget is
//     left (and LongPrefillTokenThreshold); with chunked prefill off a
//     prompt that does not fit the remaining budget waits. When a running
//     request cannot get a block, the most recently admitted running
//     request is preempted by recompute: its blocks are freed, its computed
//     tokens reset to zero, and it goes to the front of the waiting queue.
//     The head of the waiting queue is looked up in the prefix cache once
//     per admission attempt (ComputedBlocks) and admitted with what was
//     found (AllocateSlots), as vLLM's get_computed_blocks and
//     allocate_slots. KV computed elsewhere (another worker's prefill, a
//     host memory tier) arrives through ReceiveKV, vLLM's external computed
//     tokens received through the prefix cache.
//   - Config.Capacity picks the admission rule (a capacityRule):
//     PackForStep is vLLM's and TensorRT-LLM's MAX_UTILIZATION;
//     GuaranteedNoEvict is TensorRT-LLM's default, which admits a request
//     only when the blocks to finish it fit beside the running requests'
//     claims, and never preempts (cpp/tensorrt_llm/batch_manager/
//     capacityScheduler.cpp @ cf6abc4; docs/SOURCES.md#trtllm-capacity-scheduler).
//   - Radix is SGLang's (python/sglang/srt/managers/scheduler.py and
//     schedule_policy.py; docs/SOURCES.md#sglang-scheduler) over
//     core/radixcache's tree with page size 1: a prefill batch when one
//     can be formed, else a decode batch of every running request;
//     admission against the free and evictable slots less the running
//     requests' estimated needs (new_token_ratio), and retraction when
//     decodes outgrow the pool.
//
// Loop is the paged engines' memory policy without the compute model (no
// token budget, no clock, one token per running request per tick), over
// any allocator.KVPool: the garage lesson serves one stream with the paged
// pool and with contiguous reservations through it, and core/record keeps
// its ticks for the narration. Scheduler and Loop preempt through one
// routine (preemptFor).
//
// The scheduler is synchronous: a step's outputs are known before the next
// step is scheduled (vLLM's async scheduling and SGLang's overlap
// scheduler, which overlap them, are not modelled).
package scheduler
