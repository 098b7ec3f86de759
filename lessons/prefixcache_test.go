package lessons

import (
	"fmt"
	"testing"
)

func TestPrefixCacheLesson(t *testing.T) {
	s, _, err := prefixCache.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) float64 { v, _ := s.Metric(k); return v }
	// R2 splits R1's edge, R3 splits the system-prompt node, R4 splits R1's tail.
	if get("splits") != 3 {
		t.Errorf("splits = %v, want 3", get("splits"))
	}
	if get("shared_prefix_small") != 0 || get("edit_distance_small") >= get("edit_distance_large") || get("shared_prefix_large") <= get("shared_prefix_small") {
		t.Errorf("the twist: small distance %v shares %v, large distance %v shares %v",
			get("edit_distance_small"), get("shared_prefix_small"), get("edit_distance_large"), get("shared_prefix_large"))
	}
	if get("evicted_tokens") == 0 {
		t.Error("the memory-pressure step evicted nothing")
	}
}

// Whatever the capacity, the cache never holds more than it (a request that
// cannot make room waits) and the tree's invariants hold (Build checks them).
func TestPrefixCacheCapacity(t *testing.T) {
	for c := 24; c <= 120; c += 8 {
		s, _, err := prefixCache.Run(map[string]string{"capacity": fmt.Sprint(c)})
		if err != nil {
			t.Fatalf("capacity %d: %v", c, err)
		}
		if v, _ := s.Metric("cached_tokens"); int(v) > c {
			t.Errorf("capacity %d: %v tokens cached", c, v)
		}
	}
}
