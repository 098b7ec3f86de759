package scheduler

import (
	"errors"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
)

// KV received ahead of its request (disaggregated serving's transfer, an
// offload tier's onboarding) is found cached at the request's admission:
// of a 40-token prompt whose KV arrived, the first step computes only the
// block holding its last token (tokens 32–39), the received blocks are
// held until then and released at the end of that step, and a receipt
// that does not fit the pool changes nothing.
func TestReceivedKVIsFoundAtAdmission(t *testing.T) {
	c := cfg(512, 8, 8)
	c.PrefixCaching = true
	s := mustNew(t, c, nil)
	r := Request{ID: 3, Prompt: 40, Output: 2}
	if err := s.ReceiveKV(r, 40); err != nil {
		t.Fatal(err)
	}
	if s.ReceivedKV() != 1 || s.Pool().FreeBlocks() != 5 {
		t.Fatalf("after receiving 40 tokens: %d held, %d blocks free; want 1 and 5", s.ReceivedKV(), s.Pool().FreeBlocks())
	}
	if err := s.ReceiveKV(r, 40); err == nil {
		t.Fatal("the same request's KV was received twice")
	}
	big := Request{ID: 4, Prompt: 100, Output: 1}
	if _, short := errors.AsType[*allocator.NoSpaceError](s.ReceiveKV(big, 100)); !short || s.ReceivedKV() != 1 || s.Pool().FreeBlocks() != 5 {
		t.Fatalf("100 tokens into 5 free blocks: held %d, %d free; want a shortfall and nothing changed", s.ReceivedKV(), s.Pool().FreeBlocks())
	}
	if err := s.Add(r); err != nil {
		t.Fatal(err)
	}
	st := mustStep(t, s)
	if len(st.Work) != 1 || st.Work[0].Context != 32 || st.Work[0].NewTokens != 8 {
		t.Fatalf("first step %+v; want request 3 computing tokens 32–39 on 32 cached", st.Work)
	}
	if s.ReceivedKV() != 0 || s.Pool().FreeBlocks() != 5 {
		t.Fatalf("after the admitting step: %d held, %d blocks free; want 0 and 5 (3 blocks, the received last one freed)", s.ReceivedKV(), s.Pool().FreeBlocks())
	}
	if err := s.Run(); err != nil || s.Requests()[0].CachedHit != 32 {
		t.Fatalf("run: %v; want request 3 finished with a 32-token hit", err)
	}
}
