package lessons

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/scene"
)

// garage: Part 14 §1 and formulation 2. The same seeded stream of requests is
// served by a contiguous allocator that reserves a whole run per request and
// by vLLM's paged block pool; requests decode one token per tick and finish,
// and the lesson counts how many fit and how much memory each wastes.
var garage = &Lesson{
	Slug:    "garage",
	Title:   "The parking garage: contiguous reservations vs 16-token pages",
	Part:    "Part 14 §1, formulation 2",
	Summary: "Serve one request stream with max-context reservations and with paged blocks; watch internal and external fragmentation and how many streams fit.",
	Engine: "Paged pool after vLLM v1's BlockPool (free queue, blocks on demand, tail-first free, recompute preemption of the last admitted request); " +
		"contiguous pool after the FasterTransformer/Orca baselines of the vLLM paper. Simplified: one token per request per tick, no prefix caching, no null block.",
	Params: []Param{
		{Key: "block_size", Label: "Block size B", Unit: "tokens", Help: "Token slots per paged block (vLLM's default is 16).", Kind: Int, Default: 16, Min: 1, Max: 256, Step: 1},
		{Key: "max_context", Label: "Max context", Unit: "tokens", Help: "What the contiguous allocator reserves per request when reserve = max.", Kind: Int, Default: 2048, Min: 16, Max: 131072, Step: 16},
		{Key: "pool_tokens", Label: "KV pool", Unit: "tokens", Help: "Token slots in each pool (the article's simulator: 4 nodes × 512 blocks × 16).", Kind: Int, Default: 32768, Min: 64, Max: 1 << 20, Step: 256},
		{Key: "requests", Label: "Requests", Help: "Requests in the stream, all queued at tick 0 in order.", Kind: Int, Default: 40, Min: 1, Max: 2000, Step: 1},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: Int, Default: 512, Min: 1, Max: 131072, Step: 1},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: Int, Default: 1536, Min: 1, Max: 131072, Step: 1},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: Int, Default: 32, Min: 0, Max: 131072, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: Int, Default: 64, Min: 0, Max: 131072, Step: 1},
		{Key: "reserve", Label: "Contiguous reserves", Help: "max: max_context per request (FasterTransformer, Orca-Max); pow2: the next power of two of its final length (Orca-Pow2); exact: its final length, known in advance (Orca-Oracle).",
			Kind: Choice, Choices: []string{"max", "pow2", "exact"}},
		seedParam,
	},
	Check: checkGarage,
	Build: buildGarage,
}

func init() { register(garage) }

func checkGarage(v Values) error {
	b, mc, pool := v.Int("block_size"), v.Int("max_context"), v.Int("pool_tokens")
	pmax, omax := v.Int("prompt_max"), v.Int("output_max")
	if err := checkOrdered(v, lengthPairs...); err != nil {
		return err
	}
	switch {
	case pmax+omax > mc:
		return Relation("max_context", strconv.Itoa(mc), fmt.Sprintf("at least prompt_max + output_max (%d), so every request fits its reservation", pmax+omax))
	case mc > pool:
		return Relation("max_context", strconv.Itoa(mc), fmt.Sprintf("at most pool_tokens (%d)", pool))
	case pool/b > maxGridBlocks:
		return Relation("pool_tokens", strconv.Itoa(pool), fmt.Sprintf("at most %d blocks of block_size %d, i.e. pool_tokens ≤ %d", maxGridBlocks, b, maxGridBlocks*b))
	case (mc+b-1)/b > pool/b:
		return Relation("pool_tokens", strconv.Itoa(pool), fmt.Sprintf("at least %d blocks of %d tokens, so one max_context request fits", (mc+b-1)/b, b))
	}
	return nil
}

// garageReq is one request of the stream and its progress in one pool.
type garageReq struct {
	id, prompt, output int
	produced           int // output tokens generated so far (kept across a recompute preemption)
	reserve            int // contiguous reservation size
}

func (r *garageReq) length() int { return r.prompt + r.produced }

// garagePool adapts the two allocators to the loop below.
type garagePool interface {
	admit(r *garageReq) error
	grow(r *garageReq) error
	free(r *garageReq)
	usage() allocator.Usage
}

type pagedPool struct{ *allocator.Paged }

func (p pagedPool) admit(r *garageReq) error { return p.Admit(r.id, r.length()) }
func (p pagedPool) grow(r *garageReq) error  { return p.Append(r.id, 1) }
func (p pagedPool) free(r *garageReq)        { _ = p.Free(r.id) }
func (p pagedPool) usage() allocator.Usage   { return p.Usage() }

type contiguousPool struct{ *allocator.Contiguous }

func (c contiguousPool) admit(r *garageReq) error { return c.Admit(r.id, r.reserve, r.length()) }
func (c contiguousPool) grow(r *garageReq) error  { return c.Append(r.id, 1) }
func (c contiguousPool) free(r *garageReq)        { _ = c.Free(r.id) }
func (c contiguousPool) usage() allocator.Usage   { return c.Usage() }

