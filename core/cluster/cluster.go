// Package cluster runs several serving workers and a router on one simulated
// clock, after NVIDIA Dynamo's aggregated deployment: a frontend router
// (core/router) picks a worker for each arriving request, each worker is a
// vLLM v1 engine (core/scheduler with prefix caching on) that publishes its
// KV events (block stored, block removed), and the router's global index
// consumes them. The router also keeps Dynamo's router-side load tracking
// (active prefill tokens until a request's first token, active blocks until
// it ends).
//
// Time is event-driven: requests are routed in arrival order, and before a
// request is routed every worker runs the steps it starts before that
// arrival. A worker's step that straddles an arrival has already ended when
// the router looks, so the router sees state up to one step ahead — the
// same order of staleness as Dynamo's asynchronous KV events.
// Simplifications: no network latency between router and workers, and
// events arrive as soon as the step that produced them ends. Disaggregated
// serving (separate prefill and decode pools with KV transfer) and the KV
// tiers' link figures live in disagg.go and tiers.go.
package cluster

import (
	"errors"
	"fmt"
	"sort"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
)

// Request is one request to the cluster.
type Request struct {
	ID        int
	Arrival   float64
	PromptIDs []int // the prompt's token ids (prefix caching and routing need them)
	Output    int
	OutputIDs []int // optional: ids of the output tokens (multi-turn reuse)
	Group     int   // a label kept in the results, e.g. the system prompt
}

// Config describes the cluster.
type Config struct {
	Workers   int
	Scheduler scheduler.Config // per worker; PrefixCaching and KVEvents are forced on
	// Timer prices one worker's steps.
	Timer func(worker int) scheduler.Timer
	// Policy routes requests. A policy that is an IndexUser
	// (router.KVAware is) is handed the cluster's event-fed index.
	Policy router.Policy
}

// IndexUser is a policy that reads the cluster's event-fed index: New
// asks the policy for it, as net/http asks a ResponseWriter for
// http.Flusher, and hands the index over.
type IndexUser interface {
	UseIndex(idx router.Indexer)
}

// Routed is one routing decision with what the request then experienced.
type Routed struct {
	Request  int
	Group    int
	Arrival  float64
	Worker   int
	Decision router.Decision
	// Overlap is the number of the request's leading blocks the chosen
	// worker had cached according to the index when it was routed.
	Overlap int
	// Load holds every worker's running + waiting requests at routing time.
	Load []int
}

// Result is a whole run.
type Result struct {
	Routes   []Routed
	Requests []scheduler.RequestMetrics // every request, by arrival
	Workers  []WorkerResult
	// Index is the router's view of the caches at the end.
	Index *router.Index
	// Counts tallies the steps, tokens and scores simulated.
	Counts Counts
	// Busy is the workers' engine time, by phase.
	Busy Busy
}

// WorkerResult is one worker's share.
type WorkerResult struct {
	Requests int
	Summary  scheduler.Summary
	// MeanActive is the worker's running + waiting requests averaged over
	// the routing decisions.
	MeanActive float64
}

// Cluster is a run in progress.
type Cluster struct {
	cfg     Config
	workers []*scheduler.Scheduler
	index   *router.Index
	active  *router.ActiveLoad
	res     *Result
	loadSum []float64
}

// New prepares a cluster.
func New(cfg Config) (*Cluster, error) {
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("cluster: Workers = %d, want ≥ 1", cfg.Workers)
	}
	if cfg.Policy == nil || cfg.Timer == nil {
		return nil, errors.New("cluster: a policy and a timer are required")
	}
	sc := cfg.Scheduler
	sc.PrefixCaching, sc.KVEvents = true, true
	c := &Cluster{cfg: cfg, index: router.NewIndex(), active: router.NewActiveLoad(sc.BlockSize), res: &Result{}, loadSum: make([]float64, cfg.Workers)}
	if u, ok := cfg.Policy.(IndexUser); ok {
		u.UseIndex(c.index)
	}
	for w := 0; w < cfg.Workers; w++ {
		s, err := scheduler.New(sc, cfg.Timer(w), nil)
		if err != nil {
			return nil, err
		}
		c.workers = append(c.workers, s)
	}
	c.res.Index = c.index
	return c, nil
}

