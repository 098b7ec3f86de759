package slo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

// TTFT, TPOT and the gaps of one request from its token times.
func TestFromTokenTimes(t *testing.T) {
	for _, c := range []struct {
		name       string
		arrival    float64
		times      []float64
		ttft, tpot float64
		gaps       []float64
	}{
		{"one token", 1, []float64{1.25}, 0.25, 0, nil},
		{"even gaps", 0, []float64{0.5, 0.6, 0.7, 0.8}, 0.5, 0.1, []float64{0.1, 0.1, 0.1}},
		// A stall (a prefill in the batch) shows in one gap, and TPOT
		// averages it away: (2.0 − 1.0) / 3.
		{"one stall", 0.5, []float64{1.0, 1.1, 1.9, 2.0}, 0.5, 1.0 / 3, []float64{0.1, 0.8, 0.1}},
		{"none", 3, nil, 0, 0, nil},
	} {
		l := FromTokenTimes(c.arrival, c.times)
		if !near(l.TTFT, c.ttft) || !near(l.TPOT, c.tpot) || len(l.Gaps) != len(c.gaps) {
			t.Errorf("%s: got TTFT %g TPOT %g gaps %v, want %g %g %v", c.name, l.TTFT, l.TPOT, l.Gaps, c.ttft, c.tpot, c.gaps)
			continue
		}
		for i := range c.gaps {
			if !near(l.Gaps[i], c.gaps[i]) {
				t.Errorf("%s: gap %d = %g, want %g", c.name, i, l.Gaps[i], c.gaps[i])
			}
		}
	}
}

// Nearest-rank percentiles: the smallest value with at least p% of the
// sample at or below it.
func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100 … 1, unsorted
	}
	for _, c := range []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 99, 0},
		{"one", []float64{7}, 99, 7},
		{"p50 of 1..100", hundred, 50, 50},
		{"p99 of 1..100", hundred, 99, 99},
		{"p100 of 1..100", hundred, 100, 100},
		{"p99 of 10 is the max", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
		{"p90 of 10", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 90, 9},
	} {
		before := append([]float64(nil), c.xs...)
		if got := Percentile(c.xs, c.p); got != c.want {
			t.Errorf("%s: got %g, want %g", c.name, got, c.want)
		}
		for i := range before {
			if c.xs[i] != before[i] {
				t.Fatalf("%s: Percentile reordered its input", c.name)
			}
		}
	}
}

// Attainment counts requests meeting every per-request limit; a zero limit
// is none; P99TBT pools every request's gaps.
func TestAttainmentAndP99TBT(t *testing.T) {
	ls := []Latency{
		{TTFT: 0.2, TPOT: 0.02, Gaps: []float64{0.02, 0.02}},
		{TTFT: 0.6, TPOT: 0.02, Gaps: []float64{0.02}},       // misses TTFT 0.5
		{TTFT: 0.1, TPOT: 0.05, Gaps: []float64{0.01, 0.09}}, // misses TPOT 0.04
		{TTFT: 0.5, TPOT: 0.04},                              // on both limits: meets
	}
	for _, c := range []struct {
		name string
		o    Objective
		want float64
	}{
		{"both", Objective{TTFT: 0.5, TPOT: 0.04}, 0.5},
		{"TTFT only", Objective{TTFT: 0.5}, 0.75},
		{"TPOT only", Objective{TPOT: 0.04}, 0.75},
		{"none", Objective{}, 1},
		{"tight", Objective{TTFT: 0.05}, 0},
	} {
		if got := c.o.Attainment(ls); got != c.want {
			t.Errorf("%s: attainment %g, want %g", c.name, got, c.want)
		}
	}
	if got := (Objective{}).Attainment(nil); got != 0 {
		t.Errorf("attainment of no requests = %g, want 0", got)
	}
	// Gaps pooled: 0.01 0.02 0.02 0.02 0.09; the p99 of 5 is the max.
	if got := P99TBT(ls); got != 0.09 {
		t.Errorf("P99TBT = %g, want 0.09", got)
	}
	if got := P99TBT([]Latency{{TTFT: 1}}); got != 0 {
		t.Errorf("P99TBT without gaps = %g, want 0", got)
	}
}

// A run meets the objective when attainment reaches the target (90% by
// default) and the pooled p99 gap is within its limit.
func TestJudge(t *testing.T) {
	ls := make([]Latency, 10)
	for i := range ls {
		ls[i] = Latency{TTFT: 0.1, TPOT: 0.01, Gaps: []float64{0.01}}
	}
	ls[9].TTFT = 2 // one in ten misses TTFT
	ls[8].Gaps = []float64{0.3}
	for _, c := range []struct {
		name       string
		o          Objective
		attainment float64
		meets      bool
	}{
		{"90% of 90% by default", Objective{TTFT: 1}, 0.9, true},
		{"95% target", Objective{TTFT: 1, Target: 0.95}, 0.9, false},
		{"p99 TBT over the limit", Objective{TTFT: 1, P99TBT: 0.2}, 0.9, false},
		{"p99 TBT within", Objective{TTFT: 1, P99TBT: 0.3}, 0.9, true},
		{"p99 TBT alone", Objective{P99TBT: 0.3}, 1, true},
	} {
		out := c.o.Judge(4, ls)
		if out.Attainment != c.attainment || out.Meets != c.meets || out.Rate != 4 || out.Requests != 10 || out.P99TBT != 0.3 {
			t.Errorf("%s: got %+v, want attainment %g meets %v", c.name, out, c.attainment, c.meets)
		}
	}
	if (Objective{}).Judge(1, nil).Meets {
		t.Error("a run with no requests met the objective")
	}
}

func TestPerGPU(t *testing.T) {
	for _, c := range []struct {
		rate float64
		gpus int
		want float64
	}{{12, 1, 12}, {12, 4, 3}, {12, 0, 0}, {0, 8, 0}} {
		if got := PerGPU(c.rate, c.gpus); got != c.want {
			t.Errorf("PerGPU(%g, %d) = %g, want %g", c.rate, c.gpus, got, c.want)
		}
	}
}

func TestChecks(t *testing.T) {
	for _, o := range []Objective{{TTFT: -1}, {TPOT: math.NaN()}, {P99TBT: math.Inf(1)}, {Target: 1.5}, {Target: -0.1}} {
		if o.Check() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if (Objective{Target: 1}).Check() != nil {
		t.Error("valid settings refused")
	}
}

// Percentile's selection gives what sorting gives, on random samples with
// ties, every rank.
func TestPercentileMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 300 {
		n := 1 + r.IntN(200)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(1 + trial%20))
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		for _, p := range []float64{1, 10, 50, 90, 99, 100, 100 * r.Float64()} {
			i := max(0, min(int(math.Ceil(p/100*float64(n)))-1, n-1))
			if got := Percentile(xs, p); got != sorted[i] {
				t.Fatalf("p%g of %v = %g, want %g", p, xs, got, sorted[i])
			}
		}
	}
}
