package router

import (
	"fmt"
	"math/rand/v2"
)

// Request is what a router knows about an incoming request.
type Request struct {
	ID     int
	Tokens int      // prompt length (ISL)
	Hashes []uint64 // chain hashes of the prompt's full blocks (BlockHashes)
	Prompt []int    // prompt token ids; CacheAware matches on them
	Now    float64  // simulated seconds: ApproxIndex TTLs, CacheAware's eviction timer
}

// WorkerState is one worker's load as the router sees it.
type WorkerState struct {
	ID           int
	ActiveBlocks int // unique KV blocks of its active requests (Dynamo's decode load)
	ActiveTokens int // prefill tokens routed to it that have not produced a first token yet
	// ActiveHashes, when not nil, holds the active blocks themselves (hash →
	// requests using it), so KVAware counts only the request's blocks not
	// already active there; nil means none of them is. ActiveLoad.Fill sets it.
	ActiveHashes map[uint64]int
	Running      int // requests being served
	Waiting      int // requests queued at the worker
}

// Load is the worker's in-flight request count (running + waiting).
func (w WorkerState) Load() int { return w.Running + w.Waiting }

// Score is how a policy saw one worker. Fields a policy does not use are 0.
type Score struct {
	Worker        int
	Load          int     // running + waiting requests
	Overlap       int     // KVAware: leading blocks cached there; CacheAware: tokens matched, for the owner of the deepest match
	TreeSize      int     // KVAware: blocks indexed for it when it holds part of the request's prefix, else 0 (Dynamo's tree_sizes); CacheAware: tokens in the approximate tree
	PrefillTokens int     // KVAware: pending prefill tokens plus this request's uncached ones
	PrefillBlocks float64 // KVAware: PrefillTokens / block size
	DecodeBlocks  float64 // KVAware: active blocks plus this request's blocks not active there
	Logit         float64 // KVAware: weight × PrefillBlocks + DecodeBlocks; lower is better
	Prob          float64 // KVAware at temperature > 0: the chance it was drawn with
}

// Decision is a policy's choice and why. Worker is -1 when there was no
// worker to choose from.
type Decision struct {
	Worker  int
	Overlap int     // the chosen worker's cached overlap (blocks for KVAware, tokens for CacheAware)
	Scores  []Score // one per worker, in the order given
	Reason  string
}

// Policy picks a worker for a request. Policies keep state (counters, random
// streams, approximate trees), so a Policy serves one simulation.
type Policy interface {
	Route(req Request, workers []WorkerState) Decision
}

func noWorkers() Decision { return Decision{Worker: -1, Reason: "no workers"} }

func loadScores(workers []WorkerState) []Score {
	s := make([]Score, len(workers))
	for i, w := range workers {
		s[i] = Score{Worker: w.ID, Load: w.Load()}
	}
	return s
}

// newRand returns the seeded PCG stream every random policy draws from.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// RoundRobin sends request k to workers[k mod len(workers)] (SGLang and
// Dynamo round_robin).
type RoundRobin struct{ next int }

// NewRoundRobin returns a round-robin policy starting at the first worker.
func NewRoundRobin() *RoundRobin { return &RoundRobin{} }

// Route implements Policy.
func (r *RoundRobin) Route(_ Request, workers []WorkerState) Decision {
	if len(workers) == 0 {
		return noWorkers()
	}
	i := r.next % len(workers)
	r.next++
	return Decision{Worker: workers[i].ID, Scores: loadScores(workers),
		Reason: fmt.Sprintf("round robin: turn of worker %d", workers[i].ID)}
}

// Random picks a worker uniformly from a seeded stream.
type Random struct{ rng *rand.Rand }

// NewRandom returns a random policy; the same seed gives the same choices.
func NewRandom(seed uint64) *Random { return &Random{rng: newRand(seed)} }

// Route implements Policy.
func (r *Random) Route(_ Request, workers []WorkerState) Decision {
	if len(workers) == 0 {
		return noWorkers()
	}
	w := workers[r.rng.IntN(len(workers))].ID
	return Decision{Worker: w, Scores: loadScores(workers),
		Reason: fmt.Sprintf("random: drew worker %d", w)}
}

// LeastLoaded picks the worker with the fewest running plus waiting
// requests, the lowest id on a tie. It ignores caches.
type LeastLoaded struct{}

// Route implements Policy.
func (LeastLoaded) Route(_ Request, workers []WorkerState) Decision {
	if len(workers) == 0 {
		return noWorkers()
	}
	best := 0
	for i, w := range workers {
		b := workers[best]
		if w.Load() < b.Load() || (w.Load() == b.Load() && w.ID < b.ID) {
			best = i
		}
	}
	w := workers[best]
	return Decision{Worker: w.ID, Scores: loadScores(workers),
		Reason: fmt.Sprintf("least loaded: worker %d has %d requests in flight", w.ID, w.Load())}
}
