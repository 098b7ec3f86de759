package specdecode

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/specdec"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// speculative-decoding lesson. Its narration check: the strip is the
// acceptance process.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runSpecDecoding(v)
			return specNarration(r, v), err
		},
	})
}

func specNarration(r specRun, v lessons.Values) (out lessontest.Problems) {
	a := specdec.NewAcceptance(r.alpha, uint64(v.Int("seed")))
	pos, total := 1, 0
	for i := 0; i < r.roundsDrawn; i++ {
		k := a.Verify(r.gamma)
		if i < len(r.strip) && (r.strip[i].accepted != k || r.strip[i].start != pos) {
			out.Addf("round %d: narrated %d accepted from position %d, the process drew %d from %d", i+1, r.strip[i].accepted, r.strip[i].start, k, pos)
		}
		pos += k + 1
		total += k + 1
	}
	if got := float64(total) / float64(r.roundsDrawn); math.Abs(got-r.measured) > 1e-12 {
		out.Addf("narrated %.4f tokens per pass, the rounds drawn average %.4f", r.measured, got)
	}
	// The sweep's largest batch holds the target's and the draft's KV beside
	// each other, the next does not.
	fits := func(n int) bool {
		return draftFit(r.gpu, r.draft, n, r.context, r.gamma).Check() == nil && targetFit(r.gpu, r.model, r.draft, r.tp, n, r.context, r.gamma).Check() == nil
	}
	if (r.maxBatch > 0 && !fits(r.maxBatch)) || (r.maxBatch < 1024 && fits(r.maxBatch+1)) {
		out.Addf("narrated largest batch %d does not bound what fits", r.maxBatch)
	}
	return out
}
