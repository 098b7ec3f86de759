package lessons

import "testing"

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
