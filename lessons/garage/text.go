package garage

// The garage lesson's words and pictures: the steps narrating both pools'
// ticks, their figure, cards and chart, and the claims (garage.go runs the
// simulation).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/record"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// ---- Formatting: scenes and text from the run ----

// garageText formats one run; labels are the request names, made once
// because grids repeat them thousands of times.
type garageText struct {
	*garageRun
	labels []string
	chart  *scene.Chart
	// colours gives each request on screen its own style, step after
	// step (steps are built in order).
	colours *scene.Colours
	// colour (by request id, zero between scenes) and on are poolsScene's
	// scratch.
	colour []int
	on     []int
}

func (r garageRun) Script() *lessons.Script {
	g := &garageText{garageRun: &r, labels: make([]string, len(r.setup.reqs)), colours: scene.NewColours(), colour: make([]int, len(r.setup.reqs))}
	for i := range g.labels {
		g.labels[i] = kit.ReqName(i)
	}
	g.chart = g.utilChart()
	s := &lessons.Script{Metrics: r.figures.metrics(), Claims: garageClaims(r.article, r.figures)}
	s.Steps = append(s.Steps, g.introStep())
	steps := g.tickSteps()
	if len(steps) > 0 && r.ticks[0] == 0 {
		first, _ := r.served.contig.At(0)
		c0 := first.Usage.Resident
		steps[0].Quiz = lessons.NumberQuiz(fmt.Sprintf("%s requests queue for %s slots. How many will the contiguous pool hold after admitting what fits?", kit.Comma(len(r.setup.reqs)), kit.Comma(r.setup.pool)),
			float64(c0), 0, fmt.Sprintf("Each request reserves %s; the pool holds %d such runs, whatever the requests' real lengths.", reserveWords(r.setup), c0))
	}
	s.Steps = append(s.Steps, steps...)
	s.Steps = append(s.Steps, g.summaryStep(s))
	s.Work = r.work
	return s
}

func (g *garageText) introStep() lessons.Step {
	s := g.setup
	empty := snapshot{owners: make([]int, s.pool/s.b), used: make([]int, s.pool/s.b)}
	for i := range empty.owners {
		empty.owners[i] = scene.Free
	}
	var fit string
	if s.reserve.Policy == allocator.ReserveMax {
		run := s.reserve.MaxContext
		if s.reserve.Placement == allocator.Buddy {
			run = buddyBlock(run)
		}
		fit = fmt.Sprintf(" At %s slots each, at most %d requests can ever be resident in the contiguous pool, whatever their length.",
			kit.Comma(run), s.pool/run)
	}
	setup := " These are the article's numbers: the pool and request stream of its simulator script, with the 8,192-token reservations its text describes."
	if !g.isArticle {
		setup = " The article's setup is the defaults; the table at the end shows its figures beside this run's."
	}
	idle := scheduler.Tick{Blocked: -1, Waiting: len(s.reqs), Usage: allocator.Usage{Pool: s.pool}}
	all := record.Line{Head: make([]int, min(len(s.reqs), maxQueueShown)), N: len(s.reqs)} // everyone waits, in order
	for i := range all.Head {
		all.Head[i] = i
	}
	pagedText, contigText := "The paged pool", "the contiguous pool"
	lengths := ""
	if s.shareGPT {
		lengths = ", long-tailed like the vLLM paper's ShareGPT requests"
	}
	narration := fmt.Sprintf("%s requests (prompts %s–%s tokens, %s–%s output tokens%s) queue in order. Each pool has %s KV slots. "+
		"%s cuts them into %s blocks of %d tokens and gives a request a block only when it needs one; "+
		"%s gives each request one unbroken run (%s).%s%s",
		kit.Comma(len(s.reqs)), kit.Comma(s.promptMin), kit.Comma(s.promptMax), kit.Comma(s.outputMin), kit.Comma(s.outputMax), lengths, kit.Comma(s.pool),
		pagedText, kit.Comma(s.pool/s.b), s.b, contigText, reserveWords(s), fit, setup)
	subj := []subject{
		{pagedText, "pool:paged", fmt.Sprintf("%s blocks × %d tokens", kit.Comma(s.pool/s.b), s.b)},
		{contigText, "pool:contiguous", "one unbroken run per request"},
	}
	pools := g.poolsScene(empty, nil, g.queues(all, all, nil, nil, scheduler.Tick{Blocked: -1}, scheduler.Tick{Blocked: -1}))
	marks, mentions := subjects(narration, pools.ID, subj)
	pools.Marks = marks
	return lessons.Step{
		Title:     "Two garages, one queue",
		Narration: narration,
		Scenes:    []scene.Scene{pools, nowCards(idle, idle), g.utilScene(0)},
		Mentions:  mentions,
		Cursor:    0,
	}
}

