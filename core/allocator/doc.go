// Package allocator models how an LLM serving engine stores the KV cache of
// running requests, and how much memory each way of storing it wastes.
//
// Two allocators share one vocabulary (requests, tokens, slots, an event log):
//
//   - Paged is vLLM's block pool (PagedAttention; Kwon et al., SOSP'23, and
//     vllm/v1/core/block_pool.py as summarised in shared/reference/engines.md
//     §1): a pool of N physical blocks of B token slots, a block table per
//     request, blocks taken from the head of a free queue on demand as tokens
//     are appended and returned, tail first, when the request finishes.
//     Simplifications of this first cut: no null block (vLLM sets block 0
//     aside), no reference counts above one, no prefix caching.
//   - Contiguous is the pre-paging baseline the paper compares against
//     (FasterTransformer, Orca): each admitted request reserves one
//     contiguous run of slots up front, placed first-fit in a fixed token
//     pool, and releases it when done, leaving holes.
//
// Every figure (waste, fragmentation, utilisation) is computed from the
// allocator's state; nothing is a constant. Allocation is all-or-nothing: a
// call that fails returns ErrNoSpace and changes nothing (engines.md §1.9).
package allocator
