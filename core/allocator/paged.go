package allocator

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"sort"

	"github.com/inferlab/inferlab/core/kvhash"
)

// Paged is vLLM v1's KV cache manager over its block pool
// (vllm/v1/core/kv_cache_manager.py and single_type_kv_cache_manager.py
// over block_pool.py): a block table per request, blocks taken from the
// pool on demand as tokens are stored, reference counts for shared blocks,
// copy-on-write, and (when enabled) a prefix cache keyed by chain hashes of
// full blocks. The pool (blockPool) only takes, frees and caches blocks;
// Paged decides which a request needs.
type Paged struct {
	log
	id        uint64 // poolIDs
	pool      blockPool
	blockSize int
	reqs      handles[*Request] // resident requests by id
	held      handles[*Request] // KV held ahead of its request (Hold), by that request's id
	stats     CacheStats
	copies    int
	// sumTokens totals the requests' tokens, so that Usage need not walk
	// every request each step.
	sumTokens int
	shorts    shortfalls
	// Freed requests' block tables by power-of-two capacity (table).
	spare [bits.UintSize + 1][][]int
}

// CacheStats counts prefix-cache lookups in tokens (vLLM PrefixCacheStats).
type CacheStats struct {
	QueryTokens int // prompt tokens looked up
	HitTokens   int // of those, found in cached blocks
}

// HitRate is HitTokens / QueryTokens.
func (c CacheStats) HitRate() float64 {
	if c.QueryTokens == 0 {
		return 0
	}
	return float64(c.HitTokens) / float64(c.QueryTokens)
}

// unknownToken stands for a token whose id the caller did not give; a block
// holding one is never hashed.
const unknownToken = -1

// NewPaged makes a pool of numBlocks blocks of blockSize token slots, with
// prefix caching off.
func NewPaged(numBlocks, blockSize int) (*Paged, error) {
	if numBlocks < 1 || numBlocks > validBlocks {
		return nil, fmt.Errorf("allocator: numBlocks = %d, want 1 to %d", numBlocks, validBlocks)
	}
	if blockSize < 1 {
		return nil, fmt.Errorf("allocator: blockSize = %d, want ≥ 1", blockSize)
	}
	p := &Paged{id: poolIDs.Add(1), blockSize: blockSize}
	p.pool = newBlockPool(numBlocks, &p.log)
	return p, nil
}

// EnablePrefixCaching turns on the prefix cache (vLLM v1's default). Call it
// before the first request.
func (p *Paged) EnablePrefixCaching() { p.pool.enableCaching() }

// Taken is the number of blocks handed out since the pool was made (copies
// and reused cached slots included, prefix-cache hits not). The difference
// across a phase counts its allocations without the event log.
func (p *Paged) Taken() int { return p.pool.numTaken() }

// CachedBlocks is the number of blocks registered in the prefix cache, held
// or free (Dynamo's tree size for this worker).
func (p *Paged) CachedBlocks() int { return p.pool.numCached() }

// BlockSize is B, the token slots per block.
func (p *Paged) BlockSize() int { return p.blockSize }

// NumBlocks is N, the physical blocks in the pool.
func (p *Paged) NumBlocks() int { return p.pool.numBlocks() }

// FreeBlocks is the number of blocks nobody references (cached ones included:
// they are reusable, as in vLLM's usage figure).
func (p *Paged) FreeBlocks() int { return p.pool.numFree() }

// BlocksFor is the number of blocks needed to hold n tokens: ⌈n/B⌉.
func (p *Paged) BlocksFor(n int) int { return (n + p.blockSize - 1) / p.blockSize }

// Stats returns the prefix-cache hit counts so far.
func (p *Paged) Stats() CacheStats { return p.stats }

// Copies is the number of copy-on-write block copies made so far.
func (p *Paged) Copies() int { return p.copies }