// tickLog is what happened in one pool during one tick.
type tickLog struct {
	admitted, finished, preempted []int
	blocked                       int // request at the queue head that did not fit, or -1
	fragBlocked                   bool
	largestHole, freeSlots        int  // contiguous, when blocked
	holeReuse                     bool // contiguous: a request went into a hole left by another
	decodeBlocks                  int  // paged: blocks allocated because decoding crossed a boundary
	usage                         allocator.Usage
	waiting                       int
}

// poolRun is one allocator serving the stream, tick by tick.
type poolRun struct {
	pool    garagePool
	paged   *allocator.Paged
	contig  *allocator.Contiguous
	waiting []*garageReq
	running []*garageReq
	ticks   []tickLog

	maxResident, peakTick int
	// Sums over the ticks in which requests were still waiting (the pool was
	// the bottleneck); the waste and utilisation metrics are ratios of sums.
	pressureTicks                         int
	sumStored, sumReserved, sumPool, sumN int64
	sumUnusable, sumFree                  int64
	preemptions                           int
	everBlocked                           map[int]bool
}

func newRun(pool garagePool, reqs []garageReq) *poolRun {
	r := &poolRun{pool: pool, everBlocked: map[int]bool{}}
	for i := range reqs {
		c := reqs[i]
		r.waiting = append(r.waiting, &c)
	}
	return r
}

// maxTicks stops a run that cannot finish; the parameter checks make it
// unreachable, so hitting it is a bug worth an error, not a hang.
const maxTicks = 1 << 22

// step runs one tick: finished requests leave, waiting ones are admitted in
// order while they fit (first come, first served: the head blocks the rest),
// then every running request decodes one token.
func (r *poolRun) step(maxContext int) tickLog {
	lg := tickLog{blocked: -1}
	kept := r.running[:0]
	for _, q := range r.running {
		if q.produced == q.output {
			r.pool.free(q)
			lg.finished = append(lg.finished, q.id)
		} else {
			kept = append(kept, q)
		}
	}
	r.running = kept

	frontier := 0
	if r.contig != nil {
		frontier = r.contig.End() // runs are kept in address order
	}
	for len(r.waiting) > 0 {
		q := r.waiting[0]
		if err := r.pool.admit(q); err != nil {
			lg.blocked = q.id
			if r.contig != nil {
				free := r.contig.PoolTokens() - r.contig.Usage().Reserved
				for _, h := range r.contig.Holes() {
					lg.largestHole = max(lg.largestHole, h.Len)
				}
				lg.freeSlots = free
				lg.fragBlocked = free >= q.reserve
			}
			break
		}
		if r.contig != nil {
			if run, ok := r.contig.RunOf(q.id); ok && run.Start < frontier {
				lg.holeReuse = true
			}
		}
		r.waiting = r.waiting[1:]
		r.running = append(r.running, q)
		lg.admitted = append(lg.admitted, q.id)
	}

	takenBefore := r.taken()
	for i := 0; i < len(r.running); i++ {
		q := r.running[i]
		if q.produced == q.output {
			continue
		}
		for r.pool.grow(q) != nil {
			// vLLM v1: preempt the most recently admitted request by
			// recompute; it returns to the head of the queue.
			victim := r.running[len(r.running)-1]
			r.running = r.running[:len(r.running)-1]
			r.pool.free(victim)
			r.waiting = append([]*garageReq{victim}, r.waiting...)
			lg.preempted = append(lg.preempted, victim.id)
			r.preemptions++
			if victim == q {
				break
			}
		}
		if i < len(r.running) && r.running[i] == q {
			q.produced++
		}
	}
	lg.decodeBlocks = r.taken() - takenBefore

	lg.usage = r.pool.usage()
	lg.waiting = len(r.waiting)
	if lg.usage.Resident > r.maxResident {
		r.maxResident, r.peakTick = lg.usage.Resident, len(r.ticks)
	}
	if len(r.waiting) > 0 || len(r.ticks) == 0 {
		r.pressureTicks++
		r.sumStored += int64(lg.usage.Stored)
		r.sumReserved += int64(lg.usage.Reserved)
		r.sumPool += int64(lg.usage.Pool)
		r.sumN += int64(lg.usage.Resident)
		if r.contig != nil {
			r.sumUnusable += int64(r.contig.Unusable(maxContext))
			r.sumFree += int64(lg.usage.Pool - lg.usage.Reserved)
		}
	}
	r.ticks = append(r.ticks, lg)
	return lg
}

// taken counts the blocks the paged pool has handed out (the contiguous pool
// reserves at admission only, so its decode takes nothing).
func (r *poolRun) taken() int {
	if r.paged != nil {
		return r.paged.Taken()
	}
	return 0
}

func (r *poolRun) done() bool { return len(r.waiting) == 0 && len(r.running) == 0 }

