package workload_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
)

// TraceSteps is a bound: vLLM v1's scheduler (core/scheduler) never takes
// more steps than it says, with the heaviest batch limits (one sequence at
// a time, the 64-token budget) and with roomy ones, for traces that arrive
// at once, staggered so that each request runs alone, or at random.
func TestTraceStepsBoundsTheScheduler(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	traces := map[string][]workload.Request{}
	for _, shape := range []string{"at once", "staggered", "random"} {
		for k := 0; k < 4; k++ {
			n := 1 + rng.IntN(40)
			var reqs []workload.Request
			at := 0.0
			for i := 0; i < n; i++ {
				r := workload.Request{ID: i, Prompt: 1 + rng.IntN(3000), Output: 1 + rng.IntN(400), PrefixGroup: -1, Conversation: -1, Prev: -1}
				switch shape {
				case "staggered":
					at += 1000 // far longer than any request takes alone
				case "random":
					at += rng.ExpFloat64() * 0.05
				}
				r.Arrival = at
				reqs = append(reqs, r)
			}
			traces[fmt.Sprintf("%s #%d", shape, k)] = reqs
		}
	}
	// A constant step price: which requests overlap depends on it, the
	// bound does not.
	timer := scheduler.TimerFunc(func(b []scheduler.Work) float64 { return 0.01 })
	for name, reqs := range traces {
		bound := workload.TraceSteps(reqs, 64)
		for _, cfg := range []scheduler.Config{
			{MaxNumBatchedTokens: 64, MaxNumSeqs: 1, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 1 << 16},
			{MaxNumBatchedTokens: 64, MaxNumSeqs: 64, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 1 << 16}, // vLLM refuses more seqs than budget tokens
			{MaxNumBatchedTokens: 8192, MaxNumSeqs: 256, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 1 << 16, PrefixCaching: true},
		} {
			var sreqs []scheduler.Request
			for _, r := range reqs {
				sreqs = append(sreqs, scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output})
			}
			s, err := scheduler.New(cfg, timer, sreqs)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			sum := s.Summary(scheduler.SLO{})
			if int64(sum.Steps) > bound {
				t.Errorf("%s, budget %d, max_num_seqs %d: %d steps > TraceSteps %d", name, cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs, sum.Steps, bound)
			}
			if cfg.MaxNumSeqs == 1 && sum.Preemptions == 0 && int64(sum.Steps) < bound/4 {
				t.Errorf("%s, one sequence at a time: %d steps, far below the bound %d: is the bound still tight where it matters?", name, sum.Steps, bound)
			}
		}
	}
}

func TestTraceSteps(t *testing.T) {
	mk := func(n, prompt, output int) []workload.Request {
		var reqs []workload.Request
		for i := 0; i < n; i++ {
			reqs = append(reqs, workload.Request{ID: i, Arrival: float64(i), Prompt: prompt, Output: output})
		}
		return reqs
	}
	for _, c := range []struct {
		reqs  []workload.Request
		step  int
		steps int64
	}{
		{nil, 64, 0},
		{mk(1, 1, 1), 64, 1 + 1 + 1},
		{mk(1, 64, 10), 64, 10 + 1 + 1},
		{mk(1, 65, 10), 64, 10 + 2 + 1},
		{mk(20, 1, 131071), 64, 20*131071 + 1 + 20},
		{mk(122, 1, 16383), 64, 122*16383 + 2 + 122},
		{mk(3, 100, 5), 0, 15 + 300 + 3}, // a budget below 1 counts as 1
	} {
		if got := workload.TraceSteps(c.reqs, c.step); got != c.steps {
			t.Errorf("TraceSteps(%d requests, %d) = %d, want %d", len(c.reqs), c.step, got, c.steps)
		}
	}
}

// Traces of a few kilobytes that once ran for tens of
// seconds. Each is now refused, with the bound named, as a count.
func TestTraceStepBoundRefuses(t *testing.T) {
	jsonl := func(n, prompt, output int, gap float64) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `{"arrival_s": %g, "prompt_tokens": %d, "output_tokens": %d}`+"\n", float64(i)*gap, prompt, output)
		}
		return b.String()
	}
	page := workload.DefaultLimits()
	page.MaxTokens, page.MaxTotalTokens, page.MaxRequests, page.MaxSteps = 16384, 2_000_000, 2000, 250_000
	for _, c := range []struct {
		name string
		text string
		lim  workload.Limits
		line string
	}{
		{"20 x (1 + 131,071) 5,000 s apart (32 s, 1.38 GiB)", jsonl(20, 1, 131071, 5000), workload.DefaultLimits(), "line 4:"},
		{"762 x (1 + 131,071) 1,300 s apart (4.4 GiB and growing)", jsonl(762, 1, 131071, 1300), workload.DefaultLimits(), "line 4:"},
		{"page: 122 x (1 + 16,383) staggered (19 s)", jsonl(122, 1, 16383, 100), page, "line 16:"},
	} {
		_, err := workload.ParseTrace(strings.NewReader(c.text), c.lim)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, c.line) || !strings.Contains(msg, "engine steps") ||
			!strings.Contains(msg, fmt.Sprintf("want at most %d", c.lim.MaxSteps)) {
			t.Errorf("%s: %q", c.name, msg)
		}
	}
	// At the bound exactly: accepted; one step more: refused.
	lim := workload.DefaultLimits()
	atBound := func(extra int) string {
		var b strings.Builder
		full := (lim.MaxSteps - 1000) / 100_000 // requests of 1 + 100,000 tokens
		for i := 0; i < full; i++ {
			fmt.Fprintf(&b, "{\"arrival_s\": %d, \"prompt_tokens\": 1, \"output_tokens\": 100000}\n", i*9000)
		}
		// The last: its prompt's ceil(prompts / 64) and one step per request.
		rest := lim.MaxSteps - full*100_000 - 1 - (full + 1)
		fmt.Fprintf(&b, "{\"arrival_s\": 1e5, \"prompt_tokens\": %d, \"output_tokens\": %d}\n", 64-full+extra, rest)
		return b.String()
	}
	if reqs, err := workload.ParseTrace(strings.NewReader(atBound(0)), lim); err != nil || workload.TraceSteps(reqs, lim.StepTokens) != int64(lim.MaxSteps) {
		t.Errorf("a trace of exactly %d steps: %v", lim.MaxSteps, err)
	}
	if _, err := workload.ParseTrace(strings.NewReader(atBound(1)), lim); err == nil {
		t.Errorf("a trace of %d steps was accepted", lim.MaxSteps+1)
	}
}
