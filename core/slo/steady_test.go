package slo

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// queue is a server for the steady search's tests: Poisson arrivals served
// first come, first served, one at a time, each for a service time drawn
// around mean (so it sustains 1/mean req/s and no more). A request makes
// tokens tokens evenly over its service, and each gap stretches by stall
// per request waiting when its service started, so TBT grows with load.
type queue struct {
	mean, stall float64
	tokens      int
	probes      int
	served      int
}

func (q *queue) trial(rate float64, n int, seed uint64) ([]Served, error) {
	q.probes++
	q.served += n
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]Served, n)
	starts := make([]float64, n)
	at, free := 0.0, 0.0
	started := 0 // requests that started by at: starts rise, as arrivals do
	for i := range out {
		at += r.ExpFloat64() / rate
		service := q.mean * (0.5 + r.Float64())
		start := max(at, free)
		free = start + service
		starts[i] = start
		for started < i && starts[started] <= at {
			started++
		}
		waiting := i - started
		gap := service / float64(q.tokens) * (1 + q.stall*float64(waiting))
		gaps := make([]float64, q.tokens-1)
		for k := range gaps {
			gaps[k] = gap
		}
		out[i] = Served{Arrival: at, Latency: Latency{TTFT: start - at + service/float64(q.tokens), TPOT: gap, Gaps: gaps, Wait: start - at}}
	}
	return out, nil
}

func steady(start, lo, hi float64, seeds ...uint64) Steady {
	return Steady{Start: start, Min: lo, Max: hi, Tolerance: 0.025, Seeds: seeds, MinRequests: 400, MaxRequests: 20000}
}

// The judgement leaves out the first and last tenth of the requests by
// arrival, and the gaps that end after the last arrival.
func TestJudgeSteadyWindow(t *testing.T) {
	var rs []Served
	for i := range 20 {
		// Arrivals at 0..19 s, listed backwards; every request waits its
		// index in seconds and has one gap of 0.5 s after a TTFT of 1 s.
		rs = append(rs, Served{Arrival: float64(19 - i), Latency: Latency{TTFT: 1, Gaps: []float64{0.5}, Wait: float64(19 - i)}})
	}
	out := Objective{}.JudgeSteady(1, rs)
	// Judged: arrivals 2..17 (16 requests); median wait of 2..17 is 9.
	if out.Requests != 16 || out.MedianWait != 9 {
		t.Fatalf("judged %d requests, median wait %g; want 16 and 9", out.Requests, out.MedianWait)
	}
	// Request at arrival a has one gap of 3 + a/100 s, ending at a + 4 +
	// a/100: by the last arrival (19 s) for a ≤ 14. The judged requests
	// 2..14 keep theirs, the largest 3.14 s; 15..17 lose theirs.
	for i := range rs {
		rs[i].Gaps = []float64{3 + rs[i].Arrival/100}
	}
	if out := (Objective{}).JudgeSteady(1, rs); !near(out.P99TBT, 3.14) {
		t.Fatalf("p99 TBT over the kept gaps = %g, want 3.14", out.P99TBT)
	}
	if (Objective{}).JudgeSteady(1, nil).Meets {
		t.Fatal("a probe with no requests met the objective")
	}
}

// A server that cannot keep up is never reported as meeting an objective
// that bounds only the gaps between tokens: the search judges it by
// Sarathi-Serve's 2 s median scheduling delay too, over a run long enough
// to expose an overload of the tolerance. On random servers and start
// points the capacity stays below 1 + 2 × tolerance of the rate sustained.
func TestSteadyNeverAboveSaturation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 40 {
		q := &queue{mean: 0.02 + 0.5*r.Float64(), tokens: 4}
		mu := 1 / q.mean
		s := steady(mu*(0.2+3*r.Float64()), mu/50, mu*50, uint64(trial))
		c, err := s.Run(Objective{P99TBT: 10}, q.trial)
		if err != nil {
			t.Fatal(err)
		}
		if c.Rate > mu*(1+2*s.Tolerance) || c.Rate < mu*0.7 {
			t.Fatalf("trial %d: capacity %.4g req/s of a server that sustains %.4g (runs %+v)", trial, c.Rate, mu, c.Seeds[0].Runs)
		}
		for _, run := range c.Seeds[0].Runs {
			if run.Served < s.Requests(waitLimits(Objective{}), run.Rate) || run.Overload > s.Tolerance*(1+1e-9) {
				t.Fatalf("trial %d: run %+v shorter than the rule", trial, run)
			}
		}
	}
}

