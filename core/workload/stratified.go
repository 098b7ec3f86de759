package workload

import (
	"math"
	"math/rand/v2"

	"github.com/inferlab/inferlab/internal/detmath"
)

// Stratified lengths: variance reduction for the probes of a capacity
// search. A probe of n requests whose lengths are drawn independently
// holds whatever handful of very long prompts and outputs its seed
// happened to draw, and near the capacity those few decide whether the
// share of requests the SLO asks for keeps its limits: the probes'
// answers then scatter with the seed, not with the system. So Stratify
// draws n lengths stratified (Latin hypercube sampling, McKay, Beckman &
// Conover 1979): the distribution is cut into n equally likely strata
// and each stratum gives one length, its quantile at the stratum's
// middle, handed out in an order the seed shuffles. Every probe then
// holds the distribution itself, tail included, and the seeds differ only
// in the order of the lengths (and in whatever else the generator draws,
// such as the arrival times). The distribution is the workload's; only
// the probe's sampling noise goes.

// Quantiler is a Lengths that states its quantiles: Quantile(p), for
// 0 < p < 1, is the p-quantile of what Draw returns, rounded and clamped
// as Draw rounds and clamps.
type Quantiler interface {
	Lengths
	Quantile(p float64) int
}

// Quantile is N.
func (f Fixed) Quantile(float64) int { return f.N }

// Quantile is the p-quantile of the integers Min to Max: Min when Max ≤
// Min.
func (u Uniform) Quantile(p float64) int {
	if u.Max <= u.Min {
		return u.Min
	}
	return min(u.Min+int(p*float64(u.Max-u.Min+1)), u.Max)
}

// Quantile is the lognormal's p-quantile, Median · e^(Sigma·z_p), rounded
// and clamped to [Min, Max]; Min (clamped) when Median ≤ 0.
func (l LongTail) Quantile(p float64) int {
	if !(l.Median > 0) {
		return l.clamp(l.Min)
	}
	x := l.Median * detmath.Exp(math.Abs(l.Sigma)*normalQuantile(p))
	return l.clamp(int(math.Round(min(x, float64(l.Max)))))
}

// stratified hands out its values in order, then falls back to
// independent draws from base.
type stratified struct {
	base   Lengths
	values []int
	next   int
}

// Stratify is n draws of l, stratified and shuffled by seed: the i-th
// smallest is l's quantile at (i + ½)/n. stream keeps apart the shuffles
// of different lengths drawn from one seed (a prompt's and an output's).
// Past n draws it draws independently from l; a Lengths that is no
// Quantiler is returned as it is. Its Draw consumes no randomness until
// the n values are spent, so a generator's other draws (arrival times)
// come from its own stream as they would with Fixed lengths.
func Stratify(l Lengths, n int, seed, stream uint64) Lengths {
	q, ok := l.(Quantiler)
	if !ok {
		return l
	}
	s := &stratified{base: l, values: make([]int, max(n, 0))}
	for i := range s.values {
		s.values[i] = q.Quantile((float64(i) + 0.5) / float64(n))
	}
	r := rand.New(rand.NewPCG(seed, stream))
	r.Shuffle(len(s.values), func(i, j int) { s.values[i], s.values[j] = s.values[j], s.values[i] })
	return s
}

// Draw returns the next stratified value, or an independent draw once
// they are spent.
func (s *stratified) Draw(r *rand.Rand) int {
	if s.next < len(s.values) {
		s.next++
		return s.values[s.next-1]
	}
	return s.base.Draw(r)
}

// Mean is the distribution's.
func (s *stratified) Mean() float64 { return s.base.Mean() }

func (s *stratified) String() string { return "stratified " + s.base.String() }

// normalQuantile is the standard normal's p-quantile, 0 < p < 1: Peter
// Acklam's rational approximation (relative error below 1.2e-9), with
// the logarithm from internal/detmath and every product converted
// explicitly (no fused multiply-add), so that every platform gives the
// same bits.
func normalQuantile(p float64) float64 {
	a := [6]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [6]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01, 1}
	c := [6]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [5]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00, 1}
	const low = 0.02425
	// poly is Horner's rule for cs at x, each product rounded before its
	// sum.
	poly := func(x float64, cs ...float64) float64 {
		y := cs[0]
		for _, k := range cs[1:] {
			y = float64(y*x) + k
		}
		return y
	}
	tail := func(q float64) float64 {
		return poly(q, c[:]...) / poly(q, d[:]...)
	}
	switch {
	case p < low:
		return tail(math.Sqrt(-2 * detmath.Log(p)))
	case p > 1-low:
		return -tail(math.Sqrt(-2 * detmath.Log(1-p)))
	}
	q := p - 0.5
	r := q * q
	return float64(poly(r, a[:]...)*q) / poly(r, b[:]...)
}

// PCG streams of StratifiedPoisson's draws.
const (
	streamGaps    = 0x6172726976616c73 // "arrivals"
	streamPrompts = 0x70726f6d70747321 // "prompts!"
	streamOutputs = 0x6f75747075747321 // "outputs!"
)

// StratifiedPoisson is Poisson's requests for a capacity probe, n of them
// at rate req/s, with the lengths stratified (Stratify) and the gaps
// between arrivals stratified likewise: gap i is the exponential's
// quantile at (π(i) + U_i)/n, π a permutation and U_i uniform in [0, 1)
// (Latin hypercube sampling with each value placed at random within its
// stratum), so each gap on its own is exactly exponential with mean
// 1/rate, as a Poisson process's, and only the probe's share of short
// gaps no longer varies with the seed. The gaps are exchangeable, not
// independent: any two correlate by −1/(n − 1).
func StratifiedPoisson(n int, rate float64, prompt, output Lengths, seed uint64) []Request {
	n = max(n, 0)
	prompt, output = Stratify(prompt, n, seed, streamPrompts), Stratify(output, n, seed, streamOutputs)
	r := newRand(seed, streamGaps)
	gaps := make([]float64, n)
	if rate > 0 && !math.IsInf(rate, 1) {
		for i := range gaps {
			// 1 − p lies in (0, 1]: the top stratum's gap is finite.
			p := (float64(i) + r.Float64()) / float64(n)
			gaps[i] = -detmath.Log(1-p) / rate
		}
		r.Shuffle(n, func(i, j int) { gaps[i], gaps[j] = gaps[j], gaps[i] })
	}
	reqs := make([]Request, n)
	t := 0.0
	for i := range reqs {
		t += gaps[i]
		reqs[i] = Request{ID: i, Arrival: t, Prompt: draw(prompt, r, 1), Output: draw(output, r, 1), PrefixGroup: -1, Conversation: -1, Prev: -1}
	}
	return reqs
}
