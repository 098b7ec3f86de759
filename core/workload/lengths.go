package workload

import (
	"github.com/inferlab/inferlab/internal/detmath"

	"fmt"
	"math"
	"math/rand/v2"
)

// Lengths draws a token count.
//
// Draw may return any int, including 0 or a negative number for odd
// parameters; the generators clamp what they draw (prompts and outputs to at
// least 1 token, system prompts to at least 0). Mean is the distribution's
// mean before that clamp, for display; String describes it for people.
type Lengths interface {
	Draw(r *rand.Rand) int
	Mean() float64
	String() string
}

// Fixed always draws N.
type Fixed struct{ N int }

// Draw returns N. It consumes no randomness.
func (f Fixed) Draw(*rand.Rand) int { return f.N }

// Mean returns N.
func (f Fixed) Mean() float64 { return float64(f.N) }

func (f Fixed) String() string { return fmt.Sprintf("fixed(%d)", f.N) }

// Validate reports whether f can be used for lengths of at least min tokens.
func (f Fixed) Validate(min int) error {
	if f.N < min {
		return fmt.Errorf("fixed length %d is not allowed: want at least %d", f.N, min)
	}
	return nil
}

// Uniform draws an integer uniformly from Min to Max, both included. If Max
// < Min it always draws Min.
type Uniform struct{ Min, Max int }

// Draw returns Min + a uniform integer in [0, Max−Min].
func (u Uniform) Draw(r *rand.Rand) int {
	if u.Max <= u.Min {
		return u.Min
	}
	span := uint64(u.Max) - uint64(u.Min) // no overflow, even for extreme ints
	if span == math.MaxUint64 {
		return int(r.Uint64())
	}
	return u.Min + int(r.Uint64N(span+1))
}

// Mean returns (Min+Max)/2.
func (u Uniform) Mean() float64 {
	if u.Max <= u.Min {
		return float64(u.Min)
	}
	return (float64(u.Min) + float64(u.Max)) / 2
}

func (u Uniform) String() string { return fmt.Sprintf("uniform(%d..%d)", u.Min, u.Max) }

// Validate reports whether u draws lengths of at least min tokens from a
// non-empty range.
func (u Uniform) Validate(min int) error {
	if u.Min < min {
		return fmt.Errorf("uniform min = %d is not allowed: want at least %d", u.Min, min)
	}
	if u.Max < u.Min {
		return fmt.Errorf("uniform max = %d is not allowed: want at least min (%d)", u.Max, u.Min)
	}
	return nil
}

// LongTail is a chat-like long-tailed length distribution: a lognormal with
// the given Median and Sigma (the standard deviation of ln length), rounded
// to the nearest integer and clamped to [Min, Max].
//
// Chat traffic such as ShareGPT (the user–ChatGPT conversations that vLLM's
// and SGLang's benchmarks replay) has prompts with a median of a couple of
// hundred tokens and a long right tail into the thousands, and outputs with
// a median of a few hundred; a lognormal has that shape. It is an
// approximation chosen by hand, not a fit to the data set: the real
// distributions are lumpier (many very short prompts, outputs cut at the
// generation limit). See ChatPrompts and ChatOutputs for the defaults.
//
// With Sigma = 1, half the draws lie within ×/÷ 1.96 of the median and 1 in
// 100 is above 10× the median. If Median ≤ 0 (or NaN) every draw is Min;
// a negative Sigma acts as its absolute value.
type LongTail struct {
	Median float64
	Sigma  float64
	Min    int
	Max    int
}

// ChatPrompts returns illustrative ShareGPT-like prompt lengths: median
// 200 tokens, sigma 1 (mean ≈ 330, 99th percentile ≈ 2,050), clamped to 4 to
// 8,192. Not fitted data; see LongTail.
func ChatPrompts() LongTail { return LongTail{Median: 200, Sigma: 1, Min: 4, Max: 8192} }

// ChatOutputs returns illustrative ShareGPT-like output lengths: median 200
// tokens, sigma 0.8 (mean ≈ 275, 99th percentile ≈ 1,290), clamped to 1 to
// 4,096. Not fitted data; see LongTail.
func ChatOutputs() LongTail { return LongTail{Median: 200, Sigma: 0.8, Min: 1, Max: 4096} }

// Draw returns round(Median · e^(Sigma·Z)) clamped to [Min, Max], with Z a
// standard normal draw.
func (l LongTail) Draw(r *rand.Rand) int {
	z := normDraw(r) // always consume the same randomness
	if !(l.Median > 0) {
		return l.clamp(l.Min)
	}
	x := l.Median * detmath.Exp(math.Abs(l.Sigma)*z)
	switch {
	case math.IsNaN(x):
		return l.clamp(l.Min)
	case x >= float64(l.Max):
		return l.clamp(l.Max)
	case x <= float64(l.Min):
		return l.clamp(l.Min)
	}
	return l.clamp(int(math.Round(x))) // Round is exact
}

// clamp bounds n to [Min, Max]; if Max < Min, Max wins.
func (l LongTail) clamp(n int) int {
	return min(max(n, l.Min), l.Max)
}

// Mean returns the mean of the clamped lognormal (ignoring the rounding to
// integers), for display. It uses the standard library's math functions, so
// unlike Draw it is not guaranteed bit-identical across architectures.
func (l LongTail) Mean() float64 {
	lo, hi := float64(l.Min), float64(l.Max)
	if hi < lo {
		return hi
	}
	if !(l.Median > 0) {
		return lo
	}
	s := math.Abs(l.Sigma)
	if s == 0 {
		return math.Min(math.Max(l.Median, lo), hi)
	}
	mu := math.Log(l.Median)
	cdf := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	zOf := func(x float64) float64 {
		if x <= 0 {
			return math.Inf(-1)
		}
		return (math.Log(x) - mu) / s
	}
	za, zb := zOf(lo), zOf(hi)
	// E[min(max(X, a), b)] = a·P(X<a) + b·P(X>b) + ∫ₐᵇ x f(x) dx, and the
	// integral is e^(μ+σ²/2)·[Φ(z_b − σ) − Φ(z_a − σ)].
	mid := math.Exp(mu+s*s/2) * (cdf(zb-s) - cdf(za-s))
	return lo*cdf(za) + hi*(1-cdf(zb)) + mid
}

func (l LongTail) String() string {
	return fmt.Sprintf("longtail(median=%g, sigma=%g, %d..%d)", l.Median, l.Sigma, l.Min, l.Max)
}

// Validate reports whether l draws lengths of at least min tokens with
// sensible parameters.
func (l LongTail) Validate(min int) error {
	switch {
	case !(l.Median > 0) || math.IsInf(l.Median, 0):
		return fmt.Errorf("longtail median = %g is not allowed: want a finite number above 0", l.Median)
	case !(l.Sigma >= 0) || l.Sigma > 5:
		return fmt.Errorf("longtail sigma = %g is not allowed: want 0 to 5", l.Sigma)
	case l.Min < min:
		return fmt.Errorf("longtail min = %d is not allowed: want at least %d", l.Min, min)
	case l.Max < l.Min:
		return fmt.Errorf("longtail max = %d is not allowed: want at least min (%d)", l.Max, l.Min)
	}
	return nil
}

// draw draws from l (nil draws 0) and raises the result to at least lo.
func draw(l Lengths, r *rand.Rand, lo int) int {
	if l == nil {
		return lo
	}
	return max(l.Draw(r), lo)
}
