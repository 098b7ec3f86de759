package batching

import (
	"cmp"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// batching lesson. Its narration check: every server served every request
// within its slots.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runBatching(v)
			return batchingNarration(r), err
		},
	})
}

func batchingNarration(r batchingRun) (out lessontest.Problems) {
	for _, s := range []*servedRun{r.static, r.dynamic, r.cont, r.wide} {
		if len(s.reqs) != r.requests {
			out.Addf("%s: narrated %d requests, served %d", s.name, r.requests, len(s.reqs))
		}
		if s != r.wide && s.slots != r.slots {
			out.Addf("%s: %d slots, the knob says %d", s.name, s.slots, r.slots)
		}
		// The slot lanes never hold two requests at once.
		bySlot := map[int][]slotSpan{}
		for _, sp := range s.spans {
			if sp.slot < 0 || sp.slot >= s.slots {
				out.Addf("%s: a span in slot %d of %d", s.name, sp.slot, s.slots)
			}
			bySlot[sp.slot] = append(bySlot[sp.slot], sp)
		}
		for sl, spans := range bySlot {
			slices.SortFunc(spans, func(a, b slotSpan) int { return cmp.Compare(a.start, b.start) })
			for i := 1; i < len(spans); i++ {
				if spans[i].start < spans[i-1].end-1e-9 {
					out.Addf("%s: slot %d holds R%d and R%d at once", s.name, sl+1, spans[i-1].req+1, spans[i].req+1)
				}
			}
		}
		if s.batches == 0 {
			continue // continuous: the scheduler admits into free slots (checked above)
		}
		// Request-level servers: a request holds its slot from admission to
		// its return, and no more requests than slots are in at once.
		type edge struct {
			at    float64
			delta int
		}
		var edges []edge
		for _, q := range s.reqs {
			if q.slot < 0 || q.slot >= s.slots {
				out.Addf("%s: R%d in slot %d of %d", s.name, q.id+1, q.slot, s.slots)
			}
			edges = append(edges, edge{q.admitted, 1}, edge{q.returns, -1})
		}
		slices.SortFunc(edges, func(a, b edge) int {
			if a.at != b.at {
				return cmp.Compare(a.at, b.at)
			}
			return a.delta - b.delta // a return frees its slot before an admission at the same instant
		})
		busy, peak := 0, 0
		for _, e := range edges {
			busy += e.delta
			peak = max(peak, busy)
		}
		if peak > s.slots {
			out.Addf("%s: %d requests at once in %d slots", s.name, peak, s.slots)
		}
		members := 0
		for _, g := range s.groups {
			members += len(g.members)
			if len(g.members) > s.slots {
				out.Addf("%s: a batch of %d in %d slots", s.name, len(g.members), s.slots)
			}
		}
		if s.batches != len(s.groups) || (s.batches > 0 && members != len(s.reqs)) {
			out.Addf("%s: narrated %d batches, %d ran holding %d requests", s.name, s.batches, len(s.groups), members)
		}
	}
	return out
}