// subject is something a step's narration names: the phrase, the element
// of the pools figure it names, and the callout drawn there.
type subject struct{ text, ref, label string }

// subjects turns a step's subjects into marks and mentions: those whose
// phrase the narration contains, at most maxMarks, one per element.
func subjects(narration, sceneID string, subj []subject) ([]scene.Mark, []scene.Mention) {
	const maxMarks = 3
	var marks []scene.Mark
	var mentions []scene.Mention
	seen := map[string]bool{}
	for _, s := range subj {
		if len(marks) == maxMarks || s.text == "" || seen[s.ref] || !strings.Contains(narration, s.text) {
			continue
		}
		seen[s.ref] = true
		marks = append(marks, kit.MarkRef(s.ref, s.label))
		mentions = append(mentions, kit.Mention(s.text, sceneID, s.ref))
	}
	return marks, mentions
}

// teller says each explanation once: the first time its mechanism shows up.
type teller map[string]bool

func (t teller) once(key, text string) string {
	if t[key] {
		return ""
	}
	t[key] = true
	return " " + text
}

// tickSteps narrates each chosen tick: what happened in both pools since the
// previous step, explaining each mechanism the first time it shows up.
func (g *garageText) tickSteps() []lessons.Step {
	var steps []lessons.Step
	told := teller{}
	prevTick := -1
	var prev *snapshot
	pq, cq := g.served.paged.Queues(len(g.setup.reqs), g.ticks, maxQueueShown), g.served.contig.Queues(len(g.setup.reqs), g.ticks, maxQueueShown)
	for k, t := range g.ticks {
		snap := g.served.snaps[t]
		pw, cw := g.served.paged.Window(prevTick, t), g.served.contig.Window(prevTick, t)
		var subj []subject
		paged, title := g.pagedText(pw, t, told, snap, prev, &subj)
		contig, title := g.contigText(cw, t, told, title, snap, &subj)
		if title == "" {
			title = g.plainTitle(pw, cw, t, told)
		}
		when := fmt.Sprintf("Tick %d. ", t)
		if t > prevTick+1 {
			when = fmt.Sprintf("Ticks %d–%d. ", prevTick+1, t)
		}
		narration := when + "Paged: " + paged + " Contiguous: " + contig
		pools := g.poolsScene(snap, prev, g.queues(pq[k], cq[k], pw.Preempted, cw.Preempted, pw.Last.Tick, cw.Last.Tick))
		marks, mentions := subjects(narration, pools.ID, subj)
		pools.Marks = marks
		steps = append(steps, lessons.Step{
			Title:     title,
			Narration: narration,
			Scenes:    []scene.Scene{pools, nowCards(pw.Last.Tick, cw.Last.Tick), g.utilScene(float64(t))},
			Mentions:  mentions,
			Cursor:    float64(t),
		})
		prevTick = t
		sn := snap
		prev = &sn
	}
	return steps
}

