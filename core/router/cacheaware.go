package router

import (
	"fmt"
	"math"
	"slices"
)

// CacheAwareConfig holds the SGLang router's cache-aware knobs
// (docs/SOURCES.md#sglang-router). SGLang counts characters of the prompt text; here the counts are
// tokens, since the simulator has token ids, not text.
type CacheAwareConfig struct {
	CacheThreshold      float64 // cache_threshold: match rate above which the cache decides
	BalanceAbsThreshold int     // balance_abs_threshold: load gap, in requests
	BalanceRelThreshold float64 // balance_rel_threshold: load ratio
	EvictionInterval    float64 // eviction_interval_secs, simulated seconds; 0 turns eviction off
	MaxTreeSize         int     // max_tree_size, per worker, tokens here (characters in SGLang)
}

// DefaultCacheAwareConfig returns Rust's CacheAwareConfig::default()
// (sgl-router/src/policies/mod.rs): 0.5, 32, 1.1, 30 s, 10,000.
func DefaultCacheAwareConfig() CacheAwareConfig {
	return CacheAwareConfig{
		CacheThreshold:      0.5,
		BalanceAbsThreshold: 32,
		BalanceRelThreshold: 1.1,
		EvictionInterval:    30,
		MaxTreeSize:         10_000,
	}
}

// CLICacheAwareConfig returns the defaults of the sglang_router command
// line (py_src/sglang_router/router_args.py), which differ from Rust's:
// 0.3, 64, 1.5, 120 s, 2^26.
func CLICacheAwareConfig() CacheAwareConfig {
	return CacheAwareConfig{
		CacheThreshold:      0.3,
		BalanceAbsThreshold: 64,
		BalanceRelThreshold: 1.5,
		EvictionInterval:    120,
		MaxTreeSize:         1 << 26,
	}
}

// CacheAware is the SGLang router's cache_aware policy
// (sgl-router/src/policies/cache_aware.rs). Per request:
//
//  1. Load = requests in flight per worker. The pool is imbalanced iff
//     max − min > BalanceAbsThreshold and max > BalanceRelThreshold × min;
//     then the least-loaded worker gets the request.
//  2. Otherwise the prompt is matched against the approximate tree; if
//     matched/len(prompt) > CacheThreshold, a worker owning the deepest
//     matched node gets it; else the worker with the fewest tokens in the
//     tree (the most free cache).
//  3. The prompt is inserted into the tree under the chosen worker.
//
// Every EvictionInterval simulated seconds each worker's part of the tree is
// trimmed to MaxTreeSize tokens, least recently used leaves first. Where
// SGLang takes the first tenant of a concurrent map (arbitrary order), the
// lowest worker id is taken here, and ties on load or tree size also go to
// the lowest id, so decisions are reproducible.
type CacheAware struct {
	Config    CacheAwareConfig
	tree      *tenantTree
	lastEvict float64
}

// NewCacheAware returns a cache-aware policy with an empty tree.
func NewCacheAware(cfg CacheAwareConfig) *CacheAware {
	return &CacheAware{Config: cfg, tree: newTenantTree()}
}

// TreeSize is the number of tokens the tree attributes to worker.
func (c *CacheAware) TreeSize(worker int) int { return c.tree.count[worker] }

// Check verifies the approximate tree's bookkeeping.
func (c *CacheAware) Check() error { return c.tree.check() }

// Route implements Policy.
func (c *CacheAware) Route(req Request, workers []WorkerState) Decision {
	if len(workers) == 0 {
		return noWorkers()
	}
	if c.Config.EvictionInterval > 0 && req.Now-c.lastEvict >= c.Config.EvictionInterval {
		c.tree.evict(c.Config.MaxTreeSize)
		c.lastEvict = req.Now
	}
	scores := loadScores(workers)
	lo, hi := math.MaxInt, math.MinInt
	for i, w := range workers {
		lo, hi = min(lo, w.Load()), max(hi, w.Load())
		scores[i].TreeSize = c.tree.count[w.ID]
	}
	var chosen, matched int
	var reason string
	imbalanced := hi-lo > c.Config.BalanceAbsThreshold && float64(hi) > c.Config.BalanceRelThreshold*float64(lo)
	if imbalanced {
		chosen = lowestID(workers, func(w WorkerState) bool { return w.Load() == lo })
		reason = fmt.Sprintf("imbalanced (loads %d..%d exceed %d and ×%g): least-loaded worker %d",
			lo, hi, c.Config.BalanceAbsThreshold, c.Config.BalanceRelThreshold, chosen)
	} else {
		n, node := c.tree.match(req.Prompt)
		owner := lowestID(workers, func(w WorkerState) bool { _, ok := node.tenants[w.ID]; return ok })
		rate := 0.0
		if len(req.Prompt) > 0 {
			rate = float64(n) / float64(len(req.Prompt))
		}
		if owner >= 0 {
			c.tree.touch(node, owner)
		}
		if owner >= 0 && n > 0 && rate > c.Config.CacheThreshold {
			chosen, matched = owner, n
			for i := range scores {
				if scores[i].Worker == owner {
					scores[i].Overlap = n
				}
			}
			reason = fmt.Sprintf("match rate %.2f > %.2f: worker %d holds the longest prefix (%d of %d tokens)",
				rate, c.Config.CacheThreshold, owner, n, len(req.Prompt))
		} else {
			small := math.MaxInt
			for _, w := range workers {
				small = min(small, c.tree.count[w.ID])
			}
			chosen = lowestID(workers, func(w WorkerState) bool { return c.tree.count[w.ID] == small })
			reason = fmt.Sprintf("match rate %.2f ≤ %.2f: worker %d has the smallest tree (%d tokens)",
				rate, c.Config.CacheThreshold, chosen, small)
		}
	}
	c.tree.insert(req.Prompt, chosen)
	return Decision{Worker: chosen, Overlap: matched, Scores: scores, Reason: reason}
}

// lowestID returns the smallest id among workers satisfying ok, or -1.
func lowestID(workers []WorkerState, ok func(WorkerState) bool) int {
	ids := []int{}
	for _, w := range workers {
		if ok(w) {
			ids = append(ids, w.ID)
		}
	}
	if len(ids) == 0 {
		return -1
	}
	return slices.Min(ids)
}
