package router

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultBlockSize is the KV block size the KV router assumes when the
// workers do not say: Dynamo takes kv_cache_block_size from worker
// registration, and dynamo-run's usage shows 16 (vLLM's default too). It
// must equal the engines' block size, or every overlap silently becomes 0.
const DefaultBlockSize = 16

// KvRouterConfig holds the Dynamo KvRouterConfig fields the cost uses
// (lib/llm/src/kv_router/config.rs; docs/SOURCES.md#dynamo-kv-router).
type KvRouterConfig struct {
	OverlapScoreWeight float64 // overlap_score_weight, default 1.0; 0 ⇒ pure load balancing, no index consulted
	Temperature        float64 // router_temperature, default 0.0 (argmin)
	BlockSize          int     // kv_cache_block_size, from the workers; 0 ⇒ DefaultBlockSize
}

// DefaultKvRouterConfig returns Dynamo's defaults.
func DefaultKvRouterConfig() KvRouterConfig {
	return KvRouterConfig{OverlapScoreWeight: 1.0, Temperature: 0.0, BlockSize: DefaultBlockSize}
}

// Recorder is an Indexer that learns from the router's own decisions
// (ApproxIndex): KVAware advances its clock before scoring and records the
// chosen worker after.
type Recorder interface {
	Advance(now float64)
	Record(worker int, hashes []uint64, now float64)
}

// KVAware is Dynamo's DefaultWorkerSelector (docs/SOURCES.md#dynamo-kv-router). For each
// worker w, with o(w) the leading blocks of the request cached there:
//
//	prefill tokens = max(0, ISL − o(w)·block size) + w's active prefill tokens
//	prefill blocks = prefill tokens / block size (a float)
//	decode blocks  = w's active blocks + the request's blocks not active on w
//	logit          = overlap_score_weight × prefill blocks + decode blocks
//
// Lower wins. At temperature 0 the minimum logit is chosen, ties going to the
// smallest indexed tree, then uniformly at random. As in Dynamo, a worker's
// tree size is known only when it holds at least one of the request's
// blocks (find_matches fills tree_sizes for the workers it scored; the
// selector reads a missing one as 0): a worker holding none of the prefix
// counts 0 and wins a tie against one that holds some, and a tie among
// such cold workers is a random pick, not the least-filled cache. Where
// Dynamo takes the first of several smallest trees in hash-map order, this
// draws among them. Above 0 a worker is drawn
// with probability ∝ exp(−(logit − min)/((max − min)·T)), uniform when all
// logits are equal. The request's blocks are its full blocks (Hashes).
// Dynamo's newest selectors add credits for lower KVBM tiers and other
// terms; this is the block-count formula above. Not modelled:
// data-parallel ranks, per-request overrides, busy thresholds and router-side
// queueing.
type KVAware struct {
	Config KvRouterConfig
	Index  Indexer // nil or weight 0: overlaps and tree sizes are 0
	rng    *rand.Rand
}

// NewKVAware returns a KV-aware policy over idx; the seed fixes tie-breaks
// and temperature draws.
func NewKVAware(idx Indexer, cfg KvRouterConfig, seed uint64) *KVAware {
	if cfg.BlockSize <= 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	return &KVAware{Config: cfg, Index: idx, rng: newRand(seed)}
}

// UseIndex makes idx the policy's index unless it was given one: a
// cluster hands its event-fed index to the policies that read one
// (core/cluster's IndexUser).
func (k *KVAware) UseIndex(idx Indexer) {
	if k.Index == nil {
		k.Index = idx
	}
}

