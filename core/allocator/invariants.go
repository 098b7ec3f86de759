package allocator

import (
	"fmt"

	"github.com/inferlab/inferlab/core/kvhash"
)

// Check verifies the block pool's invariants and returns the first one
// broken: a block's reference count is the number of block tables holding
// it; a block is in the free queue exactly when nobody references it, and
// at most once; every block is held or free (none lost, none twice); a
// block carrying a hash is full, its contents match the hash, and the
// cache map lists it under that hash; a request holds ⌈tokens/B⌉ blocks
// whose chain hashes match its tokens. Tests and fuzz targets call it after
// every operation; it is O(blocks + tokens).
func (p *Paged) Check() error {
	holders, err := p.checkTables()
	if err != nil {
		return err
	}
	return p.pool.check(holders, p.blockSize)
}

// checkTables verifies each block table against its request's tokens and
// chain hashes and the manager's running total, and counts the tables
// holding each block.
func (p *Paged) checkTables() (holders []int, err error) {
	holders = make([]int, p.pool.numBlocks())
	tokens := 0
	for id, r := range p.residents() {
		tokens += r.tokens()
		if err := p.checkRequest(id, r); err != nil {
			return nil, err
		}
		for _, b := range r.blocks {
			holders[b]++
		}
	}
	if tokens != p.sumTokens {
		return nil, fmt.Errorf("tables hold %d tokens, the manager counts %d", tokens, p.sumTokens)
	}
	return holders, nil
}

// checkRequest verifies one request: ⌈n/B⌉ blocks, a token id per
// token while caching, chain hashes that match its tokens, and a
// fast path (Request.slack) open only for the slots left in a last block
// it holds alone, while nothing is hashed or logged.
func (p *Paged) checkRequest(id int, r *Request) error {
	n := r.tokens()
	switch {
	case r.ID != id || r.owner != p.id:
		return fmt.Errorf("request %d is filed as request %d, held by this pool = %v", r.ID, id, r.owner == p.id)
	case len(r.blocks) != p.BlocksFor(n):
		return fmt.Errorf("request %d holds %d blocks for %d tokens, want %d", id, len(r.blocks), n, p.BlocksFor(n))
	case p.pool.cachingOn() && (r.cached == nil || len(r.cached.ids) != n):
		return fmt.Errorf("request %d: the token ids kept do not count its %d tokens", id, n)
	case r.slack < 0 || r.slack > r.grant:
		return fmt.Errorf("request %d: fast-path slack %d of a grant of %d", id, r.slack, r.grant)
	case r.slack > 0 && (!p.plain() || n+r.slack-1 > len(r.blocks)*p.blockSize ||
		(len(r.blocks) > 0 && p.pool.refCount(r.blocks[len(r.blocks)-1]) != 1)):
		return fmt.Errorf("request %d: fast path open for %d tokens past %d in %d blocks", id, r.slack-1, n, len(r.blocks))
	}
	if r.cached == nil {
		return nil
	}
	parent := kvhash.Root
	for i, h := range r.cached.hashes {
		if kvhash.Chain(parent, r.cached.ids[i*p.blockSize:(i+1)*p.blockSize], r.Extra) != h {
			return fmt.Errorf("request %d: block %d's chain hash does not match its tokens", id, i)
		}
		parent = h
	}
	return nil
}

// check verifies the block pool against holders, the number of block
// tables holding each block: the free queue (checkFreeQueue), every
// block's metadata (checkBlocks) and the cache map (checkCacheMap), with
// blocks of blockSize tokens.
func (bp *blockPool) check(holders []int, blockSize int) error {
	inQueue, err := bp.checkFreeQueue()
	if err != nil {
		return err
	}
	if err := bp.checkBlocks(holders, inQueue, blockSize); err != nil {
		return err
	}
	return bp.checkCacheMap()
}

// checkFreeQueue walks the free queue: no block twice, and the walk
// agrees with the count.
func (bp *blockPool) checkFreeQueue() (inQueue []bool, err error) {
	inQueue = make([]bool, len(bp.refs))
	walked := 0
	for _, b := range bp.free.order() {
		if inQueue[b] {
			return nil, fmt.Errorf("block %d is twice in the free queue", b)
		}
		inQueue[b] = true
		walked++
	}
	if walked != bp.free.len() {
		return nil, fmt.Errorf("free queue walks %d blocks but counts %d", walked, bp.free.len())
	}
	return inQueue, nil
}

// checkBlocks verifies every block's metadata: reference count = holders,
// free ⇔ unreferenced, hashed blocks full and listed, the pool's counters,
// and conservation.
func (bp *blockPool) checkBlocks(holders []int, inQueue []bool, blockSize int) error {
	held, shared, hashed := 0, 0, 0
	for b := range bp.refs {
		refs := int(bp.refs[b])
		if refs != holders[b] {
			return fmt.Errorf("block %d: ref count %d, held by %d tables", b, refs, holders[b])
		}
		if (refs == 0) != inQueue[b] {
			return fmt.Errorf("block %d: ref count %d but in free queue = %v", b, refs, inQueue[b])
		}
		if refs > 0 {
			held++
		}
		if refs > 1 {
			shared++
		}
		if bp.isHashed(b) {
			hashed++
			if err := bp.checkHashed(b, blockSize); err != nil {
				return err
			}
		}
	}
	switch {
	case hashed != bp.hashed:
		return fmt.Errorf("%d blocks carry a hash but the pool counts %d", hashed, bp.hashed)
	case shared != bp.shared:
		return fmt.Errorf("%d blocks are shared but the pool counts %d", shared, bp.shared)
	case held+bp.free.len() != len(bp.refs):
		return fmt.Errorf("blocks not conserved: %d held + %d free != %d", held, bp.free.len(), len(bp.refs))
	}
	return nil
}

// checkHashed verifies that hashed block b is full, that its contents match
// its key, and that the cache map lists it.
func (bp *blockPool) checkHashed(b, blockSize int) error {
	m := bp.meta[b]
	if len(m.ids) != blockSize || kvhash.Chain(m.parent, m.ids, m.extra) != m.hash {
		return fmt.Errorf("block %d: hash does not match its contents", b)
	}
	for _, x := range bp.cached[m.hash] {
		if x == b {
			return nil
		}
	}
	return fmt.Errorf("block %d carries a hash the cache map does not list", b)
}

// checkCacheMap verifies that every cache map entry points at a block that
// carries its hash.
func (bp *blockPool) checkCacheMap() error {
	for h, list := range bp.cached {
		for _, b := range list {
			if !bp.meta[b].hashed || bp.meta[b].hash != h {
				return fmt.Errorf("cache map entry %x points at block %d, which does not carry it", h, b)
			}
		}
	}
	return nil
}
