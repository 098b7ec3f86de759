package sandbox

import (
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the sandbox
// lesson. Its narration check: the requests served and cut.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		ServingFits: []lessontest.ServingFit{
			{Set: map[string]string{"requests": "8"}, TP: 1, Longest: func(v lessons.Values) int {
				n := 0
				for _, r := range sandboxWorkload(v) {
					n = max(n, r.Prompt+r.Output)
				}
				return n
			}},
		},
		BatchDefaults: true, BatchNoteKnobs: map[string]string{"requests": "8"},
		Systems:     true,
		SystemsSets: []map[string]string{{"workload": "shared", "policy": "round_robin"}},
		Narration: func(v lessons.Values) ([]string, error) {
			w, cut := sandboxGenerated(v)
			r, err := runSandbox(v, w, "")
			if err != nil {
				return nil, err
			}
			r.cut = cut
			return sandboxNarration(r, sandboxDraw(v), w), nil
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "a request narrated cut that was not", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				w, cut := sandboxGenerated(v)
				r, err := runSandbox(v, w, "")
				lessontest.MustRun(t, err)
				r.cut = cut
				if alter {
					r.cut.requests++
				}
				return sandboxNarration(r, sandboxDraw(v), w)
			}},
		},
	})
}

func sandboxNarration(r *sandboxRun, drawn, served []workload.Request) (out lessontest.Problems) {
	if len(r.res.Requests) != r.requests || r.requests != len(served) {
		out.Addf("narrated %d requests, the cluster served %d of %d", r.requests, len(r.res.Requests), len(served))
	}
	perWorker, preempted := 0, 0
	for _, w := range r.res.Workers {
		perWorker += w.Requests
		preempted += w.Summary.Preemptions
	}
	if perWorker != len(r.res.Requests) || preempted != r.preemptions {
		out.Addf("narrated %d preemptions; the workers served %d requests and preempted %d", r.preemptions, perWorker, preempted)
	}
	cut := 0
	for i := range drawn {
		if drawn[i].Prompt != served[i].Prompt || drawn[i].Output != served[i].Output {
			cut++
		}
		if served[i].Prompt+served[i].Output > r.e.Model.MaxPositions {
			out.Addf("R%d: %d tokens on %d positions", i+1, served[i].Prompt+served[i].Output, r.e.Model.MaxPositions)
		}
	}
	if cut != r.cut.requests {
		out.Addf("narrated %d requests cut to the context, %d were", r.cut.requests, cut)
	}
	if r.e.KVBlocks+1 != int(r.e.Pool.Blocks) {
		out.Addf("the workers' pools: %d blocks, vLLM's %d less the null block", r.e.KVBlocks, r.e.Pool.Blocks)
	}
	return out
}

// The sandbox runs on a trace (its simulation has a SimulateTrace method).
func TestSandboxTakesATrace(t *testing.T) {
	if !lesson.TakesTrace() {
		t.Error("the sandbox takes no trace")
	}
}