// The answer belongs to the server, not to the question: with the capacity
// inside the range, doubling Max, halving Min, or doubling the run length
// moves it by less than the tolerance plus the seeds' noise; a rerun is
// identical; every seed's answer brackets a met and a missed probe within
// the tolerance; the probes stay within MaxProbes.
func TestSteadyDoesNotMoveWithTheRange(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 8 {
		q := &queue{mean: 0.05 + 0.2*r.Float64(), stall: 0.05 + 0.3*r.Float64(), tokens: 8}
		mu := 1 / q.mean
		o := Objective{P99TBT: q.mean / 8 * (1.6 + r.Float64()), TTFT: 2 + 5*r.Float64()}
		base := steady(mu*(0.3+r.Float64()), mu/20, mu*4, 1, 2, 3)
		c, err := base.Run(o, q.trial)
		if err != nil {
			t.Fatal(err)
		}
		if c.BelowRange() || c.AboveRange() {
			t.Fatalf("trial %d: capacity %+v outside the range", trial, c)
		}
		if got := c.Probes(); got > base.MaxProbes() {
			t.Fatalf("trial %d: %d probes, MaxProbes %d", trial, got, base.MaxProbes())
		}
		for _, sc := range c.Seeds {
			if sc.Above/sc.Met > 1+base.Tolerance+1e-12 || sc.Rate < sc.Met || sc.Rate > sc.Above {
				t.Fatalf("trial %d seed %d: bracket [%g, %g] wider than the tolerance, or the capacity %g outside it", trial, sc.Seed, sc.Met, sc.Above, sc.Rate)
			}
			met, missed := false, false
			for _, run := range sc.Runs {
				met = met || run.Rate == sc.Met && run.Meets
				missed = missed || run.Rate == sc.Above && !run.Meets
			}
			if !met || !missed {
				t.Fatalf("trial %d seed %d: %g met %v, %g missed %v", trial, sc.Seed, sc.Met, met, sc.Above, missed)
			}
		}
		wider, narrower, longer := base, base, base
		wider.Max *= 2
		narrower.Min /= 2
		longer.MinRequests, longer.MaxRequests = 2*base.Requests(o, c.High*1.1), 40000
		for name, s := range map[string]Steady{"Max ×2": wider, "Min ÷2": narrower, "run ×2": longer} {
			d, err := s.Run(o, q.trial)
			if err != nil {
				t.Fatal(err)
			}
			if moved := math.Abs(d.Rate/c.Rate - 1); moved > base.Tolerance+max(c.Spread(), d.Spread()) {
				t.Errorf("trial %d: %s moved the capacity %.4g → %.4g (%.1f%%; spreads %.1f%%, %.1f%%)", trial, name, c.Rate, d.Rate, 100*moved, 100*c.Spread(), 100*d.Spread())
			}
		}
		again, _ := base.Run(o, q.trial)
		if again.Rate != c.Rate || again.Probes() != c.Probes() {
			t.Fatalf("trial %d: rerun %g (%d probes), first %g (%d)", trial, again.Rate, again.Probes(), c.Rate, c.Probes())
		}
	}
}

// Max and Min are answers when the capacity lies beyond them, and the
// median over seeds is reported with its spread.
func TestSteadyRangeAndSeeds(t *testing.T) {
	q := &queue{mean: 0.1, tokens: 4} // sustains 10 req/s
	c, err := steady(5, 1, 4, 1, 2, 3).Run(Objective{}, q.trial)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AboveRange() || c.Rate != 4 {
		t.Errorf("capacity above a range topping at 4: %+v", c.Rate)
	}
	c, err = steady(5, 20, 80, 1, 2, 3).Run(Objective{}, q.trial)
	if err != nil {
		t.Fatal(err)
	}
	if !c.BelowRange() || c.Seeds[0].Above != 20 {
		t.Errorf("capacity below a range starting at 20: %+v", c.Seeds[0])
	}
	c, err = steady(5, 0.5, 80, 1, 2, 3, 4, 5).Run(Objective{}, q.trial)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Seeds) != 5 || !(c.Low <= c.Rate && c.Rate <= c.High) || c.Spread() != (c.High-c.Low)/c.Rate {
		t.Fatalf("seeds %+v: rate %g in [%g, %g]", len(c.Seeds), c.Rate, c.Low, c.High)
	}
	// The later seeds start from the first one's answer on a finer ladder,
	// so they cost fewer probes than the first.
	if len(c.Seeds[1].Runs) >= len(c.Seeds[0].Runs) {
		t.Errorf("second seed ran %d probes, first %d", len(c.Seeds[1].Runs), len(c.Seeds[0].Runs))
	}
}

