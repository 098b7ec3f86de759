package lessons

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// What the shared tests check on the smart-routing lesson (lessonChecks). Its
// narration check: the hits narrated are the index's, and real.
func init() {
	registerChecks(smartRouting, lessonChecks{
		servingFits: []servingFit{
			{set: map[string]string{"requests": "8", "overload_requests": "8"}, tp: 1, longest: func(v Values) int { return v.Int("prompt_max") + v.Int("output_max") }},
		},
		systems:     true,
		systemsSets: []map[string]string{{"workers": "16", "system_prompts": "8"}},
		narration: func(v Values) ([]string, error) {
			r, err := runSmartRouting(v)
			if err != nil {
				return nil, err
			}
			return smartRoutingNarration(r), nil
		},
		mismatches: []narrationMismatch{
			{"a route narrating a cached block more than the index held", func(t *testing.T, v Values, alter bool) []string {
				r, err := runSmartRouting(v)
				mustRun(t, err)
				if alter {
					r.kv.res.Routes[r.shownIndex()[2]].Overlap++
				}
				return smartRoutingNarration(r)
			}},
		},
	})
}

func smartRoutingNarration(r *smartRoutingRun) (out problems) {
	shown := r.shownIndex()
	for k, rt := range r.shownRoutes() {
		view := r.watch.views[shown[k]]
		if rt.Group >= 0 && view.perPrompt[rt.Worker][rt.Group] != rt.Overlap {
			out.addf("R%d: narrated %d cached blocks on W%d, the index held %d of its prompt", rt.Request+1, rt.Overlap, rt.Worker+1, view.perPrompt[rt.Worker][rt.Group])
		}
		// The index never claims more than the worker's cache gave back.
		if got := r.kv.res.Requests[rt.Request].CachedHit; got < 16*rt.Overlap {
			out.addf("R%d: the index said W%d caches %d blocks, the worker found %d tokens", rt.Request+1, rt.Worker+1, rt.Overlap, got)
		}
	}
	for _, run := range []routingRun{r.rr, r.kv, r.rnd, r.ll, r.aff, r.kvHot} {
		hits, served := 0, 0
		for _, m := range run.res.Requests {
			if m.CachedHit > 0 {
				hits++
			}
		}
		for _, w := range run.res.Workers {
			served += w.Requests
		}
		if want := float64(hits) / float64(len(run.res.Requests)); math.Abs(run.hitRequests-want) > 1e-12 || served != len(run.res.Requests) {
			out.addf("%s: narrated %.1f%% of requests hit; %d of %d found a prefix, workers served %d", run.name, 100*run.hitRequests, hits, len(run.res.Requests), served)
		}
	}
	return out
}

// smart-routing's workers take the chosen GPU's vLLM batch defaults.
func TestSmartRoutingRunsTheGPUsBatchDefaults(t *testing.T) {
	for _, gpu := range []string{"h100-sxm", "l4", "a100-80gb-sxm"} {
		v, errs := smartRouting.Resolve(map[string]string{"gpu": gpu, "requests": "8", "overload_requests": "8"})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runSmartRouting(v)
		if err != nil {
			t.Fatal(err)
		}
		if b, s := vllmBatch(hardware.MustGPU(gpu)); r.budget != b || r.seqs != s {
			t.Errorf("smart-routing on %s: workers run %d tokens / %d sequences, vLLM %d / %d", gpu, r.budget, r.seqs, b, s)
		}
	}
}
