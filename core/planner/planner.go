// Package planner is NVIDIA Dynamo's SLA planner: every adjustment
// interval it observes the deployment's average TTFT, ITL and load,
// predicts the next interval's load, and chooses how many prefill and
// decode workers to run, within a GPU budget.
//
// The model, after components/planner/src/dynamo/planner/utils/planner_core.py
// @ b6f3161 (Planner.make_adjustments; docs/SOURCES.md#dynamo-planner):
//
//  1. Correction factors. p = observed TTFT / the profile's TTFT at the
//     observed ISL (queueing makes it exceed 1); d = observed ITL / the
//     profile's ITL at the observed concurrency per decode worker (requests
//     per second × mean request duration / decode workers, Little's law)
//     and context ISL + OSL/2.
//  2. Prediction. The next interval's request count, ISL and OSL, from the
//     observations so far; Constant predicts the last one (Dynamo's
//     ConstantPredictor; its ARIMA and Prophet predictors are not modelled).
//  3. Prefill replicas = ⌈requests × ISL / interval × min(1, p) / the
//     profile's prefill throughput per GPU at ISL / GPUs per prefill engine⌉.
//  4. Decode replicas = ⌈requests × OSL / interval / the best decode
//     throughput per GPU whose ITL meets ITL target / d at context
//     ISL + OSL/2 / GPUs per decode engine⌉.
//  5. Both at least min_endpoint (1). When they need more GPUs than the
//     budget, the current source's ceiling clamp
//     (components/src/dynamo/planner/core/budget.py @ 15a72ce,
//     proportional_clamp_pair): scale = budget / needed; prefill =
//     max(min_endpoint, min(⌊(budget − min_endpoint × decode GPUs) / prefill
//     GPUs⌋, ⌊prefill × scale⌋)); decode = max(min_endpoint, ⌊(budget −
//     prefill × prefill GPUs) / decode GPUs⌋). (b6f3161 rounded instead, which
//     could overshoot the budget by an engine.)
//
// The defaults are Dynamo's SLAPlannerDefaults
// (components/src/dynamo/planner/defaults.py @ 0112772): a 180 s
// adjustment interval, an 8-GPU budget, min_endpoint 1, TTFT 500 ms, ITL
// 50 ms. The profiles come from the caller (Dynamo's come from
// pre-deployment profiling; the lab prices them with its step model).
//
// Scaling is declarative and non-blocking (the Kubernetes connector sets
// each pool's replica count): Pool tracks the workers serving and those
// still starting, which serve only once their start-up time has passed; a
// pool scaled down loses workers at once, those still starting first.
package planner

import (
	"fmt"
	"math"
)

// Dynamo's SLAPlannerDefaults.
const (
	DefaultInterval    = 180.0 // s, adjustment_interval
	DefaultBudget      = 8     // GPUs, max_gpu_budget
	DefaultMinEndpoint = 1
	DefaultTTFT        = 0.5  // s
	DefaultITL         = 0.05 // s
)

// Profile is what pre-deployment profiling tells the planner about one
// prefill engine and one decode engine; times in seconds.
type Profile interface {
	// PrefillTTFT is one prompt of isl tokens' time to first token.
	PrefillTTFT(isl float64) float64
	// PrefillThroughputPerGPU is prompt tokens per second per GPU at isl.
	PrefillThroughputPerGPU(isl float64) float64
	// DecodeITL is the gap between tokens of a decode engine running
	// concurrency requests at context tokens each.
	DecodeITL(concurrency, context float64) float64
	// BestDecodeThroughputPerGPU is the highest output tokens per second
	// per GPU of a decode engine whose ITL is within itl at context (its
	// lowest when none is).
	BestDecodeThroughputPerGPU(itl, context float64) float64
}

// Config is the planner's settings.
type Config struct {
	Interval                float64 // s
	PrefillGPUs, DecodeGPUs int     // per engine
	Budget                  int     // GPUs
	MinEndpoint             int
	ITL                     float64 // the ITL target, s
}

// Validate reports a setting the planner cannot use.
func (c Config) Validate() error {
	switch {
	case !(c.Interval > 0):
		return fmt.Errorf("planner: interval %g s, want > 0", c.Interval)
	case c.PrefillGPUs < 1 || c.DecodeGPUs < 1:
		return fmt.Errorf("planner: %d and %d GPUs per engine, want ≥ 1", c.PrefillGPUs, c.DecodeGPUs)
	case c.MinEndpoint < 1:
		return fmt.Errorf("planner: min_endpoint %d, want ≥ 1", c.MinEndpoint)
	case c.Budget < c.MinEndpoint*(c.PrefillGPUs+c.DecodeGPUs):
		return fmt.Errorf("planner: a %d-GPU budget holds no %d prefill and %d decode engines of %d and %d GPUs", c.Budget, c.MinEndpoint, c.MinEndpoint, c.PrefillGPUs, c.DecodeGPUs)
	case !(c.ITL > 0):
		return fmt.Errorf("planner: ITL target %g s, want > 0", c.ITL)
	}
	return nil
}

