package scheduler

import "testing"

// BenchmarkTenThousandRequests is the core's speed budget
// (docs/ARCHITECTURE.md#budgets): 10,000 requests of
// 512 prompt and 256 output tokens on one H100 with Llama-3.1-8B (26,674
// KV blocks of 16 tokens at 0.9 utilisation; core/hardware's capacity test),
// vLLM's H100 defaults of 8,192 tokens and 1,024 sequences per step, all
// arriving at once. The timer is a flat stand-in: this measures the
// scheduler, not the step-time model.
func BenchmarkTenThousandRequests(b *testing.B) {
	reqs := make([]Request, 10000)
	for i := range reqs {
		reqs[i] = Request{ID: i, Prompt: 512, Output: 256}
	}
	c := Config{MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 26674}
	for b.Loop() {
		s, err := New(c, flat, reqs)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
		if s.Finished() != len(reqs) {
			b.Fatal("not every request finished")
		}
	}
}
