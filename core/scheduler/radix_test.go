package scheduler

import (
	"math/rand/v2"
	"testing"
)

func radixCfg(total int) RadixConfig {
	return RadixConfig{ChunkedPrefillSize: 8192, MaxPrefillTokens: 16384, MaxRunningRequests: 256, TotalTokens: total}
}

func mustRadix(t *testing.T, c RadixConfig, reqs []Request) *Radix {
	t.Helper()
	s, err := NewRadix(c, flat, reqs)
	if err != nil {
		t.Fatal(err)
	}
	s.CheckInvariants = true
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s
}

// sharedPrefix is n requests, each arriving after the one before it has
// finished, whose prompts start with the same prefix tokens.
func sharedPrefix(n, prefix, prompt, output int) []Request {
	ids := make([]int, prefix)
	for i := range ids {
		ids[i] = 1000 + i
	}
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{ID: i, Arrival: float64(i), Prompt: prompt, Output: output, PromptIDs: ids}
	}
	return reqs
}

// Page size 1 matches to the token; vLLM's 16-token blocks only whole
// blocks: a 40-token prefix is 40 tokens found against 32.
func TestRadixMatchesToTheToken(t *testing.T) {
	reqs := sharedPrefix(4, 40, 100, 8)
	s := mustRadix(t, radixCfg(4096), reqs)
	ms := s.Requests()
	if len(ms) != 4 || ms[0].CachedHit != 0 {
		t.Fatalf("finished %d, first hit %d; want 4 and 0", len(ms), ms[0].CachedHit)
	}
	for _, m := range ms[1:] {
		if m.CachedHit != 40 {
			t.Fatalf("R%d found %d cached tokens, want the 40 shared", m.ID, m.CachedHit)
		}
	}
	c := cfg(2048, 64, 256)
	c.PrefixCaching = true
	v := runAll(t, c, sharedPrefix(4, 40, 100, 8))
	if got := v.Requests()[1].CachedHit; got != 32 {
		t.Fatalf("vLLM's 16-token blocks found %d, want 32", got)
	}
}

// Prefill and decode never share a batch, and a waiting request's prefill
// goes before the running requests' decodes.
func TestRadixSeparatesPrefillAndDecode(t *testing.T) {
	reqs := []Request{{ID: 0, Prompt: 50, Output: 20}, {ID: 1, Arrival: 0.05, Prompt: 50, Output: 20}}
	s := mustRadix(t, radixCfg(4096), reqs)
	admitted := -1
	for k, st := range s.Steps() {
		if st.PrefillTokens > 0 && st.DecodeTokens > 0 {
			t.Fatalf("step %d mixes %d prefill and %d decode tokens", k, st.PrefillTokens, st.DecodeTokens)
		}
		for _, id := range st.Admitted {
			if id == 1 {
				admitted = k
			}
		}
	}
	if admitted < 0 {
		t.Fatal("R1 never admitted")
	}
	// R1 arrives during R0's decodes: the first batch after its arrival is
	// its prefill.
	for k, st := range s.Steps() {
		if st.Start >= 0.05 {
			if k != admitted {
				t.Fatalf("first batch after R1 arrived is %d, R1 admitted in %d", k, admitted)
			}
			break
		}
	}
}

// A prompt longer than chunked_prefill_size takes several prefill batches.
func TestRadixChunksLongPrompts(t *testing.T) {
	c := radixCfg(8192)
	c.ChunkedPrefillSize = 256
	s := mustRadix(t, c, []Request{{ID: 0, Prompt: 1000, Output: 4}})
	var chunks []int
	for _, st := range s.Steps() {
		if st.PrefillTokens > 0 {
			chunks = append(chunks, st.PrefillTokens)
		}
	}
	if want := []int{256, 256, 256, 232}; len(chunks) != 4 || chunks[3] != 232 {
		t.Fatalf("prefill chunks %v, want %v", chunks, want)
	}
}

// When decodes outgrow the pool, requests are retracted (recomputed later)
// and every request still finishes.
func TestRadixRetractsWhenFull(t *testing.T) {
	reqs := make([]Request, 10)
	for i := range reqs {
		reqs[i] = Request{ID: i, Prompt: 40, Output: 100}
	}
	s := mustRadix(t, radixCfg(700), reqs)
	sum := SummariseRequests(s.Requests(), SLO{})
	if sum.Requests != 10 || sum.Preemptions == 0 {
		t.Fatalf("%d finished, %d retractions; want 10 and some (10 × 140 tokens > 700 slots)", sum.Requests, sum.Preemptions)
	}
}

func TestRadixRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 30; trial++ {
		var reqs []Request
		at := 0.0
		prefix := make([]int, 64)
		for i := range prefix {
			prefix[i] = 1 + rng.IntN(8)
		}
		for i := 0; i < 40; i++ {
			at += rng.Float64() * 0.03
			reqs = append(reqs, Request{ID: i, Arrival: at, Prompt: 1 + rng.IntN(300), Output: 1 + rng.IntN(80), PromptIDs: prefix[:rng.IntN(64)]})
		}
		c := radixCfg(500 + rng.IntN(1500))
		c.ChunkedPrefillSize = 32 + rng.IntN(256)
		s := mustRadix(t, c, reqs)
		if got := len(s.Requests()); got != len(reqs) {
			t.Fatalf("trial %d: %d of %d finished", trial, got, len(reqs))
		}
		if s.Held() != 0 || s.private != 0 {
			t.Fatalf("trial %d: %d slots still held at the end", trial, s.Held())
		}
	}
}

func TestRadixRefusesWhatNeverFits(t *testing.T) {
	if _, err := NewRadix(radixCfg(100), flat, []Request{{ID: 0, Prompt: 90, Output: 20}}); err == nil {
		t.Fatal("a request larger than the pool was accepted")
	}
	if err := (RadixConfig{}).Validate(); err == nil {
		t.Fatal("a zero config was accepted")
	}
}

// A long shared prefix in a tight pool: locking the match takes it out of
// the evictable room, so admission must check the room again after the
// lock (PrefillAdder's second NO_TOKEN check), or the batch asks for
// slots that are not there.
func TestRadixRechecksAfterLocking(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	prefixes := make([][]int, 4)
	for g := range prefixes {
		prefixes[g] = make([]int, 2000)
		for i := range prefixes[g] {
			prefixes[g][i] = 10 + g*10000 + i
		}
	}
	var reqs []Request
	for i := 0; i < 400; i++ {
		reqs = append(reqs, Request{ID: i, Arrival: float64(i) * 0.005, Prompt: 2050 + rng.IntN(800), Output: 100 + rng.IntN(300), PromptIDs: prefixes[rng.IntN(4)]})
	}
	s := mustRadix(t, radixCfg(8192), reqs)
	if got := len(s.Requests()); got != 400 {
		t.Fatalf("%d of 400 finished", got)
	}
}
