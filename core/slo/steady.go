package slo

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The steady-state capacity search (Steady). Search above probes whatever
// runs its caller supplies; Steady also decides what a run is, so that its
// answer belongs to the system served and not to how the question was
// put:
//
//   - Steady state. A probe serves a run of Poisson arrivals and the
//     search judges only its middle: the first WarmUpShare of the
//     requests, by arrival, are left out (they found an empty server), and
//     so are the last DrainShare (they are served while arrivals stop and
//     the batch empties), and every gap between tokens that ends after the
//     last arrival (the load is no longer offered then).
//   - Keeping up. A server that cannot keep up has a queue that grows
//     for as long as arrivals go on, so only a limit on waiting sees it:
//     an objective's TTFT limit, or its limit on the median scheduling
//     delay (the time from arrival to first being scheduled; Sarathi-Serve's
//     capacity search bounds it at 2 s, microsoft/sarathi-serve @ ceaa066,
//     sarathi/benchmark/capacity_search/main.py). An objective with neither
//     is judged with Sarathi-Serve's 2 s (DefaultMedianWait).
//   - Run length. At a rate a fraction ε above what the server sustains,
//     the backlog grows by ε requests per request arrived, so a request
//     arriving k requests into the run waits about ε·k/λ seconds more than
//     it would in steady state. A run exposes an overload of ε once the
//     request that decides a limit on waiting (the median one, or the one
//     at the attainment target: it arrives at a share pos of the run) waits
//     past the limit, and once that drift outgrows the noise of Poisson
//     arrivals (√k requests): k ≥ 1/ε². So a probe at rate λ serves the
//     larger of λ · limit / (Tolerance · pos) and 1 / (pos · Tolerance²)
//     requests (3,200 at 2.5% judged at the median), at least MinRequests
//     and at most MaxRequests (its cost bound). The run length depends on
//     the objective, the tolerance and the rate, never on a window a reader
//     chose; where MaxRequests cuts it, the run's Overload says how large
//     an overload it still exposes. A caller whose probes pay a fixed
//     lead-in before the requests judged (a ramp of conversations) sets
//     MinSeconds to its length: the probe then judges at least as long,
//     which costs at most twice as much and shows what a short window
//     hides (an overload that builds over tens of seconds).
//   - Bisection. Each seed's search starts at Start, which the caller
//     derives from the system alone (an estimate of its saturation rate),
//     climbs by doubling it or descends by ×2, ×4, ×16, … (the first rung
//     is FirstStep, 2 unless the caller's Start is close; a probe's cost
//     grows with its rate, so a climb never squares past ×2: nextRung)
//     until one rate meets the objective and the next misses, then
//     bisects geometrically until the two are within a factor
//     1 + Tolerance (Sarathi-Serve bisects to 2.5%). Min and Max only stop
//     the ladder: they never move a probe while the capacity lies between
//     them, so neither a wider range nor a grid of rates to chart changes
//     the answer.
//   - The answer inside the bracket. A seed's capacity is read where the
//     limit that failed at the bracket's top crosses its limit, on a line
//     between the two probes (the limit's margin against the logarithm of
//     the rate), so it lies between the highest rate that met the
//     objective and the lowest that did not. Reporting the bracket's
//     bottom instead would quantize every seed's answer to the bisection's
//     grid (steps of about Tolerance), and the median over seeds would jump
//     by whole steps. A limit's margin is the share of what it counts that
//     is over it, less the share it allows: target − attainment, the share
//     of gaps over the P99TBT limit less 1%, the share of requests waiting
//     past MedianWait less half; it is capped at the share allowed above 0
//     (margins).
//     With ByOffered the line is drawn against the rate each probe's
//     judged requests arrived at (their count over their span) rather
//     than the rate asked for: a Poisson stream of a few thousand
//     requests arrives 2–4% off its rate (conversations, which bring their
//     turns in clusters, more), the probe's verdict follows the load it
//     got, and reading the crossing at that load (kept within the bracket
//     asked for) removes most of the scatter it adds to every seed's
//     answer.
//     These shares move smoothly with the rate where the percentiles jump:
//     a p99 gap is a decode step until 1% of gaps stall behind a prefill,
//     then a whole prefill, and a line through the two percentiles put
//     every crossing near the bracket's bottom.
//   - Seeds. Every seed draws another workload; the capacity is the median
//     of the seeds' and the spread their range. The seeds after the first
//     start at the first one's capacity and climb in steps of 1 + 2 ×
//     Tolerance (laterStep), squaring the step each time (climbing: up
//     to ×2), since their
//     answers lie near: three probes when a seed's capacity lies within
//     that step of the first one's.
//   - Seeds pooled (Pooled), for an objective whose single workloads'
//     answers scatter more than the tolerance. Near capacity requests
//     queue behind each other, so the share of a probe's requests meeting
//     TTFT wanders by two or three points from one workload of 500 requests
//     to the next, while it may fall by only 0.3 per unit of the rate's
//     logarithm: one seed's answer then moves by 5–15%, the median of five
//     by half that, and the later seeds' three probes each, starting at
//     the first seed's answer, lean toward it. So the pooled search spends
//     its seeds where they inform: after the first seed's bisection each
//     later seed serves one probe, a step of 1 + 2 × Tolerance below the
//     answer so far, then above, in turn, and the answer is where the
//     least-squares line through every probe's margin (the first seed's
//     bracket and each later probe) against the logarithm of the rate
//     crosses 0, for the limit that crosses first. Steady enough is decided
//     by that crossing's 95% interval: Fieller's, for the ratio of the
//     line's level to its slope, from the probes' scatter about the line.
//     It is unbounded until the slope is surely above 0 and narrows as
//     probes accrue; the search stops once it lies within a factor 1 +
//     Tolerance (after at least MinSeeds seeds), when the seeds run out, or
//     when Afford refuses a probe (SteadyCapacity.Truncated), and reports
//     the interval as Low and High.

