package conversations

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// conversations lesson. Its narration check: the tokens found and reloaded,
// the blocks moved and the mean TTFT of the later turns are recomputed from
// the engine's per-request results.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runConversations(v)
			if err != nil {
				return nil, err
			}
			return conversationsNarration(r), nil
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "reloaded tokens narrated one block more than G2 onboarded", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runConversations(v)
				lessontest.MustRun(t, err)
				if alter {
					r.g2.g2 += convBlock
				}
				return conversationsNarration(r)
			}},
			{Name: "the later turns' TTFT with G2 narrated 1 ms off", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runConversations(v)
				lessontest.MustRun(t, err)
				if alter {
					r.g2.later += 0.001
				}
				return conversationsNarration(r)
			}},
		},
		Refusals: []lessontest.Refusal{
			{Set: map[string]string{"g1_gb": "2", "turns": "8"}, Key: "g1_gb", Want: "longest prompt"},
		},
	})
}

func conversationsNarration(r *conversationsRun) (out lessontest.Problems) {
	for k, s := range []convServed{r.g1, r.g2} {
		g1, g2, later, n := 0, 0, 0.0, 0
		for i, ob := range s.res.Onboards {
			g1 += ob.G1Tokens
			g2 += ob.G2Tokens
			if k == 0 && ob.G2Tokens != 0 {
				out.Addf("G1-only run reloaded %d tokens for %s", ob.G2Tokens, kit.ReqName(r.reqs[i].ID))
			}
		}
		turn := map[int]int{}
		for _, w := range r.reqs {
			turn[w.ID] = w.Turn
		}
		for _, m := range s.res.Requests {
			if turn[m.ID] > 0 {
				later += m.TTFT
				n++
			}
		}
		if n > 0 {
			later /= float64(n)
		}
		if s.g1 != g1 || s.g2 != g2 || kit.MsText(s.later) != kit.MsText(later) {
			out.Addf("run %d: narrated %d G1 and %d G2 tokens, later turns %s; the engine found %d and %d, %s", k, s.g1, s.g2, kit.MsText(s.later), g1, g2, kit.MsText(later))
		}
		if g2 != s.res.Onboarded*convBlock {
			out.Addf("run %d: %d tokens reloaded, but %d blocks onboarded", k, g2, s.res.Onboarded)
		}
	}
	return out
}
