// Package allocator models how an LLM serving engine stores the KV cache of
// running requests, and how much memory each way of storing it wastes.
//
// Two allocators share one vocabulary (requests, tokens, slots, an event log)
// and one interface, KVPool (AllocateSlots, Free, Usage), so a serving loop
// can run over either:
//
//   - Paged is vLLM's block pool (PagedAttention; Kwon et al., SOSP'23, and
//     vllm/v1/core/block_pool.py and kv_cache_manager.py as summarised in
//     shared/reference/engines.md §1): a pool of N physical blocks of B token
//     slots, a block table per request, blocks taken from the head of a free
//     queue on demand as tokens are appended and returned, tail first, when
//     the request finishes. Blocks carry reference counts: Fork shares a
//     request's blocks with a child and the first write to a shared partial
//     block copies it (vLLM v0's copy-on-write). With prefix caching on, full
//     blocks are registered under chain hashes and reused by later requests;
//     a freed cached block stays in the cache until its slot is reused. The
//     write API is vLLM's pair: ComputedBlocks (get_computed_blocks) finds
//     the cached prefix, AllocateSlots (allocate_slots) admits a request
//     with it or grows a resident one. Simplification: no null block (vLLM
//     sets block 0 aside).
//   - Contiguous is the pre-paging baseline the paper compares against
//     (FasterTransformer, Orca): each admitted request reserves one
//     contiguous run of slots up front, sized by a Reservation policy
//     (max context, next power of two, or the exact final length), placed
//     first-fit in a fixed token pool, and released when done, leaving holes.
//
// Every figure (waste, fragmentation, utilisation) is computed from the
// allocator's state; nothing is a constant. Allocation is all-or-nothing: a
// call that fails returns ErrNoSpace (as a *NoSpaceError carrying the
// figures) and changes nothing (engines.md §1.9).
package allocator
