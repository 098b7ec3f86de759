package router

import (
	"math"
	"slices"
	"testing"
)

// workedExample builds the worked example of Dynamo's routing docs
// (docs/SOURCES.md#dynamo-kv-router; weight 1: W1 8+10=18,
// W2 5+5=10 chosen, W3 2+9=11) from a 4-block, 64-token request:
//
//	W1: nothing cached, 64 tokens pending  → prefill (64+64)/16 = 8; 6 active blocks + 4 new = 10
//	W2: 3 blocks cached, 64 pending        → prefill (16+64)/16 = 5; 3 active, 2 of them the request's → 3+2 = 5
//	W3: 4 blocks cached, 32 pending        → prefill (0+32)/16 = 2;  5 active + 4 new = 9
func workedExample() (*Index, Request, []WorkerState) {
	ids := make([]int, 64)
	for i := range ids {
		ids[i] = i
	}
	h := BlockHashes(ids, 16, "")
	x := NewIndex()
	x.Apply(2, Event{Kind: Stored, Hashes: h[:3], Parent: RootHash})
	x.Apply(3, Event{Kind: Stored, Hashes: h, Parent: RootHash})
	req := Request{ID: 1, Tokens: 64, Hashes: h}
	workers := []WorkerState{
		{ID: 1, ActiveTokens: 64, ActiveBlocks: 6},
		{ID: 2, ActiveTokens: 64, ActiveBlocks: 3, ActiveHashes: map[uint64]int{h[0]: 1, h[1]: 2, 99: 1}},
		{ID: 3, ActiveTokens: 32, ActiveBlocks: 5},
	}
	return x, req, workers
}

func TestKVAwareWorkedExample(t *testing.T) {
	x, req, workers := workedExample()
	d := NewKVAware(x, DefaultKvRouterConfig(), 1).Route(req, workers)
	want := []struct{ prefill, decode, logit float64 }{{8, 10, 18}, {5, 5, 10}, {2, 9, 11}}
	for i, s := range d.Scores {
		if s.PrefillBlocks != want[i].prefill || s.DecodeBlocks != want[i].decode || s.Logit != want[i].logit {
			t.Errorf("W%d: %g + %g = %g, want %g + %g = %g", s.Worker, s.PrefillBlocks, s.DecodeBlocks, s.Logit,
				want[i].prefill, want[i].decode, want[i].logit)
		}
	}
	if d.Worker != 2 || d.Overlap != 3 {
		t.Fatalf("chose W%d with overlap %d, want W2 with 3 (%s)", d.Worker, d.Overlap, d.Reason)
	}
}

func TestKVAwareWeight(t *testing.T) {
	x, req, workers := workedExample()
	for _, tc := range []struct {
		weight float64
		want   int
	}{
		{1, 2},
		{0, 2},   // decode blocks only: 10, 5, 9
		{2, 3},   // 26, 15, 13: prefill counts double, W3's cache wins
		{0.5, 2}, // 14, 7.5, 10
	} {
		cfg := DefaultKvRouterConfig()
		cfg.OverlapScoreWeight = tc.weight
		if d := NewKVAware(x, cfg, 1).Route(req, workers); d.Worker != tc.want {
			t.Errorf("weight %g: chose W%d, want W%d (%s)", tc.weight, d.Worker, tc.want, d.Reason)
		}
	}
}

func TestKVAwareWeightZeroIgnoresCache(t *testing.T) {
	// Weight 0 is pure load balancing: the choice must not
	// depend on what is cached, tie-breaks included.
	h := chain(1, 2, 3, 4)
	full := NewIndex()
	full.Apply(0, Event{Kind: Stored, Hashes: h, Parent: RootHash})
	full.Apply(1, Event{Kind: Stored, Hashes: h[:1], Parent: RootHash})
	cfg := DefaultKvRouterConfig()
	cfg.OverlapScoreWeight = 0
	workers := []WorkerState{{ID: 0}, {ID: 1}, {ID: 2}}
	a, b := NewKVAware(full, cfg, 7), NewKVAware(NewIndex(), cfg, 7)
	for i := range 50 {
		req := Request{ID: i, Tokens: 64, Hashes: h}
		da, db := a.Route(req, workers), b.Route(req, workers)
		if da.Worker != db.Worker {
			t.Fatalf("request %d: W%d with a full cache, W%d with none", i, da.Worker, db.Worker)
		}
		if da.Scores[0].Overlap != 0 || da.Scores[0].TreeSize != 0 {
			t.Fatal("weight 0 consulted the index")
		}
	}
}

