package scheduler

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/inferlab/inferlab/core/allocator"
)

// Loop serves a stream of requests over any KV pool (allocator.KVPool) in
// the form of Part 14 §1's toy server, so that the paged pool and the
// contiguous baseline can be compared on the same stream. It keeps the
// Scheduler's memory policy (first come, first served admission with
// head-of-line blocking; recompute preemption of the most recently admitted
// request, which returns to the head of the queue, when a running request
// cannot get room) and drops its compute model: there is no token budget,
// no MaxNumSeqs and no clock; a request's whole prompt (with the outputs it
// had made before a preemption) is stored at admission, and every tick
// each running request stores one output token.
type Loop struct {
	pool allocator.KVPool
	// try is pool's optional faster admission, which reports a lack of
	// room without allocating an error (a blocked head is retried every
	// tick). paged or contig is pool when it is one of the lab's two: the
	// loop then calls it directly and keeps each resident request's handle
	// (Paged.Seq, Contiguous.Hold), sparing the lookup by id of every
	// stored token.
	try       allocator.TryPool
	paged     *allocator.Paged
	contig    *allocator.Contiguous
	waiting   queue[*loopReq]
	running   []*loopReq
	lastShort *allocator.NoSpaceError  // tryAdmit's last shortfall
	shorts    []allocator.NoSpaceError // where the next new one is kept
	blocked   *loopReq                 // the head the last tick could not admit, if any
	// done counts the running requests that have stored all their
	// outputs, to leave at the next tick: most ticks there are none, and
	// release then skips its walk over the running requests.
	done        int
	ticks       int
	preemptions int
	// admitted, finished and preempted are the buffers a tick's lists
	// are built in, reused from tick to tick.
	admitted, finished, preempted []int
}

// LoopRequest is one request of a Loop's stream.
type LoopRequest struct {
	ID     int
	Prompt int // tokens stored at admission
	Output int // tokens stored one per tick afterwards (0: it leaves at the next tick)
}

type loopReq struct {
	LoopRequest
	produced int             // output tokens stored so far, kept across a preemption
	seq      *allocator.Seq  // its handle in a paged pool while resident
	hold     *allocator.Hold // its handle in a contiguous pool while resident
}

// Tick is what happened in one tick. Its lists are the loop's buffers,
// valid until the next Step: a caller that keeps them copies them.
type Tick struct {
	Admitted, Finished, Preempted []int
	// Blocked is the request at the head of the queue that did not fit, or
	// -1; Shortfall is the pool's account of why.
	Blocked   int
	Shortfall *allocator.NoSpaceError
	// DecodeTaken counts the pool's allocations while running requests
	// stored their token (Usage.Taken): blocks taken as last blocks filled
	// in the paged pool, none in the contiguous one, whose runs are
	// reserved at admission.
	DecodeTaken int
	Usage       allocator.Usage // after the tick
	Waiting     int             // requests queued after the tick
}

// NewLoop queues reqs, in order, for pool.
func NewLoop(pool allocator.KVPool, reqs []LoopRequest) (*Loop, error) {
	l := &Loop{pool: pool}
	l.try, _ = pool.(allocator.TryPool)
	l.paged, _ = pool.(*allocator.Paged)
	l.contig, _ = pool.(*allocator.Contiguous)
	all := make([]loopReq, len(reqs)) // one allocation for the stream
	ids := make([]int, len(reqs))
	for i := range reqs {
		ids[i] = reqs[i].ID
	}
	dup := firstDuplicate(ids)
	for i := range reqs {
		// Read in place and stored field by field: Go's WebAssembly
		// backend moves a struct over 16 bytes with a bulk memory copy.
		r := &reqs[i]
		if r.Prompt < 0 || r.Output < 0 {
			return nil, fmt.Errorf("scheduler: request %d has %d prompt and %d output tokens, want ≥ 0", r.ID, r.Prompt, r.Output)
		}
		if i == dup {
			return nil, fmt.Errorf("scheduler: request id %d appears twice", r.ID)
		}
		all[i].ID, all[i].Prompt, all[i].Output = r.ID, r.Prompt, r.Output // all is new, so zero
	}
	// The queue is filled in one pass rather than by a pushBack per request.
	l.waiting.buf = make([]*loopReq, max(8, 1<<bits.Len(uint(len(reqs)))))
	for i := range all {
		l.waiting.buf[i] = &all[i]
	}
	l.waiting.n = len(all)
	return l, nil
}

