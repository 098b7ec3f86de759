package allocator

import (
	"fmt"
	"sort"
)

// Paged is a pool of fixed-size KV blocks with one block table per request.
type Paged struct {
	log
	blockSize int
	refs      []int         // per physical block: block tables holding it
	free      *freeQueue    // blocks with refs == 0
	tables    map[int][]int // request -> physical blocks, in logical order
	tokens    map[int]int   // request -> tokens stored
}

// NewPaged makes a pool of numBlocks blocks of blockSize token slots.
func NewPaged(numBlocks, blockSize int) (*Paged, error) {
	if numBlocks < 1 {
		return nil, fmt.Errorf("allocator: numBlocks = %d, want ≥ 1", numBlocks)
	}
	if blockSize < 1 {
		return nil, fmt.Errorf("allocator: blockSize = %d, want ≥ 1", blockSize)
	}
	return &Paged{
		blockSize: blockSize,
		refs:      make([]int, numBlocks),
		free:      newFreeQueue(numBlocks),
		tables:    map[int][]int{},
		tokens:    map[int]int{},
	}, nil
}

// BlockSize is B, the token slots per block.
func (p *Paged) BlockSize() int { return p.blockSize }

// NumBlocks is N, the physical blocks in the pool.
func (p *Paged) NumBlocks() int { return len(p.refs) }

// FreeBlocks is the number of blocks nobody holds.
func (p *Paged) FreeBlocks() int { return p.free.len() }

// BlocksFor is the number of blocks needed to hold n tokens: ⌈n/B⌉.
func (p *Paged) BlocksFor(n int) int { return (n + p.blockSize - 1) / p.blockSize }

// Admit gives request req a block table holding its prompt of n tokens,
// taking ⌈n/B⌉ blocks from the head of the free queue.
func (p *Paged) Admit(req, n int) error {
	if _, ok := p.tables[req]; ok {
		return fmt.Errorf("allocator: request %d already admitted", req)
	}
	if n < 0 {
		return fmt.Errorf("allocator: prompt of %d tokens", n)
	}
	need := p.BlocksFor(n)
	if need > p.free.len() {
		p.record(Event{Kind: Rejected, Req: req, Tokens: n, Len: need})
		return ErrNoSpace
	}
	p.tables[req] = make([]int, 0, need)
	p.tokens[req] = 0
	p.record(Event{Kind: Admitted, Req: req, Tokens: n})
	p.grow(req, n)
	return nil
}

// Append writes n more tokens for req, allocating a new block each time the
// last one fills. It is all-or-nothing.
func (p *Paged) Append(req, n int) error {
	t, ok := p.tables[req]
	if !ok {
		return fmt.Errorf("allocator: request %d not admitted", req)
	}
	need := p.BlocksFor(p.tokens[req]+n) - len(t)
	if need > p.free.len() {
		p.record(Event{Kind: Rejected, Req: req, Tokens: n, Len: need})
		return ErrNoSpace
	}
	p.grow(req, n)
	return nil
}

// grow appends n tokens to req's table; the caller checked there is room.
func (p *Paged) grow(req, n int) {
	tokens := p.tokens[req] + n
	for len(p.tables[req]) < p.BlocksFor(tokens) {
		b := p.free.popFront()
		p.refs[b] = 1
		p.tables[req] = append(p.tables[req], b)
		p.record(Event{Kind: Allocated, Req: req, Block: b})
	}
	p.tokens[req] = tokens
	if n > 0 {
		p.record(Event{Kind: Appended, Req: req, Tokens: n})
	}
}

// Free releases req's blocks, tail first (as vLLM does, so that in a later
// prefix cache the deepest blocks are reused before shared heads).
func (p *Paged) Free(req int) error {
	t, ok := p.tables[req]
	if !ok {
		return fmt.Errorf("allocator: request %d not admitted", req)
	}
	for i := len(t) - 1; i >= 0; i-- {
		b := t[i]
		p.refs[b]--
		if p.refs[b] == 0 {
			p.free.pushBack(b)
			p.record(Event{Kind: Freed, Req: req, Block: b})
		}
	}
	delete(p.tables, req)
	delete(p.tokens, req)
	return nil
}

// Table returns a copy of req's block table (nil if it holds none).
func (p *Paged) Table(req int) []int {
	t, ok := p.tables[req]
	if !ok {
		return nil
	}
	return append([]int(nil), t...)
}

// Tokens returns the tokens req has stored.
func (p *Paged) Tokens(req int) int { return p.tokens[req] }

// Requests lists resident requests in ascending id order.
func (p *Paged) Requests() []int {
	out := make([]int, 0, len(p.tables))
	for r := range p.tables {
		out = append(out, r)
	}
	sort.Ints(out)
	return out
}

// Owners returns, for every physical block, the request holding it and how
// many of its slots hold tokens; free blocks get -1 and 0. With reference
// counts of at most one, every held block has exactly one owner.
func (p *Paged) Owners() (owner, used []int) {
	owner = make([]int, len(p.refs))
	used = make([]int, len(p.refs))
	for i := range owner {
		owner[i] = -1
	}
	for req, t := range p.tables {
		left := p.tokens[req]
		for _, b := range t {
			owner[b] = req
			u := min(left, p.blockSize)
			used[b] = u
			left -= u
		}
	}
	return owner, used
}

// Usage reports the pool's slot usage. Only each request's last block can
// hold unused slots, so waste per request is below B.
func (p *Paged) Usage() Usage {
	u := Usage{Resident: len(p.tables), Pool: len(p.refs) * p.blockSize}
	for req, t := range p.tables {
		u.Stored += p.tokens[req]
		u.Reserved += len(t) * p.blockSize
	}
	return u
}
