package allocator

// Request is one request as a KV pool sees it: vLLM v1's Request as its
// KV cache manager reads it (vllm/v1/request.py: request_id,
// all_token_ids, the cache salt or LoRA name its block hashes include,
// max_tokens, and the new_computed_blocks of an admission), with the
// pool's record of what the request holds. The caller makes one Request
// per request, sets the exported fields before its first AllocateSlots,
// and passes the same *Request to every AllocateSlots, Fork and Free for
// it: the pool keeps its state there and finds it without a lookup by id.
// A Request belongs to one pool at a time; after Free it may be admitted
// again (a preempted request is).
type Request struct {
	// ID names the request in the pool's queries (Tokens, Table, RunOf)
	// and events; two resident requests never share one.
	ID int
	// TokenIDs are the request's token ids as far as they are known,
	// prompt then outputs: AllocateSlots stores token i with id
	// TokenIDs[i], and prefix caching hashes the full blocks they make.
	// Tokens past its end are unknown, and a block holding one is never
	// hashed. It may grow between calls; what was stored must not change.
	TokenIDs []int
	// Extra is the prefix cache's extra hash key (a tenant's cache salt, a
	// LoRA adapter's name).
	Extra string
	// Final is the most tokens the request will hold (prompt + output), 0
	// when unknown. A contiguous pool reserves its run from it; the paged
	// pool sizes the block table's memory by it.
	Final int
	// Prompt is how many of Final are the prompt's (vLLM's
	// num_prompt_tokens); Orca-Pow2 rounds up only the rest, the outputs.
	Prompt int
	// Computed are the cached blocks a ComputedBlocks lookup found for the
	// request's admission (vLLM's new_computed_blocks). Only a paged pool
	// with prefix caching has any. They describe the cache at the lookup,
	// so the next AllocateSlots that tries to admit the request takes them
	// and clears the field, whether it admits it or not.
	Computed []int

	// slack is the whole of AllocateSlots' fast path: 1 + the tokens it
	// may store for the request by counting them, with no block or run to
	// take, nothing to copy, hash or log; 0 when the pool must act on
	// every call (the request holds no memory, prefix caching or the
	// event log is on, its last block is shared). The fast path
	// decrements it, so the tokens stored are n + grant − slack, where
	// grant is slack as the pool last set it (tokens, sync, grantRoom).
	slack, grant int
	n            int    // tokens stored as of the last grant
	owner        uint64 // the id of the pool holding the request's memory, 0 when none

	// In a paged pool: the block table (logical block i -> physical
	// block), and what prefix caching keeps (nil without it: a serving
	// run's requests are then a few words smaller for the collector).
	blocks []int
	cached *cachedTokens
	// In a contiguous pool: the run, the slots its Reservation asked for
	// (a buddy block rounds them up to the run's length), and the final
	// length within them when it was placed.
	start, length, asked, final int
}

// cachedTokens is what a caching pool keeps of a request's tokens: their
// ids, and the chain hashes of the leading full blocks registered so far.
type cachedTokens struct {
	ids    []int
	hashes []uint64
}

// tokens is the number of tokens the request has stored.
func (r *Request) tokens() int { return r.n + r.grant - r.slack }

// sync folds the tokens the fast path stored into n and closes it: the
// pool then changes n itself, and grants room again when it is done.
func (r *Request) sync() {
	r.n += r.grant - r.slack
	r.slack, r.grant = 0, 0
}

// grantRoom opens the fast path for room more tokens (none when room < 0).
func (r *Request) grantRoom(room int) {
	r.slack = max(room+1, 0)
	r.grant = r.slack
}