// ComputedBlocks is vLLM's get_computed_blocks: the cached blocks holding
// the longest block-aligned prefix of a request of numTokens tokens whose
// full blocks' chain hashes are hashes (kvhash.Extend), and the tokens they
// hold. The walk stops at the first miss, at the last hash given, and before
// the block holding the last token, which must be recomputed to produce
// logits: a prompt of exactly k·B cached tokens hits k−1 blocks. It changes
// nothing; with prefix caching off it finds nothing. The blocks go in the
// request's Computed for its admission.
func (p *Paged) ComputedBlocks(hashes []uint64, numTokens int) (blocks []int, tokens int) {
	if !p.pool.cachingOn() || numTokens <= 0 {
		return nil, 0
	}
	for i := 0; i < (numTokens-1)/p.blockSize && i < len(hashes); i++ {
		b, ok := p.pool.lookup(hashes[i])
		if !ok {
			break
		}
		blocks = append(blocks, b)
	}
	return blocks, len(blocks) * p.blockSize
}

// AllocateSlots is vLLM's allocate_slots: room for n more tokens of r. If
// the pool does not hold r it admits it, with the cached blocks in
// r.Computed (num_new_computed_tokens is their token count) and then n
// tokens; a resident r gets a block each time its last one fills, and if
// its last block is partial and shared with another request (after Fork)
// that block is first copied to a private one: copy-on-write. It is all or
// nothing: on ErrNoSpace (a *NoSpaceError) nothing changed.
//
// Every token goes one way into a request's blocks: admit (a request the
// pool does not hold) or the extension in allocateSlots (one it holds),
// then grow, which takes blocks from the block pool; only the pool's own
// methods change the pool. The one shortcut is the count
// below, for a call whose tokens fit the block the request is filling,
// with nothing to copy, hash or log (Request.slack): most calls of a
// serving run. Its body is small enough for the compiler to inline into
// the caller's loop (TestAllocateSlotsInlines), where in WebAssembly a
// call per request and step would cost more than the count; that it is
// the general path is TestFastPathIsTheGeneralPath, and what it saves is
// BenchmarkAppendToken and the scheduler's BenchmarkTenThousandRequests
// (BENCHMARKS.md).
func (p *Paged) AllocateSlots(r *Request, n int) error {
	if uint(n) < uint(r.slack) { // Request.slack
		r.slack -= n
		p.sumTokens += n
		return nil
	}
	return p.allocateSlots(r, n)
}

// AllocateBatch is AllocateSlots(r, n) for each r of reqs, in order, until
// one fails (BatchAllocator): the counts in one walk, and a call only for
// a request with more to do.
func (p *Paged) AllocateBatch(reqs []*Request, n int) (int, error) {
	for done := 0; done < len(reqs); done++ {
		served, stored := countBatch(reqs[done:], n)
		p.sumTokens += stored
		if done += served; done == len(reqs) {
			break
		}
		if err := p.allocateSlots(reqs[done], n); err != nil {
			return done, err
		}
	}
	return len(reqs), nil
}

// allocateSlots is AllocateSlots when the pool has more to do than count.
// A request the pool does not hold is admitted (admit). A resident one is
// extended: vLLM's allocate_slots for a running request, the call it
// makes each time its last block fills. It counts the blocks its n more
// tokens need, and one more when its last block is partial and shared
// (after Fork), which is first copied to a private one: copy-on-write;
// grow then stores the tokens, and the fast path opens again for what is
// left of its last block.
func (p *Paged) allocateSlots(r *Request, n int) error {
	if r.owner != p.id || n < 0 || len(r.Computed) > 0 {
		return p.admit(r, n, &p.reqs)
	}
	r.sync()
	if n == 0 {
		p.grantRoom(r)
		return nil
	}
	need := p.BlocksFor(r.n+n) - len(r.blocks)
	// Only a pool with shared blocks can have a partial last block to copy.
	last := len(r.blocks) - 1
	cow := 0
	if p.pool.numShared() > 0 && r.n%p.blockSize != 0 && p.pool.refCount(r.blocks[last]) > 1 {
		cow = 1
	}
	if need+cow > p.pool.numFree() {
		if p.logging() {
			p.record(Event{Kind: Rejected, Req: r.ID, Tokens: n, Len: need + cow})
		}
		p.grantRoom(r)
		return p.noSpace(need + cow)
	}
	if cow > 0 {
		src := r.blocks[last]
		r.blocks[last] = p.pool.copyBlock(r.ID, src)
		p.copies++
		if p.logging() {
			p.record(Event{Kind: Copied, Req: r.ID, Block: r.blocks[last], From: src})
		}
	}
	p.grow(r, nil, n, need)
	p.grantRoom(r)
	return nil
}