// Shares of a probe's requests, by arrival, that the judgement leaves out.
const (
	WarmUpShare = 0.1
	DrainShare  = 0.1
)

// laterStep is the first rung of the seeds after the first, in tolerances.
const laterStep = 2

// DefaultMedianWait is the limit on the median scheduling delay, in
// seconds, that Steady applies to an objective that bounds no waiting:
// Sarathi-Serve's capacity search's.
const DefaultMedianWait = 2.0

// Served is one request of a probe: when it arrived and what it saw.
type Served struct {
	Arrival float64
	Latency
}

// Trial serves requests Poisson arrivals at rate (req/s) drawn from seed
// and returns every request it served, in any order.
type Trial func(rate float64, requests int, seed uint64) ([]Served, error)

// Steady is a steady-state capacity search over seeds.
type Steady struct {
	// Start is the first rate each search probes, req/s: an estimate of
	// the system's saturation rate that depends on nothing but the
	// system.
	Start float64
	// Min and Max bound the rates probed, 0 < Min ≤ Max.
	Min, Max float64
	// Tolerance is how close the bisection brings the highest rate that met
	// the objective to the lowest that did not, as a factor 1 + Tolerance;
	// it is also the smallest overload every run must expose.
	Tolerance float64
	// Seeds are the workloads searched, one search each.
	Seeds []uint64
	// MinRequests and MaxRequests bound a probe's run length.
	MinRequests, MaxRequests int
	// MinSeconds, when set, is the shortest time a probe's arrivals span:
	// a probe at rate serves at least rate × MinSeconds requests (within
	// MaxRequests). A caller whose probes each pay a fixed cost before
	// the requests judged (a ramp) sets it to that cost's length, since a
	// probe's noise falls with the requests it judges.
	MinSeconds float64
	// FirstStep is the first rung of the first seed's ladder, a factor
	// above 1 (0: 2). A caller whose Start estimates the capacity closely
	// sets it near 1 + 2 × Tolerance, so that the ladder does not climb
	// past the capacity by ×2.
	FirstStep float64
	// ByOffered reads each seed's capacity at the rates its two bracketing
	// probes' judged requests arrived at (Outcome.Offered) instead of the
	// rates asked for (see the doc above). Pooled searches ignore it.
	ByOffered bool
	// Pooled pools the seeds instead of taking the median of their
	// answers: after the first seed's bisection each later seed serves
	// one probe near the answer so far, until the answer is steady (see
	// the doc above). Seeds are then the most it may use, and MinSeeds the
	// fewest whose probes may show the answer steady.
	Pooled   bool
	MinSeeds int
	// Afford, when set, is asked before every probe whether a run of
	// requests at rate fits what the caller may still spend; the search
	// stops at the first probe it refuses (SteadyCapacity.Truncated), so a
	// caller bounds its cost without knowing the answer in advance.
	Afford func(rate float64, requests int) bool
}

