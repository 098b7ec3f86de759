package scheduler

import (
	"errors"
	"fmt"
	"sort"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/hardware"
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
	// Scheduler.ends), in runs of consecutive steps: a running request makes
	// one token in every step that runs, so a request has a few runs,
	// however long its output, and a step updates only the request itself.
	tokens    tokenSteps
	Arrival   float64 // seconds
	status    status
	admitted  bool
	preempted int
	cachedHit int // prompt tokens found in the prefix cache at first admission
	// hashes are the chain hashes of ids' full blocks (vLLM's
	// request.block_hashes), extended as tokens complete blocks.
	hashes []uint64
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

// Scheduler serves requests on one simulated GPU.
type Scheduler struct {
	cfg   Config
	timer Timer
	// hw is the step model when timer is a HardwareTimer, called
	// directly: through the interface, HardwareTimer.StepSeconds would
	// copy the model, its receiver, at every step.
	hw *hardware.StepModel
	// chunks is the step's batch, built as requests are scheduled: what
	// the timer prices, and with RecordWork what the step keeps.
	chunks  []Work
	pool    *allocator.Paged
	reqs    []*req       // by arrival order
	byID    map[int]*req // made on first use (byIDs): a run of 10,000 requests rarely asks
	waiting queue[*req]
	running []*req // a window on runBuf (pushRunning, sampleOutputs)
	runBuf  []*req
	marks   []int32 // sampleOutputs' scratch: indices in running
	clock   float64
	next    int // next request (by arrival) not yet in the waiting queue
	steps   []Step
	ends    []float64 // the clock at the end of each step that ran
	// CheckInvariants makes Run verify the allocator and step invariants
	// after every step (tests turn it on).
	CheckInvariants bool
	// RecordWork keeps each step's per-request Work in Steps() (lessons
	// that draw batch composition turn it on); otherwise the batch's
	// buffer is reused, which matters at 10,000 requests.
	RecordWork bool
	lists      [4][]int // scratch for a step's Preempted, Admitted, FirstTokens, Finished
	arena      []int    // where finished steps' lists are kept
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
	s := &Scheduler{cfg: cfg, timer: timer, pool: pool}
	if ht, ok := timer.(HardwareTimer); ok {
		s.hw = &ht.Model
	}
	// Served by arrival, ties by ID. The live states sit in one array in
	// that order, so that the running requests, admitted first come first
	// served, are mostly neighbours in memory.
	order := make([]int, len(requests))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := &requests[order[a]], &requests[order[b]]
		if ra.Arrival != rb.Arrival {
			return ra.Arrival < rb.Arrival
		}
		return ra.ID < rb.ID
	})
	slot := make([]int, len(requests))
	for k, i := range order {
		slot[i] = k
	}
	states := make([]req, len(requests))
	kvs := make([]allocator.Request, len(requests))
	for k := range states {
		states[k].kv = &kvs[k]
	}
	ids := make([]int, len(requests))
	for i := range requests {
		ids[i] = requests[i].ID
	}
	dup := firstDuplicate(ids)
	for i, r := range requests {
		if err := s.prepare(r, &states[slot[i]], i == dup); err != nil {
			return nil, err
		}
	}
	s.reqs = make([]*req, len(states))
	for k := range states {
		s.reqs[k] = &states[k]
	}
	return s, nil
}

