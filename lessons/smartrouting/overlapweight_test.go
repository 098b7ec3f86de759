package smartrouting

import (
	"strings"
	"testing"
)

// At overlap_score_weight 0 the KV router's cost leaves the cache out, so
// the narration must not say it sends prompts back to their cache or that
// the cache cost spreads the hot prompt; the steps keep their keys, which
// the player follows when the number of steps changes (9 → 7).
func TestOverlapWeightZeroNarration(t *testing.T) {
	s, _, err := lesson.Run(map[string]string{"overlap_weight": "0"})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]string{}
	for _, st := range s.Steps {
		if st.Key == "" {
			t.Errorf("step %q has no key", st.Title)
		}
		byKey[st.Key] = st.Narration
	}
	for key, wrong := range map[string]string{
		"compare":  "sends each prompt back where it is cached",
		"overload": "a cold worker's full prefill is cheaper",
	} {
		if text, ok := byKey[key]; !ok {
			t.Errorf("no step %q", key)
		} else if strings.Contains(text, wrong) {
			t.Errorf("step %q at overlap_weight=0 says %q: %s", key, wrong, text)
		}
	}
}
