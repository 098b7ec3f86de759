package scheduler

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// flat prices every step at 10 ms plus 10 µs per token.
var flat = TimerFunc(func(b []Work) float64 {
	n := 0
	for _, w := range b {
		n += w.NewTokens
	}
	return 0.010 + 1e-5*float64(n)
})

func cfg(budget, seqs, blocks int) Config {
	return Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: 16, NumBlocks: blocks}
}

func mustNew(t *testing.T, c Config, reqs []Request) *Scheduler {
	t.Helper()
	s, err := New(c, flat, reqs)
	if err != nil {
		t.Fatal(err)
	}
	s.CheckInvariants, s.RecordWork = true, true
	return s
}

func mustStep(t *testing.T, s *Scheduler) Step {
	t.Helper()
	st, err := s.Step()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// shape lists each scheduled request as (id, tokens, prefill).
type shape struct {
	req, n  int
	prefill bool
}

func shapes(st Step) []shape {
	var out []shape
	for _, w := range st.Work {
		out = append(out, shape{w.Req, w.NewTokens, w.Prefill})
	}
	return out
}

func TestChunkingByRemainingBudget(t *testing.T) {
	s := mustNew(t, cfg(100, 8, 1000), []Request{
		{ID: 1, Prompt: 30, Output: 5},
		{ID: 2, Prompt: 40, Output: 5},
		{ID: 3, Prompt: 250, Output: 5},
	})
	for i, want := range [][]shape{
		{{1, 30, true}, {2, 40, true}, {3, 30, true}}, // C takes what is left of the budget
		{{1, 1, false}, {2, 1, false}, {3, 98, true}}, // running first, in order; C's chunk continues
		{{1, 1, false}, {2, 1, false}, {3, 98, true}},
		{{1, 1, false}, {2, 1, false}, {3, 24, true}}, // the rest of the prompt
		{{1, 1, false}, {2, 1, false}, {3, 1, false}},
	} {
		if got := shapes(mustStep(t, s)); !slices.Equal(got, want) {
			t.Fatalf("step %d: %v, want %v", i, got, want)
		}
	}
	if got := len(s.TokenTimes(3)); got != 2 {
		t.Fatalf("request 3 has %d tokens after its prompt completed and one decode, want 2", got)
	}
}

func TestLongPrefillThreshold(t *testing.T) {
	c := cfg(100, 8, 1000)
	c.LongPrefillTokenThreshold = 40
	s := mustNew(t, c, []Request{{ID: 1, Prompt: 90, Output: 2}, {ID: 2, Prompt: 90, Output: 2}})
	if got, want := shapes(mustStep(t, s)), []shape{{1, 40, true}, {2, 40, true}}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v: chunks capped at the threshold", got, want)
	}
}

func TestNoChunkingWaitsForBudget(t *testing.T) {
	c := cfg(300, 8, 1000)
	c.ChunkedPrefill = false
	s := mustNew(t, c, []Request{{ID: 1, Prompt: 200, Output: 3}, {ID: 2, Prompt: 150, Output: 3}, {ID: 3, Prompt: 20, Output: 3}})
	// 2's whole prompt does not fit in the 100 tokens left, so it waits, and 3 behind it waits too.
	if got, want := shapes(mustStep(t, s)), []shape{{1, 200, true}}; !slices.Equal(got, want) {
		t.Fatalf("step 1: %v, want %v", got, want)
	}
	if got, want := shapes(mustStep(t, s)), []shape{{1, 1, false}, {2, 150, true}, {3, 20, true}}; !slices.Equal(got, want) {
		t.Fatalf("step 2: %v, want %v", got, want)
	}
}

func TestMaxNumSeqs(t *testing.T) {
	s := mustNew(t, cfg(1000, 2, 1000), []Request{{ID: 1, Prompt: 10, Output: 3}, {ID: 2, Prompt: 10, Output: 3}, {ID: 3, Prompt: 10, Output: 3}})
	if st := mustStep(t, s); len(st.Work) != 2 || st.Waiting != 1 {
		t.Fatalf("scheduled %d with max_num_seqs 2, %d waiting", len(st.Work), st.Waiting)
	}
}

