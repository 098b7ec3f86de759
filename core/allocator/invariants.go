package allocator

import (
	"fmt"
	"github.com/inferlab/inferlab/core/kvhash"
)

// Check verifies the block-pool invariants of shared/reference/engines.md §7
// and returns the first one broken. Tests and fuzz targets call it after
// every operation; it is O(blocks + tokens).
func (p *Paged) Check() error {
	holders, err := p.checkTables()
	if err != nil {
		return err
	}
	inQueue, err := p.checkFreeQueue()
	if err != nil {
		return err
	}
	if err := p.checkBlocks(holders, inQueue); err != nil {
		return err
	}
	return p.checkCacheMap()
}

// checkTables verifies each block table against its request's tokens and
// chain hashes (§7.5, §7.7) and the pool's running totals, and counts the
// tables holding each block.
func (p *Paged) checkTables() (holders []int, err error) {
	holders = make([]int, len(p.refs))
	tokens, entries := 0, 0
	for req, s := range p.seqs.all() {
		tokens += s.n
		entries += len(s.blocks)
		if err := p.checkSeq(req, s); err != nil {
			return nil, err
		}
		for _, b := range s.blocks {
			holders[b]++
		}
	}
	if tokens != p.sumTokens || entries != p.sumBlocks {
		return nil, fmt.Errorf("tables hold %d tokens in %d entries, the pool counts %d and %d", tokens, entries, p.sumTokens, p.sumBlocks)
	}
	return holders, nil
}

// checkSeq verifies one request: ⌈n/B⌉ blocks (§7.7), a token id per token
// while caching, and chain hashes that match its tokens (§7.5).
func (p *Paged) checkSeq(req int, s *Seq) error {
	if s.req != req || !s.live {
		return fmt.Errorf("request %d's table is filed as request %d, live = %v", req, s.req, s.live)
	}
	if want := p.BlocksFor(s.n); len(s.blocks) != want {
		return fmt.Errorf("request %d holds %d blocks for %d tokens, want %d", req, len(s.blocks), s.n, want)
	}
	if p.caching && len(s.ids) != s.n {
		return fmt.Errorf("request %d: %d token ids for %d tokens", req, len(s.ids), s.n)
	}
	parent := kvhash.Root
	for i, h := range s.hashes {
		if kvhash.Chain(parent, s.ids[i*p.blockSize:(i+1)*p.blockSize], s.extra) != h {
			return fmt.Errorf("request %d: block %d's chain hash does not match its tokens", req, i)
		}
		parent = h
	}
	return nil
}

// checkFreeQueue walks the free queue: no block twice (§7.2), and the walk
// agrees with the count.
func (p *Paged) checkFreeQueue() (inQueue []bool, err error) {
	inQueue = make([]bool, len(p.refs))
	walked := 0
	for _, b := range p.free.order() {
		if inQueue[b] {
			return nil, fmt.Errorf("block %d is twice in the free queue", b)
		}
		inQueue[b] = true
		walked++
	}
	if walked != p.free.len() {
		return nil, fmt.Errorf("free queue walks %d blocks but counts %d", walked, p.free.len())
	}
	return inQueue, nil
}

// checkBlocks verifies every block's metadata: reference count = holders
// (§7.1), free ⇔ unreferenced (§7.2), hashed blocks full and listed (§7.4),
// the pool's counters, and conservation (§7.3).
func (p *Paged) checkBlocks(holders []int, inQueue []bool) error {
	held, shared, hashed := 0, 0, 0
	for b := range p.refs {
		refs := int(p.refs[b])
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
		if p.hashedBlock(b) {
			hashed++
			if err := p.checkHashed(b); err != nil {
				return err
			}
		}
	}
	switch {
	case hashed != p.hashed:
		return fmt.Errorf("%d blocks carry a hash but the pool counts %d", hashed, p.hashed)
	case shared != p.shared:
		return fmt.Errorf("%d blocks are shared but the pool counts %d", shared, p.shared)
	case held+p.free.len() != len(p.refs):
		return fmt.Errorf("blocks not conserved: %d held + %d free != %d", held, p.free.len(), len(p.refs))
	}
	return nil
}

// checkHashed verifies that hashed block b is full, that its contents match
// its key, and that the cache map lists it (§7.4).
func (p *Paged) checkHashed(b int) error {
	m := p.blocks[b]
	if len(m.ids) != p.blockSize || kvhash.Chain(m.parent, m.ids, m.extra) != m.hash {
		return fmt.Errorf("block %d: hash does not match its contents", b)
	}
	for _, x := range p.cached[m.hash] {
		if x == b {
			return nil
		}
	}
	return fmt.Errorf("block %d carries a hash the cache map does not list", b)
}

// checkCacheMap verifies that every cache map entry points at a block that
// carries its hash.
func (p *Paged) checkCacheMap() error {
	for h, list := range p.cached {
		for _, b := range list {
			if !p.blocks[b].hashed || p.blocks[b].hash != h {
				return fmt.Errorf("cache map entry %x points at block %d, which does not carry it", h, b)
			}
		}
	}
	return nil
}
