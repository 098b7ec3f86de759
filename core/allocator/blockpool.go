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

// takeFront is take for n blocks (n ≤ free.len()) when there is no cache
// to evict from and nothing to log, appended to dst in one loop: an
// admission takes tens of blocks.
func (bp *blockPool) takeFront(dst []int, n int) []int {
	dst = bp.free.takeFront(dst, n, bp.refs)
	bp.taken += n
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

// releaseAll is release of every block of a table, last block first, when
// no block is shared and nothing is logged: all return to the free queue,
// in one pass.
func (bp *blockPool) releaseAll(blocks []int) { bp.free.pushBackReversed(blocks, bp.refs) }

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
