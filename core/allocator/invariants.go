package allocator

import "fmt"

// Check verifies the block-pool invariants of shared/reference/engines.md §7
// and returns the first one broken. Tests and fuzz targets call it after
// every operation; it is O(blocks + tokens).
func (p *Paged) Check() error {
	holders := make([]int, len(p.blocks))
	tokens, entries := 0, 0
	for req, s := range p.seqs {
		tokens += s.n
		entries += len(s.blocks)
		if want := p.BlocksFor(s.n); len(s.blocks) != want { // §7.7
			return fmt.Errorf("request %d holds %d blocks for %d tokens, want %d", req, len(s.blocks), s.n, want)
		}
		if p.caching && len(s.ids) != s.n {
			return fmt.Errorf("request %d: %d token ids for %d tokens", req, len(s.ids), s.n)
		}
		for i, h := range s.hashes { // §7.5: chain hashes
			parent := rootHash
			if i > 0 {
				parent = s.hashes[i-1]
			}
			if chainHash(parent, s.ids[i*p.blockSize:(i+1)*p.blockSize], s.extra) != h {
				return fmt.Errorf("request %d: block %d's chain hash does not match its tokens", req, i)
			}
		}
		for _, b := range s.blocks {
			holders[b]++
		}
	}
	if tokens != p.sumTokens || entries != p.sumBlocks {
		return fmt.Errorf("tables hold %d tokens in %d entries, the pool counts %d and %d", tokens, entries, p.sumTokens, p.sumBlocks)
	}
	inQueue := make([]bool, len(p.blocks))
	walked := 0
	for _, b := range p.free.order() {
		if inQueue[b] { // §7.2: no block twice in the free queue
			return fmt.Errorf("block %d is twice in the free queue", b)
		}
		inQueue[b] = true
		walked++
	}
	if walked != p.free.len() {
		return fmt.Errorf("free queue walks %d blocks but counts %d", walked, p.free.len())
	}
	held, shared, hashed := 0, 0, 0
	for b, m := range p.blocks {
		if m.refs > 1 {
			shared++
		}
		if m.hashed {
			hashed++
		}
		if m.refs != holders[b] { // §7.1
			return fmt.Errorf("block %d: ref count %d, held by %d tables", b, m.refs, holders[b])
		}
		if (m.refs == 0) != inQueue[b] { // §7.2: free ⇔ unreferenced
			return fmt.Errorf("block %d: ref count %d but in free queue = %v", b, m.refs, inQueue[b])
		}
		if m.refs > 0 {
			held++
		}
		if m.hashed { // §7.4: a hashed block is full, in the map, and its contents match the key
			if len(m.ids) != p.blockSize || chainHash(m.parent, m.ids, m.extra) != m.hash {
				return fmt.Errorf("block %d: hash does not match its contents", b)
			}
			found := false
			for _, x := range p.cached[m.hash] {
				found = found || x == b
			}
			if !found {
				return fmt.Errorf("block %d carries a hash the cache map does not list", b)
			}
		}
	}
	for h, list := range p.cached {
		for _, b := range list {
			if !p.blocks[b].hashed || p.blocks[b].hash != h {
				return fmt.Errorf("cache map entry %x points at block %d, which does not carry it", h, b)
			}
		}
	}
	if hashed != p.hashed {
		return fmt.Errorf("%d blocks carry a hash but the pool counts %d", hashed, p.hashed)
	}
	if shared != p.shared {
		return fmt.Errorf("%d blocks are shared but the pool counts %d", shared, p.shared)
	}
	if held+p.free.len() != len(p.blocks) { // §7.3: conservation
		return fmt.Errorf("blocks not conserved: %d held + %d free != %d", held, p.free.len(), len(p.blocks))
	}
	return nil
}
