package sandbox

import (
	"math"
	"slices"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/internal/detmath"
)

// Conversations reach their rate slowly. A chat workload starts its
// conversations as a Poisson process at a quarter of the request rate,
// and each conversation's later turns follow after exponential think
// times (sandboxThinkTime, 5 s mean): turn k+1 arrives an Erlang(k) time
// after the conversation starts. Requests therefore arrive at the probed
// rate only once most conversations under way have sent all their turns:
// at t seconds the rate is the probed one times the mean over turns of
// P(Erlang(k, think) ≤ t), 83% at 15 s and 95% only at 24 s. A probe that
// draws a few seconds of conversations never serves its rate (a probe of
// 2,400 requests "at 500 req/s" peaks at 187 req/s), and a search built
// on such probes finds four to five times the rate the cluster sustains
// (on the defaults, seed 1: 336 req/s, where 92 req/s held for 80 s
// already breaks TPOT). So a chat probe serves a ramp first: conversations
// start rampSeconds before the requests it judges, until the offered rate
// is within half the search's tolerance of the rate probed, and it
// serves no turn arriving after its last judged one (those would only
// be served while the load falls).

// offeredShare is the share of the steady request rate that a chat
// workload offers t seconds after its first conversation starts.
func offeredShare(t, think float64, turns int) float64 {
	if t <= 0 {
		return 1 / float64(turns)
	}
	x := t / think
	sum, term, share := 0.0, 1.0, 0.0
	for k := range turns {
		// P(Erlang(k) ≤ t) = 1 − e^−x Σ_{j<k} x^j / j!
		share += 1 - detmath.Exp(-x)*sum // 1 for the first turn
		sum += term
		term *= x / float64(k+1)
	}
	return share / float64(turns)
}

// rampSeconds is how long a chat workload's conversations must run before
// its requests arrive within gap of the steady rate (to 0.1 s).
func rampSeconds(gap, think float64, turns int) float64 {
	t := 0.0
	for offeredShare(t, think, turns) < 1-gap {
		t += 0.1
	}
	return math.Round(10*t) / 10
}

// arrivingBefore keeps the requests of w that arrive before end, numbered
// again in arrival order.
func arrivingBefore(w []workload.Request, end float64) []workload.Request {
	out := slices.DeleteFunc(slices.Clone(w), func(r workload.Request) bool { return r.Arrival >= end })
	for i := range out {
		out[i].ID = i
	}
	return out
}
