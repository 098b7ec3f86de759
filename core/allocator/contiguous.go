package allocator

import (
	"fmt"
)

// Contiguous is a token pool in which each request reserves one contiguous
// run of slots when admitted, sized by its Reservation and placed at the
// lowest address where it fits (first fit).
type Contiguous struct {
	log
	pool    int
	reserve Reservation
	runs    []*Hold        // sorted by Start, non-overlapping
	held    handles[*Hold] // request -> its reservation
	slab    []Hold         // Holds made ahead, a chunk at a time
	// stored and reserved total the runs' tokens and lengths, so Usage
	// need not walk every run each tick; taken and holeReuses count
	// reservations since the pool was made.
	stored, reserved, taken, holeReuses int
	short                               NoSpaceError // the last shortfall (errShort)
	// layout counts the runs taken and freed; largestAt is the layout in
	// which largest, the largest hole, was last measured (by a refused
	// admission's walk). Until a run is taken or freed the holes stay as
	// they are, so a head refused tick after tick is refused without
	// walking every run again.
	layout, largestAt, largest int
	// refused is the last request refused. Every refusal measures or
	// reuses largest, so it happened in layout largestAt: while that is
	// still the layout, refused is still not held, and its retry skips the
	// lookup by id (a map's hash is computed in software in WebAssembly).
	refused int
	// unusable is Unusable(unusableFor) as measured in layout unusableAt.
	unusable, unusableAt, unusableFor int
}