func (r *poolRun) waste() float64 { return ratio(r.sumReserved-r.sumStored, r.sumReserved) }
func (r *poolRun) util() float64  { return ratio(r.sumStored, r.sumPool) }

// garageSetup is everything the runs need from the parameters.
type garageSetup struct {
	b, maxContext, pool int
	reserve             string
	reqs                []garageReq
}

func newGarageSetup(v Values) garageSetup {
	s := garageSetup{b: v.Int("block_size"), maxContext: v.Int("max_context"), pool: v.Int("pool_tokens"), reserve: v.Choice("reserve")}
	rng := newRand(v.Int("seed"))
	for i := 0; i < v.Int("requests"); i++ {
		q := garageReq{id: i, prompt: uniform(rng, v.Int("prompt_min"), v.Int("prompt_max")), output: uniform(rng, v.Int("output_min"), v.Int("output_max"))}
		switch s.reserve {
		case "exact":
			q.reserve = max(1, q.prompt+q.output)
		case "pow2":
			q.reserve = min(s.maxContext, 1<<bits.Len(uint(max(1, q.prompt+q.output)-1)))
		default:
			q.reserve = s.maxContext
		}
		s.reqs = append(s.reqs, q)
	}
	return s
}

// snapshot is the state of both pools drawn at one step.
type snapshot struct {
	owners, used []int
	runs         []allocator.Run
}

// garageResult is both runs of one setup, plus snapshots at chosen ticks.
type garageResult struct {
	setup         garageSetup
	paged, contig *poolRun
	snaps         map[int]snapshot
	labels        []string // request labels, made once: grids repeat them thousands of times
}

// label is request id's name, R1, R2, …
func (r *garageResult) label(id int) string {
	if r.labels == nil {
		r.labels = make([]string, len(r.setup.reqs))
		for i := range r.labels {
			r.labels[i] = reqName(i)
		}
	}
	return r.labels[id]
}

// simulate serves the stream with both pools; it captures the pools' state
// at the end of each tick listed in capture. like, when set, is an earlier
// run of the same setup: its tick counts size the logs up front.
func simulate(s garageSetup, capture map[int]bool, like *garageResult) (*garageResult, error) {
	pg, err := allocator.NewPaged(s.pool/s.b, s.b)
	if err != nil {
		return nil, err
	}
	ct, err := allocator.NewContiguous(s.pool)
	if err != nil {
		return nil, err
	}
	// The runs count allocations with Paged.Taken and draw snapshots, so
	// the event log would only cost time (a quarter of a 1,000-request run).
	pg.DisableEvents()
	ct.DisableEvents()
	res := &garageResult{setup: s, snaps: map[int]snapshot{}}
	res.paged = newRun(pagedPool{pg}, s.reqs)
	res.paged.paged = pg
	res.contig = newRun(contiguousPool{ct}, s.reqs)
	res.contig.contig = ct
	if like != nil {
		res.paged.ticks = make([]tickLog, 0, len(like.paged.ticks))
		res.contig.ticks = make([]tickLog, 0, len(like.contig.ticks))
	}
	for t := 0; !res.paged.done() || !res.contig.done(); t++ {
		if t >= maxTicks {
			return nil, errors.New("garage: the stream did not finish; this is a bug")
		}
		for _, run := range []*poolRun{res.paged, res.contig} {
			if !run.done() {
				run.step(s.maxContext)
			}
		}
		if capture[t] {
			blocks := pg.Snapshot()
			snap := snapshot{runs: ct.Runs(), owners: make([]int, len(blocks)), used: make([]int, len(blocks))}
			for i, b := range blocks {
				snap.owners[i], snap.used[i] = b.Owner, b.Used
			}
			res.snaps[t] = snap
		}
	}
	return res, nil
}

// tickOf returns the log of tick t, or the final idle state after the run ended.
func (r *poolRun) tickOf(t int) (tickLog, bool) {
	if t < len(r.ticks) {
		return r.ticks[t], true
	}
	return tickLog{blocked: -1}, false
}

// maxGarageSteps bounds the steps between the introduction and the summary;
// the ticks that teach something new are always kept.
const maxGarageSteps = 40

func buildGarage(v Values) (*Script, error) {
	setup := newGarageSetup(v)
	first, err := simulate(setup, nil, nil)
	if err != nil {
		return nil, err
	}
	ticks := chooseTicks(first)
	capture := map[int]bool{}
	for _, t := range ticks {
		capture[t] = true
	}
	res, err := simulate(setup, capture, first)
	if err != nil {
		return nil, err
	}
	article, err := garageArticleRun(v, res)
	if err != nil {
		return nil, err
	}
	s := &Script{Metrics: garageMetrics(res)}
	s.Claims = garageClaims(article, res)
	chart := utilChart(res)
	s.Steps = append(s.Steps, introStep(res, chart))
	steps := tickSteps(res, ticks, chart)
	if len(steps) > 0 && ticks[0] == 0 {
		c0 := res.contig.ticks[0].usage.Resident
		steps[0].Quiz = numberQuiz(fmt.Sprintf("Tick 0: %d requests queue for %s slots. How many will the contiguous pool hold after admitting what fits?", len(setup.reqs), comma(setup.pool)),
			float64(c0), 0, fmt.Sprintf("Each request reserves %s; the pool holds %d such runs, whatever the requests' real lengths.", reserveWords(setup), c0))
	}
	s.Steps = append(s.Steps, steps...)
	s.Steps = append(s.Steps, summaryStep(res, s, chart))
	return s, nil
}

