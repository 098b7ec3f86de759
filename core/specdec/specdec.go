// Package specdec models speculative decoding (Leviathan, Kalman and
// Matias, ICML 2023, arXiv:2211.17192; Chen et al. 2023, arXiv:2302.01318;
// vLLM's rejection sampler, vllm/v1/sample/rejection_sampler.py): per
// sequence, a small draft model proposes γ tokens one after another, and
// the target model scores all of them in one forward pass of γ + 1 tokens.
// The target keeps the longest prefix it accepts and adds one token of its
// own: the token it resamples at the first rejection, or a bonus token
// when all γ were accepted. Every pass yields between 1 and γ + 1 tokens.
//
// Acceptance follows Leviathan's analysis: each drafted token is accepted
// independently with probability α (the βs are i.i.d. with mean α), drawn
// here from a seeded generator. Real acceptance depends on the text and on
// how well the draft predicts it; α is the knob that stands for it.
//
// Time comes from core/hardware's step model through scheduler.Timer: a
// round costs the draft's steps (its first step also takes in the tokens
// accepted in the previous round) plus one target step of γ + 1 tokens per
// sequence, against a plain decode step of one token per sequence.
package specdec

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/inferlab/inferlab/core/scheduler"
)

// ExpectedTokens is the expected number of tokens one target pass yields,
// Leviathan's eq. (1): (1 − α^{γ+1}) / (1 − α), the mean of a capped
// geometric variable; γ + 1 at α = 1. It is computed as the sum
// 1 + α + … + α^γ, which is the same value without the cancellation the
// quotient suffers near α = 1.
func ExpectedTokens(alpha float64, gamma int) float64 {
	sum, term := 0.0, 1.0
	for i := 0; i <= gamma; i++ {
		sum += term
		term *= alpha
	}
	return sum
}

// Improvement is Leviathan's Theorem 3.8, the expected walltime
// improvement when a draft step costs c target steps and the target scores
// γ + 1 tokens in the time of one: (1 − α^{γ+1}) / ((1 − α)(γc + 1)).
func Improvement(alpha, c float64, gamma int) float64 {
	return ExpectedTokens(alpha, gamma) / (float64(gamma)*c + 1)
}

// OperationsFactor is Leviathan's Theorem 3.11, the factor by which
// arithmetic operations grow when a draft operation costs ĉ target ones:
// (1 − α)(γĉ + γ + 1) / (1 − α^{γ+1}).
func OperationsFactor(alpha, cHat float64, gamma int) float64 {
	return (float64(gamma)*cHat + float64(gamma) + 1) / ExpectedTokens(alpha, gamma)
}

// Check validates α and γ.
func Check(alpha float64, gamma int) error {
	if !(alpha >= 0 && alpha <= 1) {
		return fmt.Errorf("specdec: α = %g, want 0 ≤ α ≤ 1", alpha)
	}
	if gamma < 1 {
		return fmt.Errorf("specdec: γ = %d, want γ ≥ 1", gamma)
	}
	return nil
}

// Acceptance draws the draft's accepted prefixes: each drafted token is
// accepted with probability Alpha, independently.
type Acceptance struct {
	Alpha float64
	rng   *rand.Rand
}

// NewAcceptance returns the seeded process. PCG gives the same draws
// natively and in WebAssembly.
func NewAcceptance(alpha float64, seed uint64) *Acceptance {
	return &Acceptance{Alpha: alpha, rng: rand.New(rand.NewPCG(seed, 0x5bec0de))}
}

// Verify draws one round of γ drafted tokens and returns how many lead
// the draft before the first rejection (0 to γ). The round yields that
// many plus the target's own token.
func (a *Acceptance) Verify(gamma int) int {
	for k := 0; k < gamma; k++ {
		if a.rng.Float64() >= a.Alpha {
			return k
		}
	}
	return gamma
}