// Hold is one resident request's reservation, the handle a caller that
// stores a token for it every tick keeps (Contiguous.Hold, GrowHold)
// instead of having the pool find the request by id each time, as the
// paged pool's Seq. It is valid until the request is freed.
type Hold struct {
	run  Run
	live bool // false once freed: a stale handle is refused
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

// NewContiguous makes a pool of poolTokens slots that reserves runs by r.
func NewContiguous(poolTokens int, r Reservation) (*Contiguous, error) {
	if poolTokens < 1 {
		return nil, fmt.Errorf("allocator: poolTokens = %d, want ≥ 1", poolTokens)
	}
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &Contiguous{pool: poolTokens, reserve: r, largestAt: -1, unusableAt: -1}, nil
}

// PoolTokens is the number of slots in the pool.
func (c *Contiguous) PoolTokens() int { return c.pool }

// Reservation is the pool's sizing rule.
func (c *Contiguous) Reservation() Reservation { return c.reserve }

// index returns the position of h in the runs, which are in address
// order: a binary search on its start.
func (c *Contiguous) index(h *Hold) int {
	lo, hi := 0, len(c.runs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.runs[m].run.Start < h.run.Start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// Hold returns resident request req's handle, or nil.
func (c *Contiguous) Hold(req int) *Hold { return c.held.get(req) }

// Resident is the number of requests holding a run (Usage.Resident).
func (c *Contiguous) Resident() int { return len(c.runs) }

// Room is the number of tokens h's run can still take.
func (h *Hold) Room() int { return h.run.Len - h.run.Tokens }

// StillRefuses reports whether a request that will hold final tokens
// would be refused now without a walk of the holes: a refusal has
// measured the holes and no run has been taken or freed since, and the
// largest of them is smaller than the run final needs. Asking changes
// nothing. A scheduler whose blocked head is this pool's last refusal
// uses it to skip the retry.
func (c *Contiguous) StillRefuses(final int) bool {
	return c.largestAt == c.layout && c.reserve.Slots(final) > c.largest
}

// GrowHold is AllocateSlots for the resident request behind handle h: it
// stores n more tokens in its run, or fails with ErrNoSpace if the run is
// full. It spares the lookup by id that AllocateSlots makes.
func (c *Contiguous) GrowHold(h *Hold, n int) error {
	if h == nil || !h.live {
		return fmt.Errorf("allocator: growing a request that is not resident")
	}
	if n < 0 {
		return fmt.Errorf("allocator: request %d asks for %d new tokens", h.run.Req, n)
	}
	return public(c.extend(h, n), c.short)
}

// Plain reports whether every append is one that Append makes without
// logging an event (the event log is off; it stays off once turned off): a
// caller storing a token for each of many requests checks it once, then
// calls AppendPlain for each (as with Paged.Plain).
func (c *Contiguous) Plain() bool { return c.off }

// AppendPlain is Append for a caller that found Plain true since its last
// other call into the pool, holds h live and stores n ≥ 0 tokens: only the
// room in h's run is left to check.
func (c *Contiguous) AppendPlain(h *Hold, n int) bool {
	if h.run.Tokens+n > h.run.Len {
		return false
	}
	h.run.Tokens += n
	c.stored += n
	return true
}

// Append stores n tokens in h's run when they fit and there is no event
// to log, and reports whether it did; otherwise it changes nothing and the
// caller calls GrowHold. As Paged.Append, it is small enough to be inlined
// into a serving loop.
func (c *Contiguous) Append(h *Hold, n int) bool {
	if h == nil || !h.live || !c.off || n < 0 || h.run.Tokens+n > h.run.Len {
		return false
	}
	h.run.Tokens += n
	c.stored += n
	return true
}

// AdmitPlain is AllocateSlots(req, Slots{New: n, Final: final}) for a
// caller that found Plain true since its last other call into the pool
// and knows that req is not resident: one call where AllocateSlots makes
// three. It returns req's handle; or nil and no error when no hole is large
// enough, the pool's account of which is then Shortfall; or the error
// AllocateSlots returns for a request no run can hold.
func (c *Contiguous) AdmitPlain(req, n, final int) (*Hold, error) {
	err := c.admit(req, n, final)
	if err == nil {
		return c.held.get(req), nil
	}
	if isShort(err) {
		return nil, nil
	}
	return nil, err
}

// Shortfall is the pool's account of its last refusal for want of room.
func (c *Contiguous) Shortfall() NoSpaceError { return c.short }

// AllocateSlots admits req, if the pool does not hold it yet, by reserving
// a run of Reservation().Slots(a.Final) slots and storing a.New tokens in
// it; admission fails with ErrNoSpace when no hole is large enough, even if
// the free slots add up to more (external fragmentation). For a resident
// req it stores a.New more tokens in its run and fails with ErrNoSpace if
// the run is full: a contiguous reservation cannot grow in place. There is
// no prefix cache, so a.Computed must be empty; token ids are not kept.
func (c *Contiguous) AllocateSlots(req int, a Slots) error {
	return public(c.allocateSlots(req, &a), c.short)
}

// TryAllocateSlots is AllocateSlots reporting a lack of room as a value
// (TryPool).
func (c *Contiguous) TryAllocateSlots(req int, a Slots) (NoSpaceError, bool, error) {
	return try(c.allocateSlots(req, &a), c.short)
}

func (c *Contiguous) allocateSlots(req int, a *Slots) error { // a by pointer: see Paged.allocateSlots
	if a.New < 0 || len(a.Computed) > 0 {
		return fmt.Errorf("allocator: request %d asks for %d new tokens and %d computed blocks of a contiguous pool", req, a.New, len(a.Computed))
	}
	if req != c.refused || c.largestAt != c.layout {
		if h := c.held.get(req); h != nil {
			return c.extend(h, a.New)
		}
	}
	return c.admit(req, a.New, a.Final)
}

// admit reserves a run for req, which will hold final tokens, and stores n.
func (c *Contiguous) admit(req, n, final int) error {
	reserve := c.reserve.Slots(final)
	if final < n || n > reserve {
		return fmt.Errorf("allocator: request %d: a %d-slot run for %d tokens now and %d at most", req, reserve, n, final)
	}
	if c.largestAt == c.layout && reserve > c.largest {
		return c.refuse(req, n, reserve) // the holes measured last time, unchanged
	}
	// First fit: walk the holes between runs (Holes, without building it).
	largest, at := 0, 0
	for i := 0; i <= len(c.runs); i++ {
		end := c.pool
		if i < len(c.runs) {
			end = c.runs[i].run.Start
		}
		if hole := end - at; hole >= reserve {
			c.place(i, Run{Req: req, Start: at, Len: reserve, Tokens: n})
			return nil
		} else if hole > largest {
			largest = hole
		}
		if i < len(c.runs) {
			at = c.runs[i].run.Start + c.runs[i].run.Len
		}
	}
	c.largest, c.largestAt = largest, c.layout
	return c.refuse(req, n, reserve)
}

// refuse records req's refusal for want of a hole of reserve slots.
func (c *Contiguous) refuse(req, n, reserve int) error {
	c.refused = req
	if c.logging() {
		c.record(Event{Kind: Rejected, Req: req, Tokens: n, Len: reserve})
	}
	c.short = NoSpaceError{Need: reserve, Free: c.pool - c.reserved, Largest: c.largest}
	return errShort
}

// place inserts run r before runs[i], where the hole it fills starts.
func (c *Contiguous) place(i int, r Run) {
	if r.Start < c.End() {
		c.holeReuses++
	}
	if len(c.slab) == 0 {
		c.slab = make([]Hold, 64) // one allocation per 64 admissions
	}
	h := &c.slab[0]
	c.slab = c.slab[1:]
	*h = Hold{run: r, live: true}
	// Shifted one by one: a pool holds few runs, and slices.Insert is a
	// call and a typed copy each time.
	c.runs = append(c.runs, nil)
	for j := len(c.runs) - 1; j > i; j-- {
		c.runs[j] = c.runs[j-1]
	}
	c.runs[i] = h
	c.held.set(r.Req, h)
	c.stored += r.Tokens
	c.reserved += r.Len
	c.taken++
	c.layout++
	if c.logging() {
		c.record(Event{Kind: Admitted, Req: r.Req, Tokens: r.Tokens})
		c.record(Event{Kind: Allocated, Req: r.Req, Start: r.Start, Len: r.Len})
	}
}

// extend stores n more tokens in h's run.
func (c *Contiguous) extend(h *Hold, n int) error {
	r := &h.run
	if r.Tokens+n > r.Len {
		if c.logging() {
			c.record(Event{Kind: Rejected, Req: r.Req, Tokens: n})
		}
		c.short = NoSpaceError{Need: n, Free: r.Len - r.Tokens, Largest: r.Len - r.Tokens}
		return errShort
	}
	r.Tokens += n
	c.stored += n
	if n > 0 && c.logging() {
		c.record(Event{Kind: Appended, Req: r.Req, Tokens: n})
	}
	return nil
}

// Free releases req's run, leaving a hole.
func (c *Contiguous) Free(req int) error {
	h := c.held.get(req)
	if h == nil {
		return fmt.Errorf("allocator: request %d not admitted", req)
	}
	r := h.run
	i := c.index(h)
	for j := i + 1; j < len(c.runs); j++ { // as in place
		c.runs[j-1] = c.runs[j]
	}
	c.runs[len(c.runs)-1] = nil // the handle is not kept alive
	c.runs = c.runs[:len(c.runs)-1]
	c.held.del(req)
	c.layout++
	h.live = false
	c.stored -= r.Tokens
	c.reserved -= r.Len
	if c.logging() {
		c.record(Event{Kind: Freed, Req: req, Start: r.Start, Len: r.Len})
	}
	return nil
}

// End is the slot just past the last reservation (0 when none).
func (c *Contiguous) End() int {
	if len(c.runs) == 0 {
		return 0
	}
	r := c.runs[len(c.runs)-1].run
	return r.Start + r.Len
}

// RunOf returns req's reservation.
func (c *Contiguous) RunOf(req int) (Run, bool) {
	if h := c.held.get(req); h != nil {
		return h.run, true
	}
	return Run{}, false
}

// Runs returns the reservations in address order.
func (c *Contiguous) Runs() []Run {
	if len(c.runs) == 0 {
		return nil
	}
	out := make([]Run, len(c.runs))
	for i, h := range c.runs {
		out[i] = h.run
	}
	return out
}

// Holes returns the free runs in address order (adjacent free slots merge).
func (c *Contiguous) Holes() []Hole {
	var out []Hole
	at := 0
	for _, h := range c.runs {
		r := h.run
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
	// A lesson asks at every tick while requests wait; the holes change
	// only when a run is taken or freed.
	if c.unusableAt == c.layout && c.unusableFor == reserve {
		return c.unusable
	}
	u, at := 0, 0
	for _, h := range c.runs {
		r := h.run
		u += (r.Start - at) % reserve
		at = r.Start + r.Len
	}
	u += (c.pool - at) % reserve
	c.unusable, c.unusableAt, c.unusableFor = u, c.layout, reserve
	return u
}

// Usage reports the pool's slot usage.
func (c *Contiguous) Usage() Usage {
	var u Usage
	c.UsageInto(&u)
	return u
}

// UsageInto is Usage written into *u, field by field (see Paged.UsageInto).
func (c *Contiguous) UsageInto(u *Usage) {
	u.Resident, u.Pool, u.Stored, u.Reserved, u.Taken, u.HoleReuses = len(c.runs), c.pool, c.stored, c.reserved, c.taken, c.holeReuses
}
