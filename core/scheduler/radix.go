package scheduler

import (
	"fmt"
	"slices"
	"sort"

	"github.com/inferlab/inferlab/core/radixcache"
)

// RadixConfig holds SGLang's scheduler and cache knobs, named as in its
// ServerArgs (python/sglang/srt/server_args.py; docs/SOURCES.md#sglang-scheduler).
type RadixConfig struct {
	ChunkedPrefillSize int // chunked_prefill_size: prompt tokens a prefill batch takes
	MaxPrefillTokens   int // max_prefill_tokens: the prefill batch's input budget (16,384)
	MaxRunningRequests int // max_running_requests
	TotalTokens        int // max_total_num_tokens: KV slots in the pool (page_size 1: one a token)
}

// SGLang's constants for estimating the KV its running requests will still
// need (python/sglang/global_config.py, schedule_policy.py, schedule_batch.py;
// docs/SOURCES.md#sglang-scheduler).
const (
	sglInitNewTokenRatio = 0.7  // SGLANG_INIT_NEW_TOKEN_RATIO × schedule_conservativeness 1.0
	sglMinRatioFactor    = 0.14 // SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
	sglRatioDecaySteps   = 600  // SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
	sglClipMaxNewTokens  = 4096 // SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION
	sglRetractSteps      = 20   // retract_decode_steps
)

// Validate checks the knobs, naming the one that is wrong.
func (c RadixConfig) Validate() error {
	switch {
	case c.ChunkedPrefillSize < 1:
		return fmt.Errorf("scheduler: ChunkedPrefillSize = %d, want ≥ 1", c.ChunkedPrefillSize)
	case c.MaxPrefillTokens < 1:
		return fmt.Errorf("scheduler: MaxPrefillTokens = %d, want ≥ 1", c.MaxPrefillTokens)
	case c.MaxRunningRequests < 1:
		return fmt.Errorf("scheduler: MaxRunningRequests = %d, want ≥ 1", c.MaxRunningRequests)
	case c.TotalTokens < 1:
		return fmt.Errorf("scheduler: TotalTokens = %d, want ≥ 1", c.TotalTokens)
	}
	return nil
}

// private is r's KV slots outside the radix tree: its uncached computed
// tokens.
func (r *req) private() int { return r.computed - r.cached }

// Radix is SGLang's scheduler over its radix cache with page size 1
// (python/sglang/srt/managers/scheduler.py, schedule_policy.py,
// mem_cache/radix_cache.py; docs/SOURCES.md#sglang-scheduler): the engine
// of a batchLoop. Unlike vLLM it never mixes prompts and decodes in one
// forward pass (enable_mixed_chunk is off by default): each step is a
// prefill batch when one can be formed, else a decode batch of every
// running request.
//
//   - Prefill (PrefillAdder): the request being chunked goes first, then
//     waiting requests in arrival order (schedule_policy fcfs), each
//     matched in the tree (at most its length less one token) and locked.
//     A request is added while its new tokens plus its clipped remaining
//     output fit in the free and evictable slots left after the running
//     requests' estimated needs (remaining output × new_token_ratio), the
//     batch's inputs stay within max_prefill_tokens (the first always
//     fits), and chunked_prefill_size has room; the request that overflows
//     it is cut, and continues in the next prefill batch. After the batch
//     every request's computed prefix is inserted into the tree
//     (cache_unfinished_req), so later requests can match it.
//   - Decode: each running request computes one token. When the free and
//     evictable slots cannot hold one token each, requests are retracted,
//     fewest outputs first (ties: the longest prompt), until the rest have
//     room for retract_decode_steps more tokens each; a retracted request
//     frees its uncached slots, unlocks its prefix (it stays cached,
//     evictable) and goes to the back of the queue, to be recomputed.
//     new_token_ratio starts at 0.7, decays to 0.098 over 600 decode
//     batches, and is re-estimated after a retraction.
//   - Memory: slots are taken from the free ones, evicting least recently
//     used unlocked leaves when short; a finished request inserts prompt
//     and outputs (less the last token) and unlocks (cache_finished_req),
//     its duplicate slots freed.
//
// Simplified: synchronous (SGLang's overlap scheduler, on by default, runs
// the CPU's scheduling of batch N+1 beside batch N), and the engine knows
// each request's output length as its max_new_tokens. Its steps keep
// their batches (RecordWork).
type Radix struct {
	batchLoop
	cfg     RadixConfig
	tree    *radixcache.Tree
	chunked *req    // the request whose prompt is being chunked
	private int     // slots held outside the tree
	ratio   float64 // new_token_ratio
	prefill []*req  // the step's prefill batch (none: a decode batch)
}