// plain reports whether the pool stores tokens without hashing or logging
// them: AllocateSlots' fast path is open only then.
func (p *Paged) plain() bool { return p.off && !p.pool.cachingOn() }

// grantRoom opens r's fast path for the slots left in its last block, if
// the pool is plain and that block is r's alone.
func (p *Paged) grantRoom(r *Request) {
	room := -1
	if p.plain() && (len(r.blocks) == 0 || p.pool.refCount(r.blocks[len(r.blocks)-1]) == 1) {
		room = len(r.blocks)*p.blockSize - r.n
	}
	r.grantRoom(room)
}

// admit gives r a block table holding the hit blocks r.Computed, then n
// tokens, and files r in filed: vLLM's allocate_slots for a new request,
// which counts the blocks the hits and the new tokens need (reviving a
// free cached hit takes a free block too), touches the hits and takes the
// new blocks.
func (p *Paged) admit(r *Request, n int, filed *handles[*Request]) error {
	switch {
	case n < 0:
		return fmt.Errorf("allocator: request %d asks for %d new tokens", r.ID, n)
	case r.owner == p.id:
		return fmt.Errorf("allocator: request %d is resident; computed blocks are taken only at admission", r.ID)
	case r.owner != 0:
		return fmt.Errorf("allocator: request %d is resident in another pool", r.ID)
	case filed.get(r.ID) != nil:
		return fmt.Errorf("allocator: request %d is already resident", r.ID)
	}
	// The hits describe the cache when they were looked up: this call
	// takes them, admitted or not.
	hits := r.Computed
	r.Computed = nil
	revive := 0 // cached hits sitting in the free queue also use free capacity
	for _, b := range hits {
		if b < 0 || b >= p.pool.numBlocks() || !p.pool.isHashed(b) {
			return fmt.Errorf("allocator: request %d: computed block %d is not in the prefix cache", r.ID, b)
		}
		if p.pool.refCount(b) == 0 {
			revive++
		}
	}
	hitTokens := len(hits) * p.blockSize
	total := hitTokens + n
	need := p.BlocksFor(total) - len(hits)
	if need+revive > p.pool.numFree() {
		if p.logging() {
			p.record(Event{Kind: Rejected, Req: r.ID, Tokens: total, Len: need + revive})
		}
		return p.noSpace(need + revive)
	}
	if p.pool.cachingOn() && (r.TokenIDs != nil || len(hits) > 0) {
		p.stats.QueryTokens += total
		p.stats.HitTokens += hitTokens
	}
	p.resident(r, total, filed)
	if p.logging() {
		p.record(Event{Kind: Admitted, Req: r.ID, Tokens: total})
	}
	p.grow(r, hits, n, need)
	p.grantRoom(r)
	return nil
}

// resident files r in filed, held by the pool, with an empty block table
// sized for the tokens it will hold (total now, r.Final at most).
func (p *Paged) resident(r *Request, total int, filed *handles[*Request]) {
	r.owner = p.id
	r.slack, r.grant, r.n = 0, 0, 0
	if p.pool.cachingOn() {
		if r.cached == nil {
			r.cached = new(cachedTokens)
		}
		r.cached.ids, r.cached.hashes = r.cached.ids[:0], r.cached.hashes[:0]
		// Sized once for every token the request will hold: grown block
		// by block from empty, the copies were most of an admission's
		// cost when prompts hit long cached prefixes.
		if want := max(r.Final, total); cap(r.cached.ids) < want {
			r.cached.ids = make([]int, 0, want)
			r.cached.hashes = make([]uint64, 0, want/p.blockSize)
		}
	}
	if want := p.BlocksFor(max(r.Final, total)); want > 0 {
		r.blocks = p.table(want) // the table's final size when the caller knows it
	}
	filed.set(r.ID, r)
}

