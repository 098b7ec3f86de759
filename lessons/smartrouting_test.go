package lessons

import "testing"

func TestSmartRouting(t *testing.T) {
	s, _, err := smartRouting.Run(nil)
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
	if get("request_hit_pct_kv_aware") <= get("request_hit_pct_round_robin") || get("hit_rate_pct_kv_aware") <= get("hit_rate_pct_round_robin") {
		t.Errorf("KV-aware hit rate %v%% (tokens %v%%) not above round robin %v%% (%v%%)",
			get("request_hit_pct_kv_aware"), get("hit_rate_pct_kv_aware"), get("request_hit_pct_round_robin"), get("hit_rate_pct_round_robin"))
	}
	if get("ttft_mean_ms_kv_aware") >= get("ttft_mean_ms_round_robin") {
		t.Errorf("KV-aware mean TTFT %v ms not below round robin %v ms", get("ttft_mean_ms_kv_aware"), get("ttft_mean_ms_round_robin"))
	}
	// Under a hot prompt, pure affinity piles onto one worker; the cost's
	// load terms spread it.
	if get("imbalance_affinity_overload") <= 2*get("imbalance_kv_aware_overload") {
		t.Errorf("overload imbalance: affinity %v vs KV-aware %v", get("imbalance_affinity_overload"), get("imbalance_kv_aware_overload"))
	}
	if get("ttft_mean_ms_affinity_overload") <= get("ttft_mean_ms_kv_aware_overload") {
		t.Errorf("overload TTFT: affinity %v ms vs KV-aware %v ms", get("ttft_mean_ms_affinity_overload"), get("ttft_mean_ms_kv_aware_overload"))
	}
}

// Weight 0 is pure load balancing: the router never looks at the cache, so
// hits come only by chance.
func TestSmartRoutingWeightZero(t *testing.T) {
	s0, _, _ := smartRouting.Run(map[string]string{"overlap_weight": "0"})
	s1, _, _ := smartRouting.Run(nil)
	h0, _ := s0.Metric("request_hit_pct_kv_aware")
	h1, _ := s1.Metric("request_hit_pct_kv_aware")
	if h0 >= h1 {
		t.Errorf("weight 0 hit %v%%, weight 1 hit %v%%", h0, h1)
	}
}
