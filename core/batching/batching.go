// Package batching models request-level batching on one model instance (one
// GPU): a batch is formed from queued requests, then runs to completion —
// one prefill step over every prompt padded to the longest, then decode
// steps until its longest output is done — before the next batch starts.
// Two ways of forming batches:
//
//   - Static: a fixed batch of MaxBatchSize requests; the server waits until
//     that many are queued (as a client or an engine with a fixed batch
//     shape does). When no request is left to arrive, the last batch runs
//     with what is queued.
//   - Dynamic: Triton Inference Server's dynamic batcher
//     (docs/user_guide/batcher.md): when the instance is free it sends a
//     batch of MaxBatchSize if that many are queued, else of the largest
//     preferred size it can form; otherwise it waits as long as no request
//     has waited longer than MaxQueueDelay, sending at once when an arrival
//     makes a maximum or preferred batch, and sends what is queued when the
//     delay expires (at once when the delay is 0, Triton's default).
//
// Within a batch every slot computes every step: a request that finished
// early keeps its slot (padding) until the batch ends, and its response
// returns then ("requests that have finished earlier than other requests in
// a batch cannot return to the client", Orca, OSDI '22). Iteration-level
// (continuous) batching, where requests join and leave at every step, is
// core/scheduler's vLLM v1 scheduler.
//
// Steps are priced by a scheduler.Timer (core/hardware's step-time model),
// the same pricing core/scheduler uses, so the three compare on one GPU.
package batching

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/inferlab/inferlab/core/scheduler"
)

// Policy says how batches are formed.
type Policy int

// The policies.
const (
	Static Policy = iota
	Dynamic
)

func (p Policy) String() string {
	if p == Dynamic {
		return "dynamic"
	}
	return "static"
}

// Config is a batcher's knobs, in Triton's terms.
type Config struct {
	Policy Policy
	// MaxBatchSize is max_batch_size (and the static batch size).
	MaxBatchSize int
	// PreferredBatchSizes is preferred_batch_size (dynamic only; may be
	// empty, which Triton recommends for most models).
	PreferredBatchSizes []int
	// MaxQueueDelay is max_queue_delay_microseconds, in seconds (dynamic
	// only).
	MaxQueueDelay float64
}

// Validate checks the knobs.
func (c Config) Validate() error {
	if c.MaxBatchSize < 1 {
		return fmt.Errorf("batching: MaxBatchSize = %d, want ≥ 1", c.MaxBatchSize)
	}
	if !(c.MaxQueueDelay >= 0) || math.IsInf(c.MaxQueueDelay, 0) {
		return fmt.Errorf("batching: MaxQueueDelay = %g s, want a finite value ≥ 0", c.MaxQueueDelay)
	}
	for _, p := range c.PreferredBatchSizes {
		if p < 1 || p > c.MaxBatchSize {
			return fmt.Errorf("batching: preferred batch size %d, want 1 to MaxBatchSize (%d)", p, c.MaxBatchSize)
		}
	}
	return nil
}

// Request is one request of the stream.
type Request struct {
	ID      int
	Arrival float64 // seconds
	Prompt  int     // tokens
	Output  int     // tokens to generate, at least 1
}

// Batch is one batch as it ran.
type Batch struct {
	// Requests are the members in slot order (slot i holds Requests[i]).
	Requests []int
	// Start is when it was sent (the instance was free), End when its
	// last step ended.
	Start, End float64
	// Prompt is the padded prompt (the longest), Steps the steps it ran:
	// one prefill and longest output − 1 decodes.
	Prompt, Steps int
	// StepEnds are the end times of its steps; a request's k-th output
	// token is ready at StepEnds[k−1].
	StepEnds []float64
}

// RequestResult is what one request saw.
type RequestResult struct {
	Request
	Batch, Slot int
	// FirstToken and LastToken are when its first and last output tokens
	// were computed; Returned when its response reached the client (its
	// batch's end).
	FirstToken, LastToken, Returned float64
}

// Waste is where the slot time of a run went: slot-seconds are a step's
// duration times the slots it spans.
type Waste struct {
	// Useful are slots computing a token their request needs; Padding
	// slots computing for a request that already finished; Idle slots no
	// request holds while a batch runs.
	Useful, Padding, Idle float64
	// PaddedPromptTokens are prefill tokens computed only to pad prompts
	// to the batch's longest.
	PaddedPromptTokens int
	// WaitingIdle is the time the GPU sat idle while requests were queued
	// (waiting for a full batch or for the delay).
	WaitingIdle float64
}

// Result is a run.
type Result struct {
	Config   Config
	Batches  []Batch
	Requests []RequestResult // by ID
	Waste    Waste
	// Steps counts every engine step priced; Work counts each step once
	// plus each slot it computed (Script.Work-style units).
	Steps int
	Work  int64
}

// ErrNoRequests is returned for an empty stream.
var ErrNoRequests = errors.New("batching: no requests")

// Run serves reqs with cfg on one instance whose steps t prices.
func Run(cfg Config, t scheduler.Timer, reqs []Request) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, ErrNoRequests
	}
	order := slices.Clone(reqs)
	for _, r := range order {
		if r.Prompt < 1 || r.Output < 1 || !(r.Arrival >= 0) || math.IsInf(r.Arrival, 0) {
			return nil, fmt.Errorf("batching: request %d has arrival %g s, %d prompt and %d output tokens; want arrival ≥ 0 and at least 1 token of each", r.ID, r.Arrival, r.Prompt, r.Output)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Arrival != order[j].Arrival {
			return order[i].Arrival < order[j].Arrival
		}
		return order[i].ID < order[j].ID
	})
	s := &server{cfg: cfg, t: t, reqs: order, res: &Result{Config: cfg, Requests: make([]RequestResult, len(order))}, byID: map[int]int{}}
	for i, r := range order {
		if _, dup := s.byID[r.ID]; dup {
			return nil, fmt.Errorf("batching: request id %d appears twice", r.ID)
		}
		s.byID[r.ID] = i
	}
	s.serve()
	slices.SortFunc(s.res.Requests, func(a, b RequestResult) int { return a.ID - b.ID })
	return s.res, nil
}