// filed is where the pool filed resident r: among the requests it serves,
// or apart with the KV it holds ahead of a request (Hold).
func (p *Paged) filed(r *Request) *handles[*Request] {
	if p.held.get(r.ID) == r {
		return &p.held
	}
	return &p.reqs
}

// residents yields every request holding memory: those the pool serves,
// then the KV held ahead of a request.
func (p *Paged) residents() iter.Seq2[int, *Request] {
	return func(yield func(int, *Request) bool) {
		for id, r := range p.reqs.all() {
			if !yield(id, r) {
				return
			}
		}
		for id, r := range p.held.all() {
			if !yield(id, r) {
				return
			}
		}
	}
}

// Hold is an admission for KV computed elsewhere (another worker's
// prefill, a host memory tier) that arrives before the request it belongs
// to is admitted: as AllocateSlots admits a request, it takes r's cached
// blocks r.Computed and n more tokens, registering r's full blocks in the
// prefix cache, but files r apart from the requests the pool serves, under
// the id of the request that will find those blocks cached: r.ID may be a
// resident request's. Free releases it. (vLLM allocates such KV to the
// request itself, its num_external_computed_tokens; a caller whose
// requests find earlier KV only in the prefix cache receives it this way.)
func (p *Paged) Hold(r *Request, n int) error {
	if r.owner != 0 {
		return fmt.Errorf("allocator: request %d already holds memory", r.ID)
	}
	return p.admit(r, n, &p.held)
}

// table returns an empty block table with room for at least want entries:
// one a freed request left in the same power-of-two class, else a new one.
// A run of thousands of requests of which a few hundred are resident at a
// time then allocates a few hundred tables.
func (p *Paged) table(want int) []int {
	k := bits.Len(uint(want - 1))
	if list := p.spare[k]; len(list) > 0 {
		t := list[len(list)-1]
		p.spare[k] = list[:len(list)-1]
		return t
	}
	return make([]int, 0, 1<<k)
}

// recycle keeps a freed request's table for table when its capacity is a
// power of two (those table made, and any other of that size).
func (p *Paged) recycle(t []int) {
	if c := cap(t); c > 0 && c&(c-1) == 0 {
		k := bits.Len(uint(c - 1))
		p.spare[k] = append(p.spare[k], t[:0])
	}
}

// noSpace is the error of an allocation that needed blocks more than the
// free ones; any free block serves, so the largest free run is all of them.
func (p *Paged) noSpace(blocks int) error {
	free := p.pool.numFree() * p.blockSize
	return p.shorts.of(blocks*p.blockSize, free, free)
}

// grow is the one way tokens enter a request's blocks: it appends the
// cached blocks hits (an admission's prefix-cache hits, touched in the
// pool), then n new tokens in need new blocks taken from the pool; the
// caller counted need and checked that the pool has it. A pool that logs
// or hashes then records them (stored).
func (p *Paged) grow(r *Request, hits []int, n, need int) {
	if len(hits) > 0 {
		p.appendHits(r, hits)
	}
	if need > 0 {
		r.blocks = p.pool.takeBlocks(slices.Grow(r.blocks, need), need, r.ID)
	}
	added := len(hits)*p.blockSize + n
	r.n += added
	p.sumTokens += added
	if !p.plain() {
		p.stored(r, n)
	}
}

// stored logs the n tokens grow just stored for r and, while prefix
// caching is on, keeps their ids and registers the blocks they filled.
// Token ids past r.TokenIDs are unknown and end the hash chain.
func (p *Paged) stored(r *Request, n int) {
	if n > 0 && p.logging() {
		p.record(Event{Kind: Appended, Req: r.ID, Tokens: n})
	}
	if !p.pool.cachingOn() {
		return
	}
	from := r.n - n
	c := r.cached
	known := min(max(len(r.TokenIDs)-from, 0), n)
	if known > 0 {
		c.ids = append(c.ids, r.TokenIDs[from:from+known]...)
	}
	for range n - known {
		c.ids = append(c.ids, unknownToken)
	}
	p.register(r)
}