// pagedText narrates the paged pool over one window, and titles the step
// when it shows the first preemption; it adds the window's subjects (a
// preempted request, a block taken on demand, a block freed) to subj.
func (g *garageText) pagedText(w record.Window, t int, told teller, snap snapshot, prev *snapshot, subj *[]subject) (text, title string) {
	if !w.Active {
		done := "has served every request"
		*subj = append(*subj, subject{done, "pool:paged", "empty: all served"})
		return fmt.Sprintf("%s (done at tick %d).", done, g.served.paged.Len()-1), ""
	}
	var parts []string
	if len(w.Admitted) > 0 {
		parts = append(parts, admittedText(w.Admitted))
	}
	if len(w.Finished) > 0 {
		txt := fmt.Sprintf("%s finished and returned %s blocks to the free queue", reqNames(w.Finished), kit.Plural(len(w.Finished), "its", "their"))
		parts = append(parts, txt)
		if i, ok := freedBlock(snap, prev, w.Finished); ok {
			*subj = append(*subj, subject{txt, blockRefOf(i), fmt.Sprintf("block %d: freed by %s", i, kit.ReqName(prev.owners[i]))})
		}
	}
	if w.DecodeBlocks > 0 {
		txt := fmt.Sprintf("%d %s allocated on demand", w.DecodeBlocks, kit.Plural(w.DecodeBlocks, "block", "blocks"))
		parts = append(parts, txt+" as decoding filled last blocks")
		if i, ok := demandBlock(snap, prev, w.Admitted); ok {
			*subj = append(*subj, subject{txt, blockRefOf(i), fmt.Sprintf("block %d: new for %s", i, kit.ReqName(snap.owners[i]))})
		}
	}
	if len(w.Preempted) > 0 {
		txt := fmt.Sprintf("%s preempted", reqNames(w.Preempted))
		parts = append(parts, txt)
		*subj = append([]subject{{txt, "queue:paged:" + kit.ReqName(w.Preempted[len(w.Preempted)-1]), kit.ReqName(w.Preempted[len(w.Preempted)-1]) + " preempted"}}, *subj...)
	}
	if len(parts) == 0 {
		parts = append(parts, "requests kept decoding")
	}
	// The pools' counts are on the figure; the narration says what happened.
	var b strings.Builder
	b.WriteString(strings.Join(parts, "; ") + ".")
	bs := g.setup.b
	if t == 0 {
		b.WriteString(told.once("paged-admit", fmt.Sprintf("Each request took ⌈prompt/%d⌉ blocks for its prompt and nothing more.", bs)))
	}
	if w.DecodeBlocks > 0 {
		b.WriteString(told.once("decode", fmt.Sprintf("A request takes a new block only when its last one is full, so at most %d slots per request sit empty.", bs-1)))
	}
	if len(w.Preempted) > 0 {
		if txt := told.once("preempt", "No block was free for the next token, so (as in vLLM v1) the most recently admitted request was preempted: its blocks were freed and it went back to the head of the queue, to be recomputed later."); txt != "" {
			b.WriteString(txt)
			title = "Preemption: out of blocks"
		}
	}
	if blocked := w.Last.Blocked; blocked >= 0 && len(w.Admitted) == 0 && t > 0 {
		// The pool's own shortfall: a preempted request recomputes its
		// prompt and the tokens it had made, so it needs more than its
		// prompt's blocks.
		need := (g.setup.reqs[blocked].Prompt + bs - 1) / bs
		if sf := w.Last.Shortfall; sf != nil {
			need = sf.Need / bs
		}
		b.WriteString(told.once("paged-blocked", fmt.Sprintf("%s waits: the %d blocks it needs are not free yet.", kit.ReqName(blocked), need)))
	}
	return b.String(), title
}

// admittedText says who was admitted, with the count when there are many.
func admittedText(ids []int) string {
	if len(ids) > 3 {
		return fmt.Sprintf("admitted %d requests (%s)", len(ids), idRange(ids))
	}
	return "admitted " + reqNames(ids)
}

// idRange names requests for a title: "R12–R16" when they follow each
// other, else as names does.
func idRange(ids []int) string {
	if len(ids) > 2 && slices.IsSorted(ids) && ids[len(ids)-1]-ids[0] == len(ids)-1 {
		return kit.ReqName(ids[0]) + "–" + kit.ReqName(ids[len(ids)-1])
	}
	return reqNames(ids)
}

// blockRefOf is the reference of physical block i.
func blockRefOf(i int) string { return "block:" + strconv.Itoa(i) }

// freedBlock is a block one of the finished requests held in prev and that
// is free now.
func freedBlock(snap snapshot, prev *snapshot, finished []int) (int, bool) {
	if prev == nil {
		return 0, false
	}
	for i, o := range snap.owners {
		if o == scene.Free && prev.owners[i] != scene.Free && slices.Contains(finished, prev.owners[i]) {
			return i, true
		}
	}
	return 0, false
}

// demandBlock is a block taken on demand since prev: owned now by a
// request that was already resident (not one of those just admitted), and
// free or someone else's before.
func demandBlock(snap snapshot, prev *snapshot, admitted []int) (int, bool) {
	if prev == nil {
		return 0, false
	}
	// Owners are the stream's ids, 0…n−1, or Free: a slice by id serves as
	// the set.
	hi := -1
	for _, o := range prev.owners {
		hi = max(hi, o)
	}
	resident := make([]bool, hi+1)
	for _, o := range prev.owners {
		if o >= 0 {
			resident[o] = true
		}
	}
	for i, o := range snap.owners {
		if o >= 0 && o <= hi && prev.owners[i] != o && resident[o] && !slices.Contains(admitted, o) {
			return i, true
		}
	}
	return 0, false
}