// firstDuplicate is the index of the first of ids that an earlier one
// equals, or -1. Ids within a range a few times the length of ids (the
// usual 0…n−1) are checked with a bitmap, others with a map (whose hashing
// is slow in WebAssembly). The callers copy their requests' ids into a
// slice first: reading each through a function value would be a call per
// id, three passes over the stream.
func firstDuplicate(ids []int) int {
	if len(ids) == 0 {
		return -1
	}
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	if span := uint64(hi) - uint64(lo); span < 4*uint64(len(ids))+64 {
		seen := make([]uint64, span/64+1)
		for i, id := range ids {
			k := uint64(id) - uint64(lo)
			if seen[k/64]&(1<<(k%64)) != 0 {
				return i
			}
			seen[k/64] |= 1 << (k % 64)
		}
		return -1
	}
	seen := make(map[int]bool, len(ids))
	for i, id := range ids {
		if seen[id] {
			return i
		}
		seen[id] = true
	}
	return -1
}

// Done reports whether every request has been served.
func (l *Loop) Done() bool { return l.waiting.len() == 0 && len(l.running) == 0 }

// Ticks is the number of ticks run.
func (l *Loop) Ticks() int { return l.ticks }

// Preemptions counts the preemptions so far.
func (l *Loop) Preemptions() int { return l.preemptions }

// Step runs one tick: requests that have stored all their outputs leave,
// waiting requests are admitted in order while they fit, then every running
// request stores one token, preempting from the back when the pool is full.
func (l *Loop) Step() (Tick, error) {
	var t Tick
	err := l.StepInto(&t)
	return t, err
}

// StepInto is Step writing the tick into *t, every field of it. A loop
// that keeps one Tick and passes it here spares two copies of it per tick:
// Go's WebAssembly backend copies a struct over 16 bytes with memory.copy
// and zeroes one over 32 with memory.fill, bulk operations where amd64
// moves a few registers (garage-1000 ran 12% fewer WebAssembly
// instructions once its ticks and usage were written in place, 4% fewer
// natively).
func (l *Loop) StepInto(t *Tick) error {
	// Emptied in place: a slice cut from itself keeps its pointer, and
	// only the lengths are written.
	l.admitted, l.finished, l.preempted = l.admitted[:0], l.finished[:0], l.preempted[:0]
	t.Blocked, t.Shortfall, t.DecodeTaken, t.Waiting = -1, nil, 0, 0
	l.blocked = nil
	var err error
	if l.done > 0 { // most ticks nobody leaves: no call
		err = l.release()
	}
	if err == nil {
		err = l.admit(t)
	}
	if err == nil {
		err = l.decode(t)
	}
	// A list the tick left empty is nil, as it was when each tick made
	// its own.
	t.Admitted, t.Finished, t.Preempted = orNil(l.admitted), orNil(l.finished), orNil(l.preempted)
	if err != nil {
		t.Usage = allocator.Usage{}
		return err
	}
	l.usageInto(&t.Usage)
	t.Waiting = l.waiting.len()
	l.ticks++
	yield(len(l.running) + 1)
	return nil
}

// StepQuiet runs at once up to max of the coming ticks while they are
// quiet, and returns how many it ran: 0 when the next is not (call
// StepInto). A quiet tick admits, finishes and preempts nobody: the pool
// is contiguous with its events off, nobody running has stored its last
// output, the head of the queue (if any) is the one the last tick could
// not admit and the pool still refuses it without a walk
// (Contiguous.StillRefuses), and every running request's run has room for
// its token. Each running request then stores one token per tick and
// nothing else changes, so the ticks are written as one: *t is the last of
// the n run, and the j-th of them (1 ≤ j ≤ n) is *t with Usage.Stored
// lower by (n−j)·Usage.Resident. The pool must hold only the loop's
// requests (else it returns 0), so that Usage.Resident is the number
// storing a token each tick. A contiguous pool that reserves whole runs
// spends most of a long stream in such ticks.
func (l *Loop) StepQuiet(max int, t *Tick) int {
	c := l.contig
	if max < 1 || c == nil || !c.Plain() || l.done > 0 || len(l.running) == 0 {
		return 0
	}
	if c.Resident() != len(l.running) {
		return 0 // the pool holds requests the loop does not serve
	}
	var short *allocator.NoSpaceError
	blocked := -1
	if l.waiting.len() > 0 {
		q := l.waiting.front()
		if q != l.blocked || !c.StillRefuses(q.Prompt+q.Output) {
			return 0
		}
		short, blocked = l.lastShort, q.ID
	}
	n := max
	for _, q := range l.running {
		n = min(n, q.Output-q.produced, q.hold.Room())
	}
	if n < 1 {
		return 0
	}
	for _, q := range l.running {
		c.AppendPlain(q.hold, n) // room checked above
		l.produced(q, n)
	}
	t.Admitted, t.Finished, t.Preempted = nil, nil, nil
	t.Blocked, t.Shortfall, t.DecodeTaken = blocked, short, 0
	c.UsageInto(&t.Usage)
	t.Waiting = l.waiting.len()
	l.ticks += n
	yield(n * (len(l.running) + 1))
	return n
}