// NewRadix makes an SGLang scheduler for the given requests (any order;
// served by arrival, ties by ID). Token ids as in Request.
func NewRadix(cfg RadixConfig, timer Timer, requests []Request) (*Radix, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Radix{cfg: cfg, tree: radixcache.New(1), ratio: sglInitNewTokenRatio}
	s.tree.DisableEvents()
	s.RecordWork = true
	if err := s.start(s, timer, requests); err != nil {
		return nil, err
	}
	return s, nil
}

// admissible checks that r fits the pool alone; SGLang matches token ids.
func (s *Radix) admissible(id, prompt, output int) (bool, error) {
	if prompt+output > s.cfg.TotalTokens {
		return false, fmt.Errorf("%w: request %d needs %d token slots, the pool has %d", ErrNeverFits, id, prompt+output, s.cfg.TotalTokens)
	}
	return true, nil
}

// Tree is the radix cache (for scenes).
func (s *Radix) Tree() *radixcache.Tree { return s.tree }

// Used is the KV slots in use: the tree's tokens and the requests' own.
func (s *Radix) Used() int { return s.tree.TotalSize() + s.private }

// Held is the slots running requests hold: their own and their locked prefixes.
func (s *Radix) Held() int { return s.tree.ProtectedSize() + s.private }

// chunking is the request whose prompt is being chunked, outside the
// running list until its prefill completes.
func (s *Radix) chunking() *req { return s.chunked }

// kvUsage is the share of slots running requests hold, as Scheduler counts
// referenced blocks.
func (s *Radix) kvUsage() float64 { return float64(s.Held()) / float64(s.cfg.TotalTokens) }

// stuck is the error of a step in which nothing could run.
func (s *Radix) stuck() error {
	return fmt.Errorf("%w: nothing runs and a request waits (a bug: every request fits the pool alone)", ErrNeverFits)
}

// end has nothing to do after a step is recorded.
func (s *Radix) end(Step) error { return nil }

// room is the slots free or evictable.
func (s *Radix) room() int { return s.cfg.TotalTokens - s.Used() + s.tree.EvictableSize() }

// take makes n free slots for a request's new tokens, evicting least
// recently used unlocked leaves when short.
func (s *Radix) take(n int) error {
	if short := n - (s.cfg.TotalTokens - s.Used()); short > 0 {
		s.tree.Evict(short)
	}
	if s.cfg.TotalTokens-s.Used() < n {
		return fmt.Errorf("scheduler: %d slots wanted, %d free after eviction", n, s.cfg.TotalTokens-s.Used())
	}
	s.private += n
	return nil
}

// form forms a prefill batch when one can be formed, else a decode batch.
func (s *Radix) form(st *Step) error {
	var err error
	if s.prefill, err = s.prefillBatch(st); err != nil || len(s.prefill) > 0 {
		return err
	}
	return s.decodeBatch(st)
}

// clipped is r's remaining output as SGLang's admission counts it.
func clipped(r *req) int { return min(r.Output-r.generated, sglClipMaxNewTokens) }

