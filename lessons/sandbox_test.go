package lessons

import "testing"

// Multi-turn chats reuse their own history: a cache-aware router finds much
// of each prompt cached; with nothing shared, nothing is.
func TestSandboxCacheHits(t *testing.T) {
	hit := func(set map[string]string) float64 {
		s, _, err := sandbox.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := s.Metric("hit_rate_pct")
		return v
	}
	chats := hit(map[string]string{"workload": "chats", "policy": "kv_aware"})
	rr := hit(map[string]string{"workload": "chats", "policy": "round_robin"})
	plain := hit(map[string]string{"workload": "plain"})
	if chats <= rr || plain != 0 {
		t.Errorf("hit rates: chats kv-aware %v%%, chats round robin %v%%, plain %v%%", chats, rr, plain)
	}
}