// Ties follow Dynamo (lib/llm/src/kv_router/scheduler.rs at db19bd2:
// softmax_sample returns every minimum, then tree_sizes.get(w).unwrap_or(0)
// with tree_sizes filled by find_matches only for workers it scored, i.e.
// holding at least one of the request's blocks). The tie-break once used
// every worker's whole cache.
func TestKVAwareTies(t *testing.T) {
	// A cold tie (no worker holds any of the request's blocks): the
	// workers' cache sizes are unknown to Dynamo's selector, so the pick is
	// random — not always the least-filled cache.
	x := NewIndex()
	x.Apply(0, Event{Kind: Stored, Hashes: chain(7, 7, 7), Parent: RootHash})
	x.Apply(2, Event{Kind: Stored, Hashes: chain(8), Parent: RootHash})
	req := Request{Tokens: 32, Hashes: chain(1, 2)}
	workers := []WorkerState{{ID: 0}, {ID: 1, ActiveBlocks: 1}, {ID: 2}}
	picked := map[int]int{}
	for seed := range uint64(64) {
		d := NewKVAware(x, DefaultKvRouterConfig(), seed).Route(req, workers)
		if d.Scores[0].Logit != d.Scores[2].Logit || d.Scores[0].TreeSize != 0 || d.Scores[2].TreeSize != 0 {
			t.Fatalf("cold tie: scores %+v", d.Scores)
		}
		picked[d.Worker]++
	}
	if picked[0] < 16 || picked[2] < 16 || picked[1] != 0 {
		t.Fatalf("cold tie picks over 64 seeds: %v, want W0 and W2 about evenly (the smaller cache, W2, always won before)", picked)
	}
	// A tie between a worker holding part of the prefix (a small cache) and
	// one holding none of it (a large cache): the cold one's tree counts 0
	// and wins.
	x = NewIndex()
	x.Apply(0, Event{Kind: Stored, Hashes: chain(1), Parent: RootHash})
	x.Apply(2, Event{Kind: Stored, Hashes: chain(8, 8, 8, 8), Parent: RootHash})
	h := chain(1, 2)
	active := map[uint64]int{h[0]: 1, h[1]: 1}
	// W0: 1 prefill block + 2 decode blocks; W2: 2 prefill blocks + 1 active block.
	workers = []WorkerState{{ID: 0}, {ID: 1, ActiveBlocks: 9}, {ID: 2, ActiveBlocks: 1, ActiveHashes: active}}
	d := NewKVAware(x, DefaultKvRouterConfig(), 3).Route(Request{Tokens: 32, Hashes: h}, workers)
	if d.Scores[0].Logit != 3 || d.Scores[2].Logit != 3 || d.Worker != 2 || d.Scores[0].TreeSize != 1 || d.Scores[2].TreeSize != 0 {
		t.Fatalf("chose W%d (%s), scores %+v; want W2: tied with W0, holding none of the prefix", d.Worker, d.Reason, d.Scores)
	}
	// Both hold part of the prefix: the smaller whole cache wins.
	x.Apply(2, Event{Kind: Stored, Hashes: chain(1), Parent: RootHash})
	x.Apply(0, Event{Kind: Stored, Hashes: chain(9, 9, 9, 9, 9, 9), Parent: RootHash})
	workers = []WorkerState{{ID: 0}, {ID: 1, ActiveBlocks: 9}, {ID: 2}}
	d = NewKVAware(x, DefaultKvRouterConfig(), 3).Route(Request{Tokens: 32, Hashes: h}, workers)
	if d.Worker != 2 || d.Scores[0].Logit != d.Scores[2].Logit || d.Scores[0].TreeSize != 7 || d.Scores[2].TreeSize != 5 {
		t.Fatalf("chose W%d (%s), scores %+v; want W2: tied with W0, smaller tree", d.Worker, d.Reason, d.Scores)
	}
	// All tied, equal trees: a seeded uniform draw, reproducible.
	workers = []WorkerState{{ID: 10}, {ID: 11}, {ID: 12}, {ID: 13}}
	draw := func(seed uint64) []int {
		k := NewKVAware(NewIndex(), DefaultKvRouterConfig(), seed)
		var out []int
		for range 200 {
			out = append(out, k.Route(req, workers).Worker)
		}
		return out
	}
	first := draw(5)
	if !slices.Equal(first, draw(5)) {
		t.Fatal("same seed, different tie-breaks")
	}
	if slices.Equal(first, draw(6)) {
		t.Fatal("different seeds gave identical tie-breaks")
	}
	count := map[int]int{}
	for _, w := range first {
		count[w]++
	}
	for _, w := range workers {
		if count[w.ID] < 25 {
			t.Fatalf("tie-break not uniform: %v", count)
		}
	}
}

