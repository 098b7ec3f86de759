package measuring

import (
	"fmt"
	"slices"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// lengthSource is where the requests' prompt and output lengths come
// from: the lab's illustrative chat long tails (drawn apart), or a
// published table of requests (a row's prompt with its own output).
type lengthSource struct {
	id string
	// chat's distributions, for the chat source.
	prompts, outputs workload.LongTail
	// rows of the table, for a table source.
	rows []workload.LengthRow
	// What the narration quotes: medians, means and the longest request.
	promptMedian, outputMedian int
	promptMean, outputMean     float64
	longest                    int
	// clamped is set when the chat lengths were cut to fit the model.
	clamped bool
}

// lengthsOf is the source the lengths knob picks for model m. The chat
// lengths' ranges are halved to fit a model whose context is shorter than
// 12,288 tokens (Llama-2-7B's 4,096), as a load generator would pick a
// data set that fits; a table is refused on a model too short for its
// longest request (Check says so).
func lengthsOf(v lessons.Values, m hardware.Model) (lengthSource, error) {
	id := "chat"
	if v.Has("lengths") {
		id = v.Choice("lengths")
	}
	if id == "chat" {
		p, o := workload.ChatPrompts(), workload.ChatOutputs()
		clamped := false
		if p.Max+o.Max > m.MaxPositions {
			p.Max, o.Max, clamped = min(p.Max, m.MaxPositions/2), min(o.Max, m.MaxPositions/2), true
		}
		return lengthSource{id: id, prompts: p, outputs: o, promptMedian: int(p.Median), outputMedian: int(o.Median),
			promptMean: p.Mean(), outputMean: o.Mean(), longest: p.Max + o.Max, clamped: clamped}, nil
	}
	t, ok := workload.LengthTableByID(id)
	if !ok {
		return lengthSource{}, fmt.Errorf("measuring: no length table %q", id)
	}
	rows, err := t.Rows()
	if err != nil {
		return lengthSource{}, err
	}
	src := lengthSource{id: id, rows: rows}
	ps, os := make([]int, len(rows)), make([]int, len(rows))
	var sp, so float64
	for i, r := range rows {
		ps[i], os[i] = r.Prompt, r.Output
		sp, so = sp+float64(r.Prompt), so+float64(r.Output)
		src.longest = max(src.longest, r.Prompt+r.Output)
	}
	slices.Sort(ps)
	slices.Sort(os)
	src.promptMedian, src.outputMedian = ps[(len(ps)-1)/2], os[(len(os)-1)/2]
	src.promptMean, src.outputMean = sp/float64(len(rows)), so/float64(len(rows))
	if src.longest > m.MaxPositions {
		return src, lessons.Relation("lengths", id, fmt.Sprintf("lengths that fit %s's %s positions (this table's longest request is %s tokens)", m.Name, kit.Comma(m.MaxPositions), kit.Comma(src.longest)), "model")
	}
	return src, nil
}

// draw is n requests of the source arriving as a Poisson process at rate,
// seeded by seed; one seed draws the same lengths at every rate.
func (l lengthSource) draw(n int, rate float64, seed uint64) []workload.Request {
	if l.rows != nil {
		return workload.PoissonRows(n, rate, l.rows, seed)
	}
	return workload.Poisson(n, rate, l.prompts, l.outputs, seed)
}

// text describes the lengths for the narration.
func (l lengthSource) text() string {
	if l.rows != nil {
		return fmt.Sprintf("ShareGPT requests as Sarathi-Serve's chat experiments replay them (prompts median %s tokens, outputs median %s, %s requests drawn at random)",
			kit.Comma(l.promptMedian), kit.Comma(l.outputMedian), kit.Comma(len(l.rows)))
	}
	clamp := ""
	if l.clamped {
		clamp = fmt.Sprintf(", at most %s + %s to fit the model's positions", kit.Comma(l.prompts.Max), kit.Comma(l.outputs.Max))
	}
	return fmt.Sprintf("chat-like requests (prompts and outputs long-tailed around %d and %d tokens%s)", l.promptMedian, l.outputMedian, clamp)
}
