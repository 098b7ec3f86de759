package smartrouting

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// smart-routing lesson. Its narration check: the hits narrated are the
// index's, and real.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		ServingFits: []lessontest.ServingFit{
			{Set: map[string]string{"requests": "8", "overload_requests": "8"}, TP: 1, Longest: func(v lessons.Values) int { return v.Int("prompt_max") + v.Int("output_max") }},
		},
		Systems:     true,
		SystemsSets: []map[string]string{{"workers": "16", "system_prompts": "8"}},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runSmartRouting(v)
			if err != nil {
				return nil, err
			}
			return smartRoutingNarration(r), nil
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "a route narrating a cached block more than the index held", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runSmartRouting(v)
				lessontest.MustRun(t, err)
				if alter {
					r.kv.Result.Routes[r.shownIndex()[2]].Overlap++
				}
				return smartRoutingNarration(r)
			}},
		},
	})
}

func smartRoutingNarration(r *smartRoutingRun) (out lessontest.Problems) {
	shown := r.shownIndex()
	for k, rt := range r.shownRoutes() {
		view := r.watch.views[shown[k]]
		if rt.Group >= 0 && view.perPrompt[rt.Worker][rt.Group] != rt.Overlap {
			out.Addf("R%d: narrated %d cached blocks on W%d, the index held %d of its prompt", rt.Request+1, rt.Overlap, rt.Worker+1, view.perPrompt[rt.Worker][rt.Group])
		}
		// The index never claims more than the worker's cache gave back.
		if got := r.kv.Result.Requests[rt.Request].CachedHit; got < 16*rt.Overlap {
			out.Addf("R%d: the index said W%d caches %d blocks, the worker found %d tokens", rt.Request+1, rt.Worker+1, rt.Overlap, got)
		}
	}
	for _, run := range []kit.RoutingRun{r.rr, r.kv, r.rnd, r.ll, r.aff, r.kvHot} {
		hits, served := 0, 0
		for _, m := range run.Result.Requests {
			if m.CachedHit > 0 {
				hits++
			}
		}
		for _, w := range run.Result.Workers {
			served += w.Requests
		}
		if want := float64(hits) / float64(len(run.Result.Requests)); math.Abs(run.HitRequests-want) > 1e-12 || served != len(run.Result.Requests) {
			out.Addf("%s: narrated %.1f%% of requests hit; %d of %d found a prefix, workers served %d", run.Name, 100*run.HitRequests, hits, len(run.Result.Requests), served)
		}
	}
	return out
}

// smart-routing's workers take the chosen GPU's vLLM batch defaults.
func TestSmartRoutingRunsTheGPUsBatchDefaults(t *testing.T) {
	for _, gpu := range []string{"h100-sxm", "l4", "a100-80gb-sxm"} {
		v, errs := lesson.Resolve(map[string]string{"gpu": gpu, "requests": "8", "overload_requests": "8"})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runSmartRouting(v)
		if err != nil {
			t.Fatal(err)
		}
		if b, s := kit.VLLMBatch(hardware.MustGPU(gpu)); r.budget != b || r.seqs != s {
			t.Errorf("smart-routing on %s: workers run %d tokens / %d sequences, vLLM %d / %d", gpu, r.budget, r.seqs, b, s)
		}
	}
}
