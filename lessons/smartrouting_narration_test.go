package lessons

import (
	"math"
	"testing"
)

// The smart-routing lesson's narration check (TestNarratedCountsMatchTheSimulation):
// the hits narrated are the index's, and real.
func init() {
	checkNarration(smartRouting, func(v Values) ([]string, error) {
		r, err := runSmartRouting(v)
		if err != nil {
			return nil, err
		}
		return smartRoutingNarration(r), nil
	},
		narrationMismatch{"a route narrating a cached block more than the index held", func(t *testing.T, v Values, alter bool) []string {
			r, err := runSmartRouting(v)
			mustRun(t, err)
			if alter {
				r.kv.res.Routes[r.shownIndex()[2]].Overlap++
			}
			return smartRoutingNarration(r)
		}},
	)
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