// contigText narrates the contiguous pool over one window; it titles tick 0
// and, when no title is set yet, the first hole reuse and rejection; it
// adds the window's subjects (a run's empty tail, a reused hole, a refused
// request) to subj.
func (g *garageText) contigText(w record.Window, t int, told teller, title string, snap snapshot, subj *[]subject) (string, string) {
	if !w.Active {
		done := "has served every request"
		*subj = append(*subj, subject{done, "pool:contiguous", "empty: all served"})
		return fmt.Sprintf("%s (done at tick %d).", done, g.served.contig.Len()-1), title
	}
	var parts []string
	if len(w.Finished) > 0 {
		parts = append(parts, fmt.Sprintf("%s finished, leaving %s", reqNames(w.Finished), kit.Plural(len(w.Finished), "a hole", "holes")))
	}
	if len(w.Admitted) > 0 {
		parts = append(parts, admittedText(w.Admitted))
	}
	if len(w.Preempted) > 0 {
		parts = append(parts, fmt.Sprintf("%s preempted", reqNames(w.Preempted)))
	}
	if len(parts) == 0 {
		parts = append(parts, "requests kept decoding inside their reservations")
	}
	var b strings.Builder
	u := w.Last.Usage
	b.WriteString(strings.Join(parts, "; ") + ".")
	if t == 0 {
		frag := "that empty tail is internal fragmentation"
		b.WriteString(told.once("contig-admit", fmt.Sprintf("Every admitted request holds its whole reservation from the first token: %s, %s of the reserved slots.", frag, kit.Pct(u.Waste()))))
		if len(snap.runs) > 0 {
			r := snap.runs[0]
			*subj = append(*subj, subject{frag, "req:" + kit.ReqName(r.Req), fmt.Sprintf("%s: %s of %s reserved slots empty", kit.ReqName(r.Req), kit.Comma(r.Len-r.Tokens), kit.Comma(r.Len))})
		}
		title = "Admission: every request reserves its run"
	}
	if w.HoleReuse {
		reuse, phrase, titled, label := "First fit placed a new request in a hole a finished one left behind.", "First fit placed a new request in a hole", "A hole is reused (first fit)", " in a freed hole"
		if g.setup.reserve.Placement == allocator.Buddy {
			reuse, phrase, titled, label = "The buddy allocator placed a new request in a free block below other runs: the lowest free block of the smallest power of two that holds its reservation.",
				"The buddy allocator placed a new request in a free block", "A free block below other runs (buddy)", " in a free block"
		}
		if txt := told.once("reuse", reuse); txt != "" {
			b.WriteString(txt)
			title = orTitle(title, titled)
			if n := len(w.Admitted); n > 0 {
				id := w.Admitted[n-1]
				*subj = append(*subj, subject{phrase, "req:" + kit.ReqName(id), kit.ReqName(id) + label})
			}
		}
	}
	if w.Last.Blocked >= 0 {
		txt, why := rejectionText(w.Last.Tick, told)
		b.WriteString(txt)
		title = orTitle(title, why)
		if txt != "" {
			name := kit.ReqName(w.Last.Blocked)
			*subj = append([]subject{{name + " is rejected for now", "queue:contiguous:" + name, name + " refused"}}, *subj...)
		}
	}
	return b.String(), title
}

// orTitle returns title, or else alt.
func orTitle(title, alt string) string {
	if title != "" {
		return title
	}
	return alt
}

// fragBlocked reports whether the head of the queue was refused although
// enough slots were free: external fragmentation.
func fragBlocked(t scheduler.Tick) bool {
	return t.Shortfall != nil && record.Fragmented(t.Shortfall)
}

// rejectionText explains, once, why the head of the contiguous queue was
// refused: external fragmentation when enough slots were free, else plain
// lack of room.
func rejectionText(lg scheduler.Tick, told teller) (text, title string) {
	short := lg.Shortfall
	if fragBlocked(lg) {
		text = told.once("frag", fmt.Sprintf("%s is rejected for now: it needs %s contiguous slots and %s slots are free, but the largest hole holds only %s. That is external fragmentation: a hole that fits nobody.",
			kit.ReqName(lg.Blocked), kit.Comma(short.Need), kit.Comma(short.Free), kit.Comma(short.Largest)))
		if text != "" {
			title = "External fragmentation: a hole that fits nobody"
		}
		return text, title
	}
	text = told.once("reject", fmt.Sprintf("%s is rejected for now: it needs %s contiguous slots and only %s are free. It waits at the head of the queue, and everyone behind it waits too.",
		kit.ReqName(lg.Blocked), kit.Comma(short.Need), kit.Comma(short.Free)))
	if text != "" {
		title = "The first refusal"
	}
	return text, title
}

