package cudagraphs

import (
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// cuda-graphs lesson. Its narration check: what fits and what pads.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		BatchDefaults: true, BatchNoteStep: 6,
		Paced: true,
		Refusals: []lessontest.Refusal{
			{Set: map[string]string{"model": "llama-3.1-70b"}, Key: "model", Want: "llama-3.1-70b needs 141 GB of weights; h100-sxm has 85 GB as vLLM sees it: pick tp ≥ 4"},
		},
		SweepGPUsAndModels: true,
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runCUDAGraphs(v)
			return cudaGraphsNarration(r), err
		},
	})
}

func cudaGraphsNarration(r graphsRun) (out lessontest.Problems) {
	e := r.e
	// "Beyond batch N the KV cache … would not fit": N sequences of
	// context + 1 tokens in the paged pool vLLM would allocate, N + 1 not.
	per := allocator.BlocksNeeded(r.context+1, 16)
	fits := func(n int) bool {
		p, err := hardware.Fit{GPU: e.gpu, Model: e.model, TP: e.tp, BatchedTokens: e.budget}.Pool(16)
		return err == nil && int64(n*per) <= p.Blocks-1
	}
	if (r.kvFit > 0 && !fits(r.kvFit)) || (r.kvFit < e.seqs && fits(r.kvFit+1)) {
		out.Addf("narrated %d sequences of %d tokens fit; the pool (%d blocks each) says otherwise", r.kvFit, r.context+1, per)
	}
	d := e.dispatcher(cudagraph.FullAndPiecewise)
	for n := 1; n <= len(r.padTo); n++ {
		want := -1
		for _, s := range d.Sizes {
			if s >= n {
				want = s
				break
			}
		}
		if r.padTo[n-1] != want {
			out.Addf("%d tokens narrated to pad to %d, the smallest captured size ≥ it is %d", n, r.padTo[n-1], want)
		}
	}
	cross := 0
	for _, p := range r.sweep {
		if slices.Contains(d.Sizes, p.batch) && p.eager <= 1.02*p.full {
			cross = p.batch
			break
		}
	}
	if cross != r.crossover {
		out.Addf("narrated crossover at batch %d, the sweep's first is %d", r.crossover, cross)
	}
	if c := e.dispatcher(e.mode).Capture(); c.FullGraphs+c.PiecewiseGraphs != r.capture.FullGraphs+r.capture.PiecewiseGraphs {
		out.Addf("narrated %d graphs, the dispatcher captures %d", r.capture.FullGraphs+r.capture.PiecewiseGraphs, c.FullGraphs+c.PiecewiseGraphs)
	}
	return out
}
