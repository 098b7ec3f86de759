// Package allocator models how an LLM serving engine stores the KV cache of
// running requests, and how much memory each way of storing it wastes.
//
// Two pools share one vocabulary (a Request, tokens, slots, an event log)
// and one interface, KVPool, so a serving loop can run over either. A
// caller keeps one Request per request and asks for memory with one call,
// AllocateSlots(r, n), which admits r or gives it room for n more tokens,
// all or nothing, and returns nil or the shortfall (a *NoSpaceError,
// ErrNoSpace): vLLM v1's allocate_slots, which returns the new blocks or
// None.
//
//   - Paged is vLLM v1's KV cache manager over its block pool
//     (PagedAttention, Kwon et al., SOSP'23; vllm/v1/core/block_pool.py,
//     kv_cache_manager.py and single_type_kv_cache_manager.py, v0.8–v0.10).
//     The block pool (blockPool) holds N physical blocks of B token slots
//     with their reference counts, a free queue and the cached-block map,
//     and only takes, frees and caches blocks; nothing else writes its
//     fields. The manager keeps a block table per request and adds tokens
//     to it one way, as vLLM's allocate_slots does: admit a new request
//     (its cache hits first) or extend a resident one, then grow, which
//     takes blocks from the head of the free queue on demand; a freed
//     request's blocks return, tail first. Fork shares a request's blocks with a child and the
//     first write to a shared partial block copies it (vLLM v0's
//     copy-on-write). With prefix caching on, full blocks are registered
//     under chain hashes (core/kvhash) and reused by later requests:
//     ComputedBlocks (get_computed_blocks) finds a request's cached prefix
//     and its admission takes it; a freed cached block stays in the cache
//     until its slot is reused. Simplification: no null block (vLLM sets
//     block 0 aside).
//   - Contiguous is the pre-paging baseline the paper compares against
//     (FasterTransformer, Orca): each admitted request reserves one
//     contiguous run of slots up front, sized by a Reservation policy (the
//     paper's Orca Max, Pow2 and Oracle: the max context; the prompt and
//     the next power of two of the outputs; the exact final length), placed
//     first-fit in a fixed token pool or by a buddy allocator, as the
//     paper's Orca baselines are (buddy.go), and released when done,
//     leaving holes. Shares splits its slots as the paper's Fig. 2 does.
//
// Most calls of a serving run only store a token in memory the request
// already holds. AllocateSlots does that by counting, in a body the
// compiler inlines into the caller's loop; everything else (blocks taken,
// copies, hashes, events, refusals) is behind it, where callers do not see
// it. What a pool offers a serving loop beyond KVPool is an optional
// interface the loop asks for, as net/http's handlers ask a ResponseWriter
// for http.Flusher and io.Copy asks its reader for io.WriterTo:
// BatchAllocator (one call for a step's AllocateSlots over many requests),
// UsageWriter, and Quiet.
//
// Every figure (waste, fragmentation, utilisation) is computed from the
// pools' state; nothing is a constant. Allocation is all-or-nothing: a
// call that fails for want of room returns a *NoSpaceError carrying the
// figures and changes nothing in the pool.
package allocator