// Route implements Policy.
func (k *KVAware) Route(req Request, workers []WorkerState) Decision {
	if len(workers) == 0 {
		return noWorkers()
	}
	bs := k.Config.BlockSize
	if bs <= 0 {
		bs = DefaultBlockSize
	}
	weight := k.Config.OverlapScoreWeight
	useCache := k.Index != nil && weight != 0
	rec, _ := k.Index.(Recorder)
	var overlap map[int]int
	if useCache {
		if rec != nil {
			rec.Advance(req.Now)
		}
		overlap = k.Index.Overlap(req.Hashes)
	}
	scores := make([]Score, len(workers))
	for i, w := range workers {
		o := overlap[w.ID]
		fresh := len(req.Hashes)
		if w.ActiveHashes != nil {
			fresh = 0
			for _, h := range req.Hashes {
				if w.ActiveHashes[h] == 0 {
					fresh++
				}
			}
		}
		pt := max(0, req.Tokens-o*bs) + w.ActiveTokens
		s := Score{
			Worker:        w.ID,
			Load:          w.Load(),
			Overlap:       o,
			PrefillTokens: pt,
			PrefillBlocks: float64(pt) / float64(bs),
			DecodeBlocks:  float64(w.ActiveBlocks + fresh),
		}
		if useCache && o > 0 {
			s.TreeSize = k.Index.Blocks(w.ID)
		}
		s.Logit = weight*s.PrefillBlocks + s.DecodeBlocks
		scores[i] = s
	}
	var pick int
	var reason string
	if k.Config.Temperature > 0 {
		pick, reason = k.sample(scores)
	} else {
		pick, reason = k.argmin(scores)
	}
	d := Decision{Worker: scores[pick].Worker, Overlap: scores[pick].Overlap, Scores: scores, Reason: reason}
	if useCache && rec != nil {
		rec.Record(d.Worker, req.Hashes, req.Now)
	}
	return d
}

// argmin picks the lowest logit; ties go to the smallest tree, then to a
// seeded uniform draw.
func (k *KVAware) argmin(s []Score) (int, string) {
	lo := math.Inf(1)
	for _, x := range s {
		lo = min(lo, x.Logit)
	}
	var tied []int
	tree := math.MaxInt
	for i, x := range s {
		if x.Logit != lo {
			continue
		}
		switch {
		case x.TreeSize < tree:
			tree, tied = x.TreeSize, append(tied[:0], i)
		case x.TreeSize == tree:
			tied = append(tied, i)
		}
	}
	ties := 0
	for _, x := range s {
		if x.Logit == lo {
			ties++
		}
	}
	pick := tied[0]
	c := s[pick]
	formula := fmt.Sprintf("%.3g × %.3f prefill + %.0f decode blocks = %.3f",
		k.Config.OverlapScoreWeight, c.PrefillBlocks, c.DecodeBlocks, c.Logit)
	switch {
	case ties == 1:
		return pick, fmt.Sprintf("lowest cost on worker %d (%d blocks cached): %s", c.Worker, c.Overlap, formula)
	case len(tied) == 1 && c.Overlap == 0:
		return pick, fmt.Sprintf("%d workers tie at %.3f; worker %d holds none of the prefix, so its tree counts as 0, the smallest", ties, c.Logit, c.Worker)
	case len(tied) == 1:
		return pick, fmt.Sprintf("%d workers tie at %.3f; worker %d has the smallest tree (%d blocks)", ties, c.Logit, c.Worker, c.TreeSize)
	}
	pick = tied[k.rng.IntN(len(tied))]
	if tree == 0 {
		return pick, fmt.Sprintf("%d workers tie at %.3f, %d of them holding none of the prefix (tree counted as 0); worker %d drawn at random",
			ties, lo, len(tied), s[pick].Worker)
	}
	return pick, fmt.Sprintf("%d workers tie at %.3f, %d of them with the smallest tree (%d blocks); worker %d drawn at random",
		ties, lo, len(tied), tree, s[pick].Worker)
}

// sample draws a worker from the softmax of the normalised negative logits.
func (k *KVAware) sample(s []Score) (int, string) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range s {
		lo, hi = min(lo, x.Logit), max(hi, x.Logit)
	}
	sum := 0.0
	for i := range s {
		p := 1.0
		if hi > lo {
			p = math.Exp(-(s[i].Logit - lo) / ((hi - lo) * k.Config.Temperature))
		}
		s[i].Prob = p
		sum += p
	}
	for i := range s {
		s[i].Prob /= sum
	}
	u := k.rng.Float64()
	pick := len(s) - 1
	acc := 0.0
	for i := range s {
		acc += s[i].Prob
		if u < acc {
			pick = i
			break
		}
	}
	c := s[pick]
	return pick, fmt.Sprintf("drew worker %d (cost %.3f, p = %.2f) at temperature %g",
		c.Worker, c.Logit, c.Prob, k.Config.Temperature)
}
