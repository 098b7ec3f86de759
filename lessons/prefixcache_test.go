package lessons

import (
	"fmt"
	"testing"
)

func TestPrefixCacheLesson(t *testing.T) {
	v, _ := prefixCache.Resolve(nil)
	r, err := runPrefixCache(v)
	if err != nil {
		t.Fatal(err)
	}
	// R2 splits R1's edge, R3 splits the system-prompt node, R4 splits R1's tail.
	if r.splits != 3 || r.r2.splitsNow != 1 || r.r3.splitsNow != 1 || r.r4.splitsNow != 1 {
		t.Errorf("splits = %d (R2 %d, R3 %d, R4 %d), want one each for R2, R3 and R4", r.splits, r.r2.splitsNow, r.r3.splitsNow, r.r4.splitsNow)
	}
	if r.r2.matched != r.predicted {
		t.Errorf("R2 matched %d tokens, the quiz predicts %d", r.r2.matched, r.predicted)
	}
	small, large := r.twist[0], r.twist[1]
	if small.shared != 0 || small.distance >= large.distance || large.shared <= small.shared {
		t.Errorf("the twist: small distance %d shares %d, large distance %d shares %d", small.distance, small.shared, large.distance, large.shared)
	}
	if r.evicted == 0 {
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