// Pricing prices the steps of speculative decoding for a batch of
// sequences that all hold Context tokens: the target's and the draft's
// steps as their timers price them.
type Pricing struct {
	// Target and Draft price the models' steps in an engine that does not
	// speculate: Target the plain decode step, the baseline.
	Target, Draft scheduler.Timer
	// Spec, when set, returns the timers of an engine that speculates γ
	// tokens per sequence, whose dispatch differs (vLLM sizes its CUDA
	// graphs for verify steps of γ + 1 tokens): the target that verifies
	// and the draft that proposes. Nil uses Target and Draft.
	Spec func(gamma int) (target, draft scheduler.Timer)
	// FixedC, when true, prices each draft step at C plain decode steps
	// (Leviathan's cost coefficient, set rather than derived from the
	// draft's own step model).
	FixedC bool
	C      float64
	// Steps counts the steps priced (for a caller's work bound).
	Steps int
}

func batchOf(n, newTokens, context int) []scheduler.Work {
	w := make([]scheduler.Work, n)
	for i := range w {
		w[i] = scheduler.Work{Req: i, NewTokens: newTokens, Context: context}
	}
	return w
}

// timers are the target and draft timers of an engine speculating γ.
func (p *Pricing) timers(gamma int) (target, draft scheduler.Timer) {
	if p.Spec != nil {
		return p.Spec(gamma)
	}
	return p.Target, p.Draft
}

// Decode is one plain target decode step: one token per sequence.
func (p *Pricing) Decode(batch, context int) float64 {
	p.Steps++
	return p.Target.StepSeconds(batchOf(batch, 1, context))
}

// Verify is the target's scoring pass: γ + 1 tokens per sequence, in the
// engine that speculates γ.
func (p *Pricing) Verify(batch, context, gamma int) float64 {
	p.Steps++
	t, _ := p.timers(gamma)
	return t.StepSeconds(batchOf(batch, gamma+1, context))
}

// DraftStep is one draft step over newTokens per sequence, in an engine
// that does not speculate.
func (p *Pricing) DraftStep(batch, context, newTokens int) float64 {
	p.Steps++
	return p.Draft.StepSeconds(batchOf(batch, newTokens, context))
}

// specDraftStep is one draft step over newTokens per sequence in the
// engine that speculates γ.
func (p *Pricing) specDraftStep(batch, context, newTokens, gamma int) float64 {
	p.Steps++
	_, d := p.timers(gamma)
	return d.StepSeconds(batchOf(batch, newTokens, context))
}

// Round is one round of speculative decoding priced for a batch.
type Round struct {
	// Draft is the draft's γ steps, the first taking in catchUp tokens
	// per sequence (the tokens accepted last round and the target's one);
	// Verify the target's pass; Decode a plain decode step, the baseline.
	Draft, Verify, Decode float64
	// Tokens is the expected tokens per sequence per round; Speedup the
	// tokens per second against plain decoding:
	// Tokens × Decode / (Draft + Verify).
	Tokens, Speedup float64
}

// PriceRound prices a round of γ drafted tokens for batch sequences at
// context tokens, with acceptance α: the draft's first step takes in
// round(E[tokens]) tokens per sequence (what the last round yielded on
// average), then γ − 1 single-token steps; with FixedC every draft step
// costs C plain decode steps instead.
func (p *Pricing) PriceRound(batch, context, gamma int, alpha float64) Round {
	e := ExpectedTokens(alpha, gamma)
	r := Round{Tokens: e, Decode: p.Decode(batch, context), Verify: p.Verify(batch, context, gamma)}
	switch {
	case p.FixedC:
		r.Draft = float64(gamma) * p.C * r.Decode
	default:
		r.Draft = p.specDraftStep(batch, context, max(1, int(math.Round(e))), gamma)
		if gamma > 1 {
			r.Draft += float64(gamma-1) * p.specDraftStep(batch, context, 1, gamma)
		}
	}
	r.Speedup = e * r.Decode / (r.Draft + r.Verify)
	return r
}

// BestGamma is the γ in [1, maxGamma] with the highest speedup for this
// batch and α (the smallest of equals), and that speedup.
func (p *Pricing) BestGamma(batch, context int, alpha float64, maxGamma int) (int, Round) {
	best, bestRound := 1, p.PriceRound(batch, context, 1, alpha)
	for g := 2; g <= maxGamma; g++ {
		if r := p.PriceRound(batch, context, g, alpha); r.Speedup > bestRound.Speedup {
			best, bestRound = g, r
		}
	}
	return best, bestRound
}
