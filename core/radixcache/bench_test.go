package radixcache

import (
	"testing"

	"github.com/inferlab/inferlab/core/internal/testinput"
)

func benchTree(seqs [][]int) *Tree {
	tr := New(1)
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
	seqs := testinput.ChatSequences(10_000)
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
	seqs := testinput.ChatSequences(10_000)
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
	seqs := testinput.ChatSequences(20_000)
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
	seqs := testinput.ChatSequences(10_000)
	tr := benchTree(seqs)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if tr.Insert(seqs[i*7919%len(seqs)]) != 1000 {
			b.Fatal("not cached")
		}
	}
	rate(b, "inserts/s")
}
