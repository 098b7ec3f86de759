// Package slo measures a serving run against latency objectives the way
// serving papers and engines' benchmarks state them, and finds a server's
// capacity: the highest arrival rate it sustains while meeting them.
//
// The model. Each finished request contributes its time to first token
// (TTFT: first token − arrival), its time per output token (TPOT: (last −
// first token) / (outputs − 1), 0 with one output) and every gap between
// consecutive output tokens (inter-token latency, ITL, which Sarathi-Serve
// calls time between tokens, TBT). An Objective bounds them in two ways:
//
//   - Per request, DistServe's SLO attainment (Zhong et al., OSDI'24,
//     https://arxiv.org/abs/2401.09670, §2): a request attains the SLO when
//     its TTFT and its TPOT are both within their limits; attainment is the
//     share of requests that do, and the run meets the objective when
//     attainment is at least the target (DistServe's goodput uses 90%).
//   - Over the run, Sarathi-Serve's tail objective (Agrawal et al., OSDI'24,
//     https://arxiv.org/abs/2403.02310, §5): the 99th percentile of every
//     gap between tokens, pooled over all requests, within a limit, because
//     one long prefill in a batch stalls the decode of every request in it.
//
// A limit of 0 is no limit. Percentiles are nearest-rank, as
// core/scheduler's Summarise computes them.
//
// Capacity is the highest rate at which a run meets the objective
// (DistServe's "maximum request rate that can be served adhering to the SLO
// attainment goal"; Sarathi-Serve's "maximum request load ... while
// meeting" a P99 TBT SLO). Steady (steady.go) finds it: it decides what
// each probe runs (how many requests, which of them are judged) so that
// its answer depends on the system and the objective alone, bisects to a
// stated tolerance and repeats over seeds.
//
// Capacity per GPU divides by the GPUs a deployment uses, so deployments of
// different sizes compare fairly (DistServe §2 normalises goodput per GPU).
package slo

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// DefaultTarget is the share of requests that must meet the per-request
// limits when an Objective leaves Target at 0: DistServe's 90%.
const DefaultTarget = 0.9

// Latency is what one finished request saw, in seconds.
type Latency struct {
	TTFT float64
	// TPOT is the mean gap between output tokens after the first.
	TPOT float64
	// Gaps are the gaps between consecutive output tokens (ITL / TBT).
	Gaps []float64
	// Wait is the scheduling delay: from arrival to the step that first
	// scheduled the request (Sarathi-Serve's request_scheduling_delay).
	Wait float64
}

// FromTokenTimes measures a request that arrived at arrival and produced
// its output tokens at times (ascending, at least one). The gaps share
// nothing with times.
func FromTokenTimes(arrival float64, times []float64) Latency {
	if len(times) == 0 {
		return Latency{}
	}
	l := Latency{TTFT: times[0] - arrival}
	if n := len(times); n > 1 {
		l.TPOT = (times[n-1] - times[0]) / float64(n-1)
		l.Gaps = make([]float64, n-1)
		for i := 1; i < n; i++ {
			l.Gaps[i-1] = times[i] - times[i-1]
		}
	}
	return l
}

// Objective is a service-level objective, in seconds; a zero limit is none.
type Objective struct {
	// TTFT and TPOT bound each request (DistServe).
	TTFT, TPOT float64
	// P99TBT bounds the 99th percentile of every gap between tokens of
	// the run (Sarathi-Serve).
	P99TBT float64
	// MedianWait bounds the median of the requests' scheduling delays
	// (Sarathi-Serve's capacity search: 2 s).
	MedianWait float64
	// Target is the share of requests that must meet TTFT and TPOT, in
	// (0, 1]; 0 means DefaultTarget.
	Target float64
}

// target is the attainment the objective asks for.
func (o Objective) target() float64 {
	if o.Target == 0 {
		return DefaultTarget
	}
	return o.Target
}

// Check reports a limit that is negative or not a number, or a target
// outside (0, 1].
func (o Objective) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"TTFT", o.TTFT}, {"TPOT", o.TPOT}, {"P99TBT", o.P99TBT}, {"MedianWait", o.MedianWait}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return fmt.Errorf("slo: %s limit %g s, want a finite limit ≥ 0 (0: none)", f.name, f.v)
		}
	}
	if !(o.Target >= 0 && o.Target <= 1) {
		return fmt.Errorf("slo: target %g, want a share in (0, 1] (0: %g)", o.Target, DefaultTarget)
	}
	return nil
}

// Attains reports whether one request meets the per-request limits.
func (o Objective) Attains(l Latency) bool {
	return (o.TTFT == 0 || l.TTFT <= o.TTFT) && (o.TPOT == 0 || l.TPOT <= o.TPOT)
}

