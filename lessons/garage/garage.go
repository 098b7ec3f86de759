// Package garage holds the lesson garage: Part 14 §1 and formulation 2. The
// same seeded stream of requests is served by a contiguous allocator that
// reserves a whole run per request and by vLLM's paged block pool; requests
// decode one token per tick and finish, and the lesson counts how many fit
// and how much memory each wastes. The serving loop is core/scheduler's Loop;
// the lesson narrates what it did.
package garage

import (
	"fmt"
	"math/bits"
	"strconv"
	"sync"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/record"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "garage",
	Title:   "The parking garage: contiguous reservations vs 16-token pages",
	Part:    "Part 14 §1, formulation 2",
	Summary: "Serve one request stream with max-context reservations and with paged blocks; watch internal and external fragmentation and how many streams fit.",
	Engine: "Paged pool after vLLM v1's BlockPool as of v0.8–v0.10 (free queue, blocks on demand, a freed request's blocks appended tail first, recompute preemption of the last admitted request; newer vLLM puts freed blocks without a hash at the head); " +
		"contiguous pool after the FasterTransformer/Orca baselines of the vLLM paper, each run placed first fit or by a binary buddy allocator (its §6.1). Simplified: one token per request per tick, no prefix caching, no null block; the sharegpt lengths are lognormal with the paper's means, not the data set's own.",
	Group: "memory", Rank: 20, Thumb: scene.KindPools,
	Terms: []lessons.Term{
		{Term: "KV cache", Definition: "The keys and values of every past token, kept per layer so attention need not recompute them.", Find: "KV slots"},
		{Term: "PagedAttention", Aliases: []string{"paged attention", "paging"}, Definition: "vLLM's KV layout: fixed-size blocks found through a block table, like virtual memory pages.", Find: "blocks of"},
		{Term: "internal fragmentation", Definition: "Memory reserved for a request but never filled: the empty tail of a reservation."},
		{Term: "external fragmentation", Definition: "Free memory split into holes too small for the next reservation.", Find: "rejected for now"},
		{Term: "first fit", Definition: "Place a reservation in the lowest-addressed hole that holds it."},
		{Term: "preemption", Aliases: []string{"recompute"}, Definition: "vLLM frees the most recently admitted request's KV when blocks run out; it is recomputed later.", Find: "preempted"},
		{Term: "head-of-line blocking", Definition: "The first waiting request does not fit, so nobody behind it is admitted either.", Find: "everyone behind it waits"},
	},
	Params: []lessons.Param{
		{Key: "block_size", Label: "Block size B", Unit: "tokens", Help: "Token slots per paged block (vLLM's default is 16).", Kind: lessons.Int, Default: 16, Min: 1, Max: 256, Step: 1},
		{Key: "max_context", Label: "Max context", Unit: "tokens", Help: "What the contiguous allocator reserves per request when reserve = max (the article's 8,192).", Kind: lessons.Int, Default: 8192, Min: 16, Max: 131072, Step: 16},
		{Key: "pool_tokens", Label: "KV pool", Unit: "tokens", Help: "Token slots in each pool (the article's simulator: 4 nodes × 512 blocks × 16).", Kind: lessons.Int, Default: 32768, Min: 64, Max: 1 << 20, Step: 256},
		{Key: "requests", Label: "Requests", Help: "Requests in the stream, all queued at tick 0 in order.", Kind: lessons.Int, Default: 40, Min: 1, Max: 2000, Step: 1},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: lessons.Int, Default: 512, Min: 1, Max: 131072, Step: 1},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: lessons.Int, Default: 1536, Min: 1, Max: 131072, Step: 1},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: lessons.Int, Default: 32, Min: 0, Max: 131072, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: lessons.Int, Default: 64, Min: 0, Max: 131072, Step: 1},
		{Key: "reserve", Label: "Contiguous reserves", Help: "max: max_context per request (FasterTransformer, Orca-Max); pow2: its prompt and the next power of two of its output length (Orca-Pow2); exact: its final length, known in advance (Orca-Oracle).",
			Kind: lessons.Choice, Choices: []string{"max", "pow2", "exact"}},
		{Key: "placement", Label: "Contiguous placement", Help: "first-fit: each run goes in the lowest-addressed hole that holds it; buddy: a binary buddy allocator gives each run a power-of-two block aligned to its size, as the vLLM paper's Orca baselines do (§6.1).",
			Kind: lessons.Choice, Choices: []string{"first-fit", "buddy"}},
		{Key: "lengths", Label: "Request lengths", Help: "uniform: prompts and outputs drawn evenly from the ranges above; sharegpt: the vLLM paper's ShareGPT workload as the lab states it (lognormal, means 161 prompt and 338 output tokens, filtered as vLLM's benchmark did: prompts of 4–1,024 tokens, outputs of at least 4, at most 2,048 together), the ranges above unused.",
			Kind: lessons.Choice, Choices: []string{"uniform", "sharegpt"}},
		kit.SeedParam,
	},
	Check: checkGarage,
	Sim:   sim{},
	// Script.Work counts each pool's ticks and request-ticks, the paged
	// pool's twice (the pictures' pass serves it again), and the contiguous
	// pool's logged runs, at most two per request-tick: at most
	// 5·(2·requests·(output_max+1) + requests + 1), since every tick stores
	// a token of the oldest running request or releases finished ones.
	MaxWork: 15*garageMaxStream + 5,
	HeavyCorners: []map[string]string{
		// One request at a time: a tick per token, 500,000 ticks.
		{"requests": "500", "prompt_min": "1", "prompt_max": "1", "output_min": "999", "output_max": "999", "max_context": "1024", "pool_tokens": "1024"},
		// Every request resident at once in the largest pool.
		{"requests": "2000", "prompt_min": "100", "prompt_max": "100", "output_min": "249", "output_max": "249", "max_context": "512",
			"pool_tokens": "1048576", "block_size": "256", "reserve": "exact"},
		// Paged preemption on most ticks: long prompts that fill the pool, then grow.
		{"requests": "500", "prompt_min": "4000", "prompt_max": "7000", "output_min": "999", "output_max": "999", "block_size": "2", "pool_tokens": "8192",
			"max_context": "8000"},
		// ShareGPT lengths, as many requests as the stream bound admits,
		// one request at a time in a buddy pool of one max_context.
		{"lengths": "sharegpt", "requests": "1500", "max_context": "2048", "pool_tokens": "2048", "block_size": "1", "placement": "buddy", "reserve": "exact"},
		// The longest outputs.
		{"requests": "3", "prompt_min": "1", "prompt_max": "1", "output_min": "131071", "output_max": "131071", "max_context": "131072", "pool_tokens": "131072", "block_size": "32"},
	},
}