// garageArticle holds the figures of the article's setup (the knobs'
// defaults), simulated once per process: the claims table shows them
// whatever the knobs, and re-simulating them on every knob move cost a third
// of a rebuild.
var garageArticle struct {
	once sync.Once
	figs articleFigures
	err  error
}

// articleFigures is what the claims table needs of the article's run.
type articleFigures struct {
	metrics          []Metric
	pool, maxContext int
}

func figuresOf(res *garageResult) articleFigures {
	return articleFigures{metrics: garageMetrics(res), pool: res.setup.pool, maxContext: res.setup.maxContext}
}

// garageArticleRun returns the figures of the article's setup; res is the
// run of v, used when v is that setup.
func garageArticleRun(v Values, res *garageResult) (articleFigures, error) {
	if sameValues(v, v.Defaults()) {
		return figuresOf(res), nil
	}
	garageArticle.once.Do(func() {
		var a *garageResult
		a, garageArticle.err = simulate(newGarageSetup(v.Defaults()), nil, nil)
		if a != nil {
			garageArticle.figs = figuresOf(a)
		}
	})
	return garageArticle.figs, garageArticle.err
}

func sameValues(a, b Values) bool {
	at, bt := a.Text(), b.Text()
	for k, x := range at {
		if bt[k] != x {
			return false
		}
	}
	return true
}