// orNil is list, or nil when it is empty.
func orNil(list []int) []int {
	if len(list) == 0 {
		return nil
	}
	return list
}

// produced counts n more output tokens stored for q, which has at most
// that many left, and counts q among those done when they were its last.
func (l *Loop) produced(q *loopReq, n int) {
	q.produced += n
	if q.produced == q.Output {
		l.done++
	}
}

// usageInto writes the pool's Usage into *u, called directly when the
// loop knows the pool.
func (l *Loop) usageInto(u *allocator.Usage) {
	switch {
	case l.paged != nil:
		l.paged.UsageInto(u)
	case l.contig != nil:
		l.contig.UsageInto(u)
	default:
		*u = l.pool.Usage()
	}
}

// free releases q's memory and forgets its handles.
func (l *Loop) free(q *loopReq) error {
	var err error
	switch {
	case l.paged != nil:
		err = l.paged.Free(q.ID)
	case l.contig != nil:
		err = l.contig.Free(q.ID)
	default:
		err = l.pool.Free(q.ID)
	}
	q.seq, q.hold = nil, nil
	return err
}

func (l *Loop) release() error { // called when l.done > 0
	// A first walk that calls nothing (in WebAssembly a loop that calls
	// keeps its variables in memory) finds the first who has finished.
	first := 0
	for first < len(l.running) && l.running[first].produced < l.running[first].Output {
		first++
	}
	kept := first
	for i := first; i < len(l.running); i++ {
		q := l.running[i]
		if q.produced < q.Output {
			if kept != i { // a pointer written only where the list shifts
				l.running[kept] = q
			}
			kept++
			continue
		}
		if err := l.free(q); err != nil {
			return err
		}
		l.finished = append(l.finished, q.ID)
	}
	l.running = l.running[:kept]
	l.done = 0
	return nil
}

func (l *Loop) admit(t *Tick) error {
	for l.waiting.len() > 0 {
		q := l.waiting.front()
		short, err := l.tryAdmit(q)
		if short != nil {
			if len(l.running) == 0 {
				return fmt.Errorf("%w: request %d does not fit the empty pool (%v)", ErrNeverFits, q.ID, short)
			}
			t.Blocked, t.Shortfall, l.blocked = q.ID, short, q
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case l.paged != nil && q.seq == nil: // unless AdmitPlain gave it
			q.seq = l.paged.Seq(q.ID)
		case l.contig != nil && q.hold == nil: // unless AdmitPlain gave it
			q.hold = l.contig.Hold(q.ID)
		}
		l.waiting.popFront()
		l.running = append(l.running, q)
		if q.produced >= q.Output {
			l.done++
		}
		l.admitted = append(l.admitted, q.ID)
	}
	return nil
}

// tryAdmit asks the pool to admit q; short is the pool's account when it
// has no room. A shortfall equal to the previous one is returned as the
// same pointer (a blocked head is retried every tick, and the value is
// read only).
func (l *Loop) tryAdmit(q *loopReq) (short *allocator.NoSpaceError, err error) {
	if l.paged != nil && l.paged.Plain() { // q is waiting, so not resident
		if q.seq = l.paged.AdmitPlain(q.ID, q.Prompt+q.produced, q.Prompt+q.Output); q.seq != nil {
			return nil, nil
		}
		return l.keepShort(l.paged.Shortfall()), nil
	}
	if l.contig != nil && l.contig.Plain() {
		h, err := l.contig.AdmitPlain(q.ID, q.Prompt+q.produced, q.Prompt+q.Output)
		if h != nil || err != nil {
			q.hold = h
			return nil, err
		}
		return l.keepShort(l.contig.Shortfall()), nil
	}
	a := allocator.Slots{New: q.Prompt + q.produced, Final: q.Prompt + q.Output}
	if l.try == nil {
		err := l.pool.AllocateSlots(q.ID, a)
		if short, ok := err.(*allocator.NoSpaceError); ok { // the pools return it unwrapped
			return short, nil
		}
		return nil, err
	}
	s, ok, err := l.try.TryAllocateSlots(q.ID, a)
	if ok || err != nil {
		return nil, err
	}
	return l.keepShort(s), nil
}

