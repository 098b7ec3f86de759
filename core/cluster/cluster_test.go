package cluster

import (
	"math/rand/v2"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
)

var flat = scheduler.TimerFunc(func(b []scheduler.Work) float64 {
	n := 0
	for _, w := range b {
		n += w.NewTokens
	}
	return 0.005 + 2e-5*float64(n)
})

// groupRequests makes n requests that each start with one of groups shared
// prefixes of prefix tokens, then unique tokens.
func groupRequests(n, groups, prefix, unique int, gap float64, seed uint64) []Request {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []Request
	for i := 0; i < n; i++ {
		g := r.IntN(groups)
		ids := make([]int, 0, prefix+unique)
		for k := 0; k < prefix; k++ {
			ids = append(ids, 1000*g+k)
		}
		for k := 0; k < unique; k++ {
			ids = append(ids, 1_000_000+1000*i+k)
		}
		out = append(out, Request{ID: i, Arrival: float64(i) * gap, PromptIDs: ids, Output: 8, Group: g})
	}
	return out
}

func cfg(workers int, p router.Policy) Config {
	return Config{Workers: workers, Policy: p, Timer: func(int) scheduler.Timer { return flat },
		Scheduler: scheduler.Config{MaxNumBatchedTokens: 4096, MaxNumSeqs: 64, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 2000}}
}

func hitTokens(res *Result) (hit, total int) {
	for _, m := range res.Requests {
		hit += m.CachedHit
		total += m.Prompt
	}
	return
}

func TestKVAwareBeatsRoundRobinOnSharedPrefixes(t *testing.T) {
	reqs := groupRequests(60, 4, 512, 64, 0.05, 3)
	rr, err := Run(cfg(8, router.NewRoundRobin()), reqs)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := Run(cfg(8, router.NewKVAware(nil, router.DefaultKvRouterConfig(), 1)), reqs)
	if err != nil {
		t.Fatal(err)
	}
	hr, tr := hitTokens(rr)
	hk, tk := hitTokens(kv)
	if float64(hk)/float64(tk) <= float64(hr)/float64(tr) {
		t.Fatalf("KV-aware hit %d/%d tokens, round robin %d/%d", hk, tk, hr, tr)
	}
	if len(kv.Requests) != 60 || len(rr.Requests) != 60 {
		t.Fatal("not every request finished")
	}
	// With 4 groups, KV-aware misses each group's prefix about once; round
	// robin misses it on up to every worker.
	misses := 0
	for _, r := range kv.Routes {
		if r.Overlap == 0 {
			misses++
		}
	}
	if misses > 8 {
		t.Errorf("KV-aware routed %d requests with no cached overlap, want about 4", misses)
	}
}

// The router's block hashes are the allocator's: otherwise every overlap
// would silently be zero, as Dynamo warns when kv_cache_block_size differs
// from the engine's block size (docs/SOURCES.md#dynamo-kv-router).
func TestRouterHashesMatchAllocatorEvents(t *testing.T) {
	p, _ := allocator.NewPaged(64, 16)
	p.EnablePrefixCaching()
	ids := make([]int, 100)
	for i := range ids {
		ids[i] = i * 7
	}
	if err := p.AllocateSlots(&allocator.Request{TokenIDs: ids}, len(ids)); err != nil { // an empty cache: nothing to look up
		t.Fatal(err)
	}
	var stored []uint64
	for _, e := range p.Events() {
		if e.Kind == allocator.Stored {
			stored = append(stored, e.Hash)
		}
	}
	want := router.BlockHashes(ids, 16, "")
	if len(stored) != len(want) {
		t.Fatalf("%d stored vs %d hashes", len(stored), len(want))
	}
	for i := range want {
		if stored[i] != want[i] {
			t.Fatalf("block %d: allocator %x, router %x", i, stored[i], want[i])
		}
	}
}

func TestDeterministic(t *testing.T) {
	reqs := groupRequests(40, 3, 256, 32, 0.01, 9)
	a, _ := Run(cfg(4, router.NewKVAware(nil, router.KvRouterConfig{OverlapScoreWeight: 1, Temperature: 0.5}, 7)), reqs)
	b, _ := Run(cfg(4, router.NewKVAware(nil, router.KvRouterConfig{OverlapScoreWeight: 1, Temperature: 0.5}, 7)), reqs)
	for i := range a.Routes {
		if a.Routes[i].Worker != b.Routes[i].Worker || a.Requests[i].TTFT != b.Requests[i].TTFT {
			t.Fatalf("request %d: runs differ", i)
		}
	}
}