// A noisy server whose share of requests meeting TTFT falls slowly with
// the rate, as queueing makes it: one seed's answer is one workload's,
// while the pooled search's answers over disjoint sets of seeds agree
// within the tolerance, each with a 95% interval within it.
func TestSteadyPoolsSeeds(t *testing.T) {
	q := &queue{mean: 0.1, tokens: 4} // sustains 10 req/s
	o := Objective{TTFT: 0.5, Target: 0.9}
	var firsts, pooled []float64
	for set := range 6 {
		seeds := make([]uint64, 64)
		for i := range seeds {
			seeds[i] = uint64(1000*set + i)
		}
		s := Steady{Start: 5, Min: 0.5, Max: 80, Tolerance: 0.05, Seeds: seeds, Pooled: true, MinSeeds: 5, MinRequests: 2000, MaxRequests: 3200}
		c, err := s.Run(o, q.trial)
		if err != nil {
			t.Fatal(err)
		}
		if c.Truncated || c.High/c.Low > 1+s.Tolerance+1e-12 || len(c.Seeds) < s.MinSeeds {
			t.Fatalf("set %d: %d seeds, interval [%g, %g] around %g", set, len(c.Seeds), c.Low, c.High, c.Rate)
		}
		t.Logf("set %d: first seed %.3f, pooled %.3f (%.3f–%.3f) over %d seeds", set, c.Seeds[0].Rate, c.Rate, c.Low, c.High, len(c.Seeds))
		firsts, pooled = append(firsts, c.Seeds[0].Rate), append(pooled, c.Rate)
	}
	spread := func(xs []float64) float64 { return slices.Max(xs)/slices.Min(xs) - 1 }
	if spread(pooled) >= 0.05 || spread(firsts) < 2*spread(pooled) {
		t.Errorf("over six sets of seeds the first seeds' answers spread %.1f%%, the pooled ones %.1f%%", 100*spread(firsts), 100*spread(pooled))
	}
}

// The run length: the fewest requests whose deciding request sees an
// overload of the tolerance drift past the limit and past the noise of
// the arrivals, within the bounds; the runs expose what they promise.
func TestSteadyRunLength(t *testing.T) {
	s := steady(1, 0.1, 100, 1)
	for _, c := range []struct {
		name string
		o    Objective
		rate float64
		want int
	}{
		// Median wait 2 s (the default), decided at the run's middle:
		// noise 1 / (0.5 · 0.025²) = 3,200; drift 2λ / (0.025 · 0.5) = 160λ.
		{"default wait, slow", Objective{P99TBT: 0.1}, 1, 3200},
		{"default wait, drift", Objective{P99TBT: 0.1}, 30, 4800},
		{"capped", Objective{}, 200, 20000},
		// TTFT 0.8 s at 90%: decided at 0.1 + 0.9 · 0.8 = 0.82 of the run;
		// noise 1 / (0.82 · 0.025²) = 1,951.2; drift 0.8λ / (0.025 · 0.82)
		// = 39.02λ, which the TTFT limit needs fewer of than the wait.
		{"TTFT, slow", Objective{TTFT: 0.8, MedianWait: 2}, 1, 1952},
		{"TTFT, drift", Objective{TTFT: 0.8, MedianWait: 2}, 100, 3903},
	} {
		n := s.Requests(c.o, c.rate)
		if n != c.want {
			t.Errorf("%s: Requests at %g req/s = %d, want %d", c.name, c.rate, n, c.want)
		}
		if ov := exposes(c.o, c.rate, n); n < s.MaxRequests && ov > s.Tolerance*(1+1e-12) {
			t.Errorf("%s: a run of %d exposes only %.4g", c.name, n, ov)
		}
	}
	if s.MinRequests = 5000; s.Requests(Objective{}, 1) != 5000 {
		t.Error("MinRequests does not floor the run")
	}
}