// server is the state of one run.
type server struct {
	cfg   Config
	t     scheduler.Timer
	reqs  []Request // by arrival
	byID  map[int]int
	res   *Result
	clock float64
	next  int   // index of the next request to arrive
	queue []int // indices into reqs, in arrival order
	work  []scheduler.Work
}

// serve runs the event loop: at each moment the instance is free, send a
// batch if the policy says so, else move the clock to the next arrival or
// the delay's deadline.
func (s *server) serve() {
	for s.next < len(s.reqs) || len(s.queue) > 0 {
		s.arrive()
		if n := s.decide(); n > 0 {
			s.runBatch(n)
			continue
		}
		wait := s.nextEvent()
		if len(s.queue) > 0 {
			s.res.Waste.WaitingIdle += wait - s.clock
		}
		s.clock = wait
	}
}

// arrive queues every request that has arrived by now.
func (s *server) arrive() {
	for s.next < len(s.reqs) && s.reqs[s.next].Arrival <= s.clock {
		s.queue = append(s.queue, s.next)
		s.next++
	}
}

// decide returns how many queued requests to send now, 0 to wait.
func (s *server) decide() int {
	q, maxB := len(s.queue), s.cfg.MaxBatchSize
	switch {
	case q == 0:
		return 0
	case q >= maxB:
		return maxB
	case s.cfg.Policy == Static:
		if s.next == len(s.reqs) {
			return q // the stream has ended: the last batch runs as it is
		}
		return 0
	}
	best := 0
	for _, p := range s.cfg.PreferredBatchSizes {
		if p <= q {
			best = max(best, p)
		}
	}
	if best > 0 {
		return best
	}
	if s.clock >= s.deadline() {
		return q
	}
	return 0
}

// deadline is when the oldest queued request will have waited
// MaxQueueDelay.
func (s *server) deadline() float64 {
	return s.reqs[s.queue[0]].Arrival + s.cfg.MaxQueueDelay
}

// nextEvent is when something can change the decision: the next arrival
// or, for the dynamic batcher with requests queued, the delay's deadline.
func (s *server) nextEvent() float64 {
	t := math.Inf(1)
	if s.next < len(s.reqs) {
		t = s.reqs[s.next].Arrival
	}
	if s.cfg.Policy == Dynamic && len(s.queue) > 0 {
		t = math.Min(t, s.deadline())
	}
	return t
}

// runBatch sends the first n queued requests and runs them to completion.
func (s *server) runBatch(n int) {
	members := s.queue[:n:n]
	s.queue = slices.Clone(s.queue[n:])
	b := Batch{Start: s.clock}
	longest := 0
	for _, i := range members {
		r := s.reqs[i]
		b.Requests = append(b.Requests, r.ID)
		b.Prompt = max(b.Prompt, r.Prompt)
		longest = max(longest, r.Output)
	}
	b.Steps = longest
	w := &s.res.Waste
	for _, i := range members {
		w.PaddedPromptTokens += b.Prompt - s.reqs[i].Prompt
	}
	free := float64(s.cfg.MaxBatchSize - n)
	for k := 0; k < longest; k++ {
		d := s.step(n, b.Prompt, k)
		s.clock += d
		b.StepEnds = append(b.StepEnds, s.clock)
		needed := 0
		for _, i := range members {
			if s.reqs[i].Output > k {
				needed++
			}
		}
		w.Useful += d * float64(needed)
		w.Padding += d * float64(n-needed)
		w.Idle += d * free
		if y := scheduler.Yield; y != nil { // the host's turn, as the scheduler gives it
			y(n)
		}
	}
	b.End = s.clock
	for slot, i := range members {
		r := s.reqs[i]
		s.res.Requests[i] = RequestResult{Request: r, Batch: len(s.res.Batches), Slot: slot,
			FirstToken: b.StepEnds[0], LastToken: b.StepEnds[r.Output-1], Returned: b.End}
	}
	s.res.Batches = append(s.res.Batches, b)
}

// stepWork is what one step counts in Work beside its slots (as the
// lessons' stepWork).
const stepWork = 8

// step prices step k of a batch of n: k = 0 is the prefill of n padded
// prompts, later steps decode one token each on top of prompt + k − 1
// cached tokens.
func (s *server) step(n, prompt, k int) float64 {
	s.work = s.work[:0]
	for i := 0; i < n; i++ {
		if k == 0 {
			s.work = append(s.work, scheduler.Work{Req: i, NewTokens: prompt, Prefill: true})
		} else {
			s.work = append(s.work, scheduler.Work{Req: i, NewTokens: 1, Context: prompt + k - 1})
		}
	}
	s.res.Steps++
	s.res.Work += stepWork + int64(n)
	return s.t.StepSeconds(s.work)
}

// Makespan is the time from the first arrival to the last response.
func (r *Result) Makespan() float64 {
	first, last := math.Inf(1), 0.0
	for _, q := range r.Requests {
		first = math.Min(first, q.Arrival)
		last = math.Max(last, q.Returned)
	}
	return last - first
}