// Run routes and serves every request.
func Run(cfg Config, reqs []Request) (*Result, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	sorted := append([]Request(nil), reqs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Arrival < sorted[j].Arrival })
	for _, r := range sorted {
		if err := c.route(r); err != nil {
			return nil, err
		}
	}
	for w := range c.workers {
		if err := c.advance(w, -1); err != nil {
			return nil, err
		}
	}
	return c.finish(sorted)
}

// advance runs worker w's steps that start before t (all of them if t < 0),
// feeding its KV events to the index and its progress to the load tracker.
func (c *Cluster) advance(w int, t float64) error {
	s := c.workers[w]
	// Requests are added in arrival order at their arrival time, so a
	// worker never holds a request from after t.
	for s.Busy() && (t < 0 || s.Clock() < t) {
		st, err := s.Step()
		if err != nil {
			return fmt.Errorf("cluster: worker %d: %w", w, err)
		}
		c.res.Counts.add(st)
		c.res.Busy.Add(st)
		var evErr error
		s.DrainKVEvents(func(e allocator.Event) {
			var re router.Event
			switch e.Kind {
			case allocator.Stored:
				re = router.Event{Kind: router.Stored, Hashes: []uint64{e.Hash}, Parent: e.Parent}
			case allocator.Removed:
				re = router.Event{Kind: router.Removed, Hashes: []uint64{e.Hash}}
			default:
				return
			}
			if err := c.index.Apply(w, re); err != nil && !errors.Is(err, router.ErrUnknownParent) {
				evErr = err
			}
		})
		if evErr != nil {
			return evErr
		}
		for _, id := range st.FirstTokens {
			if err := c.active.PrefillDone(id); err != nil {
				return fmt.Errorf("cluster: worker %d: %w", w, err)
			}
		}
		for _, id := range st.Finished {
			if err := c.active.Free(id); err != nil {
				return fmt.Errorf("cluster: worker %d: %w", w, err)
			}
		}
	}
	return nil
}

func (c *Cluster) route(r Request) error {
	for w := range c.workers {
		if err := c.advance(w, r.Arrival); err != nil {
			return err
		}
	}
	bs := c.cfg.Scheduler.BlockSize
	rr := router.Request{ID: r.ID, Tokens: len(r.PromptIDs), Hashes: router.BlockHashes(r.PromptIDs, bs, ""), Prompt: r.PromptIDs, Now: r.Arrival}
	ws := make([]router.WorkerState, len(c.workers))
	load := make([]int, len(c.workers))
	for w, s := range c.workers {
		l := s.Load()
		ws[w] = router.WorkerState{ID: w, Running: l.Running, Waiting: l.Waiting}
		load[w] = l.Running + l.Waiting
		c.loadSum[w] += float64(load[w])
	}
	c.active.Fill(ws)
	d := c.cfg.Policy.Route(rr, ws)
	c.res.Counts.Scored += int64(len(ws))
	c.res.Counts.PromptTokens += int64(len(r.PromptIDs))
	if d.Worker < 0 || d.Worker >= len(c.workers) {
		return fmt.Errorf("cluster: policy chose worker %d of %d", d.Worker, len(c.workers))
	}
	overlap := c.index.Overlap(rr.Hashes)[d.Worker]
	if err := c.active.Add(d.Worker, rr, overlap); err != nil {
		return err
	}
	c.res.Routes = append(c.res.Routes, Routed{Request: r.ID, Group: r.Group, Arrival: r.Arrival, Worker: d.Worker, Decision: d, Overlap: overlap, Load: load})
	return c.workers[d.Worker].Add(scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: len(r.PromptIDs), Output: r.Output,
		PromptIDs: r.PromptIDs, OutputIDs: r.OutputIDs})
}

func (c *Cluster) finish(reqs []Request) (*Result, error) {
	byID := map[int]scheduler.RequestMetrics{}
	for w, s := range c.workers {
		ms := s.Requests()
		for _, m := range ms {
			byID[m.ID] = m
		}
		wr := WorkerResult{Requests: len(ms), Summary: s.Summary(scheduler.SLO{})}
		if n := len(c.res.Routes); n > 0 {
			wr.MeanActive = c.loadSum[w] / float64(n)
		}
		c.res.Workers = append(c.res.Workers, wr)
	}
	for _, r := range reqs {
		m, ok := byID[r.ID]
		if !ok {
			return nil, fmt.Errorf("cluster: request %d did not finish", r.ID)
		}
		c.res.Requests = append(c.res.Requests, m)
	}
	return c.res, nil
}