// prefillBatch forms a prefill batch (PrefillAdder); it returns its
// requests, none when no prefill can run.
func (s *Radix) prefillBatch(st *Step) ([]*req, error) {
	if s.waiting.len() == 0 && s.chunked == nil {
		return nil, nil
	}
	offset := 0.0 // rem_total_token_offset: the running requests' estimated needs
	for _, r := range s.running {
		offset += float64(clipped(r)) * s.ratio
	}
	remInput, remChunk := s.cfg.MaxPrefillTokens, s.cfg.ChunkedPrefillSize
	remTotal := func() float64 { return float64(s.room()) - offset }
	batch := s.prefill[:0]
	if c := s.chunked; c != nil {
		left := c.numTokens() - c.computed
		n := min(left, remChunk, int(remTotal()))
		if n <= 0 {
			return nil, nil
		}
		if err := s.take(n); err != nil {
			return nil, err
		}
		offset += float64(n)
		if n == left {
			offset += float64(clipped(c))
			s.chunked = nil
		}
		remInput, remChunk = remInput-n, remChunk-n
		s.schedule(st, c, n)
		batch = append(batch, c)
	}
	for s.waiting.len() > 0 && remInput > 0 && remChunk > 0 && remTotal() > 0 && s.chunked == nil &&
		len(s.running)+len(batch) < s.cfg.MaxRunningRequests {
		r := s.waiting.front()
		ok, n, err := s.admit(r, offset, remInput, remChunk, len(batch) > 0)
		if err != nil || !ok {
			return batch, err
		}
		s.waiting.popFront()
		offset += float64(n)
		if s.chunked == nil {
			offset += float64(clipped(r))
		}
		remInput, remChunk = remInput-n, remChunk-n
		st.Admitted = append(st.Admitted, r.ID)
		s.schedule(st, r, n)
		batch = append(batch, r)
	}
	return batch, nil
}

// admit tries waiting request r (PrefillAdder.add_one_req) against the
// budgets left, offset being the slots already promised to running and
// batched requests; it reports whether r was added and its tokens in the
// batch.
func (s *Radix) admit(r *req, offset float64, remInput, remChunk int, others bool) (bool, int, error) {
	ids := r.kv.TokenIDs
	matched, node := s.tree.Match(ids[:r.numTokens()-1])
	extend := r.numTokens() - matched
	total := float64(extend + clipped(r))
	if total >= float64(s.room())-offset {
		return false, 0, nil // NO_TOKEN
	}
	if extend >= remInput && others {
		return false, 0, nil
	}
	if err := s.tree.Lock(node); err != nil {
		return false, 0, err
	}
	// Locking the match takes it out of the evictable room: check again.
	if total >= float64(s.room())-offset {
		return false, 0, s.tree.Unlock(node)
	}
	n := extend
	if extend > remChunk {
		n = remChunk // cut here; the rest in the next prefill batch
		s.chunked = r
	}
	r.cached, r.node, r.computed = matched, node, matched
	if err := s.take(n); err != nil {
		return false, 0, err
	}
	r.status = running
	if !r.admitted {
		r.admitted, r.cachedHit, r.scheduled = true, matched, s.clock
	}
	return true, n, nil
}

// cacheComputed inserts r's computed tokens into the tree and moves r's
// lock to their end (cache_unfinished_req); slots the tree already held
// are freed, de-duplicated.
func (s *Radix) cacheComputed(r *req) error {
	ids := r.kv.TokenIDs[:r.computed]
	s.tree.Insert(ids)
	_, node := s.tree.Match(ids)
	if err := s.tree.Lock(node); err != nil {
		return err
	}
	if err := s.tree.Unlock(r.node); err != nil {
		return err
	}
	s.private -= r.private()
	r.cached, r.node = r.computed, node
	return nil
}