// firstStep is the first seed's first rung (FirstStep, 2 by default).
func (s Steady) firstStep() float64 {
	if s.FirstStep == 0 {
		return 2
	}
	return s.FirstStep
}

// errUnaffordable stops a search at a probe Afford refused.
var errUnaffordable = errors.New("slo: the probe does not fit the search's budget")

// Check reports settings the search cannot use.
func (s Steady) Check() error {
	switch {
	case !(s.Min > 0) || !(s.Max >= s.Min) || math.IsInf(s.Max, 1):
		return fmt.Errorf("slo: search range [%g, %g] req/s, want 0 < Min ≤ Max", s.Min, s.Max)
	case !(s.Start > 0) || math.IsInf(s.Start, 1):
		return fmt.Errorf("slo: start %g req/s, want a finite rate > 0", s.Start)
	case !(s.Tolerance > 0 && s.Tolerance < 1):
		return fmt.Errorf("slo: tolerance %g, want a share in (0, 1)", s.Tolerance)
	case len(s.Seeds) == 0:
		return errors.New("slo: no seeds, want at least one")
	case s.FirstStep != 0 && !(s.FirstStep > 1 && s.FirstStep <= 4):
		return fmt.Errorf("slo: first step %g, want a factor in (1, 4]", s.FirstStep)
	case !(s.MinSeconds >= 0) || math.IsInf(s.MinSeconds, 1):
		return fmt.Errorf("slo: %g s a probe at least, want a finite time ≥ 0", s.MinSeconds)
	case s.MinRequests < 10 || s.MaxRequests < s.MinRequests:
		return fmt.Errorf("slo: %d–%d requests per probe, want 10 ≤ MinRequests ≤ MaxRequests", s.MinRequests, s.MaxRequests)
	}
	return nil
}

// waitLimits are the limits on waiting the search judges o by: its own,
// or DefaultMedianWait when it has none.
func waitLimits(o Objective) Objective {
	if o.TTFT == 0 && o.MedianWait == 0 {
		o.MedianWait = DefaultMedianWait
	}
	return o
}

// judgedShare is where, as a share of the whole run by arrival, the
// request arrives that decides a quantile or attainment q of the judged
// requests.
func judgedShare(q float64) float64 { return WarmUpShare + q*(1-WarmUpShare-DrainShare) }

// deciding is the limits on waiting of o (set by waitLimits), each with
// where its deciding request arrives.
func deciding(o Objective) (limits, pos []float64) {
	if o.MedianWait > 0 {
		limits, pos = append(limits, o.MedianWait), append(pos, judgedShare(0.5))
	}
	if o.TTFT > 0 {
		limits, pos = append(limits, o.TTFT), append(pos, judgedShare(o.target()))
	}
	return limits, pos
}

// exposes is the smallest overload a run of n requests at rate is sure to
// expose under o: the smallest, over o's limits on waiting, of the larger
// of the drift's and the noise's bounds.
func exposes(o Objective, rate float64, n int) float64 {
	best := math.Inf(1)
	limits, pos := deciding(waitLimits(o))
	for i, limit := range limits {
		k := pos[i] * float64(n)
		best = min(best, max(limit*rate/k, 1/math.Sqrt(k)))
	}
	return best
}

// Requests is the run length of a probe at rate under o: the fewest
// requests that expose an overload of Tolerance, within [MinRequests,
// MaxRequests].
func (s Steady) Requests(o Objective, rate float64) int {
	n := math.Inf(1)
	limits, pos := deciding(waitLimits(o))
	for i, limit := range limits {
		n = min(n, max(rate*limit/(s.Tolerance*pos[i]), 1/(pos[i]*s.Tolerance*s.Tolerance)))
	}
	n = max(n, rate*s.MinSeconds)
	if n = math.Ceil(n); !(n < float64(s.MaxRequests)) {
		return s.MaxRequests
	}
	return max(s.MinRequests, int(n))
}

// SteadyOutcome is one probe judged in steady state.
type SteadyOutcome struct {
	Outcome
	// Seed is the workload it served.
	Seed uint64
	// Served counts the requests run, of which Outcome.Requests were
	// judged.
	Served int
	// Overload is the smallest overload (rate over the rate sustained,
	// less 1) that a run of this length is sure to expose.
	Overload float64
}