// Head-of-line blocking: the head of the queue does not fit in the free
// blocks, so a small request behind it is not admitted either.
func TestHeadOfLineBlocking(t *testing.T) {
	s := mustNew(t, cfg(2000, 8, 10), []Request{
		{ID: 1, Prompt: 100, Output: 20},            // 7 blocks
		{ID: 2, Prompt: 100, Output: 2, Arrival: 0}, // needs 7 blocks: only 3 free
		{ID: 3, Prompt: 10, Output: 2, Arrival: 0},  // would fit in 1 block
	})
	st := mustStep(t, s)
	if !slices.Equal(st.Admitted, []int{1}) || st.Waiting != 2 {
		t.Fatalf("admitted %v with %d waiting, want [1] and 2 (3 blocked behind 2)", st.Admitted, st.Waiting)
	}
}

// Preemption: when a running request needs a block and none is free, the
// last running request is preempted by recompute, requeued at the front, and
// nothing is admitted in that step.
func TestPreemptionVictimAndRequeue(t *testing.T) {
	s := mustNew(t, cfg(2000, 8, 4), []Request{
		{ID: 1, Prompt: 32, Output: 10}, // 2 blocks, needs a 3rd at its first decode
		{ID: 2, Prompt: 32, Output: 10}, // 2 blocks
		{ID: 3, Prompt: 5, Output: 1, Arrival: 0.001},
	})
	st := mustStep(t, s) // both prompts fill the 4 blocks and sample a token each
	if !slices.Equal(st.Admitted, []int{1, 2}) {
		t.Fatalf("admitted %v", st.Admitted)
	}
	st = mustStep(t, s) // 1 decodes, needs block 5: 2 (the last running) is preempted
	if !slices.Equal(st.Preempted, []int{2}) || len(st.Admitted) != 0 {
		t.Fatalf("preempted %v admitted %v, want [2] and nobody admitted", st.Preempted, st.Admitted)
	}
	if got := shapes(st); !slices.Equal(got, []shape{{1, 1, false}}) {
		t.Fatalf("step ran %v", got)
	}
	if s.waiting.at(0).ID != 2 || s.waiting.at(0).computed != 0 || s.waiting.at(1).ID != 3 {
		t.Fatalf("waiting %d(computed %d), %d: want 2 at the front with nothing computed, then 3", s.waiting.at(0).ID, s.waiting.at(0).computed, s.waiting.at(1).ID)
	}
}

func TestRejectsRequestThatNeverFits(t *testing.T) {
	_, err := New(cfg(100, 8, 4), flat, []Request{{ID: 1, Prompt: 100, Output: 1}})
	if !errors.Is(err, ErrNeverFits) {
		t.Fatalf("err = %v, want ErrNeverFits", err)
	}
}

// Property: over random workloads every request finishes exactly once with
// all its output tokens, time moves forward, and the invariants hold at
// every step (CheckInvariants).
func TestRandomWorkloads(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 120; trial++ {
		c := Config{MaxNumBatchedTokens: 16 + r.IntN(600), MaxNumSeqs: 1 + r.IntN(20), ChunkedPrefill: r.IntN(4) > 0,
			LongPrefillTokenThreshold: r.IntN(3) * r.IntN(100), BlockSize: 1 + r.IntN(32), NumBlocks: 20 + r.IntN(200), PrefixCaching: r.IntN(2) == 0}
		var reqs []Request
		at := 0.0
		for i := 0; i < 1+r.IntN(40); i++ {
			at += r.ExpFloat64() * 0.02
			p, o := 1+r.IntN(200), 1+r.IntN(60)
			if !c.ChunkedPrefill {
				p = min(p, c.MaxNumBatchedTokens-o)
				if p < 1 {
					continue
				}
			}
			if allocator := (p + o + c.BlockSize - 1) / c.BlockSize; allocator > c.NumBlocks {
				continue
			}
			shared := make([]int, p)
			for k := range shared {
				shared[k] = k % 7 // shared prefixes, so prefix caching hits
				if k > p/2 {
					shared[k] = 1000*i + k
				}
			}
			reqs = append(reqs, Request{ID: i, Arrival: at, Prompt: p, Output: o, PromptIDs: shared})
		}
		s := mustNew(t, c, reqs)
		if err := s.Run(); err != nil {
			t.Fatalf("trial %d %+v: %v", trial, c, err)
		}
		ms := s.Requests()
		if len(ms) != len(reqs) {
			t.Fatalf("trial %d: %d of %d requests finished", trial, len(ms), len(reqs))
		}
		checkTokensFromWork(t, trial, s, reqs)
		gen := 0
		for _, m := range ms {
			tt := s.TokenTimes(m.ID)
			if len(tt) != m.Output || m.TTFT <= 0 || !slices.IsSorted(tt) {
				t.Fatalf("trial %d: request %d: %d token times for %d outputs, TTFT %g", trial, m.ID, len(tt), m.Output, m.TTFT)
			}
			if m.TTFT != tt[0]-m.Arrival || len(m.ITL) != len(tt)-1 {
				t.Fatalf("trial %d: request %d: TTFT %g and %d gaps against token times %v", trial, m.ID, m.TTFT, len(m.ITL), tt)
			}
			for i, gap := range m.ITL {
				if gap != tt[i+1]-tt[i] {
					t.Fatalf("trial %d: request %d: gap %d is %g, token times say %g", trial, m.ID, i, gap, tt[i+1]-tt[i])
				}
			}
			gen += len(tt)
		}
		want := 0
		for _, q := range reqs {
			want += q.Output
		}
		if gen != want {
			t.Fatalf("trial %d: %d tokens generated, want %d", trial, gen, want)
		}
		if s.Pool().FreeBlocks() != c.NumBlocks {
			t.Fatalf("trial %d: %d blocks still held after every request finished", trial, c.NumBlocks-s.Pool().FreeBlocks())
		}
	}
}

