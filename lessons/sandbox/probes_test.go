package sandbox

import (
	"math"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
)

// A chat probe's judged requests arrive at the rate probed: its
// conversations run a ramp first, until their later turns come as often
// as in steady state. Without it, a probe of a few seconds of
// conversations never reaches its rate (2,400 requests "at 500 req/s"
// peak at 187 req/s), and the capacity search finds several times what
// the cluster sustains.
func TestChatProbesArriveAtTheirRate(t *testing.T) {
	v := resolved(t, map[string]string{})
	c := &sandboxCapacity{ramp: rampSeconds(0.05, sandboxThinkTime, sandboxTurns)}
	for _, rate := range []float64{100, 500} {
		n := int(40 * rate) // 40 s of judged arrivals
		_, w := c.probeStream(v, rate, n, 1)
		var judged []float64
		for _, r := range w {
			if r.Arrival >= c.ramp {
				judged = append(judged, r.Arrival)
			}
		}
		span := float64(n) / rate
		// Each quarter of the judged window brings at least 95% of the
		// rate's requests, less the noise: a conversation brings up to four
		// turns, so the count's variance is at most four times a Poisson
		// count's; six of its standard deviations, 6√want, are allowed.
		for q := range 4 {
			from, to := c.ramp+float64(q)*span/4, c.ramp+float64(q+1)*span/4
			k := 0
			for _, a := range judged {
				if a >= from && a < to {
					k++
				}
			}
			want := rate * span / 4
			if float64(k) < 0.95*want-6*math.Sqrt(want) || float64(k) > want+6*math.Sqrt(want) {
				t.Errorf("%g req/s: %d requests arrive in [%.1f, %.1f) s, want about %.0f", rate, k, from, to, want)
			}
		}
		if last := slices.Max(judged); last >= c.ramp+span {
			t.Errorf("%g req/s: a request arrives at %.1f s, after the probe's %.1f s", rate, last, c.ramp+span)
		}
	}
}

// The ramp's share of the steady rate is the mean over turns of the
// Erlang distribution functions of the think time: checked against
// conversations drawn by the generator.
func TestOfferedShare(t *testing.T) {
	for _, c := range []struct{ t, want float64 }{{0, 0.25}, {15, 0.832}, {24, 0.950}} {
		if got := offeredShare(c.t, 5, 4); math.Abs(got-c.want) > 0.001 {
			t.Errorf("offeredShare(%g s) = %.4f, want %.3f", c.t, got, c.want)
		}
	}
	const conversations, rate = 20000, 50.0 // conversations per second
	w := workload.Chats(conversations, 4, workload.Fixed{N: 1}, workload.Fixed{N: 1}, workload.Fixed{N: 1}, 0, 5, rate, 7)
	for _, at := range []float64{5, 15, 30} {
		k := 0
		for _, r := range w {
			if r.Arrival >= at && r.Arrival < at+1 {
				k++
			}
		}
		want := 4 * rate * (offeredShare(at, 5, 4) + offeredShare(at+1, 5, 4)) / 2
		if math.Abs(float64(k)-want) > 4*math.Sqrt(want) {
			t.Errorf("%d requests arrive in [%g, %g) s, the ramp says %.0f", k, at, at+1, want)
		}
	}
	if got := rampSeconds(0.05, 5, 4); got != 24 {
		t.Errorf("rampSeconds(5%%) = %g s, want 24", got)
	}
}