// appendHits puts an admission's cached blocks at the head of r's table,
// with their hashes and token ids, taking a reference to each
// (save_new_computed_blocks).
func (p *Paged) appendHits(r *Request, hits []int) {
	for _, b := range hits {
		p.pool.touch(b)
		h, ids := p.pool.cachedBlock(b)
		r.blocks = append(r.blocks, b)
		r.cached.hashes = append(r.cached.hashes, h)
		r.cached.ids = append(r.cached.ids, ids...)
		if p.logging() {
			p.record(Event{Kind: Hit, Req: r.ID, Block: b, Hash: h})
		}
	}
}

// register hashes every full block of r not yet registered and publishes
// it in the pool's cache. A block holding an unknown token ends the chain.
func (p *Paged) register(r *Request) {
	c := r.cached
	for i := len(c.hashes); i < r.n/p.blockSize; i++ {
		content := c.ids[i*p.blockSize : (i+1)*p.blockSize]
		if slices.Contains(content, unknownToken) {
			return
		}
		parent := kvhash.Root
		if i > 0 {
			parent = c.hashes[i-1]
		}
		h := kvhash.Chain(parent, content, r.Extra)
		c.hashes = append(c.hashes, h)
		b := r.blocks[i]
		if p.pool.cache(b, h, parent, r.Extra, content) && p.logging() {
			p.record(Event{Kind: Stored, Req: r.ID, Block: b, Hash: h, Parent: parent, Tokens: p.blockSize})
		}
	}
}

// Fork makes child, which holds no memory, a copy of resident parent that
// shares every block, the partial last one included (vLLM v0 parallel
// sampling and beam search). Shared blocks' reference counts rise; the
// first append to a shared partial block copies it. The child takes its
// parent's Extra; its tokens up to the fork are its parent's, so only its
// TokenIDs past them are read.
func (p *Paged) Fork(parent, child *Request) error {
	if parent.owner != p.id {
		return fmt.Errorf("allocator: request %d not admitted", parent.ID)
	}
	if child.owner != 0 || p.reqs.get(child.ID) != nil {
		return fmt.Errorf("allocator: request %d already admitted", child.ID)
	}
	parent.sync()
	child.owner, child.slack, child.grant, child.n, child.Extra = p.id, 0, 0, parent.n, parent.Extra
	child.blocks = append([]int(nil), parent.blocks...)
	if c := parent.cached; c != nil {
		child.cached = &cachedTokens{ids: append([]int(nil), c.ids...), hashes: append([]uint64(nil), c.hashes...)}
	}
	p.pool.share(child.blocks)
	p.sumTokens += child.n
	p.reqs.set(child.ID, child)
	if p.logging() {
		p.record(Event{Kind: Admitted, Req: child.ID, Tokens: child.n, From: parent.ID})
	}
	return nil
}

// Free releases r's blocks, tail first. A block whose count drops to zero
// goes to the tail of the free queue; if it carries a hash it stays in the
// prefix cache until its slot is reused. Freeing tail first means a
// request's deepest blocks are evicted before the prefix it shares with
// others. (This is the v0.8–v0.10 order; newest vLLM puts unhashed blocks at
// the head instead.)
func (p *Paged) Free(r *Request) error {
	if r.owner != p.id {
		return fmt.Errorf("allocator: request %d not admitted", r.ID)
	}
	r.sync()
	p.pool.freeTable(r.ID, r.blocks)
	p.sumTokens -= r.n
	p.recycle(r.blocks)
	p.filed(r).del(r.ID)
	// What prefix caching kept of r goes too: a request freed for good
	// (finished, aborted) would hold its copy of every token id for as
	// long as its caller keeps it, and a preempted one rebuilds it on
	// admission, sized once (resident).
	r.blocks, r.n, r.owner, r.cached = nil, 0, 0, nil
	return nil
}

