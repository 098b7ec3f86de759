package garage

import (
	"testing"

	"github.com/inferlab/inferlab/core/record"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the garage
// lesson. Its narration check: the ticks the narration reads are the pools'
// state.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Paced: true,
		Refusals: []lessontest.Refusal{
			// A relation is refused on the knob the reader set, with the other knob's value.
			{Set: map[string]string{"output_max": "0"}, Key: "output_max", Want: `output_max = "0" is not allowed with output_min = "`},
		},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runGarage(v)
			return garageNarration(r), err
		},
		Mismatches: []lessontest.Mismatch{
			{Name: "a paged tick narrating one token fewer than the pool holds", Check: func(t *testing.T, v lessons.Values, alter bool) []string {
				r, err := runGarage(v)
				lessontest.MustRun(t, err)
				if alter {
					r.served.snaps[r.ticks[1]].used[0]++
				}
				return garageNarration(r)
			}},
		},
	})
}

func garageNarration(r garageRun) (out lessontest.Problems) {
	for _, t := range r.ticks {
		snap, ok := r.served.snaps[t]
		if !ok {
			out.Addf("tick %d is narrated but was not captured", t)
			continue
		}
		if g, ok := r.served.paged.At(t); ok {
			owners, stored := map[int]bool{}, 0
			for i, o := range snap.owners {
				if o >= 0 {
					owners[o] = true
				}
				stored += snap.used[i]
			}
			if g.Usage.Resident != len(owners) || g.Usage.Stored != stored {
				out.Addf("tick %d, paged: narrated %d resident, %d tokens; the pool holds %d requests, %d tokens", t, g.Usage.Resident, g.Usage.Stored, len(owners), stored)
			}
		}
		if g, ok := r.served.contig.At(t); ok {
			tokens, reserved := 0, 0
			for _, run := range snap.runs {
				tokens += run.Tokens
				reserved += run.Len
			}
			if g.Usage.Resident != len(snap.runs) || g.Usage.Stored != tokens || g.Usage.Reserved != reserved {
				out.Addf("tick %d, contiguous: narrated %d resident, %d tokens in %d reserved; the pool holds %d runs, %d tokens in %d",
					t, g.Usage.Resident, g.Usage.Stored, g.Usage.Reserved, len(snap.runs), tokens, reserved)
			}
		}
	}
	// The most requests ever resident (the admitted figures) are what the
	// ticks recorded.
	for _, h := range []struct {
		name   string
		hist   *record.History
		figure int
	}{{"paged", &r.served.paged, r.figures.pagedAdmitted}, {"contiguous", &r.served.contig, r.figures.contigAdmitted}} {
		peak := 0
		for i := range h.hist.Len() {
			g, _ := h.hist.At(i)
			peak = max(peak, g.Usage.Resident)
		}
		if peak != h.figure {
			out.Addf("%s: narrated %d admitted at once, the ticks peak at %d", h.name, h.figure, peak)
		}
	}
	return out
}
