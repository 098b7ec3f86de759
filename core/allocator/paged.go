package allocator

import (
	"fmt"
	"github.com/inferlab/inferlab/core/kvhash"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// Paged is a pool of fixed-size KV blocks with one block table per request,
// reference counts for shared blocks, copy-on-write, and (when enabled) a
// prefix cache keyed by chain hashes of full blocks.
type Paged struct {
	log
	blockSize int
	// blocks is the prefix-cache metadata, made by EnablePrefixCaching: a
	// pool without caching never hashes a block, and 28,000 blocks of it
	// (an H100 pool) would be 1.8 MB of pointers for the collector to scan
	// (most of a serving run's garbage in WebAssembly, where it collects on
	// the simulation's own thread).
	blocks  []blockMeta
	refs    []int32    // reference count per block: block tables holding it
	free    *freeQueue // blocks with refs == 0, least recently freed at the head
	seqs    handles[*Seq]
	caching bool
	cached  map[uint64][]int // chain hash -> blocks registered under it, oldest first
	stats   CacheStats
	copies  int
	shared  int // blocks with refs > 1; zero allows Usage's fast path
	hashed  int // blocks registered in the prefix cache
	// sumTokens and sumBlocks total the tables' tokens and entries, so Usage
	// need not walk every request each step.
	sumTokens, sumBlocks int
	taken                int          // blocks handed out since the pool was made
	short                NoSpaceError // the last shortfall (errShort)
	// Freed requests' block tables by power-of-two capacity (table), and
	// Seqs made ahead (newSeq).
	spare   [bits.UintSize + 1][][]int
	seqSlab []Seq
}

// Taken is the number of blocks handed out since the pool was made (copies
// and reused cached slots included, prefix-cache hits not). The difference
// across a phase counts its allocations without the event log.
func (p *Paged) Taken() int { return p.taken }

// CachedBlocks is the number of blocks registered in the prefix cache, held
// or free (Dynamo's tree size for this worker).
func (p *Paged) CachedBlocks() int { return p.hashed }

// incRef and decRef change a block's reference count, keeping the count of
// shared blocks.
func (p *Paged) incRef(b int) {
	p.refs[b]++
	if p.refs[b] == 2 {
		p.shared++
	}
}

func (p *Paged) decRef(b int) {
	if p.refs[b] == 2 {
		p.shared--
	}
	p.refs[b]--
}

// blockMeta is vLLM's KVCacheBlock: the prefix-cache metadata of one
// physical block. Its reference count lives apart, in Paged.refs, so that
// the allocations of a serving run touch a few bytes per block.
type blockMeta struct {
	hashed bool
	hash   uint64
	parent uint64 // chain hash of the previous block
	extra  string
	ids    []int // token ids of a hashed (full) block, to check the map
}

// Seq is one request's view of the pool: its block table. A caller that
// updates a request every step keeps it as a handle (Seq, GrowSeq) instead
// of having the pool find the request by id each time.
type Seq struct {
	req    int
	live   bool     // false once freed: a stale handle is refused
	blocks []int    // the block table: logical block i -> physical block
	n      int      // tokens stored
	ids    []int    // token ids, when the caller gave them (prefix caching)
	extra  string   // extra hash key: tenant or LoRA id
	hashes []uint64 // chain hashes of the leading full blocks registered so far
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
	if numBlocks < 1 || numBlocks > math.MaxInt32 {
		return nil, fmt.Errorf("allocator: numBlocks = %d, want 1 to %d", numBlocks, math.MaxInt32)
	}
	if blockSize < 1 {
		return nil, fmt.Errorf("allocator: blockSize = %d, want ≥ 1", blockSize)
	}
	return &Paged{
		blockSize: blockSize,
		refs:      make([]int32, numBlocks),
		free:      newFreeQueue(numBlocks),
		cached:    map[uint64][]int{},
	}, nil
}

// EnablePrefixCaching turns on the prefix cache (vLLM v1's default). Call it
// before the first request.
func (p *Paged) EnablePrefixCaching() {
	p.caching = true
	if p.blocks == nil {
		p.blocks = make([]blockMeta, len(p.refs))
	}
}

// hashedBlock reports whether block b carries a chain hash (only a caching
// pool has block metadata).
func (p *Paged) hashedBlock(b int) bool { return p.blocks != nil && p.blocks[b].hashed }

// BlockSize is B, the token slots per block.
func (p *Paged) BlockSize() int { return p.blockSize }

// NumBlocks is N, the physical blocks in the pool.
func (p *Paged) NumBlocks() int { return len(p.refs) }

// FreeBlocks is the number of blocks nobody references (cached ones included:
// they are reusable, as in vLLM's usage figure).
func (p *Paged) FreeBlocks() int { return p.free.len() }

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
// nothing; with prefix caching off it finds nothing.
func (p *Paged) ComputedBlocks(hashes []uint64, numTokens int) (blocks []int, tokens int) {
	if !p.caching || numTokens <= 0 {
		return nil, 0
	}
	for i := 0; i < (numTokens-1)/p.blockSize && i < len(hashes); i++ {
		list := p.cached[hashes[i]]
		if len(list) == 0 {
			break
		}
		blocks = append(blocks, list[0])
	}
	return blocks, len(blocks) * p.blockSize
}

// AllocateSlots is vLLM's allocate_slots: it admits req, if the pool does
// not hold it yet, with the computed blocks a ComputedBlocks lookup found
// (num_new_computed_tokens is their token count) and room for a.New more
// tokens; or it gives a resident req room for a.New more tokens, allocating
// a block each time the last one fills. If a resident req's last block is
// partial and shared with another request (after Fork), it is first copied
// to a private block: copy-on-write. It is all or nothing: on ErrNoSpace
// nothing changed.
func (p *Paged) AllocateSlots(req int, a Slots) error {
	return public(p.allocateSlots(req, &a), p.short)
}

// TryAllocateSlots is AllocateSlots reporting a lack of room as a value
// (TryPool).
func (p *Paged) TryAllocateSlots(req int, a Slots) (NoSpaceError, bool, error) {
	return try(p.allocateSlots(req, &a), p.short)
}

// allocateSlots and admit take a by pointer: an 80-byte Slots passed by
// value is a block copy per call in WebAssembly.
func (p *Paged) allocateSlots(req int, a *Slots) error {
	if a.New < 0 {
		return fmt.Errorf("allocator: request %d asks for %d new tokens", req, a.New)
	}
	if a.IDs != nil && len(a.IDs) != a.New {
		return fmt.Errorf("allocator: request %d gives %d token ids for %d new tokens", req, len(a.IDs), a.New)
	}
	s := p.seqs.get(req)
	if s == nil {
		return p.admit(req, a)
	}
	if len(a.Computed) > 0 {
		return fmt.Errorf("allocator: request %d is resident; computed blocks are given only at admission", req)
	}
	return p.extend(req, s, a.New, a.IDs)
}

// Seq returns resident request req's handle, or nil. It stays valid until
// the request is freed.
func (p *Paged) Seq(req int) *Seq { return p.seqs.get(req) }

// GrowSeq is AllocateSlots for the resident request behind handle s: room
// for n more tokens, with their ids when known (nil: unknown). It spares the
// lookup by id that AllocateSlots makes, which the scheduler would pay for
// every running request at every step.
func (p *Paged) GrowSeq(s *Seq, n int, ids []int) error {
	return public(p.growSeq(s, n, ids), p.short)
}

// TryGrowSeq is GrowSeq reporting a lack of room as a value, as
// TryAllocateSlots: a scheduler that preempts when a running request
// cannot grow then allocates no error.
func (p *Paged) TryGrowSeq(s *Seq, n int, ids []int) (NoSpaceError, bool, error) {
	return try(p.growSeq(s, n, ids), p.short)
}

func (p *Paged) growSeq(s *Seq, n int, ids []int) error {
	if s == nil || !s.live {
		return fmt.Errorf("allocator: growing a request that is not resident")
	}
	if n < 0 || (ids != nil && len(ids) != n) {
		return fmt.Errorf("allocator: request %d asks for %d new tokens with %d ids", s.req, n, len(ids))
	}
	if p.fits(s, n) {
		p.stored(s, n)
		return nil
	}
	return p.extend(s.req, s, n, ids)
}

// Append stores n tokens in slots s already holds when they fit with
// nothing to copy, hash or log (no prefix caching, no shared blocks,
// events off), and reports whether it did; otherwise it changes nothing
// and the caller grows s with GrowSeq. It is most of a serving run's
// updates, and small enough to be inlined into the loop that makes them
// (in WebAssembly a call costs far more than this check).
func (p *Paged) Append(s *Seq, n int) bool {
	if s == nil || !s.live || !p.off || n < 0 || !p.fits(s, n) {
		return false
	}
	s.n += n
	p.sumTokens += n
	return true
}

// Plain reports whether, until the next GrowSeq, AllocateSlots, Fork or
// Free, every append is one that Append makes without copying, hashing or
// logging (no prefix caching, no shared blocks, events off). A caller that
// stores a token for each of many requests checks it once, then calls
// AppendPlain for each.
func (p *Paged) Plain() bool { return p.off && !p.caching && p.shared == 0 }

// AppendPlain is Append for a caller that found Plain true since its last
// other call into the pool, and holds s live: only the room in s's last
// block is left to check. It is a serving loop's common update with the
// fewest branches (in WebAssembly each costs a trip through the function's
// dispatch table).
func (p *Paged) AppendPlain(s *Seq, n int) bool {
	if n > len(s.blocks)*p.blockSize-s.n {
		return false
	}
	s.n += n
	p.sumTokens += n
	return true
}

// GrowPlain is GrowSeq for a caller that found Plain true since its last
// other call into the pool, holds s live and stores n ≥ 0 tokens: it takes
// the blocks they need from the head of the free queue, or, when too few
// are free, changes nothing and reports false (GrowSeq then records the
// shortfall). One call where GrowSeq makes four: a decoding request needs
// it each time its last block fills.
func (p *Paged) GrowPlain(s *Seq, n int) bool {
	need := p.BlocksFor(s.n+n) - len(s.blocks)
	if need > p.free.len() {
		return false
	}
	if need > 0 {
		// grow's plain branch, written out: as a function it would
		// not be inlined (cost 122), and a call here is what this saves.
		s.blocks = p.free.takeFront(slices.Grow(s.blocks, need), need, p.refs)
		p.taken += need
		p.sumBlocks += need
	}
	s.n += n
	p.sumTokens += n
	return true
}

// AdmitPlain is AllocateSlots(req, Slots{New: n, Final: final}), no
// computed blocks and no token ids, for a caller that found Plain true
// since its last other call into the pool and knows that req is not
// resident and that 0 ≤ n ≤ final: one call where AllocateSlots makes
// four. It returns req's handle, or nil when too few blocks are free, the
// pool's account of which is then Shortfall.
func (p *Paged) AdmitPlain(req, n, final int) *Seq {
	need := p.BlocksFor(n)
	if need > p.free.len() {
		p.noSpace(need)
		return nil
	}
	s := p.newSeq()
	s.req, s.live = req, true
	if want := p.BlocksFor(max(final, n)); want > 0 { // as admit
		s.blocks = p.table(want)
	}
	p.seqs.set(req, s)
	if need > 0 {
		s.blocks = p.free.takeFront(slices.Grow(s.blocks, need), need, p.refs) // as in GrowPlain
		p.taken += need
		p.sumBlocks += need
	}
	s.n = n
	p.sumTokens += n
	return s
}

// Shortfall is the pool's account of its last refusal for want of room.
func (p *Paged) Shortfall() NoSpaceError { return p.short }

// fits reports whether n more tokens of s fit its last block with nothing
// to copy or hash: most of a serving run's updates.
func (p *Paged) fits(s *Seq, n int) bool {
	return !p.caching && p.shared == 0 && n <= len(s.blocks)*p.blockSize-s.n
}

// stored counts n tokens written into slots s already holds.
func (p *Paged) stored(s *Seq, n int) {
	s.n += n
	p.sumTokens += n
	if n > 0 && p.logging() {
		p.record(Event{Kind: Appended, Req: s.req, Tokens: n})
	}
}

// admit gives req a block table holding the hit blocks a.Computed, then
// a.New tokens.
func (p *Paged) admit(req int, a *Slots) error {
	hits := a.Computed
	revive := 0 // cached hits sitting in the free queue also use free capacity
	for _, b := range hits {
		if b < 0 || b >= len(p.refs) || !p.hashedBlock(b) {
			return fmt.Errorf("allocator: request %d: computed block %d is not in the prefix cache", req, b)
		}
		if p.refs[b] == 0 {
			revive++
		}
	}
	hitTokens := len(hits) * p.blockSize
	n := hitTokens + a.New
	need := p.BlocksFor(n) - len(hits)
	if need+revive > p.free.len() {
		if p.logging() {
			p.record(Event{Kind: Rejected, Req: req, Tokens: n, Len: need + revive})
		}
		return p.noSpace(need + revive)
	}
	if p.caching && (a.IDs != nil || len(hits) > 0) {
		p.stats.QueryTokens += n
		p.stats.HitTokens += hitTokens
	}
	s := p.newSeq() // zero: slab slots are never reused
	s.req, s.live, s.extra = req, true, a.Extra
	if want := p.BlocksFor(max(a.Final, n)); want > 0 {
		s.blocks = p.table(want) // the table's final size when the caller knows it
	}
	p.seqs.set(req, s)
	if p.logging() {
		p.record(Event{Kind: Admitted, Req: req, Tokens: n})
	}
	for _, b := range hits {
		if p.refs[b] == 0 {
			p.free.remove(b)
		}
		p.incRef(b)
		s.blocks = append(s.blocks, b)
		s.hashes = append(s.hashes, p.blocks[b].hash)
		if p.caching {
			s.ids = append(s.ids, p.blocks[b].ids...)
		}
		if p.logging() {
			p.record(Event{Kind: Hit, Req: req, Block: b, Hash: p.blocks[b].hash})
		}
	}
	s.n = hitTokens
	p.sumTokens += hitTokens
	p.sumBlocks += len(hits)
	p.grow(req, s, a.New, a.IDs)
	return nil
}

// newSeq returns a Seq to fill, from a chunk made 64 at a time (a serving
// run admits thousands). A Seq is never reused: a stale handle stays
// refused.
func (p *Paged) newSeq() *Seq {
	if len(p.seqSlab) == 0 {
		p.seqSlab = make([]Seq, 64)
	}
	s := &p.seqSlab[0]
	p.seqSlab = p.seqSlab[1:]
	return s
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

// extend makes room for n more tokens of resident request s, copying a
// shared partial last block first.
func (p *Paged) extend(req int, s *Seq, n int, ids []int) error {
	if n == 0 {
		return nil
	}
	if p.fits(s, n) {
		p.stored(s, n)
		return nil
	}
	need := p.BlocksFor(s.n+n) - len(s.blocks)
	last := len(s.blocks) - 1
	cow := s.n%p.blockSize != 0 && p.refs[s.blocks[last]] > 1
	if cow {
		need++
	}
	if need > p.free.len() {
		if p.logging() {
			p.record(Event{Kind: Rejected, Req: req, Tokens: n, Len: need})
		}
		return p.noSpace(need)
	}
	if cow {
		src := s.blocks[last]
		dst := p.take(req)
		p.decRef(src)
		s.blocks[last] = dst
		p.copies++
		if p.logging() {
			p.record(Event{Kind: Copied, Req: req, Block: dst, From: src})
		}
	}
	p.grow(req, s, n, ids)
	return nil
}

// noSpace is the error of an allocation that needed blocks more than the
// free ones; any free block serves, so the largest free run is all of them.
// It keeps the shortfall in p.short for the exported method to return.
func (p *Paged) noSpace(blocks int) error {
	free := p.free.len() * p.blockSize
	p.short = NoSpaceError{Need: blocks * p.blockSize, Free: free, Largest: free}
	return errShort
}

// grow appends n tokens to s, taking blocks as needed; the caller checked
// room. Token ids are kept only while prefix caching is on (it hashes them);
// unknown ones (ids == nil) are recorded as such and end the hash chain.
func (p *Paged) grow(req int, s *Seq, n int, ids []int) {
	if need := p.BlocksFor(s.n+n) - len(s.blocks); need > 0 {
		s.blocks = slices.Grow(s.blocks, need)
		if !p.caching && p.off {
			// take without its cache and log branches, in one loop: an
			// admission takes tens of blocks.
			s.blocks = p.free.takeFront(s.blocks, need, p.refs)
			p.taken += need
		} else {
			for range need {
				s.blocks = append(s.blocks, p.take(req))
			}
		}
		p.sumBlocks += need
	}
	s.n += n
	p.sumTokens += n
	if n > 0 && p.logging() {
		p.record(Event{Kind: Appended, Req: req, Tokens: n})
	}
	if !p.caching {
		return
	}
	if ids != nil {
		s.ids = append(s.ids, ids...)
	} else {
		for range n {
			s.ids = append(s.ids, unknownToken)
		}
	}
	p.register(req, s)
}

// take hands out the block at the head of the free queue. A block that still
// carries a hash is evicted from the cache first: vLLM evicts lazily, only
// when the slot is reused.
func (p *Paged) take(req int) int {
	b := p.free.popFront()
	if p.caching && p.blocks[b].hashed { // only prefix caching hashes blocks
		m := &p.blocks[b]
		p.uncache(b)
		if p.logging() {
			p.record(Event{Kind: Removed, Block: b, Hash: m.hash})
		}
		*m = blockMeta{}
	}
	p.refs[b] = 1
	p.taken++
	if p.logging() {
		p.record(Event{Kind: Allocated, Req: req, Block: b})
	}
	return b
}

func (p *Paged) uncache(b int) {
	p.hashed--
	h := p.blocks[b].hash
	list := p.cached[h]
	for i, x := range list {
		if x == b {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(p.cached, h)
	} else {
		p.cached[h] = list
	}
}

// register hashes every full block of s not yet registered and publishes it
// (vLLM cache_full_blocks). Identical blocks of different requests are both
// registered: vLLM does not de-duplicate, because block tables are
// append-only. A block holding an unknown token ends the chain.
func (p *Paged) register(req int, s *Seq) {
	for i := len(s.hashes); i < s.n/p.blockSize; i++ {
		content := s.ids[i*p.blockSize : (i+1)*p.blockSize]
		for _, id := range content {
			if id == unknownToken {
				return
			}
		}
		parent := kvhash.Root
		if i > 0 {
			parent = s.hashes[i-1]
		}
		h := kvhash.Chain(parent, content, s.extra)
		s.hashes = append(s.hashes, h)
		b := s.blocks[i]
		m := &p.blocks[b]
		if m.hashed { // shared with the request it was forked from
			continue
		}
		m.hashed, m.hash, m.parent, m.extra = true, h, parent, s.extra
		m.ids = append([]int(nil), content...)
		p.cached[h] = append(p.cached[h], b)
		p.hashed++
		if p.logging() {
			p.record(Event{Kind: Stored, Req: req, Block: b, Hash: h, Parent: parent, Tokens: p.blockSize})
		}
	}
}

// Fork makes child a copy of parent that shares every block, the partial
// last one included (vLLM v0 parallel sampling and beam search). Shared
// blocks' reference counts rise; the first append to a shared partial block
// copies it.
func (p *Paged) Fork(parent, child int) error {
	s := p.seqs.get(parent)
	if s == nil {
		return fmt.Errorf("allocator: request %d not admitted", parent)
	}
	if p.seqs.get(child) != nil {
		return fmt.Errorf("allocator: request %d already admitted", child)
	}
	c := &Seq{req: child, live: true, blocks: append([]int(nil), s.blocks...), n: s.n, ids: append([]int(nil), s.ids...),
		extra: s.extra, hashes: append([]uint64(nil), s.hashes...)}
	for _, b := range c.blocks {
		p.incRef(b)
	}
	p.sumTokens += c.n
	p.sumBlocks += len(c.blocks)
	p.seqs.set(child, c)
	if p.logging() {
		p.record(Event{Kind: Admitted, Req: child, Tokens: c.n, From: parent})
	}
	return nil
}

// Free releases req's blocks, tail first. A block whose count drops to zero
// goes to the tail of the free queue; if it carries a hash it stays in the
// prefix cache until its slot is reused. Freeing tail first means a
// request's deepest blocks are evicted before the prefix it shares with
// others. (This is the v0.8–v0.10 order; newest vLLM puts unhashed blocks at
// the head instead.)
func (p *Paged) Free(req int) error {
	s := p.seqs.get(req)
	if s == nil {
		return fmt.Errorf("allocator: request %d not admitted", req)
	}
	if p.shared == 0 && p.off {
		// Every block is this request's alone and nothing is logged: all
		// return to the free queue, last block first (as below).
		p.free.pushBackReversed(s.blocks, p.refs)
	} else {
		for i := len(s.blocks) - 1; i >= 0; i-- {
			b := s.blocks[i]
			p.decRef(b)
			if p.refs[b] == 0 {
				p.free.pushBack(b)
				if p.logging() {
					p.record(Event{Kind: Freed, Req: req, Block: b})
				}
			}
		}
	}
	p.sumTokens -= s.n
	p.sumBlocks -= len(s.blocks)
	p.recycle(s.blocks)
	s.live, s.blocks = false, nil
	p.seqs.del(req)
	return nil
}

// Table returns a copy of req's block table (nil if it holds none).
func (p *Paged) Table(req int) []int {
	s := p.seqs.get(req)
	if s == nil {
		return nil
	}
	return append([]int(nil), s.blocks...)
}

// Tokens returns the tokens req has stored.
func (p *Paged) Tokens(req int) int {
	if s := p.seqs.get(req); s != nil {
		return s.n
	}
	return 0
}

// Requests lists resident requests in ascending id order.
func (p *Paged) Requests() []int {
	out := make([]int, 0, p.seqs.len())
	for r := range p.seqs.all() {
		out = append(out, r)
	}
	sort.Ints(out)
	return out
}

// Refs is block b's reference count.
func (p *Paged) Refs(b int) int { return int(p.refs[b]) }

// Cached reports whether block b is registered in the prefix cache.
func (p *Paged) Cached(b int) bool { return p.hashedBlock(b) }

// FreeOrder lists the free queue from head (next to be reused) to tail.
func (p *Paged) FreeOrder() []int { return p.free.order() }

// BlockState describes one physical block for drawing.
type BlockState struct {
	Owner  int  // lowest request id holding it, or -1
	Used   int  // slots holding tokens
	Refs   int  // block tables holding it
	Cached bool // registered in the prefix cache (possibly while free)
}

// Snapshot returns the state of every physical block.
func (p *Paged) Snapshot() []BlockState {
	owners, used := make([]int, len(p.refs)), make([]int, len(p.refs))
	p.Occupancy(owners, used)
	out := make([]BlockState, len(p.refs))
	for i := range out {
		out[i] = BlockState{Owner: owners[i], Used: used[i], Refs: int(p.refs[i]), Cached: p.hashedBlock(i)}
	}
	return out
}

// Occupancy writes each physical block's Owner (the lowest request id
// holding it, or -1) and Used (slots holding tokens) into owners and used,
// each of length NumBlocks(): what a drawing of the pool needs, without
// Snapshot's allocations.
func (p *Paged) Occupancy(owners, used []int) {
	for i := range p.refs {
		owners[i], used[i] = -1, 0
		if p.hashedBlock(i) {
			used[i] = p.blockSize
		}
	}
	for req, s := range p.seqs.all() {
		for i, b := range s.blocks {
			if owners[b] < 0 || req < owners[b] {
				owners[b] = req
			}
			used[b] = max(used[b], min(p.blockSize, s.n-i*p.blockSize))
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

// UsageInto is Usage written into *u, field by field: a caller that keeps
// the Usage spares its copies (in WebAssembly, a bulk memory copy each;
// see scheduler.Loop.StepInto).
func (p *Paged) UsageInto(u *Usage) {
	u.Resident, u.Pool, u.Taken, u.HoleReuses = p.seqs.len(), len(p.refs)*p.blockSize, p.taken, 0
	if p.shared == 0 { // every held block has one holder: no double counting
		u.Stored, u.Reserved = p.sumTokens, p.sumBlocks*p.blockSize
		return
	}
	used := map[int]int{}
	for _, s := range p.seqs.all() {
		for i, b := range s.blocks {
			used[b] = max(used[b], min(p.blockSize, s.n-i*p.blockSize))
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
	for _, s := range p.seqs.all() {
		unshared += p.BlocksFor(s.n)
	}
	return len(p.refs) - p.free.len(), unshared
}

// BlocksNeeded is ⌈tokens/blockSize⌉, the blocks a sequence of that length
// occupies.
func BlocksNeeded(tokens, blockSize int) int { return (tokens + blockSize - 1) / blockSize }
