package slo

import (
	"errors"
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
	for _, s := range []Search{{Lo: 0, Hi: 1, Probes: 4}, {Lo: 2, Hi: 2, Probes: 4}, {Lo: 1, Hi: math.Inf(1), Probes: 4}, {Lo: 1, Hi: 2, Probes: 1}, {Lo: 1, Hi: 2, Probes: 3, Resolution: -1}} {
		if s.Check() == nil {
			t.Errorf("%+v accepted", s)
		}
		if _, err := s.Run(Objective{}, func(float64) ([]Latency, error) { return []Latency{{}}, nil }); err == nil {
			t.Errorf("Run of %+v ran", s)
		}
	}
	if (Objective{Target: 1}).Check() != nil || (Search{Lo: 1, Hi: 2, Probes: 2}).Check() != nil {
		t.Error("valid settings refused")
	}
}

// toy is a server whose latencies grow with load: request i of n has
// TTFT = base_i / (1 − rate/limit) (unbounded at and past limit), a fixed
// TPOT, and gaps that stall in proportion to the rate. Every latency is
// non-decreasing in the rate, so attainment cannot rise with it.
type toy struct {
	limit float64
	base  []float64
	probe int
}

func newToy(r *rand.Rand, n int) *toy {
	t := &toy{limit: 1 + 99*r.Float64()}
	for range n {
		t.base = append(t.base, 0.05+r.Float64())
	}
	return t
}

func (t *toy) run(rate float64) ([]Latency, error) {
	t.probe++
	ls := make([]Latency, len(t.base))
	for i, b := range t.base {
		ttft := math.Inf(1)
		if rate < t.limit {
			ttft = b / (1 - rate/t.limit)
		}
		stall := 0.01 * (1 + rate/t.limit*float64(i%7))
		ls[i] = Latency{TTFT: ttft, TPOT: 0.01, Gaps: []float64{0.01, stall}}
	}
	return ls, nil
}

// Properties on random monotone toys and objectives: attainment never
// rises with the rate; the search stays within its probe budget; the rate
// it returns met the objective and the rate above it did not, both probed,
// within the search's bracket of each other; a rerun gives the same probes.
func TestSearchProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		sys := newToy(r, 1+r.IntN(50))
		o := Objective{TTFT: 0.1 + 3*r.Float64(), P99TBT: []float64{0, 0.02 + 0.05*r.Float64()}[r.IntN(2)], Target: []float64{0, 0.5, 0.99, 1}[r.IntN(4)]}
		prev := 2.0
		for rate := 0.5; rate < 200; rate *= 1.3 {
			ls, _ := sys.run(rate)
			a := o.Attainment(ls)
			if a > prev {
				t.Fatalf("trial %d: attainment rose to %g at %g req/s", trial, a, rate)
			}
			prev = a
		}
		s := Search{Lo: 0.5 + r.Float64(), Hi: 20 + 300*r.Float64(), Probes: 2 + r.IntN(10), Resolution: []float64{0, 0.05}[r.IntN(2)]}
		sys.probe = 0
		c, err := s.Run(o, sys.run)
		if err != nil {
			t.Fatal(err)
		}
		if sys.probe > s.Probes || len(c.Runs) != sys.probe {
			t.Fatalf("trial %d: %d probes (%d recorded), budget %d", trial, sys.probe, len(c.Runs), s.Probes)
		}
		meets := map[float64]bool{}
		for _, run := range c.Runs {
			meets[run.Rate] = run.Meets
		}
		if m, ok := meets[c.Rate]; !c.BelowRange() && (!ok || !m) {
			t.Fatalf("trial %d: capacity %g was not a probe that met the objective (%+v)", trial, c.Rate, c.Runs)
		}
		if m, ok := meets[c.Above]; !c.AboveRange() && (!ok || m) {
			t.Fatalf("trial %d: %g above the capacity was not a probe that missed (%+v)", trial, c.Above, c.Runs)
		}
		for _, run := range c.Runs {
			if run.Rate > c.Rate && run.Meets || run.Rate < c.Above && run.Rate > c.Rate {
				t.Fatalf("trial %d: probe %+v outside the answer [%g, %g]", trial, run, c.Rate, c.Above)
			}
		}
		if !c.BelowRange() && !c.AboveRange() && c.Above/c.Rate > s.Bracket()*(1+1e-9) {
			t.Fatalf("trial %d: answer [%g, %g] wider than the bracket %g of %+v", trial, c.Rate, c.Above, s.Bracket(), s)
		}
		if c.At().Rate != c.Rate || c.At().Meets != !c.BelowRange() {
			t.Fatalf("trial %d: At() = %+v for capacity %g", trial, c.At(), c.Rate)
		}
		// MaxCost bounds what the run cost, probe by probe, with a cost
		// that falls with the rate (as a simulation's steps do).
		cost := func(rate float64) float64 { return 1000 / rate }
		spent := 0.0
		for _, run := range c.Runs {
			spent += cost(run.Rate)
		}
		if bound := s.MaxCost(cost); spent > bound*(1+1e-12) {
			t.Fatalf("trial %d: probes cost %g, over MaxCost %g", trial, spent, bound)
		}
		again, _ := s.Run(o, sys.run)
		if len(again.Runs) != len(c.Runs) || again.Rate != c.Rate || again.Above != c.Above {
			t.Fatalf("trial %d: rerun differs", trial)
		}
		for i := range again.Runs {
			if again.Runs[i] != c.Runs[i] {
				t.Fatalf("trial %d: rerun probe %d differs", trial, i)
			}
		}
	}
}

