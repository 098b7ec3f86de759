package scheduler

import "github.com/inferlab/inferlab/core/allocator"

// Load is what a router can know about a worker between steps.
type Load struct {
	Running, Waiting int
	// PendingPrefillTokens are prompt tokens admitted or queued but not yet
	// computed (Dynamo's active prefill tokens).
	PendingPrefillTokens int
	// ActiveBlocks are KV blocks held by running requests (Dynamo's active
	// decode blocks); CachedBlocks are blocks registered in the prefix cache.
	ActiveBlocks, CachedBlocks int
}

// Load reports the worker's current load.
func (s *Scheduler) Load() Load {
	l := Load{Running: len(s.running), Waiting: s.waiting.len() + len(s.reqs) - s.next}
	for _, r := range s.running {
		l.PendingPrefillTokens += max(0, r.Prompt-r.computed)
	}
	for i := 0; i < s.waiting.len(); i++ {
		l.PendingPrefillTokens += s.waiting.at(i).Prompt
	}
	for _, r := range s.reqs[s.next:] {
		l.PendingPrefillTokens += r.Prompt
	}
	l.ActiveBlocks = s.pool.NumBlocks() - s.pool.FreeBlocks()
	l.CachedBlocks = s.pool.CachedBlocks()
	return l
}

// DrainKVEvents passes the pool's events since the last drain to fn (only
// with Config.KVEvents): vLLM publishes the stored and removed ones to
// Dynamo's router.
func (s *Scheduler) DrainKVEvents(fn func(allocator.Event)) { s.pool.Drain(fn) }
