package planner

import (
	"math"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons/kit"
)

// stepProfile is the planner's profile of one prefill and one decode
// worker, priced by the lab's step model where Dynamo runs its
// pre-deployment profiler: a prompt's TTFT alone on a prefill worker, and
// the decode step of n requests at a context (its ITL), for every n the
// worker's max_num_seqs and KV pool allow.
type stepProfile struct {
	e       *kit.Engine
	counter *kit.StepCounter
	seqs    int
	budget  int
}

func newStepProfile(e *kit.Engine, seqs, budget int) *stepProfile {
	return &stepProfile{e: e, counter: &kit.StepCounter{Timer: e.Timer(seqs, budget)}, seqs: seqs, budget: budget}
}

// PrefillTTFT is one prompt of isl tokens alone, chunked at the budget.
func (p *stepProfile) PrefillTTFT(isl float64) float64 {
	return kit.PrefillSeconds(p.counter, max(1, int(math.Round(isl))), p.budget)
}

// PrefillThroughputPerGPU is isl / TTFT / GPUs per worker, as Dynamo's
// profiler reports it.
func (p *stepProfile) PrefillThroughputPerGPU(isl float64) float64 {
	t := p.PrefillTTFT(isl)
	if t <= 0 {
		return 0
	}
	return math.Max(isl, 1) / t / float64(p.e.TP)
}

// maxConcurrency is the most requests of context tokens one decode worker
// runs at once: max_num_seqs, or what its KV pool holds.
func (p *stepProfile) maxConcurrency(context float64) int {
	blocks := (int(math.Ceil(context)) + plannerBlock) / plannerBlock
	return max(1, min(p.seqs, p.e.KVBlocks/max(blocks, 1)))
}

// decodeStep is the step time of n decodes at context tokens each.
func (p *stepProfile) decodeStep(n int, context float64) float64 {
	ctx := int(math.Round(context))
	batch := make([]scheduler.Work, n)
	for i := range batch {
		batch[i] = scheduler.Work{NewTokens: 1, Context: ctx}
	}
	return p.counter.StepSeconds(batch)
}

// DecodeITL is the step time at concurrency (rounded up, within what one
// worker runs) and context.
func (p *stepProfile) DecodeITL(concurrency, context float64) float64 {
	n := min(p.maxConcurrency(context), max(1, int(math.Ceil(concurrency))))
	return p.decodeStep(n, context)
}

// BestDecodeThroughputPerGPU is n / ITL(n) / GPUs for the largest n whose
// ITL is within itl (n = 1 when none is): the step time grows with n, so
// a bisection finds it.
func (p *stepProfile) BestDecodeThroughputPerGPU(itl, context float64) float64 {
	n := p.bestConcurrency(itl, context)
	return float64(n) / p.decodeStep(n, context) / float64(p.e.TP)
}

// bestConcurrency is the largest n whose decode step is within itl, at
// least 1.
func (p *stepProfile) bestConcurrency(itl, context float64) int {
	lo, hi := 1, p.maxConcurrency(context)
	if p.decodeStep(hi, context) <= itl {
		return hi
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if p.decodeStep(mid, context) <= itl {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// plannerRegimes labels each interval with the report's regime, computed
// from what happened in it: high when the formula asked for more GPUs
// than the budget; else medium when a disaggregated deployment (planner or
// static split) met the SLO for more requests than the monolithic pool;
// else low (monolithic as good or better).
type plannerRegimes struct {
	of                []string
	low, medium, high []int
}

func classify(ivs []plannerInterval, budget int) plannerRegimes {
	var g plannerRegimes
	for k, iv := range ivs {
		label := "low"
		switch {
		case iv.decision.WantGPUs > budget:
			label = "high"
			g.high = append(g.high, k)
		case math.Max(iv.planned.attainment, iv.static.attainment) > iv.mono.attainment:
			label = "medium"
			g.medium = append(g.medium, k)
		default:
			g.low = append(g.low, k)
		}
		g.of = append(g.of, label)
	}
	return g
}
