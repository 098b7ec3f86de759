package scheduler

import (
	"errors"
	"fmt"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/kvhash"
	"github.com/inferlab/inferlab/core/radixcache"
)

// Request is one request to serve.
type Request struct {
	ID      int
	Arrival float64 // seconds
	Prompt  int     // prompt tokens
	Output  int     // output tokens to generate (at least 1)
	// PromptIDs and OutputIDs are token ids; they matter only with prefix
	// caching. Missing ids are made up, unique to the request.
	PromptIDs []int
	OutputIDs []int
	Extra     string // prefix-cache extra key (tenant, LoRA)
}

// status of a request in the scheduler.
type status uint8

const (
	waiting status = iota
	running
	finished
)

// req is a request's live state. It keeps the Request fields the
// simulation reads (the token ids and extra key go to the pool's view of
// it, kv), and the fields every step reads and writes for every running
// request come first, in one 64-byte line: a run of 10,000 requests walks a
// thousand of them per step, and the smaller array is less for the
// collector to scan.
type req struct {
	ID             int
	Prompt, Output int                // prompt tokens; output tokens to generate
	computed       int                // tokens whose KV is computed (prompt and outputs)
	generated      int                // output tokens sampled so far
	stepN          int                // tokens scheduled in the current step (0: not scheduled)
	kv             *allocator.Request // the request as the pool sees it: ids (when caching), extra key, final length
	// tokens are the steps that made the output tokens (indices in
	// batchLoop.ends), in runs of consecutive steps: a running request makes
	// one token in every step that runs, so a request has a few runs,
	// however long its output, and a step updates only the request itself.
	tokens    tokenSteps
	Arrival   float64 // seconds
	scheduled float64 // the start of the step that first scheduled it, seconds
	status    status
	admitted  bool
	preempted int
	cachedHit int // prompt tokens found in the prefix cache at first admission
	// hashes are the chain hashes of ids' full blocks (vLLM's
	// request.block_hashes), extended as tokens complete blocks.
	hashes []uint64
	// cached and node are SGLang's: the leading tokens found in the radix
	// tree, locked through node.
	cached int
	node   *radixcache.Node
}

// tokenSteps records when a request's output tokens were made: the current
// run of consecutive steps, after the done ones.
type tokenSteps struct {
	cur  tokenRun
	done []tokenRun
}

// tokenRun is n tokens made in the steps that ran start, start+1, ….
type tokenRun struct{ start, n int32 }

// add records a token made in step k (an index in Scheduler.ends).
func (t *tokenSteps) add(k int32) {
	// An empty cur is {0, 0}: continuing it at k == 0 makes {0, 1}, the
	// run a new one would be, so one test covers both (one branch fewer
	// per request and step in WebAssembly).
	if t.cur.start+t.cur.n == k {
		t.cur.n++
		return
	}
	if t.cur.n > 0 {
		t.done = append(t.done, t.cur)
	}
	t.cur = tokenRun{start: k, n: 1}
}

// count is the number of tokens recorded.
func (t *tokenSteps) count() int {
	n := int(t.cur.n)
	for _, r := range t.done {
		n += int(r.n)
	}
	return n
}

// times appends the tokens' times, from ends, to dst.
func (t *tokenSteps) times(dst, ends []float64) []float64 {
	for _, r := range t.done {
		dst = append(dst, ends[r.start:r.start+r.n]...)
	}
	return append(dst, ends[t.cur.start:t.cur.start+t.cur.n]...)
}

// numTokens is vLLM's num_tokens: prompt plus outputs sampled so far.
func (r *req) numTokens() int { return r.Prompt + r.generated }

// Scheduler is vLLM v1's scheduler (and, with Config.Capacity
// GuaranteedNoEvict, TensorRT-LLM's) serving requests on one simulated
// GPU over a paged KV pool: the engine of a batchLoop. Each step serves
// the running requests first, in admission order, then admits waiting
// ones while its capacity rule allows (capacityRule), all in one batch.
type Scheduler struct {
	batchLoop
	cfg      Config
	pool     *allocator.Paged
	capacity capacityRule
	marks    []int32 // sampleOutputs' scratch: indices in running
	// holds are the KV received ahead of requests not yet admitted, by
	// request id (ReceiveKV).
	holds map[int]*allocator.Request
}

// Step records one scheduled step.
type Step struct {
	Start, Duration float64
	Work            []Work
	PrefillTokens   int
	DecodeTokens    int
	Running         int // requests holding KV after scheduling
	Waiting         int
	Preempted       []int // requests preempted while scheduling this step
	Admitted        []int
	FirstTokens     []int   // requests whose first output token this step produced
	Finished        []int   // requests that finished in this step
	KVUsage         float64 // share of blocks referenced after the step
}

// ErrNeverFits is returned when a request needs more blocks than the pool has.
var ErrNeverFits = errors.New("scheduler: a request needs more KV blocks than the pool holds")

// New makes a scheduler for the given requests (any order; served by arrival,
// ties by ID).
func New(cfg Config, timer Timer, requests []Request) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pool, err := allocator.NewPaged(cfg.NumBlocks, cfg.BlockSize)
	if err != nil {
		return nil, err
	}
	if cfg.PrefixCaching {
		pool.EnablePrefixCaching()
	}
	if !cfg.KVEvents {
		pool.DisableEvents()
	}
	s := &Scheduler{cfg: cfg, pool: pool, capacity: capacityRules[cfg.Capacity]}
	if err := s.start(s, timer, requests); err != nil {
		return nil, err
	}
	return s, nil
}

