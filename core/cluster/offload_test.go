package cluster

import (
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
)

// chatRequests is a multi-turn stream whose histories outgrow a small G1.
func chatRequests() []scheduler.Request {
	ws := workload.Chats(24, 4, workload.Fixed{N: 256}, workload.Fixed{N: 200}, workload.Fixed{N: 40}, 1, 20, 2, 7)
	out := make([]scheduler.Request, len(ws))
	for i, w := range ws {
		out[i] = scheduler.Request{ID: w.ID, Arrival: w.Arrival, Prompt: w.Prompt, Output: w.Output, PromptIDs: w.TokenIDs(), OutputIDs: w.OutputTokenIDs()}
	}
	return out
}

func offloadConfig(hostBlocks int) OffloadConfig {
	prefillPerToken := scheduler.TimerFunc(func(b []scheduler.Work) float64 {
		s := 0.004
		for _, w := range b {
			s += 2e-5 * float64(w.NewTokens)
		}
		return s
	})
	return OffloadConfig{Scheduler: scheduler.Config{MaxNumBatchedTokens: 2048, MaxNumSeqs: 64, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 400},
		Timer: prefillPerToken, HostBlocks: hostBlocks, BlockBytes: 16 * 131072, Link: MustLink("pcie5")}
}

// With a host tier, prompts whose history G1 evicted reload it instead of
// recomputing it: fewer prompt tokens computed and a lower TTFT for the
// later turns; without one, nothing is onboarded.
func TestHostTierReloadsEvictedHistory(t *testing.T) {
	reqs := chatRequests()
	g1, err := RunOffload(offloadConfig(0), reqs)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := RunOffload(offloadConfig(100_000), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(g1.Requests) != len(reqs) || len(g2.Requests) != len(reqs) {
		t.Fatalf("%d and %d of %d requests finished", len(g1.Requests), len(g2.Requests), len(reqs))
	}
	if g1.Onboarded != 0 || g1.Offloaded != 0 {
		t.Fatalf("no host tier, yet %d blocks onboarded and %d offloaded", g1.Onboarded, g1.Offloaded)
	}
	if g2.Onboarded == 0 || g2.Offloaded == 0 {
		t.Fatalf("host tier: %d onboarded, %d offloaded; want both > 0 (G1 of 400 blocks is too small for the histories)", g2.Onboarded, g2.Offloaded)
	}
	if g2.Counts.PrefillTokens >= g1.Counts.PrefillTokens {
		t.Fatalf("computed prompt tokens %d with G2, %d without: want fewer", g2.Counts.PrefillTokens, g1.Counts.PrefillTokens)
	}
	late := func(r *OffloadResult) float64 {
		s, n := 0.0, 0
		for _, m := range r.Requests {
			if m.Prompt > 600 {
				s += m.TTFT
				n++
			}
		}
		return s / float64(n)
	}
	if late(g2) >= late(g1) {
		t.Fatalf("late turns' mean TTFT %g s with G2, %g s without", late(g2), late(g1))
	}
	for i, ob := range g2.Onboards {
		if ob.G2Tokens%16 != 0 || ob.G1Tokens+ob.G2Tokens >= reqs[i].Prompt || (ob.G2Tokens > 0) != (ob.Wait > 0) {
			t.Fatalf("request %d: onboard %+v of a %d-token prompt", i, ob, reqs[i].Prompt)
		}
	}
}

// A small host tier drops its least recently used blocks.
func TestHostTierLRU(t *testing.T) {
	h := newHostTier(2)
	h.put(1)
	h.put(2)
	h.touch(1)
	if added, dropped := h.put(3); !added || dropped != 1 || h.touch(2) || !h.touch(1) || !h.touch(3) {
		t.Fatal("the least recently used block was not the one dropped")
	}
}