// garageMaxStream bounds requests × (output_max + 1), the output tokens the
// stream can take at most (a zero-output request takes a tick): the
// heaviest accepted settings then re-simulate in about half a second
// natively (BENCHMARKS.md).
const garageMaxStream = 500_000

func init() { lessons.Register(lesson) }

func checkGarage(v lessons.Values) error {
	b, mc, pool := v.Int("block_size"), v.Int("max_context"), v.Int("pool_tokens")
	pmax, omax := v.Int("prompt_max"), v.Int("output_max")
	if err := kit.CheckOrdered(v, kit.LengthPairs...); err != nil {
		return err
	}
	shareGPT := v.Choice("lengths") == lengthsShareGPT
	switch {
	case shareGPT && mc < workload.PaperShareGPTMaxTotal:
		return lessons.Relation("max_context", strconv.Itoa(mc), fmt.Sprintf("at least %s with sharegpt lengths (their longest prompt + output), so every request fits its reservation", kit.Comma(workload.PaperShareGPTMaxTotal)), "lengths")
	case !shareGPT && pmax+omax > mc:
		return lessons.Relation("max_context", strconv.Itoa(mc), fmt.Sprintf("at least prompt_max + output_max (%d), so every request fits its reservation", pmax+omax), "prompt_max", "output_max")
	case v.Choice("placement") == placementBuddy && buddyBlock(mc) > buddyBlock(pool+1)/2:
		return lessons.Relation("max_context", strconv.Itoa(mc), fmt.Sprintf("at most the pool's largest buddy block (%s slots, the largest power of two within pool_tokens), so a max_context run has a block to go in",
			kit.Comma(buddyBlock(pool+1)/2)), "pool_tokens", "placement")
	case mc > pool:
		return lessons.Relation("max_context", strconv.Itoa(mc), fmt.Sprintf("at most pool_tokens (%d)", pool), "pool_tokens")
	case pool/b > kit.MaxGridBlocks:
		return lessons.Relation("pool_tokens", strconv.Itoa(pool), fmt.Sprintf("at most %d blocks of block_size %d, i.e. pool_tokens ≤ %d", kit.MaxGridBlocks, b, kit.MaxGridBlocks*b), "block_size")
	case (mc+b-1)/b > pool/b:
		return lessons.Relation("pool_tokens", strconv.Itoa(pool), fmt.Sprintf("at least %d blocks of %d tokens, so one max_context request fits", (mc+b-1)/b, b), "max_context", "block_size")
	}
	if shareGPT {
		if stream := streamTicks(newGarageSetup(v)); stream > garageMaxStream {
			return lessons.Relation("requests", v.TextOf("requests"), fmt.Sprintf("small enough that the stream's outputs, each plus one, come to at most %s (these come to %s): a stream re-simulates in about a second",
				kit.Comma(garageMaxStream), kit.Comma64(stream)), "lengths")
		}
		return nil
	}
	if n := v.Int("requests"); int64(n)*int64(omax+1) > garageMaxStream {
		return lessons.Relation("requests", strconv.Itoa(n), fmt.Sprintf("small enough that requests × (output_max + 1) ≤ %s (it is %s): a stream re-simulates in about a second; lower requests or output_max",
			kit.Comma(garageMaxStream), kit.Comma64(int64(n)*int64(omax+1))), "output_max")
	}
	return nil
}