// Attainment is the share of requests that meet the per-request limits; 0
// when there are none.
func (o Objective) Attainment(ls []Latency) float64 {
	if len(ls) == 0 {
		return 0
	}
	n := 0
	for _, l := range ls {
		if o.Attains(l) {
			n++
		}
	}
	return float64(n) / float64(len(ls))
}

// Percentile is the nearest-rank p-th percentile of xs (0 < p ≤ 100): the
// smallest x with at least p% of the sample at or below it; 0 for an
// empty sample. xs is not changed.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return nth(slices.Clone(xs), max(0, min(i, len(xs)-1)))
}

// nth returns the k-th smallest of s (from 0), reordering s: Hoare's
// selection with the median of three as pivot, linear on average where a
// sort is n log n (a capacity search judges a million gaps per probe).
func nth(s []float64, k int) float64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for pivot < s[j] {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// P99TBT is the 99th percentile of every gap between tokens of the
// requests, pooled; 0 when no request has two tokens.
func P99TBT(ls []Latency) float64 {
	n := 0
	for _, l := range ls {
		n += len(l.Gaps)
	}
	if n == 0 {
		return 0
	}
	gaps := make([]float64, 0, n)
	for _, l := range ls {
		gaps = append(gaps, l.Gaps...)
	}
	// gaps is this function's own: select in place (Percentile's rank).
	return nth(gaps, max(0, min(int(math.Ceil(0.99*float64(n)))-1, n-1)))
}

// medianWait is the median of the requests' scheduling delays; 0 for none.
func medianWait(ls []Latency) float64 {
	waits := make([]float64, len(ls))
	for i, l := range ls {
		waits[i] = l.Wait
	}
	return Percentile(waits, 50)
}

// Outcome is one run judged against an objective.
type Outcome struct {
	// Rate is the arrival rate the run served, req/s.
	Rate float64
	// Offered is the rate its judged requests arrived at (JudgeSteady:
	// their count over the span of their arrivals, which a Poisson
	// stream scatters about Rate); 0 when unknown.
	Offered float64
	// Requests counts the finished requests judged.
	Requests int
	// Attainment is the share of them meeting TTFT and TPOT.
	Attainment float64
	// P99TBT is the 99th percentile of the run's gaps between tokens, s.
	P99TBT float64
	// MedianWait is the median scheduling delay, s.
	MedianWait float64
	// TBTOver is the share of the run's gaps between tokens longer than
	// the objective's P99TBT, and WaitOver the share of its requests
	// waiting longer than its MedianWait (0 for a limit it does not set):
	// the P99TBT limit holds while at most 1% of gaps are over it, the
	// MedianWait limit while at most half the requests are. Unlike the
	// percentiles, these shares move smoothly with the rate: a p99 gap
	// jumps from a decode step to a whole prefill once 1% of gaps stall.
	TBTOver, WaitOver float64
	// Meets reports whether attainment reaches the target and P99TBT and
	// MedianWait are within their limits.
	Meets bool
}

// Judge measures the requests of a run at rate against o. A run with no
// requests does not meet it.
func (o Objective) Judge(rate float64, ls []Latency) Outcome {
	out := Outcome{Rate: rate, Requests: len(ls), Attainment: o.Attainment(ls), P99TBT: P99TBT(ls), MedianWait: medianWait(ls)}
	out.TBTOver, out.WaitOver = o.overShares(ls)
	out.Meets = len(ls) > 0 && out.Attainment >= o.target() && (o.P99TBT == 0 || out.P99TBT <= o.P99TBT) &&
		(o.MedianWait == 0 || out.MedianWait <= o.MedianWait)
	return out
}

// overShares are the shares of gaps over o's P99TBT and of requests
// waiting over its MedianWait (0 for a limit o does not set or a run with
// nothing to count).
func (o Objective) overShares(ls []Latency) (tbt, wait float64) {
	var gaps, over, waited int
	for _, l := range ls {
		if o.P99TBT > 0 {
			gaps += len(l.Gaps)
			for _, g := range l.Gaps {
				if g > o.P99TBT {
					over++
				}
			}
		}
		if o.MedianWait > 0 && l.Wait > o.MedianWait {
			waited++
		}
	}
	if gaps > 0 {
		tbt = float64(over) / float64(gaps)
	}
	if len(ls) > 0 {
		wait = float64(waited) / float64(len(ls))
	}
	return tbt, wait
}

// ErrNoRequests is returned when a probe returns no finished request.
var ErrNoRequests = errors.New("slo: a probe finished no request")

// PerGPU is a capacity divided over the GPUs that served it; 0 for no
// GPUs.
func PerGPU(rate float64, gpus int) float64 {
	if gpus <= 0 {
		return 0
	}
	return rate / float64(gpus)
}
