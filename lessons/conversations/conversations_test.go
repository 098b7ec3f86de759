package conversations

import (
	"testing"

	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

func convRun(t *testing.T, set map[string]string) *conversationsRun {
	t.Helper()
	v, errs := lesson.Resolve(set)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := checkConversations(v); err != nil {
		t.Fatal(err)
	}
	r, err := runConversations(v)
	lessontest.MustRun(t, err)
	return r
}

// At the defaults the host tier reloads evicted histories and lowers the
// later turns' TTFT, turn 1 (no history) is the same in both runs, and
// later turns without G2 wait longer than the first.
func TestConversationsHostTierHelpsLaterTurns(t *testing.T) {
	for _, w := range []string{"generated", "mooncake-conversation"} {
		r := convRun(t, map[string]string{"workload": w})
		if r.g2.res.Onboarded == 0 || r.g2.g2 == 0 {
			t.Fatalf("%s: nothing onboarded", w)
		}
		if !(r.g2.later < r.g1.later) || r.gain <= 0 {
			t.Fatalf("%s: later turns %g s with G2, %g s without", w, r.g2.later, r.g1.later)
		}
		if r.g1.ttft[1] <= r.g1.ttft[0] && w == "generated" {
			t.Fatalf("%s: turn 2 %g s, turn 1 %g s without G2: want the resent history to cost", w, r.g1.ttft[1], r.g1.ttft[0])
		}
		if r.g2.prompt != r.g1.prompt || r.g2.g1+r.g2.g2 <= r.g1.g1 {
			t.Fatalf("%s: G2 run found %d+%d of %d tokens, G1 run %d", w, r.g2.g1, r.g2.g2, r.g2.prompt, r.g1.g1)
		}
	}
}

// More GPU memory keeps more histories in G1, leaving G2 less to reload.
func TestConversationsBiggerG1ReloadsLess(t *testing.T) {
	small := convRun(t, map[string]string{"g1_gb": "3"})
	big := convRun(t, map[string]string{"g1_gb": "32"})
	if !(big.g1.g1 > small.g1.g1) || !(big.g2.g2 < small.g2.g2) {
		t.Fatalf("G1 hits %d → %d, G2 reloads %d → %d from 3 to 32 GB", small.g1.g1, big.g1.g1, small.g2.g2, big.g2.g2)
	}
}

// The Mooncake sample keeps whole multi-turn conversations from the trace.
func TestConversationsMooncakeSample(t *testing.T) {
	r := convRun(t, map[string]string{"workload": "mooncake-conversation", "conversations": "10"})
	if r.convs != 10 {
		t.Fatalf("%d conversations, want 10", r.convs)
	}
	turns := map[int]int{}
	for _, w := range r.reqs {
		turns[w.Conversation] = max(turns[w.Conversation], w.Turn)
		if w.Prev >= 0 && (r.reqs[w.Prev].Conversation != w.Conversation || w.Prev >= w.ID) {
			t.Fatalf("%s's previous turn %d is not its conversation's", kit.ReqName(w.ID), w.Prev)
		}
	}
	for c, k := range turns {
		if k < 1 {
			t.Fatalf("conversation %d has one turn", c)
		}
	}
}