// A known capacity: the toy's TTFT tail crosses the limit at a rate the
// formula gives, and enough probes find it within the bracket.
func TestSearchFindsKnownCapacity(t *testing.T) {
	// One request, base 0.1 s, limit 10 req/s, TTFT limit 0.2 s: TTFT =
	// 0.1 / (1 − rate/10) ≤ 0.2 while rate ≤ 5.
	sys := &toy{limit: 10, base: []float64{0.1}}
	s := Search{Lo: 0.1, Hi: 100, Probes: 20}
	c, err := s.Run(Objective{TTFT: 0.2}, sys.run)
	if err != nil {
		t.Fatal(err)
	}
	if !(c.Rate <= 5 && c.Above > 5 && c.Above/c.Rate <= s.Bracket()) {
		t.Fatalf("capacity [%g, %g], want 5 within a factor %g", c.Rate, c.Above, s.Bracket())
	}
	// A capacity above the range is reported as its top; one below, as 0.
	if c, _ := (Search{Lo: 0.1, Hi: 4, Probes: 5}).Run(Objective{TTFT: 0.2}, sys.run); c.Rate != 4 || !c.AboveRange() || len(c.Runs) != 2 {
		t.Errorf("above the range: %+v", c)
	}
	if c, _ := (Search{Lo: 6, Hi: 40, Probes: 5}).Run(Objective{TTFT: 0.2}, sys.run); c.Rate != 0 || !c.BelowRange() || c.Above != 6 || len(c.Runs) != 1 {
		t.Errorf("below the range: %+v", c)
	}
}

// A probe's error stops the search and is returned; so is a probe that
// finished nothing.
func TestSearchProbeErrors(t *testing.T) {
	boom := errors.New("boom")
	if _, err := (Search{Lo: 1, Hi: 2, Probes: 3}).Run(Objective{}, func(float64) ([]Latency, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("got %v, want boom", err)
	}
	if _, err := (Search{Lo: 1, Hi: 2, Probes: 3}).Run(Objective{}, func(float64) ([]Latency, error) { return nil, nil }); !errors.Is(err, ErrNoRequests) {
		t.Errorf("got %v, want ErrNoRequests", err)
	}
}

// MaxCost is exact on a search whose every probe misses (the path that
// keeps halving towards Lo) when cost falls with the rate.
func TestMaxCostWorstPath(t *testing.T) {
	s := Search{Lo: 1, Hi: 256, Probes: 5}
	// Probes: 1 and 256, then 16, 4, 2 when all bisections miss.
	want := 1.0/1 + 1.0/256 + 1.0/16 + 1.0/4 + 1.0/2
	if got := s.MaxCost(func(r float64) float64 { return 1 / r }); !near(got, want) {
		t.Errorf("MaxCost = %g, want %g", got, want)
	}
	c, _ := s.Run(Objective{TTFT: 1}, func(r float64) ([]Latency, error) { return []Latency{{TTFT: r}}, nil })
	spent := 0.0
	for _, r := range c.Runs {
		spent += 1 / r.Rate
	}
	if len(c.Runs) != 5 || !near(c.Runs[4].Rate, 2) || !near(spent, want) {
		t.Errorf("runs %+v cost %g, want the path 1, 256, 16, 4, 2 costing %g", c.Runs, spent, want)
	}
	if (Search{}).MaxCost(func(float64) float64 { return 1 }) != 0 {
		t.Error("MaxCost of an invalid search")
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
