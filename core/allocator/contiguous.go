package allocator

import (
	"fmt"
)

// Contiguous is a token pool in which each request reserves one contiguous
// run of slots when admitted, sized by its Reservation and placed at the
// lowest address where it fits (first fit) or by a buddy allocator.
type Contiguous struct {
	log
	id      uint64 // poolIDs
	pool    int
	reserve Reservation
	buddy   *buddy            // the free blocks, with Buddy placement; nil with first fit
	runs    []*Request        // resident requests in address order: non-overlapping runs
	reqs    handles[*Request] // resident requests by id
	// stored and reserved total the runs' tokens and lengths, so Usage
	// need not walk every run each tick; asked and finals total the slots
	// their Reservation asked for and their final lengths (within that),
	// for Shares; taken and holeReuses count reservations since the pool
	// was made.
	stored, reserved, asked, finals, taken, holeReuses int
	shorts                                             shortfalls
	// layout counts the runs taken and freed; largestAt is the layout in
	// which largest, the largest hole, was last measured (by a refused
	// admission's walk). Until a run is taken or freed the holes stay as
	// they are, so a head refused tick after tick is refused without
	// walking every run again.
	layout, largestAt, largest int
	// unusable is Unusable(unusableFor) as measured in layout unusableAt.
	unusable, unusableAt, unusableFor int
}

// Run is one request's reservation in a Contiguous pool.
type Run struct {
	Req    int
	Start  int
	Len    int // slots reserved
	Asked  int // slots its Reservation asked for: Len, or less in a buddy block
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
	c := &Contiguous{id: poolIDs.Add(1), pool: poolTokens, reserve: r, largestAt: -1, unusableAt: -1}
	if r.Placement == Buddy {
		c.buddy = newBuddy(poolTokens)
	}
	return c, nil
}

// PoolTokens is the number of slots in the pool.
func (c *Contiguous) PoolTokens() int { return c.pool }

// Reservation is the pool's sizing rule.
func (c *Contiguous) Reservation() Reservation { return c.reserve }

// index returns the position of r in the runs, which are in address
// order: a binary search on its start.
func (c *Contiguous) index(r *Request) int { return c.indexOf(r.start) }

// Room is the fewest tokens any of reqs' runs can still take, reqs being
// the requests the pool holds; 0 when it holds others too, or while the
// event log is on (Quiet).
func (c *Contiguous) Room(reqs []*Request) int {
	if len(reqs) != len(c.runs) || len(reqs) == 0 {
		return 0
	}
	room := reqs[0].slack
	for _, r := range reqs {
		if r.owner != c.id {
			return 0
		}
		room = min(room, r.slack)
	}
	return max(room-1, 0)
}

// StillRefuses reports whether admitting r would be refused again without
// a walk of the holes: a refusal has measured them and no run has been
// taken or freed since, and the largest is smaller than the run r.Final
// needs. Asking changes nothing (Quiet).
func (c *Contiguous) StillRefuses(r *Request) bool {
	_, length := c.runFor(r)
	return c.largestAt == c.layout && length > c.largest
}

// runFor is the slots r's Reservation asks for and the run that holds
// them: the same with first fit, the power of two at or above with a
// buddy allocator.
func (c *Contiguous) runFor(r *Request) (asked, length int) {
	asked = c.reserve.Slots(r.Prompt, r.Final)
	if c.buddy != nil {
		return asked, 1 << order(asked)
	}
	return asked, asked
}

// AllocateSlots admits r, if the pool does not hold it, by reserving a run
// of Reservation().Slots(r.Prompt, r.Final) slots (rounded up to a power of
// two with Buddy placement) and storing n tokens in it;
// admission fails with ErrNoSpace when no hole is large enough, even if the
// free slots add up to more (external fragmentation). For a resident r it
// stores n more tokens in its run and fails with ErrNoSpace if the run is
// full: a contiguous reservation cannot grow in place. There is no prefix
// cache, so r.Computed must be empty; token ids are not kept.
//
// As in Paged.AllocateSlots, a call that only stores tokens in the run,
// with no event to log, counts them inline in the caller.
func (c *Contiguous) AllocateSlots(r *Request, n int) error {
	if uint(n) < uint(r.slack) { // Request.slack
		r.slack -= n
		c.stored += n
		return nil
	}
	return c.allocateSlots(r, n)
}