// settle marks the batch's tokens computed, caches prefills, samples
// tokens and finishes requests.
func (s *Radix) settle(st *Step) error {
	for _, r := range s.prefill {
		r.computed += r.stepN
		r.stepN = 0
		if err := s.cacheComputed(r); err != nil {
			return err
		}
		if r.computed == r.numTokens() {
			if r.generated == 0 {
				st.FirstTokens = append(st.FirstTokens, r.ID)
			}
			s.made(r)
			if r.generated < r.Output {
				s.pushRunning(r)
			} else if err := s.finish(st, r); err != nil {
				return err
			}
		}
	}
	if len(s.prefill) > 0 {
		return nil
	}
	kept := s.running[:0]
	for _, r := range s.running {
		r.computed += r.stepN
		r.stepN = 0
		s.made(r)
		if r.generated < r.Output {
			kept = append(kept, r)
		} else if err := s.finish(st, r); err != nil {
			return err
		}
	}
	s.running = kept
	return nil
}

// finish caches r's tokens (cache_finished_req) and releases it.
func (s *Radix) finish(st *Step, r *req) error {
	if err := s.cacheComputed(r); err != nil {
		return err
	}
	if err := s.tree.Unlock(r.node); err != nil {
		return err
	}
	r.node, r.status = nil, finished
	st.Finished = append(st.Finished, r.ID)
	return nil
}

// decodeBatch gives every running request one token, retracting requests
// first when the slots cannot hold them (update_running_batch).
func (s *Radix) decodeBatch(st *Step) error {
	if len(s.running) == 0 {
		return nil
	}
	if s.room() < len(s.running) {
		if err := s.retract(st); err != nil {
			return err
		}
	} else {
		s.ratio = max(s.ratio-sglInitNewTokenRatio*(1-sglMinRatioFactor)/sglRatioDecaySteps, sglInitNewTokenRatio*sglMinRatioFactor)
	}
	if err := s.take(len(s.running)); err != nil {
		return err
	}
	for _, r := range s.running {
		s.schedule(st, r, 1)
	}
	return nil
}

// retract frees running requests, fewest outputs first (ties: the longest
// prompt), until the rest have room for retract_decode_steps tokens each,
// keeping at least one (ScheduleBatch.retract_decode); then it
// re-estimates new_token_ratio from those left.
func (s *Radix) retract(st *Step) error {
	order := slices.Clone(s.running)
	sort.SliceStable(order, func(a, b int) bool {
		if order[a].generated != order[b].generated {
			return order[a].generated > order[b].generated
		}
		return order[a].Prompt < order[b].Prompt
	})
	for first := true; len(order) > 1 && (first || s.room() < sglRetractSteps*len(order)); first = false {
		r := order[len(order)-1]
		order = order[:len(order)-1]
		s.private -= r.private()
		if err := s.tree.Unlock(r.node); err != nil {
			return err
		}
		r.computed, r.cached, r.node, r.status = 0, 0, nil, waiting
		r.preempted++
		s.waiting.pushBack(r)
		st.Preempted = append(st.Preempted, r.ID)
	}
	kept := s.running[:0]
	decoded, maxNew := 0, 0
	for _, r := range s.running {
		if r.status == running {
			kept = append(kept, r)
			decoded += r.generated
			maxNew += r.Output
		}
	}
	s.running = kept
	s.ratio = min(1, float64(decoded+sglRetractSteps*len(kept))/float64(maxNew+1))
	return nil
}

// check verifies the pool and the tree: slots within the pool, every
// running request locking its cached prefix, the tree's own invariants.
func (s *Radix) check(Step) error {
	if err := s.tree.Check(); err != nil {
		return err
	}
	if u := s.Used(); u > s.cfg.TotalTokens || s.private < 0 {
		return fmt.Errorf("radix: %d slots used of %d, %d private", u, s.cfg.TotalTokens, s.private)
	}
	own := 0
	for _, r := range append(slices.Clone(s.running), s.chunked) {
		if r == nil {
			continue
		}
		if r.node == nil || r.node.Evicted() || r.node.LockRef() < 1 {
			return fmt.Errorf("radix: running request %d does not lock its prefix", r.ID)
		}
		own += r.private()
	}
	if own != s.private {
		return fmt.Errorf("radix: requests hold %d private slots, pool counts %d", own, s.private)
	}
	return nil
}