// prepare validates r, whose id an earlier request has if dup, and makes
// its live state in q.
func (s *Scheduler) prepare(r Request, q *req, dup bool) error {
	cfg := s.cfg
	if r.Prompt < 1 || r.Output < 1 {
		return fmt.Errorf("scheduler: request %d has %d prompt and %d output tokens, want at least 1 of each", r.ID, r.Prompt, r.Output)
	}
	if dup {
		return fmt.Errorf("scheduler: request id %d appears twice", r.ID)
	}
	if need := allocator.BlocksNeeded(r.Prompt+r.Output, cfg.BlockSize); need > cfg.NumBlocks {
		return fmt.Errorf("%w: request %d needs %d blocks, the pool has %d", ErrNeverFits, r.ID, need, cfg.NumBlocks)
	}
	if !cfg.ChunkedPrefill && r.Prompt+r.Output > cfg.MaxNumBatchedTokens {
		return fmt.Errorf("scheduler: with chunked prefill off, MaxNumBatchedTokens (%d) must hold request %d's %d tokens (vLLM sets it to max_model_len)",
			cfg.MaxNumBatchedTokens, r.ID, r.Prompt+r.Output)
	}
	kv := q.kv
	*q = req{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output, kv: kv}
	kv.ID, kv.Extra, kv.Final = r.ID, r.Extra, r.Prompt+r.Output
	if cfg.PrefixCaching {
		ids := make([]int, 0, r.Prompt+r.Output)
		for i := 0; i < r.Prompt; i++ {
			ids = append(ids, tokenID(r.PromptIDs, i, r.ID, 0))
		}
		for i := 0; i < r.Output; i++ {
			ids = append(ids, tokenID(r.OutputIDs, i, r.ID, 1))
		}
		kv.TokenIDs = ids
	}
	return nil
}

// Add submits a request while the simulation runs. Its arrival time must not
// be earlier than that of a request already submitted that has not arrived
// by the clock. It keeps its arrival even when that is before the clock (it
// came while a step ran): it joins the queue when the step in flight ends,
// after the requests submitted before it, and its latencies count that
// wait, as a real engine's request's do.
func (s *Scheduler) Add(r Request) error {
	if s.next < len(s.reqs) && s.reqs[len(s.reqs)-1].Arrival > max(r.Arrival, s.clock) {
		return fmt.Errorf("scheduler: request %d arrives at %g s, before a request already queued", r.ID, r.Arrival)
	}
	q := &req{kv: new(allocator.Request)}
	_, dup := s.byIDs()[r.ID]
	if err := s.prepare(r, q, dup); err != nil {
		return err
	}
	s.reqs = append(s.reqs, q)
	s.byID[r.ID] = q
	return nil
}

// byIDs is the requests by id, made on first use and kept up to date by
// Add.
func (s *Scheduler) byIDs() map[int]*req {
	if s.byID == nil {
		s.byID = make(map[int]*req, len(s.reqs))
		for _, q := range s.reqs {
			s.byID[q.ID] = q
		}
	}
	return s.byID
}

// tokenID returns ids[i] if given, else an id unique to (request, kind, i)
// and outside any real vocabulary so it never collides with given ids.
func tokenID(ids []int, i, reqID, kind int) int {
	if i < len(ids) {
		return ids[i]
	}
	return -(1 + (reqID*2+kind)<<24 + i)
}

// Pool exposes the KV block pool (for scenes and invariant checks).
func (s *Scheduler) Pool() *allocator.Paged { return s.pool }

// Clock is the simulated time in seconds.
func (s *Scheduler) Clock() float64 { return s.clock }

// Done reports whether every request has finished.
func (s *Scheduler) Done() bool {
	return s.next == len(s.reqs) && s.waiting.len() == 0 && len(s.running) == 0
}

// maxSteps guards against a scheduler bug looping forever.
const maxSteps = 50_000_000

// Run steps until every request has finished.
func (s *Scheduler) Run() error {
	for !s.Done() {
		if len(s.steps) > maxSteps {
			return errors.New("scheduler: too many steps; this is a bug")
		}
		if _, err := s.Step(); err != nil {
			return err
		}
	}
	return nil
}

// check verifies the scheduler invariants (docs/ARCHITECTURE.md#scheduler-invariants)
// for the step just run.
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
	if s.cfg.Capacity == GuaranteedNoEvict {
		if len(st.Preempted) > 0 {
			return fmt.Errorf("GuaranteedNoEvict preempted %v", st.Preempted)
		}
		if c := s.claimedBlocks(); c > s.pool.FreeBlocks() {
			return fmt.Errorf("running requests claim %d blocks to finish, %d free", c, s.pool.FreeBlocks())
		}
	}
	if len(st.Preempted) > 0 && len(st.Admitted) > 0 {
		return fmt.Errorf("admitted %v in a step that preempted %v", st.Admitted, st.Preempted)
	}
	for _, r := range s.running {
		if r.tokens.count() != r.generated {
			return fmt.Errorf("request %d recorded %d token times for %d tokens", r.ID, r.tokens.count(), r.generated)
		}
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
