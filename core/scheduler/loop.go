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
//
// The loop asks the pool for what only some pools offer as optional
// interfaces, once, when it is made: allocator.BatchAllocator (a tick's
// tokens stored in one call), allocator.UsageWriter (the tick's Usage
// written in place) and allocator.Quiet (StepQuiet's ticks at once).
type Loop struct {
	pool  allocator.KVPool
	batch allocator.BatchAllocator // pool's, or nil
	usage allocator.UsageWriter    // pool's, or a copy of its Usage (usageCopy)
	quiet allocator.Quiet          // pool's, or nil
	// scratch is where decode reads the pool's Usage before the tick's
	// tokens are stored, and taken is its Taken then.
	scratch   allocator.Usage
	taken     int
	waiting   queue[*loopReq]
	running   []*loopReq
	kvs       []*allocator.Request    // running[i]'s kv is kvs[i]: what batch is handed
	lastShort *allocator.NoSpaceError // the last admission's shortfall
	blocked   *loopReq                // the head the last tick could not admit, if any
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
	produced int               // output tokens stored so far, kept across a preemption
	kv       allocator.Request // the request as the pool sees it
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
	l.batch, _ = pool.(allocator.BatchAllocator)
	if u, ok := pool.(allocator.UsageWriter); ok {
		l.usage = u
	} else {
		l.usage = usageCopy{pool}
	}
	l.quiet, _ = pool.(allocator.Quiet)
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
		q := &all[i] // new, so zero
		q.ID, q.Prompt, q.Output = r.ID, r.Prompt, r.Output
		q.kv.ID, q.kv.Final, q.kv.Prompt = r.ID, r.Prompt+r.Output, r.Prompt
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
		err = l.decode()
	}
	// A list the tick left empty is nil, as it was when each tick made
	// its own.
	t.Admitted, t.Finished, t.Preempted = orNil(l.admitted), orNil(l.finished), orNil(l.preempted)
	if err != nil {
		t.Usage = allocator.Usage{}
		return err
	}
	l.usage.UsageInto(&t.Usage)
	t.DecodeTaken = t.Usage.Taken - l.taken
	t.Waiting = l.waiting.len()
	l.ticks++
	yield(len(l.running) + 1)
	return nil
}

// RunsQuiet reports whether the pool can tell quiet ticks (allocator.Quiet):
// otherwise StepQuiet runs none, and a caller need not ask at every tick.
func (l *Loop) RunsQuiet() bool { return l.quiet != nil }

// StepQuiet runs at once up to max of the coming ticks while they are
// quiet, and returns how many it ran: 0 when the next is not (call
// StepInto). A quiet tick admits, finishes and preempts nobody: the pool
// can tell (allocator.Quiet, which a contiguous pool is), nobody running
// has stored its last output, the head of the queue (if any) is the one
// the last tick could not admit and the pool still refuses it without a
// search (Quiet.StillRefuses), and every running request has room for its
// token with nothing taken or logged (Quiet.Room). Each running request
// then stores one token per tick and nothing else changes, so the ticks
// are written as one: *t is the last of the n run, and the j-th of them
// (1 ≤ j ≤ n) is *t with Usage.Stored lower by (n−j)·Usage.Resident. The
// pool must hold only the loop's requests (else it returns 0), so that
// Usage.Resident is the number storing a token each tick. A contiguous
// pool that reserves whole runs spends most of a long stream in such
// ticks.
func (l *Loop) StepQuiet(max int, t *Tick) int {
	qp := l.quiet
	if max < 1 || qp == nil || l.done > 0 || len(l.running) == 0 {
		return 0
	}
	var short *allocator.NoSpaceError
	blocked := -1
	if l.waiting.len() > 0 {
		q := l.waiting.front()
		if q != l.blocked || !qp.StillRefuses(&q.kv) {
			return 0
		}
		short, blocked = l.lastShort, q.ID
	}
	n := min(max, qp.Room(l.kvs)) // 0 when the pool holds requests the loop does not serve
	for _, q := range l.running {
		n = min(n, q.Output-q.produced)
	}
	if n < 1 {
		return 0
	}
	if l.batch != nil {
		if k, err := l.batch.AllocateBatch(l.kvs, n); err != nil { // Room said they fit
			panic(fmt.Sprintf("scheduler: the pool's Room promised %d tokens for request %d and it refused them: %v", n, l.running[k].ID, err))
		}
	} else {
		for _, q := range l.running {
			if err := l.pool.AllocateSlots(&q.kv, n); err != nil { // Room said it fits
				panic(fmt.Sprintf("scheduler: the pool's Room promised %d tokens for request %d and AllocateSlots refused them: %v", n, q.ID, err))
			}
		}
	}
	for _, q := range l.running {
		l.produced(q, n)
	}
	t.Admitted, t.Finished, t.Preempted = nil, nil, nil
	t.Blocked, t.Shortfall, t.DecodeTaken = blocked, short, 0
	l.usage.UsageInto(&t.Usage)
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

// usageCopy is a pool that cannot write its Usage in place, made a
// UsageWriter: the loop then reads every pool's the same way.
type usageCopy struct{ allocator.KVPool }

func (c usageCopy) UsageInto(u *allocator.Usage) { *u = c.Usage() }

// free releases q's memory.
func (l *Loop) free(q *loopReq) error { return l.pool.Free(&q.kv) }

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
			if kept != i { // pointers written only where the lists shift
				l.running[kept], l.kvs[kept] = q, l.kvs[i]
			}
			kept++
			continue
		}
		if err := l.free(q); err != nil {
			return err
		}
		l.finished = append(l.finished, q.ID)
	}
	// The pointers left past kept are to requests the loop's stream
	// holds anyway (NewLoop makes them in one array).
	l.running, l.kvs = l.running[:kept], l.kvs[:kept]
	l.done = 0
	return nil
}

