package lessons

import (
	"testing"
)

// The chunked-prefill lesson's narration check (TestNarratedCountsMatchTheSimulation):
// the running decodes are the scheduler's.
func init() {
	checkNarration(chunkedPrefill, func(v Values) ([]string, error) {
		r, err := runChunkedPrefill(v)
		return chunkedPrefillNarration(r), err
	},
		narrationMismatch{"one decode more narrated running", func(t *testing.T, v Values, alter bool) []string {
			r, err := runChunkedPrefill(v)
			mustRun(t, err)
			if alter {
				r.chunk.running++
			}
			return chunkedPrefillNarration(r)
		}},
	)
}

func chunkedPrefillNarration(r chunkedPrefillRun) (out problems) {
	for _, c := range []struct {
		name    string
		run     *prefillRun
		chunked bool
	}{{"whole", r.whole, false}, {"chunked", r.chunk, true}} {
		p := c.run
		preempted, chunks := 0, 0
		for _, st := range p.steps {
			preempted += len(st.Preempted)
			long := false
			for _, w := range st.Work {
				if w.Req == longID && w.Prefill {
					long = true
				}
			}
			if st.Start < p.arrival {
				continue
			}
			if long {
				chunks++
				// "each step first serves the N running decodes": every
				// step carrying the prompt carries them all.
				if st.DecodeTokens != p.running {
					out.addf("%s: a step with the prompt carried %d decodes, the narration says %d", c.name, st.DecodeTokens, p.running)
				}
				if c.chunked && st.PrefillTokens > r.budget-p.running {
					out.addf("%s: a chunk of %d tokens, the narration says up to %d", c.name, st.PrefillTokens, r.budget-p.running)
				}
			}
		}
		if p.running != r.decodes || preempted != p.preemptions || preempted != 0 {
			out.addf("%s: narrated %d decodes running (knob %d), %d preemptions; the steps preempted %d", c.name, p.running, r.decodes, p.preemptions, preempted)
		}
		if chunks != p.chunks || (!c.chunked && chunks != 1) {
			out.addf("%s: narrated %d chunks, %d steps carried the prompt", c.name, p.chunks, chunks)
		}
	}
	return out
}