func TestKVAwareTemperature(t *testing.T) {
	x, req, workers := workedExample()
	cfg := DefaultKvRouterConfig()
	cfg.Temperature = 0.5
	run := func(seed uint64) ([]int, Decision) {
		k := NewKVAware(x, cfg, seed)
		var out []int
		var d Decision
		for range 400 {
			d = k.Route(req, workers)
			out = append(out, d.Worker)
		}
		return out, d
	}
	a, d := run(11)
	b, _ := run(11)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different draws")
	}
	// p ∝ exp(−(logit−10)/(8·0.5)): 18 → e^−2, 10 → 1, 11 → e^−0.25.
	z := math.Exp(-2) + 1 + math.Exp(-0.25)
	want := []float64{math.Exp(-2) / z, 1 / z, math.Exp(-0.25) / z}
	for i, s := range d.Scores {
		if math.Abs(s.Prob-want[i]) > 1e-12 {
			t.Errorf("W%d p = %.4f, want %.4f", s.Worker, s.Prob, want[i])
		}
	}
	count := map[int]int{}
	for _, w := range a {
		count[w]++
	}
	for i, w := range workers {
		if got := float64(count[w.ID]) / 400; math.Abs(got-want[i]) > 0.08 {
			t.Errorf("W%d drawn %.2f of the time, p = %.2f", w.ID, got, want[i])
		}
	}
}

func TestKVAwareApproxRecords(t *testing.T) {
	a := NewApproxIndex(60)
	k := NewKVAware(a, DefaultKvRouterConfig(), 1)
	workers := []WorkerState{{ID: 0}, {ID: 1}}
	req := Request{ID: 1, Tokens: 64, Hashes: BlockHashes(make([]int, 64), 16, "")}
	first := k.Route(req, workers)
	// The same prompt again: the router remembers where it sent it.
	second := k.Route(Request{ID: 2, Tokens: 64, Hashes: req.Hashes, Now: 30}, workers)
	if second.Worker != first.Worker || second.Overlap != 4 {
		t.Fatalf("second request went to W%d overlap %d; want W%d overlap 4", second.Worker, second.Overlap, first.Worker)
	}
	// Past the TTL the memory is gone: at 100 the record from 30 has expired.
	third := k.Route(Request{ID: 3, Tokens: 64, Hashes: req.Hashes, Now: 100}, workers)
	if third.Overlap != 0 {
		t.Fatalf("after the TTL overlap %d, want 0", third.Overlap)
	}
}

func TestKVAwareNoWorkers(t *testing.T) {
	if d := NewKVAware(NewIndex(), DefaultKvRouterConfig(), 1).Route(Request{}, nil); d.Worker != -1 {
		t.Fatalf("no workers: chose %d", d.Worker)
	}
}

// A cluster hands its index to a KV-aware policy that has none, and leaves
// one the policy was given.
func TestKVAwareUseIndexKeepsAGivenIndex(t *testing.T) {
	own, cluster := NewIndex(), NewIndex()
	given := NewKVAware(own, DefaultKvRouterConfig(), 1)
	given.UseIndex(cluster)
	bare := NewKVAware(nil, DefaultKvRouterConfig(), 1)
	bare.UseIndex(cluster)
	if given.Index != Indexer(own) || bare.Index != Indexer(cluster) {
		t.Fatalf("after UseIndex: a given index became %p (want %p), a missing one %p (want %p)", given.Index, own, bare.Index, cluster)
	}
}
