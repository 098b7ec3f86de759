package scheduler

import "fmt"

// aborted is the status of a request ended before its last output: a
// client that gave up (vLLM's RequestStatus.FINISHED_ABORTED).
const aborted status = finished + 1

// Abort ends request id as vLLM ends a request whose client disconnected
// (EngineCore.abort_requests → Scheduler.finish_requests with
// FINISHED_ABORTED, vllm/v1/core/sched/scheduler.py): a waiting request
// leaves the queue, a running one leaves the running list and frees its
// blocks (its full blocks stay in the prefix cache, as any freed block's
// do). The request must have arrived (be queued or running); aborting one
// that finished or was aborted already does nothing. An aborted request is
// not among Requests() nor counted by Finished().
func (s *Scheduler) Abort(id int) error {
	r, ok := s.byIDs()[id]
	if !ok {
		return fmt.Errorf("scheduler: abort: no request %d", id)
	}
	switch r.status {
	case finished, aborted:
		return nil
	case running:
		if err := s.pool.Free(r.kv); err != nil {
			return err
		}
		kept := s.running[:0]
		for _, q := range s.running {
			if q != r {
				kept = append(kept, q)
			}
		}
		s.running = kept
	case waiting:
		n, found := s.waiting.len(), false
		for range n {
			q := s.waiting.popFront()
			if q == r {
				found = true
				continue
			}
			s.waiting.pushBack(q)
		}
		if !found {
			return fmt.Errorf("scheduler: abort: request %d has not arrived", id)
		}
	}
	r.status, r.stepN = aborted, 0
	r.kv.TokenIDs, r.hashes = nil, nil
	return nil
}
