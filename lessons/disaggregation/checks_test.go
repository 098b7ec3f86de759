package disaggregation

import (
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// disaggregation lesson. Its narration check: who served what, within the
// engines' limits.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		ServingFits: []lessontest.ServingFit{
			{Set: map[string]string{"requests": "4", "model": "llama-3.1-8b", "tp": "1"}, TP: 1, Longest: func(v lessons.Values) int { return v.Int("prompt_max") + v.Int("output_max") }},
			{Set: map[string]string{"requests": "4"}, TP: 4, Longest: func(v lessons.Values) int { return v.Int("prompt_max") + v.Int("output_max") }},
		},
		Systems:     true,
		SystemsSets: []map[string]string{{"conditional": "queue_length", "prefill_workers": "2", "decode_workers": "3"}, {"conditional": "isl_or_load", "prefill_workers": "2", "decode_workers": "3"}},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runDisaggregation(v)
			if err != nil {
				return nil, err
			}
			return disaggNarration(r), nil
		},
	})
}

func disaggNarration(r *disaggRun) (out lessontest.Problems) {
	c := r.compared
	if len(c.Monolithic.Requests) != len(r.reqs) || len(c.Disagg.Requests) != len(r.reqs) {
		out.Addf("narrated %d requests; monolithic served %d, disaggregated %d", len(r.reqs), len(c.Monolithic.Requests), len(c.Disagg.Requests))
	}
	remote := 0
	for _, j := range c.Disagg.Journeys {
		if j.Remote {
			remote++
		}
	}
	if remote != c.Disagg.Remote || c.Disagg.Remote+c.Disagg.Local != len(r.reqs) || (!r.conditional && remote != len(r.reqs)) {
		out.Addf("%d remote + %d local narrated; %d journeys went remote of %d", c.Disagg.Remote, c.Disagg.Local, remote, len(r.reqs))
	}
	out = append(out, disaggStepLimits(r)...)
	if r.stall.step >= 0 {
		st := c.Monolithic.DecodeSteps[r.stall.worker][r.stall.step]
		if st.DecodeTokens != r.stall.decodes || st.PrefillTokens == 0 {
			out.Addf("narrated stall: %d decodes beside a prompt; the step carried %d decodes and %d prompt tokens", r.stall.decodes, st.DecodeTokens, st.PrefillTokens)
		}
		for _, steps := range c.Monolithic.DecodeSteps {
			for _, o := range steps {
				if o.PrefillTokens > 0 && o.DecodeTokens > 0 && o.Duration > st.Duration {
					out.Addf("narrated the worst stall at %.1f ms; a %.1f ms step also carried both", 1000*st.Duration, 1000*o.Duration)
				}
			}
		}
	}
	if r.followed.index >= 0 {
		j := c.Disagg.Journeys[r.followed.index]
		if !j.Remote || len(r.reqs[r.followed.index].PromptIDs) != r.followed.prompt || r.followed.blocks != allocator.BlocksNeeded(r.followed.prompt, disaggBlock) {
			out.Addf("the followed request: remote %v, %d prompt tokens in %d blocks; narrated %d in %d", j.Remote, len(r.reqs[r.followed.index].PromptIDs), allocator.BlocksNeeded(len(r.reqs[r.followed.index].PromptIDs), disaggBlock), r.followed.prompt, r.followed.blocks)
		}
	}
	return out
}

// disaggStepLimits checks every worker's steps against the narrated
// max_num_seqs and token budget.
func disaggStepLimits(r *disaggRun) (out lessontest.Problems) {
	c := r.compared
	for _, res := range []struct {
		name  string
		steps [][]scheduler.Step
	}{{"monolithic", c.Monolithic.DecodeSteps}, {"prefill", c.Disagg.PrefillSteps}, {"decode", c.Disagg.DecodeSteps}} {
		for w, steps := range res.steps {
			for _, st := range steps {
				if st.Running > r.seqs || st.PrefillTokens+st.DecodeTokens > r.budget {
					out.Addf("%s worker %d: a step ran %d requests and %d tokens; narrated limits %d and %d", res.name, w+1, st.Running, st.PrefillTokens+st.DecodeTokens, r.seqs, r.budget)
				}
			}
		}
	}
	return out
}

// disaggregation's workers take the chosen GPU's vLLM batch defaults, with
// max_num_seqs capped at the token budget, as vLLM does.
func TestDisaggregationRunsTheGPUsBatchDefaults(t *testing.T) {
	for _, c := range []struct {
		gpu, budget string
		seqs        int
	}{{"h100-sxm", "8192", 1024}, {"h100-sxm", "512", 512}, {"l40s", "8192", 256}} {
		v, errs := lesson.Resolve(map[string]string{"gpu": c.gpu, "budget": c.budget, "requests": "4"})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runDisaggregation(v)
		if err != nil {
			t.Fatal(err)
		}
		if r.seqs != c.seqs {
			t.Errorf("disaggregation on %s with budget %s: max_num_seqs %d, want %d", c.gpu, c.budget, r.seqs, c.seqs)
		}
	}
}
