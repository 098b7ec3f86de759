package allocator

import (
	"math"
	"slices"
)

// blockPool is vLLM v1's BlockPool (vllm/v1/core/block_pool.py): the
// physical blocks, each with a reference count (the block tables holding
// it), the free queue of the blocks nobody references, least recently
// freed at the head, and the cached-block map from a full block's chain
// hash to the blocks registered under it. It takes blocks from the head of
// the free queue, evicting a cached block only then, when its slot is
// reused (get_new_blocks, _maybe_evict_cached_block); returns freed blocks
// to the tail (free_blocks); revives a cached block a new request hits
// (touch); and registers full blocks (cache_full_blocks). It knows nothing
// of requests beyond the id it logs: the manager, Paged, keeps each
// request's block table.
type blockPool struct {
	*log            // the manager's event log
	refs []int32    // reference count per block
	free *freeQueue // blocks with refs == 0
	// meta is the prefix-cache metadata of blocks 0 to len(meta)-1, grown
	// when a block is first registered (metaFor): a pool without caching
	// never hashes a block, and a pool hands out its lowest ids first, so
	// meta covers the blocks a run used, not the pool. 28,000 blocks of it
	// (an H100 pool) would be 1.8 MB of pointers for the collector to scan
	// (in WebAssembly it collects on the simulation's own thread); 14
	// workers of 8 H100s each hold 3.7 million blocks, 240 MB of it.
	meta    []blockMeta
	caching bool
	cached  map[uint64][]int // chain hash -> blocks registered under it, oldest first
	shared  int              // blocks with refs > 1
	hashed  int              // blocks registered in the prefix cache
	taken   int              // blocks handed out since the pool was made
}

// blockMeta is vLLM's KVCacheBlock: the prefix-cache metadata of one
// physical block. Its reference count lives apart, in blockPool.refs, so
// that the allocations of a serving run touch a few bytes per block.
type blockMeta struct {
	hashed bool
	hash   uint64
	parent uint64 // chain hash of the previous block
	extra  string
	ids    []int // token ids of a hashed (full) block, to check the map
}

func newBlockPool(numBlocks int, l *log) blockPool {
	return blockPool{log: l, refs: make([]int32, numBlocks), free: newFreeQueue(numBlocks), cached: map[uint64][]int{}}
}

// validBlocks bounds a pool's size: block ids are int32 in the free queue.
const validBlocks = math.MaxInt32

func (bp *blockPool) enableCaching() { bp.caching = true }

// The pool's figures, read by the manager: N, the physical blocks; the
// blocks nobody references (cached ones included); the block tables
// holding block b; the blocks handed out since the pool was made; the
// blocks registered in the cache; the blocks with more than one holder.
func (bp *blockPool) numBlocks() int     { return len(bp.refs) }
func (bp *blockPool) numFree() int       { return bp.free.len() }
func (bp *blockPool) refCount(b int) int { return int(bp.refs[b]) }
func (bp *blockPool) numTaken() int      { return bp.taken }
func (bp *blockPool) numCached() int     { return bp.hashed }
func (bp *blockPool) numShared() int     { return bp.shared }
func (bp *blockPool) cachingOn() bool    { return bp.caching }
func (bp *blockPool) freeOrder() []int   { return bp.free.order() }

// cachedBlock is registered block b's chain hash and token ids.
func (bp *blockPool) cachedBlock(b int) (hash uint64, ids []int) {
	m := &bp.meta[b]
	return m.hash, m.ids
}

// isHashed reports whether block b carries a chain hash (only a caching
// pool registers blocks, and only registered blocks have metadata).
func (bp *blockPool) isHashed(b int) bool { return b < len(bp.meta) && bp.meta[b].hashed }

// metaFor is block b's metadata, meta grown (with zero values) to hold it.
func (bp *blockPool) metaFor(b int) *blockMeta {
	if b >= len(bp.meta) {
		bp.meta = slices.Grow(bp.meta, b+1-len(bp.meta))[:b+1]
	}
	return &bp.meta[b]
}

// incRef and decRef change a block's reference count, keeping the count
// of shared blocks.
func (bp *blockPool) incRef(b int) {
	bp.refs[b]++
	if bp.refs[b] == 2 {
		bp.shared++
	}
}

func (bp *blockPool) decRef(b int) {
	if bp.refs[b] == 2 {
		bp.shared--
	}
	bp.refs[b]--
}