// Load is one interval's requests and their mean lengths.
type Load struct {
	Requests, ISL, OSL float64
}

// Observation is what the planner measured over the last interval.
type Observation struct {
	Load
	TTFT, ITL       float64 // means, s
	RequestDuration float64 // mean arrival to last token, s
	DecodeWorkers   int     // serving
}

// Decision is one adjustment and how it was reached.
type Decision struct {
	Predicted Load
	// PCorrection and DCorrection are the correction factors.
	PCorrection, DCorrection float64
	// ExpectedTTFT and ExpectedITL are the profile's figures they divide.
	ExpectedTTFT, ExpectedITL float64
	// PrefillLoad is the predicted prompt tokens per second after the
	// correction; PrefillPerGPU the profile's throughput per GPU at ISL.
	PrefillLoad, PrefillPerGPU float64
	// DecodeLoad is the predicted output tokens per second; DecodePerGPU
	// the best throughput per GPU within the corrected ITL.
	DecodeLoad, DecodePerGPU float64
	CorrectedITL             float64
	// WantPrefill and WantDecode are the formula's replicas (at least
	// MinEndpoint) before the budget; WantGPUs their GPUs.
	WantPrefill, WantDecode, WantGPUs int
	// Prefill and Decode are the replicas chosen; Clamped when the budget
	// cut them.
	Prefill, Decode int
	Clamped         bool
}

// Constant is Dynamo's ConstantPredictor: the next load is the last
// observed (zero before any).
func Constant(history []Load) Load {
	if len(history) == 0 {
		return Load{}
	}
	return history[len(history)-1]
}

// Plan is one adjustment: the correction factors from obs, then the
// replicas for the predicted load next.
func (c Config) Plan(obs Observation, next Load, prof Profile) Decision {
	d := Decision{Predicted: next, PCorrection: 1, DCorrection: 1}
	if obs.Requests > 0 {
		d.ExpectedTTFT = prof.PrefillTTFT(obs.ISL)
		if d.ExpectedTTFT > 0 {
			d.PCorrection = obs.TTFT / d.ExpectedTTFT
		}
		conc := obs.Requests / float64(max(obs.DecodeWorkers, 1)) * obs.RequestDuration / c.Interval
		d.ExpectedITL = prof.DecodeITL(conc, obs.ISL+obs.OSL/2)
		if d.ExpectedITL > 0 && obs.ITL > 0 {
			d.DCorrection = obs.ITL / d.ExpectedITL
		}
	}
	d.PrefillLoad = next.Requests * next.ISL / c.Interval * math.Min(1, d.PCorrection)
	d.PrefillPerGPU = prof.PrefillThroughputPerGPU(next.ISL)
	d.WantPrefill = ceilDiv(d.PrefillLoad, d.PrefillPerGPU*float64(c.PrefillGPUs))
	// Dynamo falls back to the target itself when there is no decode
	// correction yet (a factor ≤ 0).
	d.CorrectedITL = c.ITL
	if d.DCorrection > 0 {
		d.CorrectedITL = c.ITL / d.DCorrection
	}
	d.DecodeLoad = next.Requests * next.OSL / c.Interval
	d.DecodePerGPU = prof.BestDecodeThroughputPerGPU(d.CorrectedITL, next.ISL+next.OSL/2)
	d.WantDecode = ceilDiv(d.DecodeLoad, d.DecodePerGPU*float64(c.DecodeGPUs))
	d.WantPrefill, d.WantDecode = max(d.WantPrefill, c.MinEndpoint), max(d.WantDecode, c.MinEndpoint)
	d.WantGPUs = d.WantPrefill*c.PrefillGPUs + d.WantDecode*c.DecodeGPUs
	d.Prefill, d.Decode = c.clamp(d.WantPrefill, d.WantDecode)
	d.Clamped = d.Prefill != d.WantPrefill || d.Decode != d.WantDecode
	return d
}

// clamp fits p prefill and n decode replicas to the budget as Dynamo's
// proportional_clamp_pair does: prefill scaled by budget / needed and
// floored, leaving room for the minimum decode pool; decode takes what is
// left.
func (c Config) clamp(p, n int) (int, int) {
	need := p*c.PrefillGPUs + n*c.DecodeGPUs
	if need <= c.Budget {
		return p, n
	}
	scale := float64(c.Budget) / float64(need)
	maxP := (c.Budget - c.MinEndpoint*c.DecodeGPUs) / c.PrefillGPUs
	p = max(c.MinEndpoint, min(maxP, int(math.Floor(float64(p)*scale))))
	n = max(c.MinEndpoint, (c.Budget-p*c.PrefillGPUs)/c.DecodeGPUs)
	return p, n
}

// ceilDiv is ⌈a / b⌉, 0 when there is nothing to serve or b is not
// positive.
func ceilDiv(a, b float64) int {
	if !(a > 0) || !(b > 0) {
		return 0
	}
	return int(math.Ceil(a / b))
}
