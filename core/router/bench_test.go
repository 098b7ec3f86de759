package router

import (
	"testing"

	"github.com/inferlab/inferlab/core/internal/testinput"
)

func rate(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// benchCluster spreads 10,000 sequences over 64 workers, each cached where
// it was sent, and indexes their 62 full 16-token blocks.
func benchCluster() (*Index, [][]uint64, []WorkerState) {
	seqs := testinput.ChatSequences(10_000)
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
	seqs := testinput.ChatSequences(10_000)
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