// keepShort returns shortfall s as tryAdmit does: the previous one's
// pointer when they are equal.
func (l *Loop) keepShort(s allocator.NoSpaceError) *allocator.NoSpaceError {
	if l.lastShort == nil || *l.lastShort != s {
		// A new shortfall each time the pool's free count moves: they
		// are made 64 at a time (each stays valid: ticks keep them).
		if len(l.shorts) == 0 {
			l.shorts = make([]allocator.NoSpaceError, 64)
		}
		l.shorts[0] = s
		l.lastShort, l.shorts = &l.shorts[0], l.shorts[1:]
	}
	return l.lastShort
}

func (l *Loop) decode(t *Tick) error {
	taken := l.taken()
	for i := 0; i < len(l.running); i++ {
		if i = l.decodePlain(i); i == len(l.running) {
			break
		}
		q := l.running[i]
		if q.produced == q.Output {
			continue
		}
		// The plain append stopped at q: its last block is full, or
		// the pool is not plain. Most often one call then takes the block.
		if q.seq != nil && l.paged.Plain() && l.paged.GrowPlain(q.seq, 1) {
			l.produced(q, 1)
			continue
		}
		stored, err := l.store(q)
		if err != nil {
			return err
		}
		if stored {
			l.produced(q, 1)
		}
	}
	t.DecodeTaken = l.taken() - taken
	return nil
}

// decodePlain stores one token for each running request from the i-th on
// for as long as the pool's plain append has room for it (most ticks' case:
// room in what the request holds), and returns the index of the first
// request it did not serve, or len(l.running). There is one loop per kind
// of pool, so that an iteration tests only the request; each keeps the list
// in locals and calls nothing: in WebAssembly a loop that calls keeps its
// variables in memory, and every test taken is a trip through the
// function's dispatch table.
func (l *Loop) decodePlain(i int) int {
	running, done := l.running, 0
	switch paged, contig := l.plain(); {
	case paged != nil:
		for ; i < len(running); i++ {
			q := running[i]
			if q.produced == q.Output || !paged.AppendPlain(q.seq, 1) {
				break
			}
			q.produced++
			if q.produced == q.Output {
				done++
			}
		}
	case contig != nil:
		for ; i < len(running); i++ {
			q := running[i]
			if q.produced == q.Output || !contig.AppendPlain(q.hold, 1) {
				break
			}
			q.produced++
			if q.produced == q.Output {
				done++
			}
		}
	}
	l.done += done
	return i
}

// plain returns the loop's pool, as paged or contig, when its appends are
// plain (allocator.Paged.Plain, allocator.Contiguous.Plain); else nils.
func (l *Loop) plain() (*allocator.Paged, *allocator.Contiguous) {
	switch {
	case l.paged != nil && l.paged.Plain():
		return l.paged, nil
	case l.contig != nil && l.contig.Plain():
		return nil, l.contig
	}
	return nil, nil
}

// taken is the pool's Usage().Taken: a contiguous pool takes runs only at
// admission, so decode never changes it. Small enough to be inlined into
// decode; a pool that is neither of the lab's two is asked by otherTaken.
func (l *Loop) taken() int {
	if l.paged != nil {
		return l.paged.Taken()
	}
	if l.contig != nil {
		return 0
	}
	return l.otherTaken()
}

//go:noinline
func (l *Loop) otherTaken() int { return l.pool.Usage().Taken }

// store gives q room for one token, preempting the most recently admitted
// running request until it fits; it reports false when q itself was
// preempted.
func (l *Loop) store(q *loopReq) (bool, error) {
	if (q.seq != nil && l.paged.Append(q.seq, 1)) || (q.hold != nil && l.contig.Append(q.hold, 1)) {
		return true, nil // room without a new block
	}
	for {
		var err error
		switch {
		case q.seq != nil:
			err = l.paged.GrowSeq(q.seq, 1, nil)
		case q.hold != nil:
			err = l.contig.GrowHold(q.hold, 1)
		default:
			err = l.pool.AllocateSlots(q.ID, allocator.Slots{New: 1})
		}
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, allocator.ErrNoSpace) {
			return false, err
		}
		victim := l.running[len(l.running)-1]
		l.running = l.running[:len(l.running)-1]
		if victim.produced >= victim.Output { // admitted this tick with no output to store
			l.done--
		}
		if err := l.free(victim); err != nil {
			return false, err
		}
		l.waiting.pushFront(victim)
		l.preempted = append(l.preempted, victim.ID)
		l.preemptions++
		if victim == q {
			if len(l.running) == 0 {
				return false, fmt.Errorf("%w: request %d cannot grow past %d tokens even alone", ErrNeverFits, q.ID, q.Prompt+q.produced)
			}
			return false, nil
		}
	}
}
