package lessons

import (
	"testing"
)

// What the shared tests check on the conversations lesson. Its narration
// check: the tokens found and reloaded, the blocks moved and the mean TTFT
// of the later turns are recomputed from the engine's per-request results.
func init() {
	registerChecks(conversations, Checks{
		Narration: func(v Values) ([]string, error) {
			r, err := runConversations(v)
			if err != nil {
				return nil, err
			}
			return conversationsNarration(r), nil
		},
		Mismatches: []Mismatch{
			{"reloaded tokens narrated one block more than G2 onboarded", func(t *testing.T, v Values, alter bool) []string {
				r, err := runConversations(v)
				MustRun(t, err)
				if alter {
					r.g2.g2 += convBlock
				}
				return conversationsNarration(r)
			}},
			{"the later turns' TTFT with G2 narrated 1 ms off", func(t *testing.T, v Values, alter bool) []string {
				r, err := runConversations(v)
				MustRun(t, err)
				if alter {
					r.g2.later += 0.001
				}
				return conversationsNarration(r)
			}},
		},
		Refusals: []Refusal{
			{map[string]string{"g1_gb": "2", "turns": "8"}, "g1_gb", "longest prompt"},
		},
	})
}

func conversationsNarration(r *conversationsRun) (out Problems) {
	for k, s := range []convServed{r.g1, r.g2} {
		g1, g2, later, n := 0, 0, 0.0, 0
		for i, ob := range s.res.Onboards {
			g1 += ob.G1Tokens
			g2 += ob.G2Tokens
			if k == 0 && ob.G2Tokens != 0 {
				out.Addf("G1-only run reloaded %d tokens for %s", ob.G2Tokens, ReqName(r.reqs[i].ID))
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
		if s.g1 != g1 || s.g2 != g2 || MsText(s.later) != MsText(later) {
			out.Addf("run %d: narrated %d G1 and %d G2 tokens, later turns %s; the engine found %d and %d, %s", k, s.g1, s.g2, MsText(s.later), g1, g2, MsText(later))
		}
		if g2 != s.res.Onboarded*convBlock {
			out.Addf("run %d: %d tokens reloaded, but %d blocks onboarded", k, g2, s.res.Onboarded)
		}
	}
	return out
}
