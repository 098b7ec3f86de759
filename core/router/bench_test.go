package router

import (
	"math/rand/v2"
	"testing"
)

// benchSeqs returns n sequences of 1,000 tokens that share prefixes the way
// chat traffic does: one of 16 system prompts (512 tokens), one of 256
// conversation openings under it (256 tokens), then 232 tokens of its own.
func benchSeqs(n int) [][]int {
	rng := rand.New(rand.NewPCG(1, 2))
	run := func(k int) []int {
		s := make([]int, k)
		for i := range s {
			s[i] = rng.IntN(32000)
		}
		return s
	}
	sys := make([][]int, 16)
	for i := range sys {
		sys[i] = run(512)
	}
	mid := make([][]int, 256)
	for i := range mid {
		mid[i] = run(256)
	}
	out := make([][]int, n)
	for i := range out {
		s := make([]int, 0, 1000)
		s = append(s, sys[i%256%16]...)
		s = append(s, mid[i%256]...)
		out[i] = append(s, run(232)...)
	}
	return out
}

func benchTree(seqs [][]int) *RadixTree {
	tr := NewRadixTree(1)
	tr.DisableEvents()
	for _, s := range seqs {
		tr.Insert(s)
	}
	return tr
}

func rate(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkRadixMatch looks up a cached 1,000-token sequence in a tree of
// 10,000 of them.
func BenchmarkRadixMatch(b *testing.B) {
	seqs := benchSeqs(10_000)
	tr := benchTree(seqs)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if n, _ := tr.Match(seqs[i*7919%len(seqs)]); n != 1000 {
			b.Fatal(n)
		}
	}
	rate(b, "matches/s")
}

// BenchmarkRadixMatchSplit looks up sequences that diverge inside an edge,
// so every lookup splits a node (the tree grows by one node each time).
func BenchmarkRadixMatchSplit(b *testing.B) {
	seqs := benchSeqs(10_000)
	tr := benchTree(seqs)
	probe := make([]int, 1000)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		copy(probe, seqs[i%len(seqs)])
		probe[768+1+i/len(seqs)%200] = -1 // inside the sequence's own tail
		tr.Match(probe)
	}
	rate(b, "matches/s")
}

// BenchmarkRadixInsert caches new 1,000-token sequences (768 shared, 232
// new) into a tree of 10,000; every 10,000 inserts the tree is trimmed back
// outside the timer (the base sequences are touched so that the new tails
// are the least recently used).
func BenchmarkRadixInsert(b *testing.B) {
	seqs := benchSeqs(20_000)
	base, fresh := seqs[:10_000], seqs[10_000:]
	tr := benchTree(base)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%len(fresh) == 0 {
			b.StopTimer()
			for _, s := range base {
				tr.Match(s)
			}
			tr.Evict(len(fresh) * 232)
			b.StartTimer()
		}
		tr.Insert(fresh[i%len(fresh)])
	}
	rate(b, "inserts/s")
}

// BenchmarkRadixInsertCached re-inserts sequences already cached (the
// de-duplication path of cache_finished_req).
func BenchmarkRadixInsertCached(b *testing.B) {
	seqs := benchSeqs(10_000)
	tr := benchTree(seqs)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if tr.Insert(seqs[i*7919%len(seqs)]) != 1000 {
			b.Fatal("not cached")
		}
	}
	rate(b, "inserts/s")
}

// benchCluster spreads 10,000 sequences over 64 workers, each cached where
// it was sent, and indexes their 62 full 16-token blocks.
func benchCluster() (*Index, [][]uint64, []WorkerState) {
	seqs := benchSeqs(10_000)
	x := NewIndex()
	hashes := make([][]uint64, len(seqs))
	for i, s := range seqs {
		hashes[i] = BlockHashes(s, 16, "")
		x.Apply(i%64, Event{Kind: Stored, Hashes: hashes[i], Parent: RootHash})
	}
	ws := make([]WorkerState, 64)
	for i := range ws {
		ws[i] = WorkerState{ID: i, ActiveBlocks: 100 + i*7%50, ActiveTokens: i * 13 % 400, Running: i % 9}
	}
	return x, hashes, ws
}

// BenchmarkKVAwareRoute64 is one KV-aware routing decision over 64 workers
// whose indexed caches hold 10,000 sequences (about 40,000 distinct blocks).
func BenchmarkKVAwareRoute64(b *testing.B) {
	x, hashes, ws := benchCluster()
	k := NewKVAware(x, DefaultKvRouterConfig(), 1)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h := hashes[i*7919%len(hashes)]
		k.Route(Request{ID: i, Tokens: 1000, Hashes: h}, ws)
	}
	rate(b, "decisions/s")
}

// BenchmarkIndexOverlap is the index lookup alone.
func BenchmarkIndexOverlap(b *testing.B) {
	x, hashes, _ := benchCluster()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		x.Overlap(hashes[i*7919%len(hashes)])
	}
	rate(b, "lookups/s")
}

// BenchmarkCacheAwareRoute64 is one SGLang cache-aware decision over 64
// workers after 10,000 routed prompts.
func BenchmarkCacheAwareRoute64(b *testing.B) {
	seqs := benchSeqs(10_000)
	ws := make([]WorkerState, 64)
	for i := range ws {
		ws[i] = WorkerState{ID: i, Running: i % 9}
	}
	cfg := DefaultCacheAwareConfig()
	cfg.EvictionInterval = 0
	c := NewCacheAware(cfg)
	for _, s := range seqs {
		c.Route(Request{Prompt: s}, ws)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Route(Request{Prompt: seqs[i*7919%len(seqs)]}, ws)
	}
	rate(b, "decisions/s")
}