// take hands out the block at the head of the free queue to request req.
// A block that still carries a hash is evicted from the cache first: vLLM
// evicts lazily, only when the slot is reused.
func (bp *blockPool) take(req int) int {
	b := bp.free.popFront()
	if bp.caching && bp.isHashed(b) { // only prefix caching hashes blocks
		m := &bp.meta[b]
		bp.uncache(b)
		if bp.logging() {
			bp.record(Event{Kind: Removed, Block: b, Hash: m.hash})
		}
		*m = blockMeta{}
	}
	bp.refs[b] = 1
	bp.taken++
	if bp.logging() {
		bp.record(Event{Kind: Allocated, Req: req, Block: b})
	}
	return b
}

// takeBlocks hands out n blocks (n ≤ numFree()) from the head of the free
// queue to request req, appended to dst: get_new_blocks. With no cache to
// evict from and nothing to log, they are taken in one loop
// (freeQueue.takeFront) rather than one take each: an admission takes tens
// of blocks, and in WebAssembly each call on the way costs more than its
// work. TestFastPathIsTheGeneralPath serves the same operations to a pool
// that logs (one take a block) and one that does not, and finds them
// identical after every one.
func (bp *blockPool) takeBlocks(dst []int, n, req int) []int {
	if !bp.caching && bp.off {
		bp.taken += n
		return bp.free.takeFront(dst, n, bp.refs)
	}
	for range n {
		dst = append(dst, bp.take(req))
	}
	return dst
}

// copyBlock is copy-on-write: a fresh block for request req in place of
// shared block src, which loses req's reference.
func (bp *blockPool) copyBlock(req, src int) int {
	dst := bp.take(req)
	bp.decRef(src)
	return dst
}

// release drops one reference to block b, held by request req; a block
// nobody references goes to the tail of the free queue, keeping its hash
// (it stays in the cache until its slot is reused).
func (bp *blockPool) release(req, b int) {
	bp.decRef(b)
	if bp.refs[b] == 0 {
		bp.free.pushBack(b)
		if bp.logging() {
			bp.record(Event{Kind: Freed, Req: req, Block: b})
		}
	}
}

// freeTable drops request req's reference to each block of its table,
// last block first (free_blocks over the reversed table). When no block is
// shared and nothing is logged, every block returns to the free queue, in
// one pass (freeQueue.pushBackReversed), for the reason takeBlocks gives;
// TestFastPathIsTheGeneralPath holds it to the block-by-block walk.
func (bp *blockPool) freeTable(req int, blocks []int) {
	if bp.shared == 0 && !bp.logging() {
		bp.free.pushBackReversed(blocks, bp.refs)
		return
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		bp.release(req, blocks[i])
	}
}

// share takes one more reference to each block of a table (a fork).
func (bp *blockPool) share(blocks []int) {
	for _, b := range blocks {
		bp.incRef(b)
	}
}

// touch takes a reference to cached block b for a request that hit it,
// reviving it from the free queue when nobody held it.
func (bp *blockPool) touch(b int) {
	if bp.refs[b] == 0 {
		bp.free.remove(b)
	}
	bp.incRef(b)
}

// cache registers full block b under chain hash h (vLLM cache_full_blocks):
// identical blocks of different requests are both registered, as vLLM does,
// since block tables are append-only. It reports false, changing nothing,
// when b is already registered (shared with the request it was forked
// from).
func (bp *blockPool) cache(b int, h, parent uint64, extra string, ids []int) bool {
	m := bp.metaFor(b)
	if m.hashed {
		return false
	}
	m.hashed, m.hash, m.parent, m.extra = true, h, parent, extra
	m.ids = append([]int(nil), ids...)
	bp.cached[h] = append(bp.cached[h], b)
	bp.hashed++
	return true
}

// uncache removes block b from the cached-block map.
func (bp *blockPool) uncache(b int) {
	bp.hashed--
	h := bp.meta[b].hash
	list := bp.cached[h]
	for i, x := range list {
		if x == b {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(bp.cached, h)
	} else {
		bp.cached[h] = list
	}
}

// lookup is the oldest block registered under chain hash h
// (get_cached_block), or false.
func (bp *blockPool) lookup(h uint64) (int, bool) {
	list := bp.cached[h]
	if len(list) == 0 {
		return 0, false
	}
	return list[0], true
}
