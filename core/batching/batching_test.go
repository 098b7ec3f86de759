package batching

import (
	"math"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
)

// flat prices every step at 0.1 s.
var flat = scheduler.TimerFunc(func([]scheduler.Work) float64 { return 0.1 })

func run(t *testing.T, cfg Config, reqs []Request) *Result {
	t.Helper()
	r, err := Run(cfg, flat, reqs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// spaced is n requests of one output token arriving every gap seconds.
func spaced(n int, gap float64) []Request {
	var out []Request
	for i := 0; i < n; i++ {
		out = append(out, Request{ID: i, Arrival: gap * float64(i), Prompt: 10, Output: 1})
	}
	return out
}

func starts(r *Result) []float64 {
	var out []float64
	for _, b := range r.Batches {
		out = append(out, math.Round(b.Start*1000)/1000)
	}
	return out
}

func sizes(r *Result) []int {
	var out []int
	for _, b := range r.Batches {
		out = append(out, len(b.Requests))
	}
	return out
}

// Batch formation, policy by policy (steps take 0.1 s, outputs 1 token).
func TestFormation(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		reqs   []Request
		starts []float64
		sizes  []int
	}{
		// Static waits for two; the fifth runs alone once the stream ends.
		{"static waits for a full batch", Config{Policy: Static, MaxBatchSize: 2}, spaced(5, 1), []float64{1, 3, 4}, []int{2, 2, 1}},
		// Triton's default (no delay): whatever is queued when the instance is free.
		{"dynamic without delay", Config{Policy: Dynamic, MaxBatchSize: 4}, spaced(3, 1), []float64{0, 1, 2}, []int{1, 1, 1}},
		// The delay holds the batch until the oldest request has waited 0.1 s.
		{"dynamic with delay", Config{Policy: Dynamic, MaxBatchSize: 4, MaxQueueDelay: 0.1},
			[]Request{{0, 0, 10, 1}, {1, 0.05, 10, 1}, {2, 0.3, 10, 1}}, []float64{0.1, 0.4}, []int{2, 1}},
		// An arrival that completes a maximum batch sends it at once.
		{"dynamic full batch before the deadline", Config{Policy: Dynamic, MaxBatchSize: 2, MaxQueueDelay: 1},
			[]Request{{0, 0, 10, 1}, {1, 0.05, 10, 1}}, []float64{0.05}, []int{2}},
		// Six queued, preferred 4: a batch of 4, then the rest.
		{"dynamic preferred size", Config{Policy: Dynamic, MaxBatchSize: 8, PreferredBatchSizes: []int{4}}, spaced(6, 0), []float64{0, 0.1}, []int{4, 2}},
		// Preferred sizes are sent at once, even with a delay.
		{"dynamic preferred before the delay", Config{Policy: Dynamic, MaxBatchSize: 8, PreferredBatchSizes: []int{2, 3}, MaxQueueDelay: 5}, spaced(3, 0.01), []float64{0.01, 5.02}, []int{2, 1}},
		// Requests arriving during a batch wait for it to end.
		{"one instance", Config{Policy: Dynamic, MaxBatchSize: 8}, []Request{{0, 0, 10, 10}, {1, 0.2, 10, 1}, {2, 0.5, 10, 1}}, []float64{0, 1}, []int{1, 2}},
	}
	for _, tt := range tests {
		r := run(t, tt.cfg, tt.reqs)
		if got := starts(r); !slices.Equal(got, tt.starts) || !slices.Equal(sizes(r), tt.sizes) {
			t.Errorf("%s: batches start at %v with sizes %v, want %v and %v", tt.name, got, sizes(r), tt.starts, tt.sizes)
		}
	}
}

// A batch runs until its longest output is done: the short request's last
// token comes early, its response at the batch's end, and its slot pads
// the steps in between.
func TestPaddingAndReturn(t *testing.T) {
	r := run(t, Config{Policy: Static, MaxBatchSize: 4}, []Request{{0, 0, 10, 1}, {1, 0, 30, 5}})
	if len(r.Batches) != 1 || r.Batches[0].Steps != 5 || r.Batches[0].Prompt != 30 {
		t.Fatalf("batches %+v", r.Batches)
	}
	short, long := r.Requests[0], r.Requests[1]
	if math.Abs(short.LastToken-0.1) > 1e-12 || math.Abs(short.Returned-0.5) > 1e-12 || math.Abs(long.LastToken-0.5) > 1e-12 {
		t.Errorf("short: last token %v, returned %v; long: last token %v", short.LastToken, short.Returned, long.LastToken)
	}
	w := r.Waste
	// 5 steps of 0.1 s over 4 slots: the long request 5 useful, the short 1
	// useful and 4 padding, 2 slots idle throughout.
	if math.Abs(w.Useful-0.6) > 1e-9 || math.Abs(w.Padding-0.4) > 1e-9 || math.Abs(w.Idle-1.0) > 1e-9 || w.PaddedPromptTokens != 20 {
		t.Errorf("waste %+v, want useful 0.6, padding 0.4, idle 1.0 slot-s and 20 padded prompt tokens", w)
	}
	if r.Steps != 5 || r.Work != 5*(stepWork+2) {
		t.Errorf("steps %d, work %d", r.Steps, r.Work)
	}
}

// Slot time adds up to the slots times the time batches ran, and the GPU
// idles with requests queued only when the batcher waits.
func TestWasteAddsUp(t *testing.T) {
	reqs := make([]Request, 40)
	for i := range reqs {
		reqs[i] = Request{ID: i, Arrival: 0.037 * float64(i), Prompt: 5 + i%7, Output: 1 + (i*13)%17}
	}
	for _, cfg := range []Config{{Policy: Static, MaxBatchSize: 6}, {Policy: Dynamic, MaxBatchSize: 6, MaxQueueDelay: 0.05}, {Policy: Dynamic, MaxBatchSize: 6}} {
		r := run(t, cfg, reqs)
		busy := 0.0
		served := 0
		for _, b := range r.Batches {
			busy += b.End - b.Start
			served += len(b.Requests)
		}
		w := r.Waste
		if got := w.Useful + w.Padding + w.Idle; math.Abs(got-busy*6) > 1e-9 || served != len(reqs) {
			t.Errorf("%v: slot time %v, want 6 × %v busy; served %d", cfg.Policy, got, busy, served)
		}
		if cfg.Policy == Dynamic && cfg.MaxQueueDelay == 0 && w.WaitingIdle != 0 {
			t.Errorf("dynamic without delay idled %v s with requests queued", w.WaitingIdle)
		}
		for _, q := range r.Requests {
			if q.FirstToken < q.Arrival || q.Returned < q.LastToken || q.LastToken < q.FirstToken {
				t.Errorf("%v: request %d: arrival %v, first %v, last %v, returned %v", cfg.Policy, q.ID, q.Arrival, q.FirstToken, q.LastToken, q.Returned)
			}
		}
	}
}

// Prefill steps price every padded prompt; decode steps every slot of the
// batch, finished or not.
func TestStepsPriceTheWholeBatch(t *testing.T) {
	var seen [][]scheduler.Work
	timer := scheduler.TimerFunc(func(w []scheduler.Work) float64 {
		seen = append(seen, slices.Clone(w))
		return 0.01
	})
	if _, err := Run(Config{Policy: Static, MaxBatchSize: 2}, timer, []Request{{0, 0, 7, 1}, {1, 0, 9, 3}}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Fatalf("%d steps, want 3", len(seen))
	}
	for i, w := range seen[0] {
		if !w.Prefill || w.NewTokens != 9 || w.Context != 0 {
			t.Errorf("prefill slot %d: %+v, want 9 padded tokens", i, w)
		}
	}
	for k, st := range seen[1:] {
		for i, w := range st {
			if w.Prefill || w.NewTokens != 1 || w.Context != 9+k {
				t.Errorf("decode step %d slot %d: %+v, want one token on %d", k+1, i, w, 9+k)
			}
		}
	}
}

func TestRunRefuses(t *testing.T) {
	ok := []Request{{0, 0, 1, 1}}
	for _, c := range []struct {
		cfg  Config
		reqs []Request
	}{
		{Config{MaxBatchSize: 0}, ok},
		{Config{MaxBatchSize: 2, MaxQueueDelay: -1}, ok},
		{Config{MaxBatchSize: 2, MaxQueueDelay: math.Inf(1)}, ok},
		{Config{MaxBatchSize: 2, PreferredBatchSizes: []int{3}}, ok},
		{Config{MaxBatchSize: 2}, nil},
		{Config{MaxBatchSize: 2}, []Request{{0, 0, 0, 1}}},
		{Config{MaxBatchSize: 2}, []Request{{0, math.NaN(), 1, 1}}},
		{Config{MaxBatchSize: 2}, []Request{{0, 0, 1, 1}, {0, 1, 1, 1}}},
	} {
		if _, err := Run(c.cfg, flat, c.reqs); err == nil {
			t.Errorf("%+v with %v: no error", c.cfg, c.reqs)
		}
	}
}
