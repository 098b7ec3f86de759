package scheduler

import (
	"math/rand/v2"
	"testing"
)

// tightStream is 12 requests arriving together whose outputs, grown
// together, overflow a pool of 40 blocks of 16 tokens: under vLLM's policy
// the most recently admitted are preempted.
func tightStream() []Request {
	reqs := make([]Request, 12)
	for i := range reqs {
		reqs[i] = Request{ID: i, Prompt: 40, Output: 60}
	}
	return reqs
}

func runAll(t *testing.T, c Config, reqs []Request) *Scheduler {
	t.Helper()
	s := mustNew(t, c, reqs)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGuaranteedNoEvictNeverPreempts(t *testing.T) {
	pack := cfg(512, 64, 40)
	gne := pack
	gne.Capacity = GuaranteedNoEvict
	sp, sg := runAll(t, pack, tightStream()), runAll(t, gne, tightStream())
	p, g := sp.Summary(SLO{}), sg.Summary(SLO{})
	if p.Preemptions == 0 {
		t.Fatalf("PackForStep: no preemption on a stream that overflows the pool; the test proves nothing")
	}
	if g.Preemptions != 0 || g.Requests != 12 {
		t.Fatalf("GuaranteedNoEvict: %d preemptions, %d finished; want 0 and 12", g.Preemptions, g.Requests)
	}
	// Each request needs ⌈100/16⌉ = 7 blocks to finish: 40 blocks run 5 at once.
	most := 0
	for _, st := range sg.Steps() {
		most = max(most, st.Running)
	}
	if most != 5 {
		t.Fatalf("GuaranteedNoEvict ran at most %d requests together, want 40/7 = 5", most)
	}
	if g.MeanRunningAtStep >= p.MeanRunningAtStep {
		t.Fatalf("GuaranteedNoEvict ran %.2f requests a step on average, PackForStep %.2f: reserving to completion should run fewer",
			g.MeanRunningAtStep, p.MeanRunningAtStep)
	}
}

// A cached prefix that a running request holds takes no free block, so it
// is not claimed twice: with it the second request fits beside the first.
func TestGuaranteedNoEvictCountsSharedPrefix(t *testing.T) {
	shared := make([]int, 64)
	for i := range shared {
		shared[i] = 7 + i
	}
	reqs := []Request{
		{ID: 0, Prompt: 80, Output: 16, PromptIDs: shared},
		{ID: 1, Prompt: 80, Output: 16, PromptIDs: shared},
	}
	c := cfg(512, 8, 10) // each needs 6 blocks; 4 of them are the shared prefix
	c.PrefixCaching = true
	c.Capacity = GuaranteedNoEvict
	s := runAll(t, c, reqs)
	if st := s.Steps()[0]; len(st.Admitted) != 2 {
		t.Fatalf("step 0 admitted %v; the shared prefix should let both fit in 10 blocks (6 + 2)", st.Admitted)
	}
	c.PrefixCaching = false
	s = runAll(t, c, reqs)
	if st := s.Steps()[0]; len(st.Admitted) != 1 {
		t.Fatalf("without prefix caching step 0 admitted %v, want only R0 (6 + 6 > 10 blocks)", st.Admitted)
	}
}

func TestGuaranteedNoEvictRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 30; trial++ {
		var reqs []Request
		at := 0.0
		for i := 0; i < 40; i++ {
			at += rng.Float64() * 0.05
			reqs = append(reqs, Request{ID: i, Arrival: at, Prompt: 1 + rng.IntN(200), Output: 1 + rng.IntN(120)})
		}
		c := cfg(256, 32, 30)
		c.Capacity = GuaranteedNoEvict
		c.ChunkedPrefill = trial%2 == 0
		if !c.ChunkedPrefill {
			c.MaxNumBatchedTokens = 400
		}
		s := runAll(t, c, reqs) // CheckInvariants: no preemption, claims within the free blocks
		if got := s.Summary(SLO{}).Requests; got != len(reqs) {
			t.Fatalf("trial %d: %d of %d finished", trial, got, len(reqs))
		}
	}
}

func TestCapacityValidated(t *testing.T) {
	c := cfg(64, 8, 10)
	c.Capacity = GuaranteedNoEvict + 1
	if err := c.Validate(); err == nil {
		t.Fatal("an unknown capacity policy was accepted")
	}
}