// plainTitle titles a step that showed no mechanism for the first time,
// by what happened in it.
func (g *garageText) plainTitle(pw, cw record.Window, t int, told teller) string {
	pagedDone, contigDone := g.served.paged.Len()-1, g.served.contig.Len()-1
	switch {
	case t == pagedDone && t == contigDone:
		return "Both pools are done"
	case t == pagedDone:
		return "The paged pool is done"
	case t == contigDone:
		return "The contiguous pool is done"
	case pw.Active && pw.Last.Waiting == 0 && len(pw.Admitted) > 0:
		return "Every request is in the paged pool"
	case t == g.served.paged.PeakTick():
		return "Paged pool at its fullest"
	case len(pw.Preempted) > 0:
		return fmt.Sprintf("Out of blocks again: %s preempted", idRange(pw.Preempted))
	case pw.DecodeBlocks > 0 && len(pw.Finished)+len(pw.Admitted) == 0:
		return "Blocks on demand as requests grow"
	case len(cw.Finished) > 0 && !told["holes"]:
		told["holes"] = true
		return "Requests finish, leaving holes"
	case !pw.Active && len(cw.Admitted) > 0:
		return fmt.Sprintf("Contiguous: %s %s freed %s", idRange(cw.Admitted), kit.Plural(len(cw.Admitted), "takes a", "take"), kit.Plural(len(cw.Admitted), "run", "runs"))
	case len(pw.Finished) > 0 && len(pw.Admitted) == 0:
		return fmt.Sprintf("Departures: %d %s the paged pool", len(pw.Finished), kit.Plural(len(pw.Finished), "request leaves", "requests leave"))
	case len(pw.Admitted) > 0:
		return fmt.Sprintf("Freed blocks go to %s", idRange(pw.Admitted))
	case len(cw.Finished) > 0:
		return fmt.Sprintf("Departures: %s %s the contiguous pool", idRange(cw.Finished), kit.Plural(len(cw.Finished), "leaves", "leave"))
	}
	return "Decoding goes on"
}

// maxChartPoints bounds each series of the utilisation chart: a long stream
// runs for hundreds of thousands of ticks, which no chart can show and
// every step would carry.
const maxChartPoints = 1000

// utilScene is the utilisation chart with the step's cursor at tick x.
func (g *garageText) utilScene(x float64) scene.Scene {
	return kit.ChartScene("util", "Utilisation of both pools over time", g.chart, x)
}

