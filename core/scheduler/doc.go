// Package scheduler models vLLM v1's continuous-batching scheduler with
// chunked prefill (vllm/v1/core/sched/scheduler.py, v0.8–v0.10).
//
// There are no prefill and decode phases: each request has a number of
// tokens (prompt plus outputs so far) and a number already computed, and
// every step hands out at most MaxNumBatchedTokens tokens so that computed
// catches up. Running requests are served first, in admission order; then,
// only if nothing was preempted in this step, waiting requests are admitted
// in arrival order while the budget, MaxNumSeqs and free KV blocks allow. A
// prompt is chunked by whatever budget is left (and LongPrefillTokenThreshold);
// with chunked prefill off a prompt that does not fit the remaining budget
// waits. When a running request cannot get a block, the most recently
// admitted running request is preempted by recompute: its blocks are freed,
// its computed tokens reset to zero, and it goes to the front of the waiting
// queue. KV blocks come from core/allocator: the head of the waiting queue is
// looked up in the prefix cache once per admission attempt
// (ComputedBlocks) and admitted with what was found (AllocateSlots), as
// vLLM's get_computed_blocks and allocate_slots.
//
// Loop is the same memory policy without the compute model (no token
// budget, no clock, one token per running request per tick), over any
// allocator.KVPool: the garage lesson serves one stream with the paged pool
// and with contiguous reservations through it, and core/record keeps its
// ticks for the narration. Both preempt through one routine (preemptFor).
//
// Time comes from a Timer (core/hardware's step-time model); the scheduler
// itself is synchronous: a step's outputs are known before the next step is
// scheduled (vLLM's async scheduling, which overlaps them, is not modelled).
package scheduler
