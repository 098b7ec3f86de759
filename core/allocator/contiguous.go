package allocator

import (
	"fmt"
	"sort"
)

// Contiguous is a token pool in which each request reserves one contiguous
// run of slots when admitted, placed at the lowest address where it fits
// (first fit).
type Contiguous struct {
	log
	pool int
	runs []Run // sorted by Start, non-overlapping
}

// Run is one request's reservation in a Contiguous pool.
type Run struct {
	Req    int
	Start  int
	Len    int // slots reserved
	Tokens int // slots holding a token
}

// Hole is a run of free slots between reservations.
type Hole struct{ Start, Len int }

// NewContiguous makes a pool of poolTokens slots.
func NewContiguous(poolTokens int) (*Contiguous, error) {
	if poolTokens < 1 {
		return nil, fmt.Errorf("allocator: poolTokens = %d, want ≥ 1", poolTokens)
	}
	return &Contiguous{pool: poolTokens}, nil
}

// PoolTokens is the number of slots in the pool.
func (c *Contiguous) PoolTokens() int { return c.pool }

func (c *Contiguous) find(req int) int {
	for i, r := range c.runs {
		if r.Req == req {
			return i
		}
	}
	return -1
}

// Admit reserves reserve slots for req and stores its n prompt tokens in
// them. It fails with ErrNoSpace when no hole is large enough, even if the
// free slots add up to more than reserve (external fragmentation).
func (c *Contiguous) Admit(req, reserve, n int) error {
	if c.find(req) >= 0 {
		return fmt.Errorf("allocator: request %d already admitted", req)
	}
	if reserve < 1 || n < 0 || n > reserve {
		return fmt.Errorf("allocator: reserve %d slots for a %d-token prompt", reserve, n)
	}
	for _, h := range c.Holes() {
		if h.Len >= reserve {
			r := Run{Req: req, Start: h.Start, Len: reserve, Tokens: n}
			i := sort.Search(len(c.runs), func(i int) bool { return c.runs[i].Start > h.Start })
			c.runs = append(c.runs, Run{})
			copy(c.runs[i+1:], c.runs[i:])
			c.runs[i] = r
			c.record(Event{Kind: Admitted, Req: req, Tokens: n})
			c.record(Event{Kind: Allocated, Req: req, Start: r.Start, Len: r.Len})
			return nil
		}
	}
	c.record(Event{Kind: Rejected, Req: req, Tokens: n, Len: reserve})
	return ErrNoSpace
}

// Append stores n more tokens in req's run; it fails with ErrNoSpace if the
// run is full (a contiguous reservation cannot grow in place).
func (c *Contiguous) Append(req, n int) error {
	i := c.find(req)
	if i < 0 {
		return fmt.Errorf("allocator: request %d not admitted", req)
	}
	if c.runs[i].Tokens+n > c.runs[i].Len {
		c.record(Event{Kind: Rejected, Req: req, Tokens: n})
		return ErrNoSpace
	}
	c.runs[i].Tokens += n
	if n > 0 {
		c.record(Event{Kind: Appended, Req: req, Tokens: n})
	}
	return nil
}

// Free releases req's run, leaving a hole.
func (c *Contiguous) Free(req int) error {
	i := c.find(req)
	if i < 0 {
		return fmt.Errorf("allocator: request %d not admitted", req)
	}
	r := c.runs[i]
	c.runs = append(c.runs[:i], c.runs[i+1:]...)
	c.record(Event{Kind: Freed, Req: req, Start: r.Start, Len: r.Len})
	return nil
}

// End is the slot just past the last reservation (0 when none).
func (c *Contiguous) End() int {
	if len(c.runs) == 0 {
		return 0
	}
	r := c.runs[len(c.runs)-1]
	return r.Start + r.Len
}

// RunOf returns req's reservation.
func (c *Contiguous) RunOf(req int) (Run, bool) {
	if i := c.find(req); i >= 0 {
		return c.runs[i], true
	}
	return Run{}, false
}

// Runs returns the reservations in address order.
func (c *Contiguous) Runs() []Run { return append([]Run(nil), c.runs...) }

// Holes returns the free runs in address order (adjacent free slots merge).
func (c *Contiguous) Holes() []Hole {
	var out []Hole
	at := 0
	for _, r := range c.runs {
		if r.Start > at {
			out = append(out, Hole{Start: at, Len: r.Start - at})
		}
		at = r.Start + r.Len
	}
	if at < c.pool {
		out = append(out, Hole{Start: at, Len: c.pool - at})
	}
	return out
}

// Unusable counts free slots that a new reservation of size reserve cannot
// use: in each hole, what is left after fitting as many such runs as possible
// (external fragmentation).
func (c *Contiguous) Unusable(reserve int) int {
	if reserve < 1 {
		return 0
	}
	u := 0
	for _, h := range c.Holes() {
		u += h.Len % reserve
	}
	return u
}

// Usage reports the pool's slot usage.
func (c *Contiguous) Usage() Usage {
	u := Usage{Resident: len(c.runs), Pool: c.pool}
	for _, r := range c.runs {
		u.Stored += r.Tokens
		u.Reserved += r.Len
	}
	return u
}
