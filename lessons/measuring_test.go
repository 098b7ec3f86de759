package lessons

import "testing"

// Throughput rises with load until the server saturates; past that the TTFT
// tail explodes and fewer requests meet the SLO.
func TestMeasuringSaturates(t *testing.T) {
	s, _, err := measuring.Run(map[string]string{"duration_s": "10", "rate_min": "2", "rate_max": "128", "points": "4"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) float64 {
		v, ok := s.Metric(k)
		if !ok {
			t.Fatalf("no metric %s", k)
		}
		return v
	}
	if get("ttft_p99_ms_high") < 10*get("ttft_p99_ms_low") {
		t.Errorf("p99 TTFT %v ms at the highest rate vs %v ms at the lowest: want queueing to blow it up", get("ttft_p99_ms_high"), get("ttft_p99_ms_low"))
	}
	if get("slo_attainment_pct_high") > 50 {
		t.Errorf("%v%% meet the SLO at 128 req/s; the server should be saturated", get("slo_attainment_pct_high"))
	}
	if get("best_goodput_rate") >= 128 {
		t.Errorf("goodput peaked at the highest rate; it should peak before saturation")
	}
}

func TestMeasuringRejectsInvertedRates(t *testing.T) {
	if _, _, err := measuring.Run(map[string]string{"rate_min": "50", "rate_max": "10"}); err == nil {
		t.Fatal("rate_min above rate_max accepted")
	}
}