func (g *garageText) utilChart() *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "tick (one decode step)", YLabel: "KV slots holding tokens", YUnit: "%"}
	n := max(g.served.paged.Len(), g.served.contig.Len())
	every := (n + maxChartPoints - 1) / maxChartPoints
	if every > 1 {
		c.XLabel = fmt.Sprintf("tick (one decode step; every %s shown)", kit.Ordinal(every))
	}
	for _, p := range []struct {
		name string
		h    *record.History
	}{{"paged", &g.served.paged}, {"contiguous", &g.served.contig}} {
		n := p.h.Len()
		sr := scene.Series{Name: p.name, X: make([]float64, 0, n/every+1), Y: make([]float64, 0, n/every+1)}
		point := func(t int) {
			sr.X = append(sr.X, float64(t))
			sr.Y = append(sr.Y, kit.Round1(100*p.h.UtilizationAt(t)))
		}
		// Every every-th tick and the last, stepped to rather than tested
		// tick by tick (a division each, and a long stream has hundreds
		// of thousands).
		for t := 0; t < n; t += every {
			point(t)
		}
		if n > 0 && (n-1)%every != 0 {
			point(n - 1)
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

// maxQueueShown bounds the requests a queue lists; the rest are counted.
const maxQueueShown = 8

// queues builds both pools' waiting lines: the head refused this tick when
// the pool had no room for it (with what it lacked), the requests
// preempted in the step marked as sent back.
func (g *garageText) queues(paged, contig record.Line, pagedPre, contigPre []int, pt, ct scheduler.Tick) []scene.Queue {
	s := g.setup
	line := func(pool string, w record.Line, pre []int, tk scheduler.Tick, asks func(int) int) scene.Queue {
		q := scene.Queue{Pool: pool, More: w.N - len(w.Head)}
		for i, id := range w.Head {
			it := scene.QueueItem{Owner: id, Label: g.labels[id], Tokens: asks(id), State: "waiting"}
			if i == 0 && tk.Blocked == id && tk.Shortfall != nil {
				it.State, it.Why = "refused", refusalWhy(pool, tk.Shortfall, s.b)
			}
			if slices.Contains(pre, id) {
				it.State = "preempted" // sent back this step (and refused again, if Why says so)
			}
			q.Items = append(q.Items, it)
		}
		return q
	}
	return []scene.Queue{
		line("paged", paged, pagedPre, pt, func(id int) int { return s.reqs[id].Prompt }),
		line("contiguous", contig, contigPre, ct, func(id int) int { return s.reserve.Slots(s.reqs[id].Prompt, s.reqs[id].Prompt+s.reqs[id].Output) }),
	}
}

// refusalWhy says what a refused request lacked.
func refusalWhy(pool string, short *allocator.NoSpaceError, b int) string {
	if pool == "paged" {
		return fmt.Sprintf("needs %s blocks, %s free", kit.Comma((short.Need+b-1)/b), kit.Comma(short.Free/b))
	}
	if short.Free >= short.Need {
		return fmt.Sprintf("needs %s in one run; %s free, largest hole %s", kit.Comma(short.Need), kit.Comma(short.Free), kit.Comma(short.Largest))
	}
	return fmt.Sprintf("needs %s in one run, %s free", kit.Comma(short.Need), kit.Comma(short.Free))
}

// poolsScene draws both pools side by side (the step's main figure): the
// paged pool's blocks, the contiguous pool's runs in bays of one
// max-context reservation, each pool's queue. Requests on screen get a
// style of their own, kept while they stay (scene.Colours).
func (g *garageText) poolsScene(snap snapshot, prev *snapshot, qs []scene.Queue) scene.Scene {
	// Requests on screen, in order of first appearance; colour[o] is
	// request o's style, once it is known to be on screen (request ids
	// are indices: a slice spares a lookup per block).
	on := g.on[:0]
	for _, o := range snap.owners {
		if o != scene.Free && g.colour[o] == 0 {
			g.colour[o] = -1
			on = append(on, o)
		}
	}
	for _, r := range snap.runs {
		if g.colour[r.Req] == 0 {
			g.colour[r.Req] = -1
			on = append(on, r.Req)
		}
	}
	g.colours.Resident(on)
	for _, o := range on {
		g.colour[o] = g.colours.Of(o)
	}
	grid := &scene.BlockGrid{BlockSize: g.setup.b, Blocks: make([]scene.Block, len(snap.owners))}
	// Each block is filled in place: the slice is new, so zero.
	for i, o := range snap.owners {
		blk := &grid.Blocks[i]
		blk.Owner, blk.Used = o, snap.used[i]
		if o >= 0 {
			blk.Label, blk.Colour = g.labels[o], g.colour[o]
		}
		blk.Highlight = prev != nil && prev.owners[i] != o
	}
	st := &scene.MemoryStrip{Total: g.setup.pool, Bay: g.setup.reserve.MaxContext}
	old := map[int]allocator.Run{}
	if prev != nil {
		for _, r := range prev.runs {
			old[r.Req] = r
		}
	}
	for _, r := range snap.runs {
		was, ok := old[r.Req]
		st.Segments = append(st.Segments, scene.Segment{Start: r.Start, Len: r.Len, Used: r.Tokens, Owner: r.Req,
			Label: g.labels[r.Req], Colour: g.colour[r.Req], Highlight: prev != nil && (!ok || was.Start != r.Start)})
	}
	for _, o := range on {
		g.colour[o] = 0
	}
	g.on = on
	return scene.Scene{Kind: scene.KindPools, ID: "pools", Main: true,
		Title: fmt.Sprintf("%s KV slots as %s blocks of %d, or as one run per request (%s)", kit.Comma(g.setup.pool), kit.Comma(len(snap.owners)), g.setup.b, reserveWords(g.setup)),
		Grid:  grid, Strip: st, Queues: qs}
}

func reserveWords(s garageSetup) string {
	w := kit.Comma(s.reserve.MaxContext) + " reserved"
	switch s.reserve.Policy {
	case allocator.ReserveExact:
		w = "exact length reserved"
	case allocator.ReservePow2:
		w = "next power of two reserved"
	}
	if s.reserve.Placement == allocator.Buddy {
		w += ", in a buddy allocator's power-of-two block"
	}
	return w
}

func nowCards(p, c scheduler.Tick) scene.Scene {
	cards := []scene.Card{
		{Label: "paged: resident", Value: float64(p.Usage.Resident)},
		{Label: "paged: waiting", Value: float64(p.Waiting)},
		{Label: "paged: slots holding tokens", Value: kit.Round1(100 * p.Usage.Utilization()), Unit: "%"},
		{Label: "paged: reserved but empty", Value: kit.Round1(100 * p.Usage.Waste()), Unit: "%"},
		{Label: "contiguous: resident", Value: float64(c.Usage.Resident)},
		{Label: "contiguous: waiting", Value: float64(c.Waiting)},
		{Label: "contiguous: slots holding tokens", Value: kit.Round1(100 * c.Usage.Utilization()), Unit: "%"},
		{Label: "contiguous: reserved but empty", Value: kit.Round1(100 * c.Usage.Waste()), Unit: "%"},
	}
	return scene.Scene{Kind: scene.KindCards, ID: "now", Title: "At this tick", Cards: cards}
}

func (f garageFigures) metrics() []lessons.Metric {
	return []lessons.Metric{
		{Key: "paged_admitted", Label: "Paged: most requests resident at once", Unit: "requests", Better: lessons.HigherIsBetter, Value: float64(f.pagedAdmitted)},
		{Key: "contiguous_admitted", Label: "Contiguous: most requests resident at once", Unit: "requests", Better: lessons.HigherIsBetter, Value: float64(f.contigAdmitted)},
		{Key: "paged_utilization_pct", Label: "Paged: slots holding tokens while requests wait", Unit: "%", Better: lessons.HigherIsBetter, Value: f.pagedUtil},
		{Key: "contiguous_utilization_pct", Label: "Contiguous: slots holding tokens while requests wait", Unit: "%", Better: lessons.HigherIsBetter, Value: f.contigUtil},
		{Key: "paged_waste_pct", Label: "Paged: reserved slots left empty (internal fragmentation)", Unit: "%", Better: lessons.LowerIsBetter, Value: f.pagedWaste},
		{Key: "contiguous_waste_pct", Label: "Contiguous: reserved slots left empty (internal fragmentation)", Unit: "%", Better: lessons.LowerIsBetter, Value: f.contigWaste},
		{Key: "paged_waste_bound_pct", Label: "Paged waste bound 100·(B−1)/L̄, L̄ = mean resident length", Unit: "%", Better: lessons.LowerIsBetter, Value: f.wasteBound},
		{Key: "contiguous_external_frag_pct", Label: "Contiguous: free slots no new max-context request can use", Unit: "% of pool", Better: lessons.LowerIsBetter, Value: f.externalFrag},
		{Key: "mean_resident_tokens", Label: "L̄: mean length of resident requests (paged, while requests wait)", Unit: "tokens", Value: f.meanResident},
		{Key: "mean_request_tokens", Label: "Mean final request length (prompt + output)", Unit: "tokens", Value: f.meanRequest},
		{Key: "paged_ticks", Label: "Paged: ticks to serve the whole stream", Unit: "ticks", Better: lessons.LowerIsBetter, Value: float64(f.pagedTicks)},
		{Key: "contiguous_ticks", Label: "Contiguous: ticks to serve the whole stream", Unit: "ticks", Better: lessons.LowerIsBetter, Value: float64(f.contigTicks)},
		{Key: "paged_preemptions", Label: "Paged: preemptions (out of blocks while decoding)", Unit: "preemptions", Better: lessons.LowerIsBetter, Value: float64(f.preempt)},
	}
}

// versus formats "a vs b" with the figures' shortest decimal form.
func versus(a, b float64, unit string) string {
	return strconv.FormatFloat(a, 'f', -1, 64) + unit + " vs " + strconv.FormatFloat(b, 'f', -1, 64) + unit
}

// garageClaims compares the article's figures with the model, for the
// article's setup (the defaults: its script's 32,768-slot pool and 40
// requests, with the 8,192-token reservations of its text) and for the
// current run.
func garageClaims(a, r garageFigures) []lessons.Claim {
	streams := func(f garageFigures) string { return versus(float64(f.contigAdmitted), float64(f.pagedAdmitted), "") }
	util := func(f garageFigures) string { return versus(f.contigUtil, f.pagedUtil, "%") }
	perStream := 0.542 * float64(a.pool) / float64(max(a.contigAdmitted, 1)) // tokens each stream would hold at 54.2%
	return []lessons.Claim{
		{What: "Streams resident at once, contiguous vs paged",
			Article: "14 vs 31 (its script); 12 contiguous streams (its text)",
			Model:   streams(a) + " (article setup); " + streams(r) + " (this run)",
			Why: fmt.Sprintf("The article's setup, run here: its script's pool (4 × 512 blocks × 16 = %s slots) and stream, with the %s-token reservations its text describes. "+
				"That pool holds %d such reservations. The script types in 14 (what %s-slot reservations would give), and the text's 12 would need a %s-slot pool. "+
				"The script's paged figure only allocates prompts and never decodes; here requests also grow by one slot per output token, finish and leave, and the queue refills the pool.",
				kit.Comma(a.pool), kit.Comma(a.maxContext), a.pool/a.maxContext, kit.Comma(a.pool/14), kit.Comma(12*a.maxContext))},
		{What: "Memory utilisation, contiguous vs paged",
			Article: "54.2% vs 98.9%",
			Model:   util(a) + " (article setup); " + util(r) + " (this run)",
			Why: fmt.Sprintf("54.2%% is a constant typed into the article's script, not computed, and 98.9%% counts blocks in use, not tokens. "+
				"In the article's setup the pool could be 54.2%% full only if each of its %d contiguous streams held %s tokens, %.0f%% of its reservation, while its requests hold at most %s. "+
				"Here both figures are tokens stored / pool slots, averaged over the ticks in which requests were still waiting.",
				a.contigAdmitted, kit.Comma(int(perStream+0.5)), 100*perStream/float64(a.maxContext), kit.Comma(a.longest))},
		{What: "Paged waste bound (B−1)/L",
			Article: "15/1024 ≈ 1.46% at L = 1,024",
			Model: fmt.Sprintf("bound %.2f%%, measured %.2f%% (article setup, L̄ = %.0f); bound %.2f%%, measured %.2f%% (this run)",
				a.wasteBound, a.pagedWaste, a.meanResident, r.wasteBound, r.pagedWaste),
			Why: "Same formula; L̄ here is the mean length of the requests actually resident, and the measured waste sits below the bound because a last block is on average half full, not 1 slot full."},
		{What: "Contiguous internal waste 1 − L_actual/L_max",
			Article: "≈ 60%–90%",
			Model:   fmt.Sprintf("%.2f%% (article setup); %.2f%% (this run)", a.contigWaste, r.contigWaste),
			Why: fmt.Sprintf("It depends only on how far the reservation exceeds the tokens actually held: the article's requests (at most %s tokens) in its %s-token reservations waste %.2f%%, %s its range, and its 350-token request would waste 96%%. "+
				"Set reserve = exact to see Orca-Oracle, which wastes nothing inside reservations but still fragments between them.",
				kit.Comma(a.longest), kit.Comma(a.maxContext), a.contigWaste, map[bool]string{true: "inside", false: "outside"}[a.contigWaste >= 60 && a.contigWaste <= 90])},
		{What: "KV memory holding real token state in pre-paging systems",
			Article: "20.4%–38.2% (vLLM paper, Fig. 2, measured; cited for reference)",
			Model:   fmt.Sprintf("%.2f%% contiguous utilisation (article setup); %.2f%% (this run)", a.contigUtil, r.contigUtil),
			Why: "The paper's systems reserve for the model's full context (2,048 tokens for OPT), take runs from a buddy allocator and serve ShareGPT lengths; the article's toy stream differs, so only the direction should match. " +
				"The paper's setting is a knob setting here: pool_tokens = 15700 (OPT-13B's KV slots on a 40 GB A100, its Table 1), max_context = 2048, placement = buddy, lengths = sharegpt, and reserve = max, pow2 or exact for Orca (Max), (Pow2) and (Oracle)."},
	}
}

func (g *garageText) summaryStep(s *lessons.Script) lessons.Step {
	f := g.figures
	var cards []scene.Card
	for _, m := range s.Metrics {
		cards = append(cards, scene.Card{Label: m.Label, Value: m.Value, Unit: m.Unit})
	}
	formula := &scene.Formula{
		Expr: "waste_paged ≤ (B − 1) / L̄",
		Terms: []scene.Term{
			{Symbol: "B", Meaning: "tokens per block", Value: strconv.Itoa(g.setup.b)},
			{Symbol: "L̄", Meaning: "mean resident request length", Value: fmt.Sprintf("%.1f tokens", f.meanResident)},
		},
		Result: fmt.Sprintf("(%g − 1) / %.1f = %.2f%% ≥ measured %.2f%%", float64(g.setup.b), f.meanResident, f.wasteBound, f.pagedWaste),
	}
	last := max(f.pagedTicks, f.contigTicks) - 1
	return lessons.Step{
		Title: "The comparison",
		Narration: fmt.Sprintf("With the same %d requests and the same %s slots, the paged pool held up to %d requests at once against %d for contiguous reservations, "+
			"kept %.1f%% of its slots busy against %.1f%%, and served the stream in %d ticks against %d. "+
			"Paged waste was %.2f%%, under its bound of %.2f%%; contiguous reservations left %.2f%% of what they reserved empty. The table sets the article's figures beside these.",
			len(g.setup.reqs), kit.Comma(g.setup.pool), f.pagedAdmitted, f.contigAdmitted,
			f.pagedUtil, f.contigUtil, f.pagedTicks, f.contigTicks,
			f.pagedWaste, f.wasteBound, f.contigWaste),
		Scenes: []scene.Scene{
			{Kind: scene.KindCards, ID: "final", Title: "Final figures", Cards: cards},
			{Kind: scene.KindFormula, ID: "bound", Title: "Formulation 2: the paged waste bound", Formula: formula},
			kit.ClaimsTable(s.Claims),
			g.utilScene(float64(last)),
		},
		Cursor: float64(last),
	}
}

// reqNames lists request labels, eliding the middle of long lists.
func reqNames(ids []int) string {
	const show = 6
	parts := make([]string, 0, show+1)
	for i, id := range ids {
		if i == show-1 && len(ids) > show {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(ids)-i))
			break
		}
		parts = append(parts, kit.ReqName(id))
	}
	return strings.Join(parts, ", ")
}
