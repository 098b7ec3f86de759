package scheduler

import (
	"errors"
	"fmt"

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
	// try and seqs are pool's optional faster paths: admission attempts
	// that report a lack of room without allocating an error (a blocked
	// head is retried every tick), and handles that spare the lookup by id
	// of every stored token (the paged pool).
	try         allocator.TryPool
	seqs        seqPool
	waiting     queue[*loopReq]
	running     []*loopReq
	lastShort   *allocator.NoSpaceError // tryAdmit's last shortfall
	ticks       int
	preemptions int
}

// LoopRequest is one request of a Loop's stream.
type LoopRequest struct {
	ID     int
	Prompt int // tokens stored at admission
	Output int // tokens stored one per tick afterwards (0: it leaves at the next tick)
}

type loopReq struct {
	LoopRequest
	produced int            // output tokens stored so far, kept across a preemption
	seq      *allocator.Seq // its handle in a seqPool while resident
}

// seqPool is a pool whose resident requests have handles (allocator.Paged).
type seqPool interface {
	Seq(req int) *allocator.Seq
	GrowSeq(s *allocator.Seq, n int, ids []int) error
}

// Tick is what happened in one tick.
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
	l.seqs, _ = pool.(seqPool)
	seen := map[int]bool{}
	all := make([]loopReq, len(reqs)) // one allocation for the stream
	for i, r := range reqs {
		if r.Prompt < 0 || r.Output < 0 {
			return nil, fmt.Errorf("scheduler: request %d has %d prompt and %d output tokens, want ≥ 0", r.ID, r.Prompt, r.Output)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("scheduler: request id %d appears twice", r.ID)
		}
		seen[r.ID] = true
		all[i] = loopReq{LoopRequest: r}
		l.waiting.pushBack(&all[i])
	}
	return l, nil
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
	t := Tick{Blocked: -1}
	if err := l.release(&t); err != nil {
		return t, err
	}
	if err := l.admit(&t); err != nil {
		return t, err
	}
	if err := l.decode(&t); err != nil {
		return t, err
	}
	t.Usage, t.Waiting = l.pool.Usage(), l.waiting.len()
	l.ticks++
	return t, nil
}

func (l *Loop) release(t *Tick) error {
	kept := l.running[:0]
	for _, q := range l.running {
		if q.produced < q.Output {
			kept = append(kept, q)
			continue
		}
		if err := l.pool.Free(q.ID); err != nil {
			return err
		}
		q.seq = nil
		t.Finished = append(t.Finished, q.ID)
	}
	l.running = kept
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
			t.Blocked, t.Shortfall = q.ID, short
			return nil
		}
		if err != nil {
			return err
		}
		if l.seqs != nil {
			q.seq = l.seqs.Seq(q.ID)
		}
		l.waiting.popFront()
		l.running = append(l.running, q)
		t.Admitted = append(t.Admitted, q.ID)
	}
	return nil
}

// tryAdmit asks the pool to admit q; short is the pool's account when it
// has no room. A shortfall equal to the previous one is returned as the
// same pointer (a blocked head is retried every tick, and the value is
// read only).
func (l *Loop) tryAdmit(q *loopReq) (short *allocator.NoSpaceError, err error) {
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
	if l.lastShort == nil || *l.lastShort != s {
		c := s // allocated only here: s stays on the stack
		l.lastShort = &c
	}
	return l.lastShort, nil
}

func (l *Loop) decode(t *Tick) error {
	taken := l.pool.Usage().Taken
	for i := 0; i < len(l.running); i++ {
		q := l.running[i]
		if q.produced == q.Output {
			continue
		}
		stored, err := l.store(q, t)
		if err != nil {
			return err
		}
		if stored {
			q.produced++
		}
	}
	t.DecodeTaken = l.pool.Usage().Taken - taken
	return nil
}

// store gives q room for one token, preempting the most recently admitted
// running request until it fits; it reports false when q itself was
// preempted.
func (l *Loop) store(q *loopReq, t *Tick) (bool, error) {
	for {
		var err error
		if q.seq != nil {
			err = l.seqs.GrowSeq(q.seq, 1, nil)
		} else {
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
		if err := l.pool.Free(victim.ID); err != nil {
			return false, err
		}
		victim.seq = nil
		l.waiting.pushFront(victim)
		t.Preempted = append(t.Preempted, victim.ID)
		l.preemptions++
		if victim == q {
			if len(l.running) == 0 {
				return false, fmt.Errorf("%w: request %d cannot grow past %d tokens even alone", ErrNeverFits, q.ID, q.Prompt+q.produced)
			}
			return false, nil
		}
	}
}