// chooseTicks picks the ticks shown as steps: every tick where something
// happens for the first time, and evenly spaced others up to the budget.
func chooseTicks(res *garageResult) []int {
	n := max(len(res.paged.ticks), len(res.contig.ticks))
	special := map[int]bool{0: true, len(res.paged.ticks) - 1: true, len(res.contig.ticks) - 1: true,
		res.paged.peakTick: true, res.contig.peakTick: true}
	var others []int
	seen := map[string]bool{}
	blockedBefore := []map[int]bool{{}, {}} // per pool: requests already seen blocked at the queue head
	firstTime := func(key string, t int) {
		if !seen[key] {
			seen[key] = true
			special[t] = true
		}
	}
	for t := 0; t < n; t++ {
		busy := false
		for i, run := range []*poolRun{res.paged, res.contig} {
			lg, ok := run.tickOf(t)
			if !ok {
				continue
			}
			pool := strconv.Itoa(i)
			if lg.decodeBlocks > 0 {
				firstTime("decode"+pool, t)
			}
			if len(lg.finished) > 0 {
				firstTime("finish"+pool, t)
			}
			if lg.blocked >= 0 && !blockedBefore[i][lg.blocked] {
				blockedBefore[i][lg.blocked] = true
				firstTime("blocked"+pool, t)
				busy = true
			}
			if lg.fragBlocked {
				firstTime("frag", t)
			}
			if lg.holeReuse {
				firstTime("reuse", t)
			}
			if len(lg.preempted) > 0 {
				firstTime("preempt", t)
			}
			if len(lg.admitted)+len(lg.finished)+len(lg.preempted) > 0 {
				busy = true
			}
		}
		if busy && !special[t] {
			others = append(others, t)
		}
	}
	var out []int
	for t := range special {
		if t >= 0 && t < n {
			out = append(out, t)
		}
	}
	room := maxGarageSteps - len(out)
	if room > 0 && len(others) > 0 {
		if len(others) <= room {
			out = append(out, others...)
		} else {
			for i := 0; i < room; i++ {
				out = append(out, others[i*len(others)/room])
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out
}

// window sums one pool's tick logs over (from, to].
type window struct {
	admitted, finished, preempted []int
	decodeBlocks                  int
	holeReuse                     bool
	last                          tickLog
	active                        bool // the pool still had work in the window
}

func (r *poolRun) window(from, to int) window {
	var w window
	for t := from + 1; t <= to && t < len(r.ticks); t++ {
		lg := r.ticks[t]
		w.active = true
		w.admitted = append(w.admitted, lg.admitted...)
		w.finished = append(w.finished, lg.finished...)
		w.preempted = append(w.preempted, lg.preempted...)
		w.decodeBlocks += lg.decodeBlocks
		w.holeReuse = w.holeReuse || lg.holeReuse
	}
	w.last, _ = r.tickOf(min(to, len(r.ticks)-1))
	return w
}

func utilChart(res *garageResult) *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "tick (one decode step)", YLabel: "KV slots holding tokens", YUnit: "%"}
	for _, p := range []struct {
		name string
		run  *poolRun
	}{{"paged", res.paged}, {"contiguous", res.contig}} {
		sr := scene.Series{Name: p.name}
		for t, lg := range p.run.ticks {
			sr.X = append(sr.X, float64(t))
			sr.Y = append(sr.Y, round1(100*lg.usage.Utilization()))
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

func gridScene(res *garageResult, snap snapshot, prev *snapshot) scene.Scene {
	g := &scene.BlockGrid{BlockSize: res.setup.b, Blocks: make([]scene.Block, len(snap.owners))}
	for i, o := range snap.owners {
		blk := scene.Block{Owner: o, Used: snap.used[i]}
		if o >= 0 {
			blk.Label = res.label(o)
		}
		blk.Highlight = prev != nil && prev.owners[i] != o
		g.Blocks[i] = blk
	}
	return scene.Scene{Kind: scene.KindBlockGrid, ID: "paged",
		Title: fmt.Sprintf("Paged pool: %s blocks × %d tokens", comma(len(snap.owners)), res.setup.b), Grid: g}
}

func stripScene(res *garageResult, snap snapshot, prev *snapshot) scene.Scene {
	st := &scene.MemoryStrip{Total: res.setup.pool}
	old := map[int]allocator.Run{}
	if prev != nil {
		for _, r := range prev.runs {
			old[r.Req] = r
		}
	}
	for _, r := range snap.runs {
		was, ok := old[r.Req]
		st.Segments = append(st.Segments, scene.Segment{Start: r.Start, Len: r.Len, Used: r.Tokens, Owner: r.Req,
			Label: res.label(r.Req), Highlight: prev != nil && (!ok || was.Start != r.Start)})
	}
	return scene.Scene{Kind: scene.KindMemoryStrip, ID: "contiguous",
		Title: fmt.Sprintf("Contiguous pool: %s slots, %s per request", comma(res.setup.pool), reserveWords(res.setup)), Strip: st}
}

func reserveWords(s garageSetup) string {
	switch s.reserve {
	case "exact":
		return "exact length reserved"
	case "pow2":
		return "next power of two reserved"
	}
	return comma(s.maxContext) + " reserved"
}

func nowCards(p, c tickLog) scene.Scene {
	cards := []scene.Card{
		{Label: "paged: resident", Value: float64(p.usage.Resident)},
		{Label: "paged: waiting", Value: float64(p.waiting)},
		{Label: "paged: slots holding tokens", Value: round1(100 * p.usage.Utilization()), Unit: "%"},
		{Label: "paged: reserved but empty", Value: round1(100 * p.usage.Waste()), Unit: "%"},
		{Label: "contiguous: resident", Value: float64(c.usage.Resident)},
		{Label: "contiguous: waiting", Value: float64(c.waiting)},
		{Label: "contiguous: slots holding tokens", Value: round1(100 * c.usage.Utilization()), Unit: "%"},
		{Label: "contiguous: reserved but empty", Value: round1(100 * c.usage.Waste()), Unit: "%"},
	}
	return scene.Scene{Kind: scene.KindCards, ID: "now", Title: "At this tick", Cards: cards}
}

func introStep(res *garageResult, chart *scene.Chart) Step {
	s := res.setup
	empty := snapshot{owners: make([]int, s.pool/s.b), used: make([]int, s.pool/s.b)}
	for i := range empty.owners {
		empty.owners[i] = scene.Free
	}
	var fit string
	if s.reserve == "max" {
		fit = fmt.Sprintf(" At %s slots each, at most %d requests can ever be resident in the contiguous pool, whatever their length.",
			comma(s.maxContext), s.pool/s.maxContext)
	}
	idle := tickLog{blocked: -1, waiting: len(s.reqs), usage: allocator.Usage{Pool: s.pool}}
	return Step{
		Title: "Two garages, one queue",
		Narration: fmt.Sprintf("%d requests (prompts %s–%s tokens, %s–%s output tokens) queue in order. Each pool has %s KV slots. "+
			"The paged pool cuts them into %s blocks of %d tokens and gives a request a block only when it needs one; "+
			"the contiguous pool gives each request one unbroken run (%s).%s",
			len(s.reqs), comma(minPrompt(s)), comma(maxPrompt(s)), comma(minOutput(s)), comma(maxOutput(s)), comma(s.pool),
			comma(s.pool/s.b), s.b, reserveWords(s), fit),
		Scenes: []scene.Scene{gridScene(res, empty, nil), stripScene(res, empty, nil), nowCards(idle, idle), chartScene(chart, 0)},
		Cursor: 0,
	}
}

func minPrompt(s garageSetup) int {
	return extreme(s, func(q garageReq) int { return q.prompt }, false)
}
func maxPrompt(s garageSetup) int { return extreme(s, func(q garageReq) int { return q.prompt }, true) }
func minOutput(s garageSetup) int {
	return extreme(s, func(q garageReq) int { return q.output }, false)
}
func maxOutput(s garageSetup) int { return extreme(s, func(q garageReq) int { return q.output }, true) }

func extreme(s garageSetup, f func(garageReq) int, biggest bool) int {
	best := f(s.reqs[0])
	for _, q := range s.reqs[1:] {
		if x := f(q); (biggest && x > best) || (!biggest && x < best) {
			best = x
		}
	}
	return best
}

// tickSteps narrates each chosen tick: what happened in both pools since the
// previous step, explaining each mechanism the first time it shows up.
func tickSteps(res *garageResult, ticks []int, chart *scene.Chart) []Step {
	var steps []Step
	told := map[string]bool{}
	once := func(key, text string) string {
		if told[key] {
			return ""
		}
		told[key] = true
		return " " + text
	}
	prevTick := -1
	var prev *snapshot
	s := res.setup
	for _, t := range ticks {
		snap := res.snaps[t]
		pw, cw := res.paged.window(prevTick, t), res.contig.window(prevTick, t)
		var title string
		var b strings.Builder

		// Paged pool.
		b.WriteString("Paged: ")
		switch {
		case !pw.active:
			b.WriteString(fmt.Sprintf("has served every request (done at tick %d).", len(res.paged.ticks)-1))
		default:
			var parts []string
			if len(pw.admitted) > 0 {
				parts = append(parts, fmt.Sprintf("admitted %s", names(pw.admitted)))
			}
			if len(pw.finished) > 0 {
				parts = append(parts, fmt.Sprintf("%s finished and returned %s blocks to the free queue", names(pw.finished), plural(len(pw.finished), "its", "their")))
			}
			if pw.decodeBlocks > 0 {
				parts = append(parts, fmt.Sprintf("%d %s allocated on demand as decoding filled last blocks", pw.decodeBlocks, plural(pw.decodeBlocks, "block", "blocks")))
			}
			if len(pw.preempted) > 0 {
				parts = append(parts, fmt.Sprintf("%s preempted", names(pw.preempted)))
			}
			if len(parts) == 0 {
				parts = append(parts, "requests kept decoding")
			}
			b.WriteString(strings.Join(parts, "; ") + fmt.Sprintf(". %d resident, %d waiting, %s of slots hold tokens.",
				pw.last.usage.Resident, pw.last.waiting, pct(pw.last.usage.Utilization())))
			if t == 0 {
				b.WriteString(once("paged-admit", fmt.Sprintf("Each request took ⌈prompt/%d⌉ blocks for its prompt and nothing more.", s.b)))
			}
			if pw.decodeBlocks > 0 {
				b.WriteString(once("decode", fmt.Sprintf("A request takes a new block only when its last one is full, so at most %d slots per request sit empty.", s.b-1)))
			}
			if len(pw.preempted) > 0 {
				if txt := once("preempt", "No block was free for the next token, so (as in vLLM v1) the most recently admitted request was preempted: its blocks were freed and it went back to the head of the queue, to be recomputed later."); txt != "" {
					b.WriteString(txt)
					title = "Preemption: out of blocks"
				}
			}
			if pw.last.blocked >= 0 && len(pw.admitted) == 0 && t > 0 {
				b.WriteString(once("paged-blocked", fmt.Sprintf("%s waits: its %d blocks are not free yet.", reqName(pw.last.blocked),
					(res.setup.reqs[pw.last.blocked].prompt+s.b-1)/s.b)))
			}
		}

		// Contiguous pool.
		b.WriteString(" Contiguous: ")
		switch {
		case !cw.active:
			b.WriteString(fmt.Sprintf("has served every request (done at tick %d).", len(res.contig.ticks)-1))
		default:
			var parts []string
			if len(cw.finished) > 0 {
				parts = append(parts, fmt.Sprintf("%s finished, leaving %s", names(cw.finished), plural(len(cw.finished), "a hole", "holes")))
			}
			if len(cw.admitted) > 0 {
				parts = append(parts, fmt.Sprintf("admitted %s", names(cw.admitted)))
			}
			if len(cw.preempted) > 0 {
				parts = append(parts, fmt.Sprintf("%s preempted", names(cw.preempted)))
			}
			if len(parts) == 0 {
				parts = append(parts, "requests kept decoding inside their reservations")
			}
			b.WriteString(strings.Join(parts, "; ") + fmt.Sprintf(". %d resident, %d waiting, %s of slots hold tokens, %s of reserved slots are empty.",
				cw.last.usage.Resident, cw.last.waiting, pct(cw.last.usage.Utilization()), pct(cw.last.usage.Waste())))
			if t == 0 {
				b.WriteString(once("contig-admit", "Every admitted request holds its whole reservation from the first token: that empty tail is internal fragmentation."))
				title = "Tick 0: admission"
			}
			if cw.holeReuse {
				if txt := once("reuse", "First fit placed a new request in a hole a finished one left behind."); txt != "" {
					b.WriteString(txt)
					if title == "" {
						title = "A hole is reused (first fit)"
					}
				}
			}
			if lg := cw.last; lg.blocked >= 0 {
				q := res.setup.reqs[lg.blocked]
				if lg.fragBlocked {
					if txt := once("frag", fmt.Sprintf("%s is rejected for now: it needs %s contiguous slots and %s slots are free, but the largest hole holds only %s. That is external fragmentation.",
						reqName(q.id), comma(q.reserve), comma(lg.freeSlots), comma(lg.largestHole))); txt != "" {
						b.WriteString(txt)
						if title == "" {
							title = "External fragmentation"
						}
					}
				} else if txt := once("reject", fmt.Sprintf("%s is rejected for now: it needs %s contiguous slots and only %s are free. It waits at the head of the queue, and everyone behind it waits too.",
					reqName(q.id), comma(q.reserve), comma(lg.freeSlots))); txt != "" {
					b.WriteString(txt)
					if title == "" {
						title = "A rejection"
					}
				}
			}
		}
		if title == "" {
			switch {
			case t == res.paged.peakTick:
				title = "Paged pool at its fullest"
			case len(cw.finished) > 0 && !told["holes"]:
				told["holes"] = true
				title = "Requests finish, leaving holes"
			default:
				title = fmt.Sprintf("Tick %d", t)
			}
		}
		steps = append(steps, Step{
			Title:     title,
			Narration: fmt.Sprintf("Tick %d. ", t) + b.String(),
			Scenes:    []scene.Scene{gridScene(res, snap, prev), stripScene(res, snap, prev), nowCards(pw.last, cw.last), chartScene(chart, float64(t))},
			Cursor:    float64(t),
		})
		prevTick = t
		sn := snap
		prev = &sn
	}
	return steps
}

func garageMetrics(res *garageResult) []Metric {
	p, c := res.paged, res.contig
	meanLen := ratio(p.sumStored, p.sumN)
	var total int
	for _, q := range res.setup.reqs {
		total += q.prompt + q.output
	}
	return []Metric{
		{Key: "paged_admitted", Label: "Paged: most requests resident at once", Unit: "requests", Value: float64(p.maxResident)},
		{Key: "contiguous_admitted", Label: "Contiguous: most requests resident at once", Unit: "requests", Value: float64(c.maxResident)},
		{Key: "paged_utilization_pct", Label: "Paged: slots holding tokens while requests wait", Unit: "%", Value: round2(100 * p.util())},
		{Key: "contiguous_utilization_pct", Label: "Contiguous: slots holding tokens while requests wait", Unit: "%", Value: round2(100 * c.util())},
		{Key: "paged_waste_pct", Label: "Paged: reserved slots left empty (internal fragmentation)", Unit: "%", Value: round2(100 * p.waste())},
		{Key: "contiguous_waste_pct", Label: "Contiguous: reserved slots left empty (internal fragmentation)", Unit: "%", Value: round2(100 * c.waste())},
		{Key: "paged_waste_bound_pct", Label: "Paged waste bound 100·(B−1)/L̄, L̄ = mean resident length", Unit: "%", Value: round2(100 * float64(res.setup.b-1) / max(meanLen, 1))},
		{Key: "contiguous_external_frag_pct", Label: "Contiguous: free slots no new max-context request can use", Unit: "% of pool", Value: round2(100 * ratio(c.sumUnusable, c.sumPool))},
		{Key: "mean_resident_tokens", Label: "L̄: mean length of resident requests (paged, while requests wait)", Unit: "tokens", Value: round2(meanLen)},
		{Key: "mean_request_tokens", Label: "Mean final request length (prompt + output)", Unit: "tokens", Value: round2(float64(total) / float64(len(res.setup.reqs)))},
		{Key: "paged_ticks", Label: "Paged: ticks to serve the whole stream", Unit: "ticks", Value: float64(len(p.ticks))},
		{Key: "contiguous_ticks", Label: "Contiguous: ticks to serve the whole stream", Unit: "ticks", Value: float64(len(c.ticks))},
		{Key: "paged_preemptions", Label: "Paged: preemptions (out of blocks while decoding)", Unit: "", Value: float64(p.preemptions)},
	}
}

// garageClaims compares the article's figures with the model, for the
// article's setup (the defaults) and for the current run.
func garageClaims(article articleFigures, run *garageResult) []Claim {
	a := article.metrics
	r := garageMetrics(run)
	get := func(ms []Metric, key string) float64 {
		for _, m := range ms {
			if m.Key == key {
				return m.Value
			}
		}
		return 0
	}
	pair := func(ms []Metric, k1, k2, unit string) string {
		return strconv.FormatFloat(get(ms, k1), 'f', -1, 64) + unit + " vs " + strconv.FormatFloat(get(ms, k2), 'f', -1, 64) + unit
	}
	return []Claim{
		{What: "Streams resident at once, contiguous vs paged",
			Article: "14 vs 31",
			Model:   pair(a, "contiguous_admitted", "paged_admitted", "") + " (article setup); " + pair(r, "contiguous_admitted", "paged_admitted", "") + " (this run)",
			Why: fmt.Sprintf("The article's script types in 14 contiguous slots; with its pool (4 × 512 blocks × 16 = %s slots) and %s-slot reservations the count is %d. "+
				"Its paged figure only allocates prompts and never decodes; here requests also grow by one slot per output token, finish and leave, and the queue refills the pool.",
				comma(article.pool), comma(article.maxContext), article.pool/article.maxContext)},
		{What: "Memory utilisation, contiguous vs paged",
			Article: "54.2% vs 98.9%",
			Model:   pair(a, "contiguous_utilization_pct", "paged_utilization_pct", "%") + " (article setup); " + pair(r, "contiguous_utilization_pct", "paged_utilization_pct", "%") + " (this run)",
			Why:     "54.2% is a constant in the article's script and 98.9% counts blocks in use, not tokens. Here both are tokens stored / pool slots, averaged over the ticks in which requests were still waiting."},
		{What: "Paged waste bound (B−1)/L",
			Article: "15/1024 ≈ 1.46% at L = 1,024",
			Model: fmt.Sprintf("bound %.2f%%, measured %.2f%% (article setup, L̄ = %.0f); bound %.2f%%, measured %.2f%% (this run)",
				get(a, "paged_waste_bound_pct"), get(a, "paged_waste_pct"), get(a, "mean_resident_tokens"),
				get(r, "paged_waste_bound_pct"), get(r, "paged_waste_pct")),
			Why: "Same formula; L̄ here is the mean length of the requests actually resident, and the measured waste sits below the bound because a last block is on average half full, not 1 slot full."},
		{What: "Contiguous internal waste 1 − L_actual/L_max",
			Article: "≈ 60%–90%",
			Model:   fmt.Sprintf("%.2f%% (article setup); %.2f%% (this run)", get(a, "contiguous_waste_pct"), get(r, "contiguous_waste_pct")),
			Why:     "It depends only on how far the reservation exceeds the tokens actually held; the article's 350-token request in an 8,192-token reservation would waste 96%. Set reserve = exact to see Orca-Oracle, which wastes nothing inside reservations but still fragments between them."},
		{What: "KV memory holding real token state in pre-paging systems",
			Article: "20.4%–38.2% (vLLM paper, Fig. 2, measured; cited for reference)",
			Model:   fmt.Sprintf("%.2f%% contiguous utilisation (article setup)", get(a, "contiguous_utilization_pct")),
			Why:     "The paper's systems reserve for the model's full context (2,048 tokens for OPT) and serve ShareGPT/Alpaca lengths; this toy stream's lengths and pool differ, so only the direction should match."},
	}
}

func summaryStep(res *garageResult, s *Script, chart *scene.Chart) Step {
	get := func(k string) float64 { x, _ := s.Metric(k); return x }
	var cards []scene.Card
	for _, m := range s.Metrics {
		cards = append(cards, scene.Card{Label: m.Label, Value: m.Value, Unit: m.Unit})
	}
	b := float64(res.setup.b)
	f := &scene.Formula{
		Expr: "waste_paged ≤ (B − 1) / L̄",
		Terms: []scene.Term{
			{Symbol: "B", Meaning: "tokens per block", Value: strconv.Itoa(res.setup.b)},
			{Symbol: "L̄", Meaning: "mean resident request length", Value: fmt.Sprintf("%.1f tokens", get("mean_resident_tokens"))},
		},
		Result: fmt.Sprintf("(%g − 1) / %.1f = %.2f%% ≥ measured %.2f%%", b, get("mean_resident_tokens"), get("paged_waste_bound_pct"), get("paged_waste_pct")),
	}
	last := max(len(res.paged.ticks), len(res.contig.ticks)) - 1
	return Step{
		Title: "The comparison",
		Narration: fmt.Sprintf("With the same %d requests and the same %s slots, the paged pool held up to %.0f requests at once against %.0f for contiguous reservations, "+
			"kept %.1f%% of its slots busy against %.1f%%, and served the stream in %.0f ticks against %.0f. "+
			"Paged waste was %.2f%%, under its bound of %.2f%%; contiguous reservations left %.2f%% of what they reserved empty. The table sets the article's figures beside these.",
			len(res.setup.reqs), comma(res.setup.pool), get("paged_admitted"), get("contiguous_admitted"),
			get("paged_utilization_pct"), get("contiguous_utilization_pct"), get("paged_ticks"), get("contiguous_ticks"),
			get("paged_waste_pct"), get("paged_waste_bound_pct"), get("contiguous_waste_pct")),
		Scenes: []scene.Scene{
			{Kind: scene.KindCards, ID: "final", Title: "Final figures", Cards: cards},
			{Kind: scene.KindFormula, ID: "bound", Title: "Formulation 2: the paged waste bound", Formula: f},
			claimsTable(s.Claims),
			chartScene(chart, float64(last)),
		},
		Cursor: float64(last),
	}
}
