package lessons

import "testing"

func TestSmartRouting(t *testing.T) {
	v, _ := smartRouting.Resolve(nil)
	r, err := runSmartRouting(v)
	if err != nil {
		t.Fatal(err)
	}
	if r.kv.hitRequests <= r.rr.hitRequests || r.kv.hitTokens <= r.rr.hitTokens {
		t.Errorf("KV-aware hit rate %v (tokens %v) not above round robin %v (%v)", r.kv.hitRequests, r.kv.hitTokens, r.rr.hitRequests, r.rr.hitTokens)
	}
	if r.kv.ttftMean >= r.rr.ttftMean {
		t.Errorf("KV-aware mean TTFT %v s not below round robin %v s", r.kv.ttftMean, r.rr.ttftMean)
	}
	// Under a hot prompt, pure affinity piles onto one worker; the cost's
	// load terms spread it.
	if r.aff.imbalance <= 2*r.kvHot.imbalance {
		t.Errorf("overload imbalance: affinity %v vs KV-aware %v", r.aff.imbalance, r.kvHot.imbalance)
	}
	if r.aff.ttftMean <= r.kvHot.ttftMean {
		t.Errorf("overload TTFT: affinity %v s vs KV-aware %v s", r.aff.ttftMean, r.kvHot.ttftMean)
	}
	// The cache map is the index's view: under KV-aware routing every
	// system prompt is cached whole somewhere.
	for g := 0; g < r.systemPrompts; g++ {
		best := 0
		for w := range r.cachedKV {
			best = max(best, r.cachedKV[w][g])
		}
		if best != r.prefixTokens/16 {
			t.Errorf("system prompt %d: at most %d of its %d blocks cached on any worker", g+1, best, r.prefixTokens/16)
		}
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