// Table returns a copy of request req's block table (nil if it holds none).
func (p *Paged) Table(req int) []int {
	r := p.reqs.get(req)
	if r == nil {
		return nil
	}
	return append([]int(nil), r.blocks...)
}

// Tokens returns the tokens request req has stored.
func (p *Paged) Tokens(req int) int {
	if r := p.reqs.get(req); r != nil {
		return r.tokens()
	}
	return 0
}

// Requests lists resident requests in ascending id order.
func (p *Paged) Requests() []int {
	out := make([]int, 0, p.reqs.len())
	for id := range p.reqs.all() {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// Refs is block b's reference count.
func (p *Paged) Refs(b int) int { return p.pool.refCount(b) }

// Cached reports whether block b is registered in the prefix cache.
func (p *Paged) Cached(b int) bool { return p.pool.isHashed(b) }

// FreeOrder lists the free queue from head (next to be reused) to tail.
func (p *Paged) FreeOrder() []int { return p.pool.freeOrder() }

// BlockState describes one physical block for drawing.
type BlockState struct {
	Owner  int  // lowest request id holding it, or -1
	Used   int  // slots holding tokens
	Refs   int  // block tables holding it
	Cached bool // registered in the prefix cache (possibly while free)
}

// Snapshot returns the state of every physical block.
func (p *Paged) Snapshot() []BlockState {
	n := p.NumBlocks()
	owners, used := make([]int, n), make([]int, n)
	p.Occupancy(owners, used)
	out := make([]BlockState, n)
	for i := range out {
		out[i] = BlockState{Owner: owners[i], Used: used[i], Refs: p.pool.refCount(i), Cached: p.pool.isHashed(i)}
	}
	return out
}

// Occupancy writes each physical block's Owner (the lowest request id
// holding it, or -1) and Used (slots holding tokens) into owners and used,
// each of length NumBlocks(): what a drawing of the pool needs, without
// Snapshot's allocations.
func (p *Paged) Occupancy(owners, used []int) {
	for i := range p.pool.numBlocks() {
		owners[i], used[i] = -1, 0
		if p.pool.isHashed(i) {
			used[i] = p.blockSize
		}
	}
	for id, r := range p.residents() {
		n := r.tokens()
		for i, b := range r.blocks {
			if owners[b] < 0 || id < owners[b] {
				owners[b] = id
			}
			used[b] = max(used[b], min(p.blockSize, n-i*p.blockSize))
		}
	}
}

// Usage reports the pool's slot usage. A shared block counts once. Only each
// request's last block can hold unused slots, so waste per request is below B.
func (p *Paged) Usage() Usage {
	var u Usage
	p.UsageInto(&u)
	return u
}

// UsageInto is Usage written into *u, field by field (UsageWriter).
func (p *Paged) UsageInto(u *Usage) {
	u.Resident, u.Pool, u.Taken, u.HoleReuses = p.reqs.len()+p.held.len(), p.pool.numBlocks()*p.blockSize, p.pool.numTaken(), 0
	if p.pool.numShared() == 0 { // every held block has one holder: the tables' entries are the held blocks
		u.Stored, u.Reserved = p.sumTokens, (p.pool.numBlocks()-p.pool.numFree())*p.blockSize
		return
	}
	used := map[int]int{}
	for _, r := range p.residents() {
		n := r.tokens()
		for i, b := range r.blocks {
			used[b] = max(used[b], min(p.blockSize, n-i*p.blockSize))
		}
	}
	u.Stored = 0
	for _, n := range used {
		u.Stored += n
	}
	u.Reserved = len(used) * p.blockSize
}

// Sharing counts the blocks in use and the blocks the same requests would
// hold without sharing (each its own ⌈tokens/B⌉).
func (p *Paged) Sharing() (inUse, unshared int) {
	for _, r := range p.residents() {
		unshared += p.BlocksFor(r.tokens())
	}
	return p.pool.numBlocks() - p.pool.numFree(), unshared
}

// BlocksNeeded is ⌈tokens/blockSize⌉, the blocks a sequence of that length
// occupies.
func BlocksNeeded(tokens, blockSize int) int { return (tokens + blockSize - 1) / blockSize }
