package scheduler

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/kvhash"
)

// form is vLLM's schedule(): the running requests get their tokens first,
// in admission order, preempting when a block is short; then, only if
// nobody was preempted, waiting requests are admitted while the budget,
// MaxNumSeqs, free blocks and the capacity rule allow.
func (s *Scheduler) form(st *Step) error {
	budget, err := s.scheduleRunning(st)
	if err != nil {
		return err
	}
	if len(st.Preempted) == 0 {
		return s.scheduleWaiting(st, budget)
	}
	return nil
}

// settle marks the step's tokens computed and samples outputs
// (sampleOutputs).
func (s *Scheduler) settle(st *Step) error { return s.sampleOutputs(st) }

// chunking is nil: vLLM keeps every request it is prefilling in the
// running list.
func (s *Scheduler) chunking() *req { return nil }

// kvUsage is the share of blocks referenced after the step.
func (s *Scheduler) kvUsage() float64 {
	return 1 - float64(s.pool.FreeBlocks())/float64(s.pool.NumBlocks())
}

// stuck is the error of a head of the queue that an empty pool cannot
// admit.
func (s *Scheduler) stuck() error {
	return fmt.Errorf("%w: request %d cannot be admitted into an empty pool", ErrNeverFits, s.waiting.front().ID)
}

// end releases the KV held for the requests the step admitted
// (ReceiveKV), once the step's figures are taken.
func (s *Scheduler) end(st Step) error {
	if len(s.holds) == 0 {
		return nil
	}
	return s.releaseHolds(st.Admitted)
}

// chunk is how many of r's uncomputed tokens (beyond hit cached ones) a
// step may schedule: all of them, capped by LongPrefillTokenThreshold.
func (s *Scheduler) chunk(r *req, hit int) int {
	n := r.numTokens() - r.computed - hit
	if t := s.cfg.LongPrefillTokenThreshold; t > 0 && n > t {
		n = t
	}
	return n
}

// scheduleRunning gives running requests, in admission order, their tokens
// for this step while the budget lasts. A request that cannot get a block
// preempts the most recently admitted running request, itself included
// (recompute preemption). It returns the budget left.
//
// It walks about a thousand requests per step at benchmark scale, so the
// prefill chunk cap is read once, outside it, and a token stored in the
// block a request is filling costs a count, not a call (the pool's
// AllocateSlots is inlined here): in WebAssembly a call per request and
// step, and every branch taken, cost a trip through the function's
// dispatch table.
func (s *Scheduler) scheduleRunning(st *Step) (int, error) {
	budget := s.cfg.MaxNumBatchedTokens
	limit := s.cfg.LongPrefillTokenThreshold // chunk's cap
	if limit <= 0 {
		limit = math.MaxInt
	}
	pool := s.pool // concrete, so that AllocateSlots' fast path is inlined
	// The chunks are written by index into room made here, and the token
	// counts kept in locals: no slice header or counter is stored per
	// request, nor is the write barrier's flag tested.
	grown := slices.Grow(s.chunks, len(s.running))
	ch := grown[len(grown):cap(grown)]
	j, prefill, decode := 0, 0, 0
	for i := 0; i < len(s.running) && budget > 0; i++ {
		r := s.running[i]
		c := r.computed
		n := min(r.Prompt+r.generated-c, limit, budget)
		if n <= 0 {
			continue
		}
		// Room in r's last block (most steps' updates), else a block or a
		// preemption.
		if err := pool.AllocateSlots(r.kv, n); err != nil {
			fits, err := s.growOrPreempt(r, n, st, err)
			if err != nil {
				return 0, err
			}
			if !fits {
				break // r was the last running request
			}
		}
		r.stepN = n
		// A decode computes one token on top of a computed prompt; anything
		// else (a prompt chunk, a recompute after preemption) is prefill.
		// (Two ifs, not ||, which would branch: each becomes a select.)
		p := 0
		if c < r.Prompt {
			p = n
		}
		if n > 1 {
			p = n
		}
		// Written field by field: a 32-byte struct stored whole is a bulk
		// memory copy in WebAssembly.
		w := &ch[j]
		w.NewTokens, w.Context, w.Req, w.Prefill = n, c, r.ID, p > 0
		j++
		prefill += p
		decode += n - p
		budget -= n
	}
	s.chunks = grown[:len(grown)+j]
	st.PrefillTokens += prefill
	st.DecodeTokens += decode
	return budget, nil
}

// growOrPreempt gives running request r room for n more tokens, which the
// pool refused with err, preempting from the back of the running list until
// it fits (preemptFor); it reports false when r itself was preempted.
func (s *Scheduler) growOrPreempt(r *req, n int, st *Step, err error) (bool, error) {
	return preemptFor(&s.running, r, err,
		func() error { return s.pool.AllocateSlots(r.kv, n) },
		func(victim *req) error {
			if err := s.preempt(victim); err != nil {
				return err
			}
			st.Preempted = append(st.Preempted, victim.ID)
			return nil
		})
}

