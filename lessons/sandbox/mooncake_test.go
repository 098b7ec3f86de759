package sandbox

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons/kit"
)

// The Mooncake preset reuses prefixes as the whole trace does: the share
// of its prompt tokens that an unbounded prefix cache would find is
// within 15% (relative) of the whole hour's, where the first requests of
// the trace, as many as the work bound admits, reuse a tenth as much.
// 15% was chosen before the sample was drawn: a sample keeps whole
// conversations, so it loses only the reuse between conversations (the
// shared system prompt's first occurrence, and 1% of the trace's prompt
// tokens beyond it).
func TestMooncakeSampleReusesAsTheTrace(t *testing.T) {
	all, err := workload.LoadWholeTrace(mooncakeID)
	if err != nil {
		t.Fatal(err)
	}
	whole, sample := kit.PrefixReuse(all), kit.PrefixReuse(mooncakeRequests())
	first := kit.PrefixReuse(all[:len(mooncakeRequests())])
	t.Logf("prefix reuse: whole trace %.1f%%, the sample %.1f%% (%d requests), the trace's first %d requests %.1f%%", 100*whole, 100*sample, len(mooncakeRequests()), len(mooncakeRequests()), 100*first)
	if math.Abs(whole-mooncakeTraceReuse) > 5e-5 {
		t.Errorf("the whole trace reuses %.5f, the narration says %.4f", whole, mooncakeTraceReuse)
	}
	if math.Abs(sample/whole-1) > 0.15 {
		t.Errorf("the sample reuses %.1f%% of its prompt tokens, the whole trace %.1f%%: want within 15%%", 100*sample, 100*whole)
	}
	// Every turn of a sampled conversation is in the sample, its previous
	// turn before it.
	turns := map[int]int{}
	for _, q := range all {
		turns[q.Conversation]++
	}
	for _, q := range mooncakeRequests() {
		turns[q.Conversation]--
	}
	for _, q := range mooncakeRequests() {
		if turns[q.Conversation] != 0 {
			t.Fatalf("conversation %d: %d turns left out", q.Conversation, turns[q.Conversation])
		}
	}
	for i, q := range mooncakeRequests() {
		if q.ID != i || (q.Prev >= 0 && (q.Prev >= i || mooncakeRequests()[q.Prev].Conversation != q.Conversation)) {
			t.Fatalf("request %d: id %d, previous turn %d", i, q.ID, q.Prev)
		}
	}
}

// Check bounds the sample by constants, since the page does not load the
// trace: they are the sample's.
func TestMooncakeSampleLengths(t *testing.T) {
	w := mooncakeRequests()
	if len(w) != len(mooncakeSampleLengths) || mooncakeSampleBounds.Requests != len(w) {
		t.Fatalf("the sample has %d requests, the table %d", len(w), len(mooncakeSampleLengths))
	}
	longest := 0
	for i, q := range w {
		if got := [2]int{q.Prompt, q.Output}; got != mooncakeSampleLengths[i] {
			t.Fatalf("request %d: %v tokens, the table says %v", i, got, mooncakeSampleLengths[i])
		}
		longest = max(longest, q.Prompt+q.Output)
	}
	if longest != mooncakeSampleBounds.Longest {
		t.Errorf("the longest request has %d tokens, the bounds say %d", longest, mooncakeSampleBounds.Longest)
	}
}
