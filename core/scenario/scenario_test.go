package scenario

import (
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
)

// The reference configuration is vLLM's H100 defaults over the pool
// core/hardware sizes (26,674 blocks of 16 tokens), and a small uniform
// stream served on it finishes every request.
func TestH100(t *testing.T) {
	cfg, timer, err := H100()
	if err != nil {
		t.Fatal(err)
	}
	want := scheduler.Config{MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 26674}
	if cfg != want {
		t.Errorf("H100 config = %+v, want %+v", cfg, want)
	}
	s, err := scheduler.New(cfg, timer, UniformRequests(40, 512, 8))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil || s.Finished() != 40 {
		t.Errorf("40 uniform requests: %d finished, %v", s.Finished(), err)
	}
}

// The chat stream is seeded: the same requests every time, arriving in
// order.
func TestChatRequests(t *testing.T) {
	a, b := ChatRequests(200), ChatRequests(200)
	if len(a) != 200 {
		t.Fatalf("%d requests, want 200", len(a))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Arrival != b[i].Arrival || a[i].Prompt != b[i].Prompt || a[i].Output != b[i].Output {
			t.Fatalf("request %d differs between two calls: %+v, %+v", i, a[i], b[i])
		}
		if i > 0 && a[i].Arrival < a[i-1].Arrival {
			t.Fatalf("request %d arrives at %g, before request %d (%g)", i, a[i].Arrival, i-1, a[i-1].Arrival)
		}
	}
}
