package lessons

import (
	"math"
	"strings"
	"testing"
)

// Throughput rises with load until the server saturates; past that the TTFT
// tail explodes and fewer requests meet the SLO.
func TestMeasuringSaturates(t *testing.T) {
	v, errs := measuring.Resolve(map[string]string{"duration_s": "10", "rate_min": "2", "rate_max": "128", "points": "4"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.points) != 4 {
		t.Fatalf("%d points, want 4", len(r.points))
	}
	lo, hi := r.first().sum, r.last().sum
	if hi.TTFT.P99 < 10*lo.TTFT.P99 {
		t.Errorf("p99 TTFT %v s at the highest rate vs %v s at the lowest: want queueing to blow it up", hi.TTFT.P99, lo.TTFT.P99)
	}
	if hi.SLOAttainment > 0.5 {
		t.Errorf("%v of requests meet the SLO at 128 req/s; the server should be saturated", hi.SLOAttainment)
	}
	if r.best.rate >= 128 {
		t.Errorf("goodput peaked at the highest rate; it should peak before saturation")
	}
	// Throughput rises with the offered rate up to saturation.
	if r.points[1].sum.OutputTokensPerS <= lo.OutputTokensPerS {
		t.Errorf("throughput %v tok/s at %v req/s not above %v tok/s at %v req/s", r.points[1].sum.OutputTokensPerS, r.points[1].rate, lo.OutputTokensPerS, r.first().rate)
	}
}

func TestMeasuringRejectsInvertedRates(t *testing.T) {
	if _, _, err := measuring.Run(map[string]string{"rate_min": "50", "rate_max": "10"}); err == nil {
		t.Fatal("rate_min above rate_max accepted")
	}
}

// max_num_seqs decides where the sweep saturates, and the
// narration says why. At vLLM's H100 default (1,024) the server admits
// every request up to 64 req/s, where some miss the TPOT limit but none
// queue, and saturates at 128 req/s when the KV cache fills (preemptions);
// at 256 the batch fills first, from 64 req/s, and goodput peaks at 32.
func TestMeasuringSaturationFollowsMaxNumSeqs(t *testing.T) {
	for _, c := range []struct {
		seqs             string
		saturates, best  float64
		limit, atRateMax string
	}{
		{"1024", 128, 64, "the KV cache fills", "preemptions"},
		{"256", 64, 32, "the batch fills: max_num_seqs (256) requests run while others wait", "max_num_seqs (256)"},
	} {
		v, errs := measuring.Resolve(map[string]string{"max_num_seqs": c.seqs})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runMeasuring(v)
		if err != nil {
			t.Fatal(err)
		}
		i := r.firstSaturated()
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*b } // the sweep's rates are logspace's
		if i < 0 || !near(r.points[i].rate, c.saturates) || !near(r.best.rate, c.best) {
			t.Errorf("max_num_seqs %s: saturates at point %d, best goodput at %v req/s; want saturation at %v req/s, best at %v", c.seqs, i, r.best.rate, c.saturates, c.best)
			continue
		}
		p := r.points[i]
		switch c.seqs {
		case "1024":
			if p.sum.Preemptions == 0 || p.peakRunning > 1024 {
				t.Errorf("1,024 sequences at %v req/s: %d preemptions, %d running at most", p.rate, p.sum.Preemptions, p.peakRunning)
			}
			if prev := r.points[i-1]; prev.queued != 0 || prev.missTPOT == 0 || prev.peakRunning <= 256 {
				t.Errorf("1,024 sequences at %v req/s: %d steps with a queue, %d TPOT misses, %d running at most; want no queue, TPOT misses, more than 256 running", prev.rate, prev.queued, prev.missTPOT, prev.peakRunning)
			}
		case "256":
			if p.peakRunning != 256 || p.atSeqs == 0 {
				t.Errorf("256 sequences at %v req/s: %d running at most, %d steps full with a queue", p.rate, p.peakRunning, p.atSeqs)
			}
		}
		s := r.script()
		if n := s.Steps[i+1].Narration; !strings.Contains(n, c.limit) {
			t.Errorf("max_num_seqs %s: the %v req/s step does not say %q:\n%s", c.seqs, p.rate, c.limit, n)
		}
		if n := s.Steps[len(s.Steps)-2].Narration; !strings.Contains(n, "saturates, here from "+rateText(c.saturates)) || !strings.Contains(n, c.atRateMax) {
			t.Errorf("max_num_seqs %s: the curves step does not say where and why the server saturates:\n%s", c.seqs, n)
		}
	}
}
