package lessons

import (
	"testing"

	"github.com/inferlab/inferlab/core/workload"
)

// What the shared tests check on the sandbox lesson (lessonChecks). Its
// narration check: the requests served and cut.
func init() {
	registerChecks(sandbox, lessonChecks{
		servingFits: []servingFit{
			{set: map[string]string{"requests": "8"}, tp: 1, longest: func(v Values) int {
				n := 0
				for _, r := range sandboxWorkload(v) {
					n = max(n, r.Prompt+r.Output)
				}
				return n
			}},
		},
		batchDefaults: true, batchNoteKnobs: map[string]string{"requests": "8"},
		systems:     true,
		systemsSets: []map[string]string{{"workload": "shared", "policy": "round_robin"}},
		narration: func(v Values) ([]string, error) {
			w, cut := sandboxGenerated(v)
			r, err := runSandbox(v, w, "")
			if err != nil {
				return nil, err
			}
			r.cut = cut
			return sandboxNarration(r, sandboxDraw(v), w), nil
		},
		mismatches: []narrationMismatch{
			{"a request narrated cut that was not", func(t *testing.T, v Values, alter bool) []string {
				w, cut := sandboxGenerated(v)
				r, err := runSandbox(v, w, "")
				mustRun(t, err)
				r.cut = cut
				if alter {
					r.cut.requests++
				}
				return sandboxNarration(r, sandboxDraw(v), w)
			}},
		},
	})
}

func sandboxNarration(r *sandboxRun, drawn, served []workload.Request) (out problems) {
	if len(r.res.Requests) != r.requests || r.requests != len(served) {
		out.addf("narrated %d requests, the cluster served %d of %d", r.requests, len(r.res.Requests), len(served))
	}
	perWorker, preempted := 0, 0
	for _, w := range r.res.Workers {
		perWorker += w.Requests
		preempted += w.Summary.Preemptions
	}
	if perWorker != len(r.res.Requests) || preempted != r.preemptions {
		out.addf("narrated %d preemptions; the workers served %d requests and preempted %d", r.preemptions, perWorker, preempted)
	}
	cut := 0
	for i := range drawn {
		if drawn[i].Prompt != served[i].Prompt || drawn[i].Output != served[i].Output {
			cut++
		}
		if served[i].Prompt+served[i].Output > r.e.model.MaxPositions {
			out.addf("R%d: %d tokens on %d positions", i+1, served[i].Prompt+served[i].Output, r.e.model.MaxPositions)
		}
	}
	if cut != r.cut.requests {
		out.addf("narrated %d requests cut to the context, %d were", r.cut.requests, cut)
	}
	if r.e.kvBlocks+1 != int(r.e.pool.Blocks) {
		out.addf("the workers' pools: %d blocks, vLLM's %d less the null block", r.e.kvBlocks, r.e.pool.Blocks)
	}
	return out
}

// The sandbox runs on a trace (its simulation has a buildTrace method).
func TestSandboxTakesATrace(t *testing.T) {
	if !sandbox.TakesTrace() {
		t.Error("the sandbox takes no trace")
	}
}