// admissible is vLLM's check of a request against the pool and the
// budget; the pool keeps token ids only for prefix caching.
func (s *Scheduler) admissible(id, prompt, output int) (bool, error) {
	cfg := s.cfg
	if need := allocator.BlocksNeeded(prompt+output, cfg.BlockSize); need > cfg.NumBlocks {
		return false, fmt.Errorf("%w: request %d needs %d blocks, the pool has %d", ErrNeverFits, id, need, cfg.NumBlocks)
	}
	if !cfg.ChunkedPrefill && prompt+output > cfg.MaxNumBatchedTokens {
		return false, fmt.Errorf("scheduler: with chunked prefill off, MaxNumBatchedTokens (%d) must hold request %d's %d tokens (vLLM sets it to max_model_len)",
			cfg.MaxNumBatchedTokens, id, prompt+output)
	}
	return cfg.PrefixCaching, nil
}

// ReceiveKV places in the pool the KV of r's first tokens prompt tokens,
// computed elsewhere: by another worker's prefill (disaggregated serving)
// or in a lower memory tier (offload). It is vLLM v1's external computed
// tokens (a KV connector's get_num_new_matched_tokens), received through
// the prefix cache: the blocks of those tokens not cached already are
// taken and registered, and held for r (allocator.Paged.Hold) until r is
// admitted, at the end of the step that admits it; r's admission finds
// every full block of them cached and computes only the rest (at least
// the block holding its last prompt token, which vLLM never serves from
// the cache). Add r now or later. It needs prefix caching, and returns the
// pool's *allocator.NoSpaceError, with nothing changed, when the blocks do
// not fit.
func (s *Scheduler) ReceiveKV(r Request, tokens int) error {
	switch _, dup := s.holds[r.ID]; {
	case !s.cfg.PrefixCaching:
		return fmt.Errorf("scheduler: KV received for request %d, but prefix caching is off", r.ID)
	case tokens < 1 || tokens > r.Prompt:
		return fmt.Errorf("scheduler: KV of %d tokens received for request %d, want 1 to its %d prompt tokens", tokens, r.ID, r.Prompt)
	case dup:
		return fmt.Errorf("scheduler: KV received twice for request %d before its admission", r.ID)
	}
	ids := r.PromptIDs
	if len(ids) < tokens {
		ids = make([]int, tokens)
		for i := range ids {
			ids[i] = tokenID(r.PromptIDs, i, r.ID, 0)
		}
	}
	ids = ids[:tokens]
	hits, hit := s.pool.ComputedBlocks(kvhash.Extend(nil, ids, s.cfg.BlockSize, r.Extra), tokens)
	h := &allocator.Request{ID: r.ID, TokenIDs: ids, Extra: r.Extra, Computed: hits}
	if err := s.pool.Hold(h, tokens-hit); err != nil {
		return err
	}
	if s.holds == nil {
		s.holds = map[int]*allocator.Request{}
	}
	s.holds[r.ID] = h
	return nil
}

// ReceivedKV counts the requests whose received KV is held for an
// admission that has not happened yet.
func (s *Scheduler) ReceivedKV() int { return len(s.holds) }

// releaseHolds frees the KV held for the requests a step admitted.
func (s *Scheduler) releaseHolds(admitted []int) error {
	for _, id := range admitted {
		if h, ok := s.holds[id]; ok {
			if err := s.pool.Free(h); err != nil {
				return err
			}
			delete(s.holds, id)
		}
	}
	return nil
}

// Pool exposes the KV block pool (for scenes and invariant checks).
func (s *Scheduler) Pool() *allocator.Paged { return s.pool }

// check verifies the paged engines' invariants
// (docs/ARCHITECTURE.md#scheduler-invariants) for the step just run.
func (s *Scheduler) check(st Step) error {
	if err := s.pool.Check(); err != nil {
		return err
	}
	if got := st.PrefillTokens + st.DecodeTokens; got > s.cfg.MaxNumBatchedTokens {
		return fmt.Errorf("step scheduled %d tokens, budget %d", got, s.cfg.MaxNumBatchedTokens)
	}
	if len(s.running) > s.cfg.MaxNumSeqs {
		return fmt.Errorf("%d running, max %d", len(s.running), s.cfg.MaxNumSeqs)
	}
	if err := s.capacity.check(s, st); err != nil {
		return err
	}
	if len(st.Preempted) > 0 && len(st.Admitted) > 0 {
		return fmt.Errorf("admitted %v in a step that preempted %v", st.Admitted, st.Preempted)
	}
	for _, r := range s.running {
		if s.pool.Table(r.ID) == nil {
			return fmt.Errorf("request %d is running and holds no blocks", r.ID)
		}
		if s.pool.Tokens(r.ID) != r.computed {
			return fmt.Errorf("request %d holds KV for %d tokens, computed %d", r.ID, s.pool.Tokens(r.ID), r.computed)
		}
	}
	for i := 0; i < s.waiting.len(); i++ {
		if r := s.waiting.at(i); r.computed != 0 || s.pool.Table(r.ID) != nil {
			return fmt.Errorf("waiting request %d holds KV", r.ID)
		}
	}
	return nil
}