func TestSteadyChecksAndErrors(t *testing.T) {
	ok := steady(1, 0.1, 10, 1)
	for _, bad := range []func(*Steady){
		func(s *Steady) { s.Min = 0 },
		func(s *Steady) { s.Max = 0.05 },
		func(s *Steady) { s.Start = math.Inf(1) },
		func(s *Steady) { s.Tolerance = 0 },
		func(s *Steady) { s.Seeds = nil },
		func(s *Steady) { s.MinRequests = 5 },
		func(s *Steady) { s.MaxRequests = 10 },
	} {
		s := ok
		bad(&s)
		if s.Check() == nil || s.MaxProbes() != 0 {
			t.Errorf("%+v accepted", s)
		}
		if _, err := s.Run(Objective{}, (&queue{mean: 1, tokens: 2}).trial); err == nil {
			t.Errorf("Run of %+v ran", s)
		}
	}
	boom := errors.New("boom")
	if _, err := ok.Run(Objective{}, func(float64, int, uint64) ([]Served, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("got %v, want boom", err)
	}
	if _, err := ok.Run(Objective{}, func(float64, int, uint64) ([]Served, error) { return nil, nil }); !errors.Is(err, ErrNoRequests) {
		t.Errorf("got %v, want ErrNoRequests", err)
	}
	if _, err := ok.Run(Objective{MedianWait: -1}, (&queue{mean: 1, tokens: 2}).trial); err == nil {
		t.Error("a negative wait limit ran")
	}
}

// The capacity inside a bracket is where the first limit to fail crosses
// it, on a line of its margin (the share over it less the share allowed)
// against the logarithm of the rate.
func TestCrossing(t *testing.T) {
	o := Objective{P99TBT: 0.1, MedianWait: 2}
	for _, c := range []struct {
		name      string
		at, above Outcome
		want      float64
	}{
		// 0.8% → 1.2% of gaps over 100 ms over 4 → 16 req/s: halfway in log
		// rate, 8, however far the p99 gap itself jumps (a decode step
		// below, a whole prefill above).
		{"TBT", Outcome{Rate: 4, P99TBT: 0.02, TBTOver: 0.008, WaitOver: 0.1}, Outcome{Rate: 16, P99TBT: 0.25, TBTOver: 0.012, WaitOver: 0.1}, 8},
		// The wait fails too, and first: a quarter of the way (40% → 80%
		// waiting past 2 s: margin -0.1 → +0.3), 4·4^0.25.
		{"wait first", Outcome{Rate: 4, TBTOver: 0.008, WaitOver: 0.4}, Outcome{Rate: 16, TBTOver: 0.012, WaitOver: 0.8}, 4 * math.Pow(4, 0.25)},
		// A limit met exactly at the bottom crosses there.
		{"edge", Outcome{Rate: 4, TBTOver: 0.01}, Outcome{Rate: 16, TBTOver: 0.03}, 4},
		// Nothing measured failed above (no request served): the bottom.
		{"no failure", Outcome{Rate: 4}, Outcome{Rate: 16}, 4},
	} {
		if got := crossing(o, c.at, c.above); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: crossing %g, want %g", c.name, got, c.want)
		}
	}
	// Attainment: 95% → 85% against a 90% target over 1 → 4: halfway, 2.
	att := Objective{TTFT: 1}
	if got := crossing(att, Outcome{Rate: 1, Attainment: 0.95}, Outcome{Rate: 4, Attainment: 0.85}); math.Abs(got-2) > 1e-9 {
		t.Errorf("attainment crossing %g, want 2", got)
	}
}

// A margin runs from minus the share allowed to as much above 0.
func TestMargins(t *testing.T) {
	o := Objective{TTFT: 1, P99TBT: 0.1, MedianWait: 2, Target: 0.9}
	for _, c := range []struct {
		out  Outcome
		want [3]float64
	}{
		{Outcome{Attainment: 1}, [3]float64{-0.1, -0.01, -0.5}},
		{Outcome{Attainment: 0.85, TBTOver: 0.015, WaitOver: 0.75}, [3]float64{0.05, 0.005, 0.25}},
		{Outcome{Attainment: 0.2, TBTOver: 0.5, WaitOver: 1}, [3]float64{0.1, 0.01, 0.5}},
	} {
		got := margins(o, c.out)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Errorf("margins of %+v = %v, want %v", c.out, got, c.want)
				break
			}
		}
	}
	if m := margins(Objective{}, Outcome{Attainment: 0.5, TBTOver: 1, WaitOver: 1}); m != [3]float64{} {
		t.Errorf("no limits, margins %v", m)
	}
}