// SeedCapacity is one seed's search.
type SeedCapacity struct {
	Seed uint64
	// Met is the highest probed rate that met the objective; 0 when even
	// Min did not.
	Met float64
	// Above is the lowest probed rate above Met that did not; 0 when Max
	// met it.
	Above float64
	// Rate is the seed's capacity: where the limit that failed at Above
	// crosses its limit, between Met and Above; Met when Above is 0 (the
	// capacity is at least Max), 0 when Met is. A pooled search's later
	// seed serves one probe, which says no capacity of its own: 0.
	Rate float64
	Runs []SteadyOutcome
	// Complete reports that the search closed its bracket (within the
	// tolerance, or at Min or Max); a seed Afford stopped is not.
	Complete bool
}

// SteadyCapacity is a search's answer over its seeds.
type SteadyCapacity struct {
	// Rate is the median of the complete seeds' capacities (the lower of
	// the two middle ones for an even count), req/s; with no complete seed,
	// the first seed's answer so far. Pooled: where the pooled line crosses
	// 0 (the first seed's answer while no later seed has run).
	Rate float64
	// Low and High are the lowest and highest complete seed's. Pooled:
	// the bounds of Rate's 95% interval, within [Min, Max] (those two
	// while the interval is unbounded).
	Low, High float64
	// Seeds are the seeds searched, in order; the last may be incomplete.
	Seeds []SeedCapacity
	// Truncated reports that Afford stopped the search before every seed
	// was complete (pooled: before the answer was steady).
	Truncated bool
	// Pooled reports that the seeds were pooled (Steady.Pooled).
	Pooled bool
}

// Complete counts the seeds whose search closed its bracket.
func (c SteadyCapacity) Complete() int {
	n := 0
	for _, sc := range c.Seeds {
		if sc.Complete {
			n++
		}
	}
	return n
}

// Spread is (High − Low) / Rate: how far the seeds disagree; 0 at a rate
// of 0.
func (c SteadyCapacity) Spread() float64 {
	if c.Rate == 0 {
		return 0
	}
	return (c.High - c.Low) / c.Rate
}

// BelowRange reports that even Min missed the objective on the median
// seed (or, with no seed complete, that no probe met it).
func (c SteadyCapacity) BelowRange() bool { return c.Rate == 0 }

// AboveRange reports that Max met it on at least half the complete seeds
// (pooled: on the first seed, which then ends the search).
func (c SteadyCapacity) AboveRange() bool {
	if c.Pooled && len(c.Seeds) > 0 {
		sc := c.Seeds[0]
		return sc.Complete && sc.Above == 0 && sc.Met > 0
	}
	n := 0
	for _, sc := range c.Seeds {
		if sc.Complete && sc.Above == 0 && sc.Met > 0 {
			n++
		}
	}
	return n > 0 && 2*n >= c.Complete()
}

// Probes counts the probes run over every seed.
func (c SteadyCapacity) Probes() int {
	n := 0
	for _, sc := range c.Seeds {
		n += len(sc.Runs)
	}
	return n
}

// JudgeSteady judges a probe's requests at rate against o in steady state:
// it leaves out the warm-up and drain requests and the gaps that end
// after the last arrival. o's limits apply as stated (no default wait).
func (o Objective) JudgeSteady(rate float64, rs []Served) Outcome {
	if len(rs) == 0 {
		return Outcome{Rate: rate}
	}
	byArrival := slices.Clone(rs)
	slices.SortStableFunc(byArrival, func(a, b Served) int { return cmp.Compare(a.Arrival, b.Arrival) })
	n := len(byArrival)
	last := byArrival[n-1].Arrival
	judged := byArrival[int(WarmUpShare*float64(n)) : n-int(DrainShare*float64(n))]
	ls := make([]Latency, len(judged))
	for i, r := range judged {
		l := r.Latency
		// The gaps that end before the last arrival, in order: a request's
		// tokens come in time order, so they are a prefix.
		t, k := r.Arrival+l.TTFT, 0
		for k < len(l.Gaps) && t+l.Gaps[k] <= last {
			t += l.Gaps[k]
			k++
		}
		l.Gaps = l.Gaps[:k:k]
		ls[i] = l
	}
	out := o.Judge(rate, ls)
	if k := len(judged); k > 1 && judged[k-1].Arrival > judged[0].Arrival {
		out.Offered = float64(k-1) / (judged[k-1].Arrival - judged[0].Arrival)
	}
	return out
}

