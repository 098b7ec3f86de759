package allocator

import "testing"

// Benchmarks for the block pool's operations at serving scale: a pool of
// 26,674 blocks (an H100 holding Llama-3.1-8B at 0.9 utilisation, see
// core/hardware's capacity tests) with 16-token blocks.
const benchBlocks, benchB = 26674, 16

func benchPrompt(seed, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = seed*1000003 + i
	}
	return ids
}

// Admit a 512-token prompt (32 blocks) and free it again.
func BenchmarkAdmitFree(b *testing.B) {
	p, _ := NewPaged(benchBlocks, benchB)
	for i := 0; b.Loop(); i++ {
		r := &Request{ID: i}
		_ = p.AllocateSlots(r, 512)
		_ = p.Free(r)
		p.Events()
	}
}

// Append one decode token to one of 256 running requests.
func BenchmarkAppendToken(b *testing.B) {
	p, _ := NewPaged(benchBlocks, benchB)
	reqs := make([]Request, 256)
	for i := range reqs {
		reqs[i].ID = i
		_ = p.AllocateSlots(&reqs[i], 512)
	}
	for i := 0; b.Loop(); i++ {
		r := &reqs[i%256]
		if p.Tokens(r.ID) >= 1536 {
			_ = p.Free(r)
			_ = p.AllocateSlots(r, 512)
		}
		_ = p.AllocateSlots(r, 1)
		if i%1024 == 0 {
			p.Events()
		}
	}
}

// Fork a 512-token sequence and free the child (copy-on-write sharing).
func BenchmarkFork(b *testing.B) {
	p, _ := NewPaged(benchBlocks, benchB)
	parent := &Request{ID: 0}
	_ = p.AllocateSlots(parent, 500)
	for i := 1; b.Loop(); i++ {
		child := &Request{ID: i}
		_ = p.Fork(parent, child)
		_ = p.AllocateSlots(child, 1) // forces the copy of the shared partial block
		_ = p.Free(child)
		p.Events()
	}
}

// Look up a 512-token prompt whose first 256 tokens are cached.
func BenchmarkPrefixLookup(b *testing.B) {
	p, _ := NewPaged(benchBlocks, benchB)
	p.EnablePrefixCaching()
	_, _ = admitIDs(p, &Request{ID: 0}, benchPrompt(1, 256), "")
	query := append(benchPrompt(1, 256), benchPrompt(2, 256)...)
	for b.Loop() {
		if len(lookup(p, query, "")) != 16 {
			b.Fatal("expected all 16 cached blocks to hit")
		}
	}
}

// Admit with prefix caching (hash 32 blocks, hit half) and free.
func BenchmarkAdmitTokensCached(b *testing.B) {
	p, _ := NewPaged(benchBlocks, benchB)
	p.EnablePrefixCaching()
	_, _ = admitIDs(p, &Request{ID: 0}, benchPrompt(1, 256), "")
	for i := 1; b.Loop(); i++ {
		r := &Request{ID: i}
		_, _ = admitIDs(p, r, append(benchPrompt(1, 256), benchPrompt(i+1, 256)...), "")
		_ = p.Free(r)
		p.Events()
	}
}