// checkTokensFromWork rebuilds every request's token times, and each step's
// FirstTokens, from the steps' Work alone: a step that computes a request up
// to all its known tokens (prompt and outputs so far) makes its next output
// token, at the step's end; preemption recomputes without making any. They
// must equal what the scheduler recorded (TokenTimes, Step.FirstTokens).
func checkTokensFromWork(t *testing.T, trial int, s *Scheduler, reqs []Request) {
	t.Helper()
	prompt, made := map[int]int{}, map[int]int{}
	times := map[int][]float64{}
	for _, q := range reqs {
		prompt[q.ID] = q.Prompt
	}
	for k, st := range s.Steps() {
		var first []int
		for _, w := range st.Work {
			if w.Context+w.NewTokens == prompt[w.Req]+made[w.Req] {
				made[w.Req]++
				times[w.Req] = append(times[w.Req], st.Start+st.Duration)
				if made[w.Req] == 1 {
					first = append(first, w.Req)
				}
			}
		}
		if !slices.Equal(first, st.FirstTokens) {
			t.Fatalf("trial %d step %d: first tokens %v, the step's work makes %v", trial, k, st.FirstTokens, first)
		}
	}
	for _, q := range reqs {
		if got := s.TokenTimes(q.ID); !slices.Equal(got, times[q.ID]) {
			t.Fatalf("trial %d: request %d: token times %v, the steps' work makes %v", trial, q.ID, got, times[q.ID])
		}
	}
}

func TestSummarisePercentiles(t *testing.T) {
	xs := []float64{}
	for i := 1; i <= 100; i++ {
		xs = append(xs, float64(i))
	}
	p := Summarise(xs)
	if p.P50 != 50 || p.P90 != 90 || p.P95 != 95 || p.P99 != 99 || p.Max != 100 || p.Mean != 50.5 {
		t.Fatalf("%+v", p)
	}
}

// vLLM refuses a token budget below max_num_seqs; so does the scheduler,
// with a named error, and accepts them equal.
func TestBudgetBelowSeqsRefused(t *testing.T) {
	for _, c := range []struct{ budget, seqs int }{{64, 2048}, {255, 256}, {1, 2}} {
		if _, err := New(cfg(c.budget, c.seqs, 100), flat, []Request{{ID: 1, Prompt: 1, Output: 1}}); !errors.Is(err, ErrBudgetBelowSeqs) {
			t.Errorf("budget %d, %d seqs: err = %v, want ErrBudgetBelowSeqs", c.budget, c.seqs, err)
		}
	}
	if _, err := New(cfg(256, 256, 100), flat, []Request{{ID: 1, Prompt: 1, Output: 1}}); err != nil {
		t.Errorf("budget = max_num_seqs refused: %v", err)
	}
}