// Run searches for the capacity under o, one search per seed.
func (s Steady) Run(o Objective, trial Trial) (SteadyCapacity, error) {
	if err := s.Check(); err != nil {
		return SteadyCapacity{}, err
	}
	if err := o.Check(); err != nil {
		return SteadyCapacity{}, err
	}
	judged := waitLimits(o)
	if s.Pooled {
		return s.pooled(judged, trial)
	}
	var c SteadyCapacity
	for i, seed := range s.Seeds {
		start, step := s.Start, s.firstStep()
		if i > 0 && first(c.Seeds).Met > 0 && first(c.Seeds).Above > 0 {
			start, step = medianRate(c.Seeds), 1+laterStep*s.Tolerance
		}
		sc, err := s.seed(judged, trial, seed, start, step)
		c.Seeds = append(c.Seeds, sc)
		if errors.Is(err, errUnaffordable) {
			c.Truncated = true
			break
		}
		if err != nil {
			return c, err
		}
	}
	var rates []float64
	for _, sc := range c.Seeds {
		if sc.Complete {
			rates = append(rates, sc.Rate)
		}
	}
	if len(rates) == 0 {
		sc := first(c.Seeds)
		c.Rate, c.Low, c.High = sc.Rate, sc.Rate, sc.Rate
		return c, nil
	}
	slices.Sort(rates)
	c.Rate, c.Low, c.High = rates[(len(rates)-1)/2], rates[0], rates[len(rates)-1]
	return c, nil
}

func first(s []SeedCapacity) SeedCapacity { return s[0] }

// medianRate is the median of the complete seeds' capacities (the lower of
// the two middle ones).
func medianRate(seeds []SeedCapacity) float64 {
	var rates []float64
	for _, sc := range seeds {
		if sc.Complete {
			rates = append(rates, sc.Rate)
		}
	}
	slices.Sort(rates)
	return rates[(len(rates)-1)/2]
}

// pooled is the pooled search under o (its limits on waiting set).
func (s Steady) pooled(o Objective, trial Trial) (SteadyCapacity, error) {
	c := SteadyCapacity{Pooled: true}
	sc, err := s.seed(o, trial, s.Seeds[0], s.Start, s.firstStep())
	c.Seeds = append(c.Seeds, sc)
	c.Rate, c.Low, c.High = sc.Rate, sc.Rate, sc.Rate
	switch {
	case errors.Is(err, errUnaffordable):
		c.Truncated = true
		return c, nil
	case err != nil:
		return c, err
	case sc.Met == 0 || sc.Above == 0:
		return c, nil // beyond Min or Max: nothing to pool
	}
	p := newPool(o, sc)
	step := 1 + laterStep*s.Tolerance
	for i, seed := range s.Seeds[1:] {
		if i+1 >= s.MinSeeds && p.steady(s.Tolerance) {
			break
		}
		// A step below the answer so far, then a step above, in turn; the
		// answer is held within a step of the rates probed so far, so that
		// an early, noisy line cannot lead the probes away.
		lo, hi := p.span()
		at := min(max(p.rate(sc.Rate), lo/step), hi*step)
		rate := at / step
		if i%2 == 1 {
			rate = at * step
		}
		out, err := s.probe(o, trial, seed, min(max(rate, s.Min), s.Max))
		if errors.Is(err, errUnaffordable) {
			c.Truncated = true
			break
		}
		if err != nil {
			return c, err
		}
		later := SeedCapacity{Seed: seed, Runs: []SteadyOutcome{out}, Complete: true}
		if out.Meets {
			later.Met = out.Rate
		} else {
			later.Above = out.Rate
		}
		c.Seeds = append(c.Seeds, later)
		p.add(out.Outcome)
	}
	if len(c.Seeds) == 1 {
		return c, nil // Afford refused the first later seed
	}
	c.Rate = min(max(p.rate(sc.Rate), s.Min), s.Max)
	c.Low, c.High = s.Min, s.Max
	if lo, hi, ok := p.bounds(); ok {
		c.Low, c.High = min(max(lo, s.Min), c.Rate), max(min(hi, s.Max), c.Rate)
	}
	return c, nil
}

