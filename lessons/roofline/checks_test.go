package roofline

import (
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// roofline lesson. Its narration check: the sequences whose KV fits.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Paced:         true,
		PromptMetrics: map[string]string{"prefill_ms": "prompt"},
		Refusals: []lessontest.Refusal{
			{Set: map[string]string{"gpu": "a100-40gb-sxm", "model": "llama-3.1-70b"}, Key: "model", Want: "llama-3.1-70b needs 141 GB of weights; a100-40gb-sxm has 40 GB"},
			{Set: map[string]string{"model": "qwen2.5-7b", "prompt": "131072"}, Key: "prompt", Want: "exceed qwen2.5-7b's 32,768 positions"},
		},
		SweepGPUsAndModels: true,
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runRoofline(v)
			return rooflineNarration(r), err
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "one sequence more than the pool holds", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runRoofline(v)
				lessontest.MustRun(t, err)
				if alter {
					r.maxBatch++
				}
				return rooflineNarration(r)
			}},
		},
	})
}

func rooflineNarration(r rooflineRun) (out lessontest.Problems) {
	per := allocator.BlocksNeeded(r.context+1, 16)
	fits := func(n int) bool {
		p, err := hardware.Fit{GPU: r.gpu, Model: r.model, FixedTP: true, BatchedTokens: n}.Pool(16)
		return err == nil && int64(n*per) <= p.Blocks-1
	}
	if (r.maxBatch > 0 && !fits(r.maxBatch)) || (r.maxBatch < maxCrossoverBatch && fits(r.maxBatch+1)) {
		out.Addf("narrated: the KV cache holds at most %d sequences of %d tokens; vLLM's paged pool (%d blocks each) says otherwise", r.maxBatch, r.context+1, per)
	}
	for _, b := range r.sweepBatches {
		if b > r.maxBatch {
			out.Addf("the sweep prices batch %d, beyond the %d that fit", b, r.maxBatch)
		}
	}
	return out
}