// The choices of the placement and lengths knobs that change the run.
const (
	placementBuddy  = "buddy"
	lengthsShareGPT = "sharegpt"
)

// buddyBlock is the smallest power of two at or above n: the block a
// buddy allocator gives a run of n slots.
func buddyBlock(n int) int { return 1 << bits.Len(uint(max(n, 1)-1)) }

// streamTicks bounds the ticks a stream takes: each request's outputs and
// one more (a zero-output request takes a tick).
func streamTicks(s garageSetup) int64 {
	var n int64
	for _, q := range s.reqs {
		n += int64(q.Output) + 1
	}
	return n
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) { return lessons.ScriptOf(runGarage(v)) }

// ---- Simulation: the typed run ----

// garageSetup is everything the runs need from the parameters.
type garageSetup struct {
	b, pool   int
	reserve   allocator.Reservation
	reqs      []scheduler.LoopRequest // request i has ID i
	shareGPT  bool                    // lengths drawn as workload.PaperShareGPT, not from the ranges
	promptMin int                     // the drawn lengths' extremes
	promptMax int
	outputMin int
	outputMax int
}

func newGarageSetup(v lessons.Values) garageSetup {
	s := garageSetup{b: v.Int("block_size"), pool: v.Int("pool_tokens"), shareGPT: v.Choice("lengths") == lengthsShareGPT,
		reserve: allocator.Reservation{Policy: allocator.ReservePolicy(v.Choice("reserve")), MaxContext: v.Int("max_context")}}
	if v.Choice("placement") == placementBuddy {
		s.reserve.Placement = allocator.Buddy
	}
	rng := kit.NewRand(v.Int("seed"))
	n, pMin, pMax, oMin, oMax := v.Int("requests"), v.Int("prompt_min"), v.Int("prompt_max"), v.Int("output_min"), v.Int("output_max")
	s.reqs = make([]scheduler.LoopRequest, 0, n)
	for i := 0; i < n; i++ {
		q := scheduler.LoopRequest{ID: i}
		if s.shareGPT {
			q.Prompt, q.Output = workload.PaperShareGPT{}.Draw(rng)
		} else {
			q.Prompt, q.Output = kit.Uniform(rng, pMin, pMax), kit.Uniform(rng, oMin, oMax)
		}
		s.reqs = append(s.reqs, q)
		if i == 0 {
			s.promptMin, s.promptMax, s.outputMin, s.outputMax = q.Prompt, q.Prompt, q.Output, q.Output
		}
		s.promptMin, s.promptMax = min(s.promptMin, q.Prompt), max(s.promptMax, q.Prompt)
		s.outputMin, s.outputMax = min(s.outputMin, q.Output), max(s.outputMax, q.Output)
	}
	return s
}

// snapshot is the state of both pools drawn at one step.
type snapshot struct {
	owners, used []int
	runs         []allocator.Run
}