// probe serves one run of seed's workload at rate and judges it.
func (s Steady) probe(o Objective, trial Trial, seed uint64, rate float64) (SteadyOutcome, error) {
	n := s.Requests(o, rate)
	if s.Afford != nil && !s.Afford(rate, n) {
		return SteadyOutcome{}, errUnaffordable
	}
	rs, err := trial(rate, n, seed)
	if err != nil {
		return SteadyOutcome{}, err
	}
	if len(rs) == 0 {
		return SteadyOutcome{}, fmt.Errorf("%w (rate %g req/s)", ErrNoRequests, rate)
	}
	return SteadyOutcome{Outcome: o.JudgeSteady(rate, rs), Seed: seed, Served: len(rs), Overload: exposes(o, rate, n)}, nil
}

// seed is one seed's search from start, its ladder climbing by step (the
// step squaring each rung) and then bisecting.
func (s Steady) seed(o Objective, trial Trial, seed uint64, start, step float64) (sc SeedCapacity, err error) {
	sc.Seed = seed
	lo, hi := 0.0, 0.0 // the highest rate met, the lowest missed above it
	// Whatever ends the search, the seed reports the bracket it reached.
	// Its capacity is read inside the bracket only when the search
	// finished it; a search stopped early (Afford) may leave a bracket of
	// a whole ladder rung (×4, ×16), where a crossing read off two distant
	// probes is no measurement, so it reports the highest rate met, a
	// lower bound.
	defer func() {
		sc.Met, sc.Above = lo, hi
		sc.Complete = err == nil
		switch {
		case lo > 0 && hi > 0 && sc.Complete:
			at, above := sc.outcomeAt(lo), sc.outcomeAt(hi)
			if s.ByOffered && above.Offered > at.Offered && poissonScatter(at) && poissonScatter(above) {
				// The crossing at the rates offered (two probes whose
				// offered rates came out in the wrong order say nothing
				// more than their asked-for ones).
				// It stays within the bracket asked for, so that the
				// capacity lies between a rate that met the objective and
				// one that missed, as the probes were asked.
				a, b := at, above
				a.Rate, b.Rate = at.Offered, above.Offered
				sc.Rate = min(max(crossing(o, a, b), lo), hi)
			} else {
				sc.Rate = crossing(o, at, above)
			}
		default:
			sc.Rate = lo
		}
	}()
	try := func(rate float64) (bool, error) {
		out, err := s.probe(o, trial, seed, rate)
		if err != nil {
			return false, err
		}
		sc.Runs = append(sc.Runs, out)
		if out.Meets {
			lo = rate
		} else {
			hi = rate
		}
		return out.Meets, nil
	}
	rate := min(max(start, s.Min), s.Max)
	ok, err := try(rate)
	if err != nil {
		return sc, err
	}
	// The ladder: up from a rate that met the objective, down from one
	// that missed, until the other side is found or a bound is reached.
	for f := step; lo == 0 || hi == 0; f = nextRung(f, ok) {
		if ok {
			if lo == s.Max {
				return sc, nil // the capacity is at least Max
			}
			rate = min(lo*f, s.Max)
		} else {
			if hi == s.Min {
				return sc, nil // even Min misses
			}
			rate = max(hi/f, s.Min)
		}
		if ok, err = try(rate); err != nil {
			return sc, err
		}
	}
	for hi > lo*(1+s.Tolerance) {
		mid := math.Sqrt(lo * hi)
		if !(mid > lo && mid < hi) {
			break // as narrow as float64 allows
		}
		if _, err := try(mid); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// poissonScatter reports that out's requests arrived within a quarter of
// the rate asked, as a Poisson stream of a hundred requests or more all
// but always does; a stream further off (a trace's burst) is read at the
// rate asked.
func poissonScatter(out Outcome) bool {
	return out.Offered > 0 && math.Abs(math.Log(out.Offered/out.Rate)) < math.Log(1.25)
}

// maxClimb is the largest factor between two rungs of a climbing ladder.
const maxClimb = 2.0

// nextRung is the ladder's factor after a rung of f: squared, so that a
// ladder crosses the range in few rungs, but a climbing one (the last
// probe met the objective, so the next goes up) by at most maxClimb a
// rung. A probe costs in proportion to its rate (a run of a fixed
// length in time, or longer), so a climb past the capacity by ×4 or ×16
// would cost more than the whole bisection that follows; a descent's
// probes only get cheaper.
func nextRung(f float64, climbing bool) float64 {
	if climbing {
		return min(f*f, max(f, maxClimb))
	}
	return f * f
}

// outcomeAt is the seed's probe at rate (the last one there).
func (sc SeedCapacity) outcomeAt(rate float64) Outcome {
	for i := len(sc.Runs) - 1; i >= 0; i-- {
		if sc.Runs[i].Rate == rate {
			return sc.Runs[i].Outcome
		}
	}
	return Outcome{Rate: rate}
}

// margins are an outcome's distance past each of o's limits, as a share
// of the limit (attainment: the share of requests short of the target),
// in the order attainment, p99 TBT, median wait; negative within a limit,
// and 0 for a limit o does not set.
func margins(o Objective, out Outcome) [3]float64 {
	var m [3]float64
	if o.TTFT > 0 || o.TPOT > 0 {
		m[0] = min(o.target()-out.Attainment, 1-o.target())
	}
	if o.P99TBT > 0 {
		m[1] = min(out.TBTOver-0.01, 0.01)
	}
	if o.MedianWait > 0 {
		m[2] = min(out.WaitOver-0.5, 0.5)
	}
	return m
}

// crossing is where, between a probe that met o (at) and the next one up
// that did not (above), the first limit to fail crosses it: for each limit
// past at above, the rate where its margin, drawn as a line against the
// logarithm of the rate, reaches 0; the lowest of them. Within
// [at.Rate, above.Rate].
func crossing(o Objective, at, above Outcome) float64 {
	lo, hi := margins(o, at), margins(o, above)
	best := math.Inf(1)
	for i := range lo {
		if !(hi[i] > 0) {
			continue
		}
		f := 0.0 // a limit at the very edge at the bottom crosses there
		if lo[i] < 0 {
			f = -lo[i] / (hi[i] - lo[i])
		}
		best = min(best, at.Rate*math.Pow(above.Rate/at.Rate, f))
	}
	if math.IsInf(best, 1) {
		return at.Rate // no limit failed above (it served no request)
	}
	return min(max(best, at.Rate), above.Rate)
}

// ladderRungs is the most rungs a ladder from start climbs or descends by
// step (squaring each rung) before it reaches a bound, and the widest
// ratio between two rungs.
func (s Steady) ladderRungs(start, step float64) (rungs int, widest float64) {
	widest = 1
	for _, bound := range []float64{s.Max, s.Min} {
		n, at := 0, min(max(start, s.Min), s.Max)
		for f := step; at != bound; f = nextRung(f, bound == s.Max) {
			next := min(at*f, s.Max)
			if bound == s.Min {
				next = max(at/f, s.Min)
			}
			widest = max(widest, max(next/at, at/next))
			at = next
			n++
		}
		rungs = max(rungs, n)
	}
	return rungs, widest
}

// bisections is how many geometric bisections bring a bracket of ratio r
// within 1 + Tolerance.
func (s Steady) bisections(r float64) int {
	n := 0
	for ; r > 1+s.Tolerance; n++ {
		r = math.Sqrt(r)
	}
	return n
}

// MaxProbes is the most probes Run can make over all its seeds, whatever
// the answers: for each seed the first rate, every rung of the longest
// ladder and the bisection of its widest rung. The seeds after the first
// start at Start, or anywhere in [Min, Max] with the finer ladder.
func (s Steady) MaxProbes() int {
	if s.Check() != nil {
		return 0
	}
	rungs, widest := s.ladderRungs(s.Start, s.firstStep())
	firstSeed := 1 + rungs + s.bisections(widest)
	if s.Pooled {
		return firstSeed + len(s.Seeds) - 1
	}
	later := firstSeed
	step := 1 + laterStep*s.Tolerance
	for _, from := range []float64{s.Min, s.Max} {
		r, w := s.ladderRungs(from, step)
		later = max(later, 1+r+s.bisections(w))
	}
	return firstSeed + (len(s.Seeds)-1)*later
}

// MaxServed is the most requests Run can serve over all its probes under
// o: MaxProbes runs of the longest run length in the range.
func (s Steady) MaxServed(o Objective) int {
	return s.MaxProbes() * s.Requests(waitLimits(o), s.Max)
}
