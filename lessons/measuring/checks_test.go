package measuring

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// measuring lesson. Its narration check: what held requests back.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		BatchDefaults: true, BatchNoteKnobs: map[string]string{"duration_s": "1", "points": "2", "rate_max": "4"},
		Paced: true,
		Refusals: []lessontest.Refusal{
			// Over the work bound.
			{Set: map[string]string{"duration_s": "600"}, Key: "duration_s", Want: ""},
			{Set: map[string]string{"max_num_seqs": "1"}, Key: "max_num_seqs", Want: ""}, // duration_s left at its default
			{Set: map[string]string{"max_num_seqs": "2048", "max_num_batched_tokens": "64"}, Key: "max_num_batched_tokens", Want: "at least max_num_seqs (2048)"},
			// A relation is refused on the knob the reader set, with the other knob's value.
			{Set: map[string]string{"rate_max": "0.1"}, Key: "rate_max", Want: `rate_max = "0.1" is not allowed with rate_min = "2" (rate_min: want below rate_max (0.1))`},
		},
		SweepGPUsAndModels: true,
		SweepKnobs:         map[string]string{"duration_s": "2"},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runMeasuring(v)
			return measuringNarration(r), err
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "a preemption the steps did not make", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runMeasuring(v)
				lessontest.MustRun(t, err)
				if alter {
					r.points[0].sum.Preemptions++
				}
				return measuringNarration(r)
			}},
		},
	})
}

func measuringNarration(r measuringRun) (out lessontest.Problems) {
	// The cost step's figures: the output tokens priced are those the
	// requests produced.
	for _, p := range r.points {
		if n := p.sum.OutputTokensPerS * p.sum.Makespan; math.Abs(float64(p.cost.Output)-n) > 1e-6*n {
			out.Addf("%s: %d output tokens priced, the requests produced %.0f", kit.RateText(p.rate), p.cost.Output, n)
		}
	}
	for _, p := range r.points {
		if p.peakRunning > r.seqs || p.atSeqs > p.queued || p.fullBudget > p.queued || (p.peakRunning < r.seqs && p.atSeqs > 0) {
			out.Addf("%s: peak %d running of max_num_seqs %d, %d steps with a queue, %d at the limit, %d with the budget spent",
				kit.RateText(p.rate), p.peakRunning, r.seqs, p.queued, p.atSeqs, p.fullBudget)
		}
		if p.sum.Preemptions != p.stepPreemptions {
			out.Addf("%s: narrated %d preemptions, the steps preempted %d", kit.RateText(p.rate), p.sum.Preemptions, p.stepPreemptions)
		}
		if p.missTTFT+p.missTPOT != p.sum.Requests-int(math.Round(p.sum.SLOAttainment*float64(p.sum.Requests))) {
			out.Addf("%s: %d + %d requests miss the SLO, %.1f%% of %d meet it", kit.RateText(p.rate), p.missTTFT, p.missTPOT, 100*p.sum.SLOAttainment, p.sum.Requests)
		}
		if p.sum.MeanRunningAtStep > float64(p.peakRunning) {
			out.Addf("%s: %.1f running on average, at most %d", kit.RateText(p.rate), p.sum.MeanRunningAtStep, p.peakRunning)
		}
	}
	return out
}