// garageServed is both pools serving one setup: their histories and the
// contiguous pool's runs (serveGarage), then the snapshots at the chosen
// ticks (captureGarage).
type garageServed struct {
	paged, contig record.History
	contigRuns    *record.RunLog
	snaps         map[int]snapshot
}

// maxTicks stops a run that cannot finish; the parameter checks make it
// unreachable, so hitting it is a bug worth an error, not a hang.
const maxTicks = 1 << 22

// garagePaged and garageContig make one of the setup's pools and a loop
// serving the stream on it. The runs count allocations with Usage.Taken and
// draw snapshots, so the pools' event log is off: it would only cost time
// (a quarter of a 1,000-request run).
func garagePaged(s garageSetup) (*allocator.Paged, *scheduler.Loop, error) {
	pg, err := allocator.NewPaged(s.pool/s.b, s.b)
	if err != nil {
		return nil, nil, err
	}
	pg.DisableEvents()
	l, err := scheduler.NewLoop(pg, s.reqs)
	return pg, l, err
}

func garageContig(s garageSetup) (*allocator.Contiguous, *scheduler.Loop, error) {
	ct, err := allocator.NewContiguous(s.pool, s.reserve)
	if err != nil {
		return nil, nil, err
	}
	ct.DisableEvents()
	l, err := scheduler.NewLoop(ct, s.reqs)
	return ct, l, err
}

// serveGarage serves the stream with each pool, keeping both histories
// and the contiguous pool's runs wherever a tick changed them. The pools
// share nothing, so each is served to the end in turn.
func serveGarage(s garageSetup) (*garageServed, error) {
	_, pl, err := garagePaged(s)
	if err != nil {
		return nil, err
	}
	ct, cl, err := garageContig(s)
	if err != nil {
		return nil, err
	}
	res := &garageServed{paged: record.History{Pool: s.pool}, contig: record.History{Pool: s.pool}}
	if err := res.paged.Serve(pl, maxTicks); err != nil {
		return nil, err
	}
	if res.contigRuns, err = serveContig(s, ct, cl, &res.contig); err != nil {
		return nil, err
	}
	return res, nil
}

// serveContig serves the contiguous pool into h: each tick in which
// requests wait adds the pool's free slots that a request reserving a bay
// cannot use (external fragmentation, Contiguous.Unusable), and its runs
// are logged wherever a tick changed them, for the pictures.
func serveContig(s garageSetup, ct *allocator.Contiguous, cl *scheduler.Loop, h *record.History) (*record.RunLog, error) {
	h.Waiting = func() int { return ct.Unusable(s.reserve.MaxContext) }
	runs := h.LogRuns(ct)
	return runs, h.Serve(cl, maxTicks)
}

// captureGarage fills r.snaps with both pools at the end of each tick in
// ticks (sorted, within the run): the paged pool served again up to the
// last of them, the contiguous pool's runs from r.contigRuns.
func captureGarage(s garageSetup, r *garageServed, ticks []int) error {
	pg, pl, err := garagePaged(s)
	if err != nil {
		return err
	}
	r.snaps = make(map[int]snapshot, len(ticks))
	contig := r.contigRuns.Replay()
	var tick scheduler.Tick // the ticks were recorded in the first pass
	for t := 0; len(ticks) > 0; t++ {
		if !pl.Done() {
			if err := pl.StepInto(&tick); err != nil {
				return err
			}
		}
		if ticks[0] == t {
			r.snaps[t] = snapshotOf(pg, contig.At(t))
			ticks = ticks[1:]
		}
	}
	return nil
}

func snapshotOf(pg *allocator.Paged, runs []allocator.Run) snapshot {
	n := pg.NumBlocks()
	both := make([]int, 2*n)
	snap := snapshot{runs: runs, owners: both[:n:n], used: both[n:]}
	pg.Occupancy(snap.owners, snap.used)
	return snap
}

// garageRun is what runGarage simulated: the setup, both pools' histories,
// the ticks shown as steps, and the figures of the article's setup.
type garageRun struct {
	setup   garageSetup
	served  *garageServed
	ticks   []int // ticks shown as steps
	figures garageFigures
	article garageFigures
	work    int64 // Script.Work: ticks plus request-ticks of both pools and passes, logged runs
	// isArticle: the knobs are the article's setup (the defaults), which
	// the claims run.
	isArticle bool
}