// Student's t's 95% quantiles, tabulated and beyond.
func TestStudentT95(t *testing.T) {
	for _, c := range []struct {
		df   int
		want float64
	}{{1, 12.706}, {4, 2.776}, {9, 2.262}, {30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}} {
		if got := studentT95(c.df); math.Abs(got/c.want-1) > 1e-3 {
			t.Errorf("t(%d) = %g, want %g", c.df, got, c.want)
		}
	}
}

// Afford stops the search at the first probe it refuses: the seeds
// finished so far give the answer, the one stopped keeps its bracket, and
// the capacity says it was truncated; with no seed finished, the first
// one's highest rate met is the answer (a lower bound).
func TestSteadyAfford(t *testing.T) {
	q := &queue{mean: 0.1, tokens: 4} // sustains 10 req/s
	s := steady(5, 0.5, 80, 1, 2, 3)
	full, err := s.Run(Objective{}, q.trial)
	if err != nil {
		t.Fatal(err)
	}
	first := len(full.Seeds[0].Runs)
	probes := 0
	s.Afford = func(float64, int) bool { probes++; return probes <= first+1 }
	c, err := s.Run(Objective{}, q.trial)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Truncated || c.Complete() != 1 || len(c.Seeds) != 2 || c.Seeds[1].Complete || len(c.Seeds[1].Runs) != 1 {
		t.Fatalf("truncated after %d probes: %+v", first+1, c)
	}
	if c.Rate != full.Seeds[0].Rate || c.Low != c.Rate || c.High != c.Rate {
		t.Errorf("capacity %g from the one complete seed, want %g", c.Rate, full.Seeds[0].Rate)
	}
	probes = 0
	s.Afford = func(float64, int) bool { probes++; return probes <= 2 }
	c, err = s.Run(Objective{}, q.trial)
	if err != nil {
		t.Fatal(err)
	}
	sc := c.Seeds[0]
	if !c.Truncated || c.Complete() != 0 || sc.Complete || len(sc.Runs) != 2 {
		t.Fatalf("truncated after 2 probes: %+v", c)
	}
	// Stopped with a bracket a ladder rung wide (5 met, 10 missed), the
	// seed reports the highest rate met, a lower bound, not a crossing read
	// off two distant probes.
	if sc.Met != 5 || sc.Above != 10 || sc.Rate != sc.Met || c.Rate != sc.Rate {
		t.Errorf("the first seed's partial answer %+v, capacity %g: want the highest rate met, 5", sc, c.Rate)
	}
	s.Afford = func(float64, int) bool { return false }
	if c, err := s.Run(Objective{}, q.trial); err != nil || !c.Truncated || c.Rate != 0 || len(c.Seeds[0].Runs) != 0 {
		t.Errorf("nothing affordable: %+v, %v", c, err)
	}
}

// A climbing ladder never multiplies the rate by more than 2 a rung (a
// probe's cost grows with its rate), while a descending one squares its
// step; the first rung is FirstStep when set.
func TestNextRung(t *testing.T) {
	for _, c := range []struct {
		f        float64
		climbing bool
		want     float64
	}{
		{2, true, 2},
		{2, false, 4},
		{4, false, 16},
		{1.1, true, 1.21},
		{1.21, true, 1.4641},
		{1.4641, true, 2},
		{1.1, false, 1.21},
	} {
		if got := nextRung(c.f, c.climbing); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("nextRung(%g, climbing %v) = %g, want %g", c.f, c.climbing, got, c.want)
		}
	}
}