// AllocateBatch is AllocateSlots(r, n) for each r of reqs, in order, until
// one fails (BatchAllocator), as Paged.AllocateBatch.
func (c *Contiguous) AllocateBatch(reqs []*Request, n int) (int, error) {
	for done := 0; done < len(reqs); done++ {
		served, stored := countBatch(reqs[done:], n)
		c.stored += stored
		if done += served; done == len(reqs) {
			break
		}
		if err := c.allocateSlots(reqs[done], n); err != nil {
			return done, err
		}
	}
	return len(reqs), nil
}

// allocateSlots is AllocateSlots when the pool has more to do than count.
func (c *Contiguous) allocateSlots(r *Request, n int) error {
	if n < 0 || len(r.Computed) > 0 {
		return fmt.Errorf("allocator: request %d asks for %d new tokens and %d computed blocks of a contiguous pool", r.ID, n, len(r.Computed))
	}
	switch r.owner {
	case 0:
		return c.admit(r, n)
	case c.id:
	default:
		return fmt.Errorf("allocator: request %d is resident in another pool", r.ID)
	}
	r.sync()
	err := c.extend(r, n)
	c.grantRoom(r)
	return err
}

// grantRoom opens r's fast path for the rest of its run while nothing is
// logged.
func (c *Contiguous) grantRoom(r *Request) {
	room := -1
	if c.off {
		room = r.length - r.n
	}
	r.grantRoom(room)
}

// admit reserves a run for r, which will hold r.Final tokens, and stores n.
func (c *Contiguous) admit(r *Request, n int) error {
	if c.reqs.get(r.ID) != nil {
		return fmt.Errorf("allocator: request %d is already resident", r.ID)
	}
	asked, reserve := c.runFor(r)
	if r.Final < n || n > asked {
		return fmt.Errorf("allocator: request %d: a %d-slot run for %d tokens now and %d at most", r.ID, asked, n, r.Final)
	}
	if c.largestAt == c.layout && reserve > c.largest {
		return c.refuse(r, n, reserve) // the holes measured last time, unchanged
	}
	if c.buddy != nil {
		start, ok := c.buddy.take(order(reserve))
		if !ok {
			c.largest, c.largestAt = c.buddy.largest(), c.layout
			return c.refuse(r, n, reserve)
		}
		c.place(c.indexOf(start), r, start, reserve, asked, n)
		return nil
	}
	// First fit: walk the holes between runs (Holes, without building it).
	largest, at := 0, 0
	for i := 0; i <= len(c.runs); i++ {
		end := c.pool
		if i < len(c.runs) {
			end = c.runs[i].start
		}
		if hole := end - at; hole >= reserve {
			c.place(i, r, at, reserve, asked, n)
			return nil
		} else if hole > largest {
			largest = hole
		}
		if i < len(c.runs) {
			at = c.runs[i].start + c.runs[i].length
		}
	}
	c.largest, c.largestAt = largest, c.layout
	return c.refuse(r, n, reserve)
}

