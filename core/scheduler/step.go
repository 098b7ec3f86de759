package scheduler

import (
	"errors"
	"fmt"

	"github.com/inferlab/inferlab/core/allocator"
)

// Step schedules and runs one step and returns its record. When nothing can
// run, the clock jumps to the next arrival and the returned step is empty.
func (s *Scheduler) Step() (Step, error) {
	s.arrive()
	if len(s.running) == 0 && len(s.waiting) == 0 && s.next < len(s.reqs) {
		s.clock = max(s.clock, s.reqs[s.next].Arrival)
		s.arrive()
	}
	st := Step{Start: s.clock}
	budget, err := s.scheduleRunning(&st)
	if err != nil {
		return st, err
	}
	if len(st.Preempted) == 0 {
		if err := s.scheduleWaiting(&st, budget); err != nil {
			return st, err
		}
	}
	ran, err := s.runBatch(&st)
	if err != nil {
		return st, err
	}
	if err := s.sampleOutputs(&st); err != nil {
		return st, err
	}
	st.Running, st.Waiting = len(s.running), len(s.waiting)
	st.KVUsage = 1 - float64(s.pool.FreeBlocks())/float64(s.pool.NumBlocks())
	if s.CheckInvariants {
		if err := s.check(st); err != nil {
			return st, err
		}
	}
	if !ran && len(s.running) == 0 && len(s.waiting) > 0 {
		return st, fmt.Errorf("%w: request %d cannot be admitted into an empty pool", ErrNeverFits, s.waiting[0].ID)
	}
	s.steps = append(s.steps, st)
	return st, nil
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
func (s *Scheduler) scheduleRunning(st *Step) (int, error) {
	budget := s.cfg.MaxNumBatchedTokens
	for i := 0; i < len(s.running) && budget > 0; i++ {
		r := s.running[i]
		n := min(s.chunk(r, 0), budget)
		if n <= 0 {
			continue
		}
		fits, err := s.growOrPreempt(r, n, st)
		if err != nil {
			return 0, err
		}
		if !fits {
			break // r was the last running request
		}
		r.stepN = n
		budget -= n
	}
	return budget, nil
}

// growOrPreempt gives running request r room for n more tokens, preempting
// from the back of the running list until it fits; it reports false when r
// itself was preempted.
func (s *Scheduler) growOrPreempt(r *req, n int, st *Step) (bool, error) {
	for {
		err := s.pool.AllocateSlots(r.ID, s.slots(r, r.computed, n))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, allocator.ErrNoSpace) {
			return false, err
		}
		victim := s.running[len(s.running)-1]
		s.running = s.running[:len(s.running)-1]
		if err := s.preempt(victim); err != nil {
			return false, err
		}
		st.Preempted = append(st.Preempted, victim.ID)
		if victim == r {
			return false, nil
		}
	}
}

// slots asks the pool for n tokens of r from position from, with their ids
// when prefix caching hashes them.
func (s *Scheduler) slots(r *req, from, n int) allocator.Slots {
	if !s.cfg.PrefixCaching {
		return allocator.Slots{New: n}
	}
	return allocator.Slots{New: n, IDs: r.ids[from : from+n], Extra: r.Extra}
}

// scheduleWaiting admits waiting requests in arrival order while the
// budget, MaxNumSeqs and free blocks allow. The head of the queue is looked
// up in the prefix cache once and admitted with what the lookup found; a
// head that does not fit blocks everyone behind it.
func (s *Scheduler) scheduleWaiting(st *Step, budget int) error {
	for budget > 0 && len(s.waiting) > 0 && len(s.running) < s.cfg.MaxNumSeqs {
		r := s.waiting[0]
		var hits []int
		hit := 0
		if s.cfg.PrefixCaching {
			r.hashes = allocator.BlockHashes(r.hashes, r.ids[:r.numTokens()], s.cfg.BlockSize, r.Extra)
			hits, hit = s.pool.ComputedBlocks(r.hashes, r.numTokens())
		}
		n := s.chunk(r, hit)
		if !s.cfg.ChunkedPrefill && n > budget {
			return nil
		}
		n = min(n, budget)
		a := s.slots(r, hit, n)
		a.Computed = hits
		if err := s.pool.AllocateSlots(r.ID, a); err != nil {
			if errors.Is(err, allocator.ErrNoSpace) {
				return nil // head-of-line blocking: nobody behind it is admitted
			}
			return err
		}
		s.waiting = s.waiting[1:]
		s.running = append(s.running, r)
		r.status = running
		if !r.admitted {
			r.admitted = true
			r.cachedHit = hit
		}
		r.computed = hit
		st.Admitted = append(st.Admitted, r.ID)
		r.stepN = n
		budget -= n
	}
	return nil
}

// runBatch prices the scheduled work (running order is the batch order)
// and advances the clock; it reports whether anything ran.
func (s *Scheduler) runBatch(st *Step) (bool, error) {
	if !s.RecordWork {
		st.Work = s.workBuf[:0]
	}
	for _, r := range s.running {
		n := r.stepN
		if n == 0 {
			continue
		}
		// A decode computes one token on top of a computed prompt; anything
		// else (a prompt chunk, a recompute after preemption) is prefill.
		w := Work{Req: r.ID, NewTokens: n, Context: r.computed, Prefill: r.computed < r.Prompt || n > 1}
		st.Work = append(st.Work, w)
		if w.Prefill {
			st.PrefillTokens += n
		} else {
			st.DecodeTokens += n
		}
	}
	ran := len(st.Work) > 0
	if ran {
		st.Duration = s.timer.StepSeconds(st.Work)
		if st.Duration <= 0 {
			return ran, fmt.Errorf("scheduler: timer priced a %d-token step at %g s", st.PrefillTokens+st.DecodeTokens, st.Duration)
		}
	}
	s.clock += st.Duration
	if !s.RecordWork {
		s.workBuf, st.Work = st.Work, nil
	}
	return ran, nil
}

// sampleOutputs marks the scheduled tokens computed; a request whose known
// tokens are all computed samples one output token, and a request with all
// its outputs finishes and frees its blocks.
func (s *Scheduler) sampleOutputs(st *Step) error {
	kept := s.running[:0]
	for _, r := range s.running {
		if n := r.stepN; n > 0 {
			r.stepN = 0
			r.computed += n
			if r.computed == r.numTokens() {
				r.generated++
				r.tokenTimes = append(r.tokenTimes, s.clock)
				if len(r.tokenTimes) == 1 {
					st.FirstTokens = append(st.FirstTokens, r.ID)
				}
			}
		}
		if r.generated == r.Output {
			r.status = finished
			if err := s.pool.Free(r.ID); err != nil {
				return err
			}
			st.Finished = append(st.Finished, r.ID)
			continue
		}
		kept = append(kept, r)
	}
	s.running = kept
	return nil
}

// arrive moves requests whose arrival time has come into the waiting queue.
func (s *Scheduler) arrive() {
	for s.next < len(s.reqs) && s.reqs[s.next].Arrival <= s.clock {
		s.waiting = append(s.waiting, s.reqs[s.next])
		s.next++
	}
}

// preempt frees r's blocks and puts it at the front of the waiting queue; it
// will recompute everything (its full blocks stay in the prefix cache).
func (s *Scheduler) preempt(r *req) error {
	if err := s.pool.Free(r.ID); err != nil {
		return err
	}
	r.computed, r.stepN = 0, 0
	r.preempted++
	r.status = waiting
	s.waiting = append([]*req{r}, s.waiting...)
	return nil
}
