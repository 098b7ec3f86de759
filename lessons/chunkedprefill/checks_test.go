package chunkedprefill

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// chunked-prefill lesson. Its narration check: the running decodes are the
// scheduler's.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Paced:         true,
		PromptMetrics: map[string]string{"ttft_long_ms_chunked": "long_prompt", "ttft_long_ms_unchunked": "long_prompt"},
		Refusals: []lessontest.Refusal{
			// Over the work bound.
			{Set: map[string]string{"gpu": "b200", "model": "qwen2.5-7b", "decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "8960"}, Key: "long_prompt", Want: ""},
			// More KV than the GPU holds; more positions than the model has.
			{Set: map[string]string{"decodes": "256", "context": "32768"}, Key: "decodes", Want: "tokens of KV cache need"},
			{Set: map[string]string{"model": "llama-2-7b", "long_prompt": "8192"}, Key: "long_prompt", Want: "llama-2-7b's 4,096 positions"},
		},
		SweepGPUsAndModels: true,
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runChunkedPrefill(v)
			return chunkedPrefillNarration(r), err
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "one decode more narrated running", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runChunkedPrefill(v)
				lessontest.MustRun(t, err)
				if alter {
					r.chunk.running++
				}
				return chunkedPrefillNarration(r)
			}},
		},
	})
}

func chunkedPrefillNarration(r chunkedPrefillRun) (out lessontest.Problems) {
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
					out.Addf("%s: a step with the prompt carried %d decodes, the narration says %d", c.name, st.DecodeTokens, p.running)
				}
				if c.chunked && st.PrefillTokens > r.budget-p.running {
					out.Addf("%s: a chunk of %d tokens, the narration says up to %d", c.name, st.PrefillTokens, r.budget-p.running)
				}
			}
		}
		if p.running != r.decodes || preempted != p.preemptions || preempted != 0 {
			out.Addf("%s: narrated %d decodes running (knob %d), %d preemptions; the steps preempted %d", c.name, p.running, r.decodes, p.preemptions, preempted)
		}
		if chunks != p.chunks || (!c.chunked && chunks != 1) {
			out.Addf("%s: narrated %d chunks, %d steps carried the prompt", c.name, p.chunks, chunks)
		}
	}
	return out
}

// chunked-prefill narrates what the simulation reached: every decode is
// running when the long prompt arrives, in both runs.
func TestChunkedPrefillNarratesSimulatedDecodes(t *testing.T) {
	for _, set := range []map[string]string{
		nil,
		{"decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "1024"},
		{"decodes": "64", "context": "2048", "chunk_size": "128"},
		{"gpu": "l4", "decodes": "32", "context": "4096", "long_prompt": "8000"},
	} {
		v, err := lesson.ResolveChecked(set)
		if err != nil {
			t.Logf("%v refused: %v", set, err)
			continue
		}
		r, err := runChunkedPrefill(v)
		if err != nil {
			t.Fatalf("%v: %v", set, err)
		}
		if r.whole.running != r.decodes || r.chunk.running != r.decodes || r.whole.preemptions+r.chunk.preemptions > 0 {
			t.Errorf("%v: %d and %d of %d decodes running at the prompt's arrival, %d preemptions", set, r.whole.running, r.chunk.running, r.decodes, r.whole.preemptions+r.chunk.preemptions)
		}
		// The chunked run's worst gap includes the steady one.
		if r.chunk.maxITL < r.whole.baseITL {
			t.Errorf("%v: worst chunked ITL %v below the steady ITL %v", set, r.chunk.maxITL, r.whole.baseITL)
		}
	}
}