func (l *Loop) admit(t *Tick) error {
	for l.waiting.len() > 0 {
		q := l.waiting.front()
		// With its prompt and the outputs it made before a preemption.
		// A pool returns the same shortfall while the figures repeat, and
		// a tick keeps it read only.
		err := l.pool.AllocateSlots(&q.kv, q.Prompt+q.produced)
		if short, ok := errors.AsType[*allocator.NoSpaceError](err); ok {
			l.lastShort = short
			if len(l.running) == 0 {
				return fmt.Errorf("%w: request %d does not fit the empty pool (%v)", ErrNeverFits, q.ID, short)
			}
			t.Blocked, t.Shortfall, l.blocked = q.ID, short, q
			return nil
		}
		if err != nil {
			return err
		}
		l.waiting.popFront()
		l.running, l.kvs = append(l.running, q), append(l.kvs, &q.kv)
		if q.produced >= q.Output {
			l.done++
		}
		l.admitted = append(l.admitted, q.ID)
	}
	return nil
}

// decode stores one token for each running request that has outputs left,
// preempting from the back when the pool is full (store). While no request
// running has stored its last output (most ticks: those that had, left at
// the tick's start), the pool stores for all of them in one call
// (BatchAllocator), which stops at a refusal; otherwise they go one by one.
func (l *Loop) decode() error {
	l.usage.UsageInto(&l.scratch)
	l.taken = l.scratch.Taken // StepInto counts DecodeTaken from it
	if l.batch != nil && l.done == 0 {
		return l.decodeBatch()
	}
	for i := 0; i < len(l.running); i++ {
		q := l.running[i]
		if q.produced == q.Output {
			continue
		}
		if err := l.pool.AllocateSlots(&q.kv, 1); err != nil {
			stored, err := l.store(q, err)
			if err != nil {
				return err
			}
			if !stored {
				continue
			}
		}
		l.produced(q, 1)
	}
	return nil
}

// decodeBatch is decode when every running request has a token to store.
func (l *Loop) decodeBatch() error {
	for i := 0; i < len(l.running); i++ {
		k, err := l.batch.AllocateBatch(l.kvs[i:], 1)
		for end := i + k; i < end; i++ { // each stored its token
			q := l.running[i]
			q.produced++
			if q.produced == q.Output {
				l.done++
			}
		}
		if err == nil {
			return nil
		}
		q := l.running[i] // refused: preempt until it fits or is the victim
		stored, err := l.store(q, err)
		if err != nil {
			return err
		}
		if stored {
			l.produced(q, 1)
		}
	}
	return nil
}

// store gives q room for one token, which the pool refused with err,
// preempting the most recently admitted running request until it fits
// (preemptFor); it reports false when q itself was preempted.
func (l *Loop) store(q *loopReq, err error) (bool, error) {
	fits, err := preemptFor(&l.running, q, err, func() error { return l.pool.AllocateSlots(&q.kv, 1) }, l.preempt)
	if err == nil && !fits && len(l.running) == 0 {
		return false, fmt.Errorf("%w: request %d cannot grow past %d tokens even alone", ErrNeverFits, q.ID, q.Prompt+q.produced)
	}
	return fits, err
}

// preempt frees victim, taken off the end of the running list, and sends
// it back to the head of the queue, to be admitted again with its prompt
// and the outputs it made.
func (l *Loop) preempt(victim *loopReq) error {
	if victim.produced >= victim.Output { // admitted this tick with no output to store
		l.done--
	}
	if err := l.free(victim); err != nil {
		return err
	}
	l.kvs = l.kvs[:len(l.kvs)-1] // victim's, the last: preemptFor took it off running
	l.waiting.pushFront(victim)
	l.preempted = append(l.preempted, victim.ID)
	l.preemptions++
	return nil
}