// runGarage serves the stream once, keeping both histories, to choose the
// ticks worth showing, then again, identically, only to capture the pools
// at those ticks.
func runGarage(v lessons.Values) (garageRun, error) {
	setup := newGarageSetup(v)
	served, err := serveGarage(setup)
	if err != nil {
		return garageRun{}, err
	}
	ticks := chooseTicks(served)
	if err := captureGarage(setup, served, ticks); err != nil {
		return garageRun{}, err
	}
	run := garageRun{setup: setup, served: served, ticks: ticks, figures: figuresOf(setup, served), isArticle: sameValues(v, v.Defaults())}
	// The capture serves the paged pool again, at most as far, and reads
	// the contiguous pool's log once.
	run.work = 2*served.paged.Work() + served.contig.Work() + int64(served.contigRuns.Len())
	run.article, err = garageArticleFigures(v, run.figures)
	return run, err
}

// garageFigures are a run's final figures, rounded as the metrics show
// them.
type garageFigures struct {
	pool, maxContext                 int
	pagedAdmitted, contigAdmitted    int
	pagedUtil, contigUtil            float64 // % of pool slots holding tokens while requests wait
	pagedWaste, contigWaste          float64 // % of reserved slots left empty
	wasteBound                       float64 // 100·(B−1)/L̄
	externalFrag                     float64 // % of the pool no max-context request can use
	meanResident, meanRequest        float64 // tokens
	longest                          int     // the longest request's final length, tokens
	pagedTicks, contigTicks, preempt int
}

func figuresOf(s garageSetup, r *garageServed) garageFigures {
	p, c := &r.paged, &r.contig
	ps, cs := p.Sums(), c.Sums()
	meanLen := ratio(ps.Stored, ps.Resident)
	total, longest := 0, 0
	for _, q := range s.reqs {
		total += q.Prompt + q.Output
		longest = max(longest, q.Prompt+q.Output)
	}
	return garageFigures{
		pool: s.pool, maxContext: s.reserve.MaxContext,
		pagedAdmitted: p.MaxResident(), contigAdmitted: c.MaxResident(),
		pagedUtil: kit.Round2(100 * p.Utilization()), contigUtil: kit.Round2(100 * c.Utilization()),
		pagedWaste: kit.Round2(100 * p.Waste()), contigWaste: kit.Round2(100 * c.Waste()),
		wasteBound:   kit.Round2(100 * float64(s.b-1) / max(meanLen, 1)),
		externalFrag: kit.Round2(100 * ratio(cs.Extra, cs.Pool)),
		meanResident: kit.Round2(meanLen), meanRequest: kit.Round2(float64(total) / float64(len(s.reqs))),
		pagedTicks: p.Len(), contigTicks: c.Len(), preempt: p.Preemptions(), longest: longest,
	}
}

// garageArticle holds the figures of the article's setup (the knobs'
// defaults: the pool and 40-request stream of the article's script, with
// the 8,192-token reservations its text describes), simulated once per
// process: the claims table shows them
// whatever the knobs, and re-simulating them on every knob move cost a third
// of a rebuild.
var garageArticle struct {
	once sync.Once
	figs garageFigures
	err  error
}

// garageArticleFigures returns the figures of the article's setup; figs
// are those of v, used when v is that setup.
func garageArticleFigures(v lessons.Values, figs garageFigures) (garageFigures, error) {
	if sameValues(v, v.Defaults()) {
		return figs, nil
	}
	garageArticle.once.Do(func() {
		s := newGarageSetup(v.Defaults())
		var r *garageServed
		r, garageArticle.err = serveGarage(s)
		if r != nil {
			garageArticle.figs = figuresOf(s, r)
		}
	})
	return garageArticle.figs, garageArticle.err
}

func sameValues(a, b lessons.Values) bool {
	at, bt := a.Text(), b.Text()
	for k, x := range at {
		if bt[k] != x {
			return false
		}
	}
	return true
}

// maxGarageSteps bounds the steps between the introduction and the summary
// (20 narrated steps in all); the ticks that teach something new are kept
// first.
const maxGarageSteps = 18

// chooseTicks picks the ticks shown as steps (record.Pick): the first time
// each mechanism shows in either pool, each pool's fullest and last tick,
// then evenly spaced busy ticks.
func chooseTicks(r *garageServed) []int { return record.Pick(maxGarageSteps, &r.paged, &r.contig) }

// ratio is a / b, or 0 when b is 0.
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
