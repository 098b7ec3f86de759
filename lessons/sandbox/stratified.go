package sandbox

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/internal/detmath"
)

// Stratified lengths: the capacity search's variance reduction. A probe
// of n requests drawn independently from a long-tailed distribution
// holds whatever handful of very long prompts and outputs its seed
// happened to draw, and near the capacity those few decide whether 90%
// of the requests keep their TPOT: on the sandbox's defaults, plain
// prompts at 400 req/s, seeds 1–5 give 88–98% attainment when the
// lengths change with the seed and 92–94% when only the arrivals do.
// So each probe draws its lengths stratified (Latin hypercube sampling):
// n lengths, one from each of n equally likely strata of the
// distribution (its quantile at the stratum's middle), in an order the
// seed shuffles. Every probe then holds the distribution itself, tail
// included, and the seeds differ only in the order and timing of the
// requests. The mean and the distribution are the workload's; only the
// probe's sampling noise goes.

// stratified is a workload.Lengths that hands out its values in order,
// then falls back to independent draws from base.
type stratified struct {
	base   workload.Lengths
	values []int
	next   int
}

// stratify is n draws of l, stratified and shuffled by seed (stream
// keeps the shuffles of different lengths apart). l must be a
// workload.Uniform or workload.LongTail.
func stratify(l workload.Lengths, n int, seed, stream uint64) *stratified {
	s := &stratified{base: l, values: make([]int, n)}
	for i := range s.values {
		s.values[i] = quantile(l, (float64(i)+0.5)/float64(n))
	}
	r := rand.New(rand.NewPCG(seed, stream))
	r.Shuffle(n, func(i, j int) { s.values[i], s.values[j] = s.values[j], s.values[i] })
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

// quantile is l's p-quantile as its Draw rounds and clamps it.
func quantile(l workload.Lengths, p float64) int {
	switch d := l.(type) {
	case workload.Uniform:
		if d.Max <= d.Min {
			return d.Min
		}
		return min(d.Min+int(p*float64(d.Max-d.Min+1)), d.Max)
	case workload.LongTail:
		if !(d.Median > 0) {
			return min(d.Min, d.Max)
		}
		x := d.Median * detmath.Exp(math.Abs(d.Sigma)*normalQuantile(p))
		return min(max(int(math.Round(min(x, float64(d.Max)))), d.Min), d.Max)
	}
	panic(fmt.Sprintf("sandbox: no quantile for %T", l)) // the sandbox stratifies only these
}

// normalQuantile is the standard normal's p-quantile, 0 < p < 1: Peter
// Acklam's rational approximation (relative error below 1.2e-9), with
// the logarithm from internal/detmath so that every platform gives the
// same bits.
func normalQuantile(p float64) float64 {
	a := [6]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [5]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := [6]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [4]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	const low = 0.02425
	tail := func(q float64) float64 {
		return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	}
	switch {
	case p < low:
		return tail(math.Sqrt(-2 * detmath.Log(p)))
	case p > 1-low:
		return -tail(math.Sqrt(-2 * detmath.Log(1-p)))
	}
	q := p - 0.5
	r := q * q
	return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
}
