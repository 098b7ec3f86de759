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
//     an overload it still exposes.
//   - Bisection. Each seed's search starts at Start, which the caller
//     derives from the system alone (an estimate of its saturation rate),
//     doubles or halves it until one rate meets the objective and the next
//     misses, then bisects geometrically until the two are within a factor
//     1 + Tolerance (Sarathi-Serve bisects to 2.5%). Min and Max only stop
//     the ladder: they never move a probe while the capacity lies between
//     them, so neither a wider range nor a grid of rates to chart changes
//     the answer.
//   - The answer inside the bracket. A seed's capacity is read where the
//     limit that failed at the bracket's top crosses its limit, on a line
//     between the two probes (the limit's relative margin against the
//     logarithm of the rate), so it lies between the highest rate that met
//     the objective and the lowest that did not. Reporting the bracket's
//     bottom instead would quantize every seed's answer to the bisection's
//     grid (steps of about Tolerance), and the median over seeds would jump
//     by whole steps.
//   - Seeds. Every seed draws another workload; the capacity is the median
//     of the seeds' and the spread their range. The seeds after the first
//     start at the first one's capacity and climb in steps of 1 + 2 ×
//     Tolerance (laterStep), squaring the step each time, since their
//     answers lie near: three probes when a seed's capacity lies within
//     that step of the first one's.

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
	// Afford, when set, is asked before every probe whether a run of
	// requests at rate fits what the caller may still spend; the search
	// stops at the first probe it refuses (SteadyCapacity.Truncated), so a
	// caller bounds its cost without knowing the answer in advance.
	Afford func(rate float64, requests int) bool
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
	// capacity is at least Max), 0 when Met is.
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
	// the first seed's answer so far.
	Rate float64
	// Low and High are the lowest and highest complete seed's.
	Low, High float64
	// Seeds are the seeds searched, in order; the last may be incomplete.
	Seeds []SeedCapacity
	// Truncated reports that Afford stopped the search before every seed
	// was complete.
	Truncated bool
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

// AboveRange reports that Max met it on at least half the complete seeds.
func (c SteadyCapacity) AboveRange() bool {
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
	return o.Judge(rate, ls)
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
	var c SteadyCapacity
	for i, seed := range s.Seeds {
		start, step := s.Start, 2.0
		if i > 0 && first(c.Seeds).Met > 0 && first(c.Seeds).Above > 0 {
			start, step = first(c.Seeds).Rate, 1+laterStep*s.Tolerance
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
			sc.Rate = crossing(o, sc.outcomeAt(lo), sc.outcomeAt(hi))
		default:
			sc.Rate = lo
		}
	}()
	try := func(rate float64) (bool, error) {
		n := s.Requests(o, rate)
		if s.Afford != nil && !s.Afford(rate, n) {
			return false, errUnaffordable
		}
		rs, err := trial(rate, n, seed)
		if err != nil {
			return false, err
		}
		if len(rs) == 0 {
			return false, fmt.Errorf("%w (rate %g req/s)", ErrNoRequests, rate)
		}
		out := SteadyOutcome{Outcome: o.JudgeSteady(rate, rs), Seed: seed, Served: len(rs), Overload: exposes(o, rate, n)}
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
	for f := step; lo == 0 || hi == 0; f *= f {
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
		m[0] = o.target() - out.Attainment
	}
	if o.P99TBT > 0 {
		m[1] = out.P99TBT/o.P99TBT - 1
	}
	if o.MedianWait > 0 {
		m[2] = out.MedianWait/o.MedianWait - 1
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
		for f := step; at != bound; f *= f {
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
	rungs, widest := s.ladderRungs(s.Start, 2)
	firstSeed := 1 + rungs + s.bisections(widest)
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