// indexOf is where a run starting at start goes in the runs.
func (c *Contiguous) indexOf(start int) int {
	lo, hi := 0, len(c.runs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.runs[m].start < start {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// refuse records r's refusal for want of a hole of reserve slots.
func (c *Contiguous) refuse(r *Request, n, reserve int) error {
	if c.logging() {
		c.record(Event{Kind: Rejected, Req: r.ID, Tokens: n, Len: reserve})
	}
	return c.shorts.of(reserve, c.pool-c.reserved, c.largest)
}

// place gives r the run of length slots at start, asked of them by its
// Reservation, holding n tokens, before runs[i], where the hole it fills
// starts.
func (c *Contiguous) place(i int, r *Request, start, length, asked, n int) {
	if start < c.End() {
		c.holeReuses++
	}
	r.owner, r.start, r.length, r.asked, r.final, r.n = c.id, start, length, asked, min(r.Final, asked), n
	c.asked += asked
	c.finals += r.final
	// Shifted one by one: a pool holds few runs, and slices.Insert is a
	// call and a typed copy each time.
	c.runs = append(c.runs, nil)
	for j := len(c.runs) - 1; j > i; j-- {
		c.runs[j] = c.runs[j-1]
	}
	c.runs[i] = r
	c.reqs.set(r.ID, r)
	c.stored += n
	c.reserved += length
	c.taken++
	c.layout++
	if c.logging() {
		c.record(Event{Kind: Admitted, Req: r.ID, Tokens: n})
		c.record(Event{Kind: Allocated, Req: r.ID, Start: start, Len: length})
	}
	c.grantRoom(r)
}

// extend stores n more tokens in r's run.
func (c *Contiguous) extend(r *Request, n int) error {
	if room := r.length - r.n; n > room {
		if c.logging() {
			c.record(Event{Kind: Rejected, Req: r.ID, Tokens: n})
		}
		return c.shorts.of(n, room, room)
	}
	r.n += n
	c.stored += n
	if n > 0 && c.logging() {
		c.record(Event{Kind: Appended, Req: r.ID, Tokens: n})
	}
	return nil
}

// Free releases r's run, leaving a hole.
func (c *Contiguous) Free(r *Request) error {
	if r.owner != c.id {
		return fmt.Errorf("allocator: request %d not admitted", r.ID)
	}
	r.sync()
	i := c.index(r)
	for j := i + 1; j < len(c.runs); j++ { // as in place
		c.runs[j-1] = c.runs[j]
	}
	c.runs[len(c.runs)-1] = nil // the request is not kept alive
	c.runs = c.runs[:len(c.runs)-1]
	c.reqs.del(r.ID)
	c.layout++
	c.stored -= r.n
	c.reserved -= r.length
	c.asked -= r.asked
	c.finals -= r.final
	if c.buddy != nil {
		c.buddy.give(r.start, order(r.length))
	}
	if c.logging() {
		c.record(Event{Kind: Freed, Req: r.ID, Start: r.start, Len: r.length})
	}
	r.owner, r.n = 0, 0
	return nil
}

// End is the slot just past the last reservation (0 when none).
func (c *Contiguous) End() int {
	if len(c.runs) == 0 {
		return 0
	}
	r := c.runs[len(c.runs)-1]
	return r.start + r.length
}

// runOf is r's reservation.
func runOf(r *Request) Run {
	return Run{Req: r.ID, Start: r.start, Len: r.length, Asked: r.asked, Tokens: r.tokens()}
}

// RunOf returns request req's reservation.
func (c *Contiguous) RunOf(req int) (Run, bool) {
	if r := c.reqs.get(req); r != nil {
		return runOf(r), true
	}
	return Run{}, false
}

// Runs returns the reservations in address order.
func (c *Contiguous) Runs() []Run {
	if len(c.runs) == 0 {
		return nil
	}
	out := make([]Run, len(c.runs))
	for i, r := range c.runs {
		out[i] = runOf(r)
	}
	return out
}

// Holes returns the free runs in address order (adjacent free slots merge).
func (c *Contiguous) Holes() []Hole {
	var out []Hole
	at := 0
	for _, r := range c.runs {
		if r.start > at {
			out = append(out, Hole{Start: at, Len: r.start - at})
		}
		at = r.start + r.length
	}
	if at < c.pool {
		out = append(out, Hole{Start: at, Len: c.pool - at})
	}
	return out
}

// Unusable counts free slots that a new reservation of size reserve cannot
// use: in each hole, what is left after fitting as many such runs as possible
// (external fragmentation); with a buddy allocator, the free blocks smaller
// than the power of two that holds reserve.
func (c *Contiguous) Unusable(reserve int) int {
	if reserve < 1 {
		return 0
	}
	if c.buddy != nil {
		return c.buddy.below(order(reserve))
	}
	// A lesson asks at every tick while requests wait; the holes change
	// only when a run is taken or freed.
	if c.unusableAt == c.layout && c.unusableFor == reserve {
		return c.unusable
	}
	u, at := 0, 0
	for _, r := range c.runs {
		u += (r.start - at) % reserve
		at = r.start + r.length
	}
	u += (c.pool - at) % reserve
	c.unusable, c.unusableAt, c.unusableFor = u, c.layout, reserve
	return u
}

// Shares splits the pool's slots four ways, as Fig. 2 of the vLLM paper
// does for its Orca baselines: slots holding a token; slots reserved for
// tokens a request will still produce (up to its final length);
// internal fragmentation, slots reserved past the final length that will
// never hold one; and external fragmentation and the rest, the slots no
// request asked for (free slots, and a buddy block's rounding).
type Shares struct{ Tokens, Reserved, Internal, External int }

// Shares reports the split now, for requests that store no more than
// their Final tokens, nor than their Reservation asked for.
func (c *Contiguous) Shares() Shares {
	return Shares{Tokens: c.stored, Reserved: c.finals - c.stored, Internal: c.asked - c.finals, External: c.pool - c.asked}
}

// Usage reports the pool's slot usage.
func (c *Contiguous) Usage() Usage {
	var u Usage
	c.UsageInto(&u)
	return u
}

// UsageInto is Usage written into *u, field by field (UsageWriter).
func (c *Contiguous) UsageInto(u *Usage) {
	u.Resident, u.Pool, u.Stored, u.Reserved, u.Taken, u.HoleReuses = len(c.runs), c.pool, c.stored, c.reserved, c.taken, c.holeReuses
}