// vLLM's get_batch_defaults, GPU by GPU: H100-class parts get 8,192 tokens
// and 1,024 sequences from the API server, A100s and smaller parts 2,048
// and 256.
func TestBatchDefaults(t *testing.T) {
	for _, c := range []struct {
		gpu          string
		usage        UsageContext
		tokens, seqs int
	}{
		{"h100-sxm", APIServer, 8192, 1024},
		{"h100-pcie", APIServer, 8192, 1024},
		{"h200-sxm", APIServer, 8192, 1024},
		{"b200", APIServer, 8192, 1024},
		{"h100-sxm", LLMClass, 16384, 1024},
		{"a100-80gb-sxm", APIServer, 2048, 256},
		{"a100-80gb-sxm", LLMClass, 8192, 256},
		{"a100-40gb-sxm", APIServer, 2048, 256},
		{"l40s", APIServer, 2048, 256},
		{"l4", LLMClass, 8192, 256},
	} {
		g, err := hardware.GPUByID(c.gpu)
		if err != nil {
			t.Fatal(err)
		}
		if tok, seqs := BatchDefaults(g, c.usage); tok != c.tokens || seqs != c.seqs {
			t.Errorf("%s, usage %d: %d tokens and %d seqs, want %d and %d", c.gpu, c.usage, tok, seqs, c.tokens, c.seqs)
		}
	}
}

// A repeated id is refused at the first repeat, in New (however far apart
// the ids are) and in Add (against the requests New was given); the id
// index that Add and TokenTimes use is made on first use.
func TestDuplicateIDs(t *testing.T) {
	for _, c := range []struct {
		reqs []Request
		want string
	}{
		{[]Request{{ID: 4, Prompt: 1, Output: 1}, {ID: 2, Prompt: 1, Output: 1}, {ID: 4, Prompt: 1, Output: 1}}, "request id 4 appears twice"},
		{[]Request{{ID: 1 << 40, Prompt: 1, Output: 1}, {ID: -1, Prompt: 1, Output: 1}, {ID: -1, Prompt: 1, Output: 1}}, "request id -1 appears twice"},
		{[]Request{{ID: 4, Prompt: 1, Output: 1}, {ID: 4, Prompt: 0, Output: 1}}, "request 4 has 0 prompt"},
	} {
		if _, err := New(cfg(100, 8, 100), flat, c.reqs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): err = %v, want %q", c.reqs, err, c.want)
		}
	}
	s := mustNew(t, cfg(100, 8, 100), []Request{{ID: 7, Prompt: 4, Output: 2}, {ID: 9, Prompt: 4, Output: 2}})
	if err := s.Add(Request{ID: 9, Prompt: 1, Output: 1}); err == nil || !strings.Contains(err.Error(), "request id 9 appears twice") {
		t.Errorf("Add of a known id: %v", err)
	}
	if err := s.Add(Request{ID: 11, Prompt: 1, Output: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Request{ID: 11, Prompt: 1, Output: 1}); err == nil {
		t.Error("Add accepted an id it had added")
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{7, 9, 11} {
		if len(s.TokenTimes(id)) == 0 {
			t.Errorf("request %d: no token times", id)
		}
	}
}

// Scheduled is the start of the step that first scheduled a request
// (Sarathi-Serve's scheduling delay is Scheduled − Arrival), kept across a
// preemption: with max_num_seqs 2, the third request waits for the first
// to finish.
func TestScheduledTime(t *testing.T) {
	s := mustNew(t, cfg(1000, 2, 1000), []Request{{ID: 1, Prompt: 10, Output: 2}, {ID: 2, Prompt: 10, Output: 2, Arrival: 0.001}, {ID: 3, Prompt: 10, Output: 1, Arrival: 0.002}})
	var starts []float64
	for !s.Done() {
		starts = append(starts, mustStep(t, s).Start)
	}
	got := map[int]float64{}
	for _, m := range s.Requests() {
		got[m.ID] = m.Scheduled
		if m.Scheduled < m.Arrival || m.Scheduled > m.Arrival+m.TTFT {
			t.Errorf("request %d scheduled at %g, arrived %g, first token %g", m.ID, m.Scheduled, m.Arrival, m.Arrival+m.TTFT)
		}
	}
	// Step 1 (at 0) takes request 1; step 2 takes request 2 beside it (3
	// has arrived too, but two run) and request 1 finishes, so request 3
	// starts in step 3, after waiting one step.
	if want := map[int]float64{1: starts[0], 2: starts[1], 3: starts[2]}; len(starts) != 3 || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] || got[3] <= 0.002 {
		t.Errorf("scheduled %v, want %v (steps start at %v)", got, want, starts)
	}
}
