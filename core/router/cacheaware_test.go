package router

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/internal/testinput"
)

func TestCacheAwareDefaults(t *testing.T) {
	r, c := DefaultCacheAwareConfig(), CLICacheAwareConfig()
	if r != (CacheAwareConfig{0.5, 32, 1.1, 30, 10000}) || c != (CacheAwareConfig{0.3, 64, 1.5, 120, 1 << 26}) {
		t.Fatalf("defaults %+v %+v", r, c)
	}
}

func TestCacheAwareRoutes(t *testing.T) {
	c := NewCacheAware(DefaultCacheAwareConfig())
	ws := []WorkerState{{ID: 0}, {ID: 1}, {ID: 2}}
	route := func(p string, now float64) Decision {
		t.Helper()
		d := c.Route(Request{Prompt: testinput.Letters(p), Now: now}, ws)
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Empty tree: every tree is 0 tokens, lowest id.
	if d := route("system prompt: be brief. question one", 1); d.Worker != 0 {
		t.Fatalf("first request went to %d (%s)", d.Worker, d.Reason)
	}
	// A different prompt matches nothing: smallest tree is now worker 1.
	if d := route("another tenant entirely", 2); d.Worker != 1 {
		t.Fatalf("second request went to %d (%s)", d.Worker, d.Reason)
	}
	// Shares 34 of 37 tokens (0.92 > 0.5) with worker 0's prompt.
	d := route("system prompt: be brief. question two", 3)
	if d.Worker != 0 || d.Overlap != 34 || !strings.Contains(d.Reason, "match rate") {
		t.Fatalf("third request went to %d overlap %d (%s)", d.Worker, d.Overlap, d.Reason)
	}
	// Shares only "system " (7 of 20 tokens, 0.35 ≤ 0.5): smallest tree, worker 2.
	if d := route("system reboot please", 4); d.Worker != 2 {
		t.Fatalf("fourth request went to %d (%s)", d.Worker, d.Reason)
	}
	if c.TreeSize(0) != 40 || c.TreeSize(2) != 20 {
		t.Fatalf("tree sizes %d %d", c.TreeSize(0), c.TreeSize(2))
	}
}

func TestCacheAwareImbalance(t *testing.T) {
	c := NewCacheAware(DefaultCacheAwareConfig())
	p := testinput.Letters("the same long shared prompt")
	ws := []WorkerState{{ID: 0}, {ID: 1}}
	c.Route(Request{Prompt: p}, ws) // worker 0 caches it
	for _, tc := range []struct {
		loads [2]int
		want  int
	}{
		{[2]int{33, 0}, 1},   // gap 33 > 32 and 33 > 1.1×0: imbalanced → least loaded
		{[2]int{32, 0}, 0},   // gap 32 is not > 32: balanced, cache wins
		{[2]int{100, 95}, 0}, // gap 5: balanced
		{[2]int{0, 40}, 0},   // imbalanced, but the least loaded is the cached one anyway
	} {
		ws := []WorkerState{{ID: 0, Running: tc.loads[0]}, {ID: 1, Running: tc.loads[1]}}
		if d := c.Route(Request{Prompt: p}, ws); d.Worker != tc.want {
			t.Errorf("loads %v: chose %d, want %d (%s)", tc.loads, d.Worker, tc.want, d.Reason)
		}
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCacheAwareEviction(t *testing.T) {
	cfg := DefaultCacheAwareConfig()
	cfg.MaxTreeSize = 10
	cfg.EvictionInterval = 30
	c := NewCacheAware(cfg)
	ws := []WorkerState{{ID: 0}}
	c.Route(Request{Prompt: testinput.Letters("aaaaaaaa"), Now: 1}, ws) // 8 tokens
	c.Route(Request{Prompt: testinput.Letters("bbbbbbbb"), Now: 2}, ws) // 16
	c.Route(Request{Prompt: testinput.Letters("aaaaaaaa"), Now: 3}, ws) // refreshes a
	if c.TreeSize(0) != 16 {
		t.Fatalf("tree %d tokens, want 16", c.TreeSize(0))
	}
	c.Route(Request{Prompt: testinput.Letters("c"), Now: 30}, ws) // eviction runs first: b is the LRU leaf
	if c.TreeSize(0) != 9 {
		t.Fatalf("after eviction %d tokens, want 8 (a) + 1 (c)", c.TreeSize(0))
	}
	if n, _ := c.tree.match(testinput.Letters("bbbbbbbb")); n != 0 {
		t.Fatal("the least recently used prompt survived")
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestCacheAwareInvariant checks the SGLang router's rule
// (docs/ARCHITECTURE.md#router-invariants) on seeded random traffic:
// if the loads are imbalanced the chosen worker has the minimum load; else
// if the match rate beats the threshold it owns the deepest matched node.
func TestCacheAwareInvariant(t *testing.T) {
	rng := newRand(9)
	cfg := DefaultCacheAwareConfig()
	cfg.MaxTreeSize = 200
	cfg.EvictionInterval = 5
	c := NewCacheAware(cfg)
	ws := make([]WorkerState, 5)
	for i := range 2000 {
		for j := range ws {
			ws[j] = WorkerState{ID: 10 + j, Running: rng.IntN(60)}
		}
		p := make([]int, 1+rng.IntN(40))
		for k := range p {
			p[k] = rng.IntN(3)
		}
		lo, hi := 1<<30, -1
		for _, w := range ws {
			lo, hi = min(lo, w.Load()), max(hi, w.Load())
		}
		now := float64(i) / 10
		if now-c.lastEvict >= cfg.EvictionInterval {
			c.tree.evict(cfg.MaxTreeSize) // what Route does first; evicting twice is a no-op
		}
		n, node := c.tree.match(p)
		d := c.Route(Request{Prompt: p, Now: now}, ws)
		load := map[int]int{}
		for _, w := range ws {
			load[w.ID] = w.Load()
		}
		_, owns := node.tenants[d.Worker]
		switch {
		case hi-lo > cfg.BalanceAbsThreshold && float64(hi) > cfg.BalanceRelThreshold*float64(lo):
			if load[d.Worker] != lo {
				t.Fatalf("request %d: imbalanced, chose load %d, min %d", i, load[d.Worker], lo)
			}
		case float64(n)/float64(len(p)) > cfg.CacheThreshold:
			if !owns {
				t.Fatalf("request %d: match rate %d/%d, chose %d, not an owner (%s)", i, n, len(p), d.Worker, d.Reason)
			}
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
	}
}