// From a start far below the capacity, every climbing rung of the first
// seed's ladder is at most ×2 above the last (×FirstStep for the first),
// and the search still closes its bracket; MinSeconds lengthens every
// probe to at least rate × MinSeconds requests.
func TestSteadyClimbAndMinSeconds(t *testing.T) {
	q := &queue{mean: 0.05, tokens: 4}
	for _, s := range []Steady{steady(0.5, 0.01, 1000, 1), func() Steady {
		s := steady(0.5, 0.01, 1000, 1)
		s.FirstStep, s.MinSeconds = 1.05, 120
		return s
	}()} {
		c, err := s.Run(Objective{P99TBT: 10}, q.trial)
		if err != nil {
			t.Fatal(err)
		}
		runs := c.Seeds[0].Runs
		if !c.Seeds[0].Complete || c.Rate < 15 || c.Rate > 21 {
			t.Fatalf("capacity %.4g req/s of a server that sustains 20 (runs %+v)", c.Rate, runs)
		}
		first := s.firstStep()
		for i := 1; i < len(runs) && runs[i-1].Meets; i++ {
			limit := 2.0
			if i == 1 {
				limit = first
			}
			if f := runs[i].Rate / runs[i-1].Rate; f > limit*(1+1e-12) {
				t.Fatalf("rung %d climbs ×%.3g (limit ×%g): %+v", i, f, limit, runs)
			}
		}
		for _, run := range runs {
			if float64(run.Served) < run.Rate*s.MinSeconds-1 {
				t.Fatalf("probe at %.4g req/s served %d requests, under %g s of arrivals", run.Rate, run.Served, s.MinSeconds)
			}
		}
	}
	if err := (Steady{Start: 1, Min: 1, Max: 2, Tolerance: 0.1, Seeds: []uint64{1}, MinRequests: 10, MaxRequests: 10, FirstStep: 1}).Check(); err == nil {
		t.Error("Check accepted a first step of 1")
	}
	if err := (Steady{Start: 1, Min: 1, Max: 2, Tolerance: 0.1, Seeds: []uint64{1}, MinRequests: 10, MaxRequests: 10, MinSeconds: -1}).Check(); err == nil {
		t.Error("Check accepted a negative MinSeconds")
	}
}

// With ByOffered a seed's capacity is read at the rate its probes'
// requests arrived at, within the bracket asked for: a stream that arrives
// a tenth faster than asked moves the crossing up to the bracket's top,
// where the rates asked for put it lower, on the same probes.
func TestSteadyByOffered(t *testing.T) {
	q := &queue{mean: 0.05, tokens: 4} // sustains 20 req/s
	fast := func(rate float64, n int, seed uint64) ([]Served, error) { return q.trial(1.1*rate, n, seed) }
	s := steady(10, 0.1, 1000, 1)
	asked, err := s.Run(Objective{P99TBT: 10}, fast)
	if err != nil {
		t.Fatal(err)
	}
	s.ByOffered = true
	offered, err := s.Run(Objective{P99TBT: 10}, fast)
	if err != nil {
		t.Fatal(err)
	}
	a, o := asked.Seeds[0], offered.Seeds[0]
	if a.Met != o.Met || a.Above != o.Above {
		t.Fatalf("the probes moved: bracket %g–%g asked, %g–%g offered", a.Met, a.Above, o.Met, o.Above)
	}
	if !(o.Rate > a.Rate) || !(o.Rate <= o.Above) || !(a.Rate >= a.Met) {
		t.Fatalf("capacity %.4g asked for, %.4g offered, bracket %.4g–%.4g: want the offered one higher, within the bracket", a.Rate, o.Rate, a.Met, a.Above)
	}
	out := Objective{}.JudgeSteady(5, []Served{{Arrival: 0}, {Arrival: 1}, {Arrival: 2}, {Arrival: 3}, {Arrival: 4}, {Arrival: 5}, {Arrival: 6}, {Arrival: 7}, {Arrival: 8}, {Arrival: 9}})
	// Judged: arrivals 1..8, 8 requests over 7 s.
	if !near(out.Offered, 1) {
		t.Fatalf("offered %g req/s, want 1 (7 gaps of 1 s)", out.Offered)
	}
}

// A probe is read at the rate its requests arrived at only while that
// lies within a quarter of the rate asked.
func TestPoissonScatter(t *testing.T) {
	for _, c := range []struct {
		rate, offered float64
		want          bool
	}{{10, 10.3, true}, {10, 8.2, true}, {10, 12.6, false}, {10, 7.9, false}, {10, 0, false}} {
		if got := poissonScatter(Outcome{Rate: c.rate, Offered: c.offered}); got != c.want {
			t.Errorf("asked %g, offered %g: %v, want %v", c.rate, c.offered, got, c.want)
		}
	}
}