// scheduleWaiting admits waiting requests in arrival order while the
// budget, MaxNumSeqs and free blocks allow. The head of the queue is looked
// up in the prefix cache once and admitted with what the lookup found; a
// head that does not fit blocks everyone behind it.
func (s *Scheduler) scheduleWaiting(st *Step, budget int) error {
	for budget > 0 && s.waiting.len() > 0 && len(s.running) < s.cfg.MaxNumSeqs {
		r := s.waiting.front()
		var hits []int
		hit := 0
		if s.cfg.PrefixCaching {
			r.hashes = kvhash.Extend(r.hashes, r.kv.TokenIDs[:r.numTokens()], s.cfg.BlockSize, r.kv.Extra)
			hits, hit = s.pool.ComputedBlocks(r.hashes, r.numTokens())
		}
		n := s.chunk(r, hit)
		if !s.cfg.ChunkedPrefill && n > budget {
			return nil
		}
		if !s.capacity.admits(s, r, hits) {
			return nil // the first request that does not fit stops admission
		}
		n = min(n, budget)
		r.kv.Computed = hits
		if err := s.pool.AllocateSlots(r.kv, n); err != nil {
			if _, short := errors.AsType[*allocator.NoSpaceError](err); short {
				return nil // head-of-line blocking: nobody behind it is admitted
			}
			return err
		}
		s.waiting.popFront()
		s.pushRunning(r)
		r.status = running
		if !r.admitted {
			r.admitted, r.scheduled = true, s.clock
			r.cachedHit = hit
		}
		r.computed = hit
		st.Admitted = append(st.Admitted, r.ID)
		s.schedule(st, r, n)
		budget -= n
	}
	return nil
}

// sampleOutputs marks the scheduled tokens computed; a request whose known
// tokens are all computed samples one output token, and a request with all
// its outputs finishes and frees its blocks.
//
// The running list keeps its order. Finished requests at its front move
// its start (the list is a window on runBuf) instead of shifting the rest:
// requests served first come first served mostly finish first, and a
// shift rewrites a thousand pointers, each through the write barrier while
// a collection runs.
func (s *Scheduler) sampleOutputs(st *Step) error {
	k := int32(len(s.ends) - 1) // this step, if it ran
	run := s.running
	// First a walk with no call in it (in WebAssembly a loop that calls
	// keeps its variables in memory, storing them every turn): it updates
	// every request and notes the ones the second pass must handle, whose
	// token is their first, their last, or starts a new run of steps.
	if len(s.marks) < len(run) {
		s.marks = make([]int32, 2*len(run))
	}
	marks := s.marks[:len(run)]
	m := 0
	for i, r := range run {
		n := r.stepN
		r.stepN = 0
		c := r.computed + n
		r.computed = c
		// generated changes only here, so only here can it reach Output.
		if n > 0 && c == r.Prompt+r.generated {
			g := r.generated + 1
			r.generated = g
			if cur := &r.tokens.cur; cur.start+cur.n == k && g != 1 && g != r.Output {
				cur.n++
			} else {
				marks[m] = int32(i)
				m++
			}
		}
	}
	first := -1 // the first finished request's index
	for _, i := range marks[:m] {
		r := run[i]
		if r.generated == 1 {
			st.FirstTokens = append(st.FirstTokens, r.ID)
		}
		r.tokens.add(k)
		if r.generated == r.Output {
			if err := s.finish(r, st); err != nil {
				return err
			}
			if first < 0 {
				first = int(i)
			}
		}
	}
	if first < 0 {
		return nil
	}
	// run[lead:kept] is what stays, in order; the requests before the
	// first finished one stay where they are.
	lead, kept := 0, first
	for i := first; i < len(run); i++ {
		r := run[i]
		if r.status == finished {
			if kept == lead { // nothing kept yet: the start moves
				lead++
				kept++
			}
			continue
		}
		if kept != i { // a pointer written only where the list shifts
			run[kept] = r
		}
		kept++
	}
	s.running = run[lead:kept]
	return nil
}

// finish frees a request that made all its outputs.
func (s *Scheduler) finish(r *req, st *Step) error {
	r.status = finished
	if err := s.pool.Free(r.kv); err != nil {
		return err
	}
	// Its token ids and block hashes are not read again: a run of
	// thousands of requests would keep every one.
	r.kv.TokenIDs, r.hashes = nil, nil
	st.Finished = append(st.Finished, r.ID)
	return nil
}

// preempt frees r's blocks and puts it at the front of the waiting queue; it
// will recompute everything (its full blocks stay in the prefix cache).
func (s *Scheduler) preempt(r *req) error {
	if err := s.pool.Free(r.kv); err != nil {
		return err
	}
	r.computed, r.stepN = 0, 0
	r.preempted++
	r.status = waiting
	s.waiting.pushFront(r)
	return nil
}
