package parallelism

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/parallel"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// parallelism lesson: the counts its narration states, recomputed from the
// core.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Refusals: []lessontest.Refusal{
			{Set: map[string]string{"weight_dtype": "bf16", "pp": "1"}, Key: "weight_dtype", Want: "no available memory"},
			{Set: map[string]string{"pp": "1", "batch": "2048"}, Key: "batch", Want: "sequences"},
		},
		SweepGPUsAndModels: true,
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runParallelism(v)
			if err != nil {
				return nil, err
			}
			return parallelismNarration(v, r), nil
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "one sequence more than the replica holds", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runParallelism(v)
				lessontest.MustRun(t, err)
				if alter {
					r.mine.maxSeqs++
				}
				return parallelismNarration(v, r)
			}},
			{Name: "a TP8 that fits 405B in BF16", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runParallelism(v)
				lessontest.MustRun(t, err)
				if alter {
					r.bf16[0].fitErr = nil
				}
				return parallelismNarration(v, r)
			}},
		},
	})
}

// parallelismNarration recomputes what the narration states: the chosen
// replica's KV tokens and sequences from vLLM's pool sizing of each stage
// (hardware.KVBudget on the stage's layers), the bubble formula, and the
// 405B BF16 verdicts from the weights per GPU against the usable memory.
func parallelismNarration(v lessons.Values, r parallelismRun) (out lessontest.Problems) {
	l := knobLayout(v)
	s, _ := knobSetup(v)
	var low int64 = -1
	for i, n := range parallel.StageLayers(s.Model.Layers, l.PP) {
		b := r.mine.replica.Stages[i].Budget
		b.Model.Layers = n
		p, err := b.Size()
		if err != nil {
			out.Addf("stage %d does not fit: %v", i+1, err)
			continue
		}
		if low < 0 || p.Blocks < low {
			low = p.Blocks
		}
	}
	tokens := (low - 1) * 16
	if r.mine.kvTokens != tokens {
		out.Addf("narrated %d KV tokens; the stages' pools hold %d", r.mine.kvTokens, tokens)
	}
	per := int64((r.context + 1 + 15) / 16)
	if want := int(tokens / 16 / per); r.mine.maxSeqs != want {
		out.Addf("narrated %d sequences of %d tokens; the pool holds %d", r.mine.maxSeqs, r.context+1, want)
	}
	if want := float64(l.PP-1) / float64(l.MicroBatches+l.PP-1); r.mine.step.FormulaBubble != want {
		out.Addf("narrated bubble %v, formula %v", r.mine.step.FormulaBubble, want)
	}
	usable, _ := hardware.EngineMemory(hardware.MustGPU(reportGPU))
	for _, c := range r.bf16 {
		st := c.replica.Stages[0]
		need := st.WeightBytes + st.Budget.ActivationBytes + st.Budget.NonTorchBytes
		if fits := need < int64(0.9*float64(usable)); fits != (c.fitErr == nil) {
			out.Addf("%s narrated as fitting %v; %d bytes needed of %d", c.layout.Name(), c.fitErr == nil, need, int64(0.9*float64(usable)))
		}
	}
	return out
}
