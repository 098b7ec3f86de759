// Package chunkedprefill holds the lesson chunked-prefill: Part 14 §3.2. A
// long prompt arrives while decodes run. Without chunking its whole prefill
// is one step and every decode waits for it; with a token budget the prompt
// is cut into chunks that ride along with the decodes.
package chunkedprefill

import (
	"fmt"
	"math"
	"strconv"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "chunked-prefill",
	Title:   "Chunked prefill: a long prompt among running decodes",
	Part:    "Part 14 §3.2",
	Summary: "A 4,000-token prompt arrives while decodes run: one long step stalls them all, unless the prompt is cut into chunks. Trade TTFT against smooth ITL.",
	Engine: "vLLM v1 scheduler (running first, chunk = remaining token budget, max_num_batched_tokens); steps priced by core/hardware's roofline model " +
		"with CUDA-graph replay and overlapped host work. Simplified: synchronous scheduling, no speculative decoding.",
	// After batching: chunking refines continuous batching.
	Group: "scheduling", Rank: 20, Thumb: scene.KindTimeline,
	Terms: []lessons.Term{
		{Term: "continuous batching", Definition: "Requests join and leave the running batch at every step instead of waiting for a whole batch to finish.", Find: "Every step"},
		{Term: "chunked prefill", Definition: "Split a long prompt into chunks that share steps with running decodes, bounded by a token budget.", Find: "chunk"},
		{Term: "prefill", Definition: "Computing the prompt's tokens in parallel to fill the KV cache and produce the first output token.", Find: "prefill"},
		{Term: "decode", Definition: "Generating one token per request per step, reading the whole KV cache each time.", Find: "decoding"},
		{Term: "ITL", Aliases: []string{"inter-token latency"}, Definition: "The gap between two consecutive output tokens of a request.", Find: "gap between tokens"},
	},
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam, kit.WeightParam, kit.GraphParam,
		{Key: "decodes", Label: "Running decodes", Help: "Requests already generating when the long prompt arrives.", Kind: lessons.Int, Default: 16, Min: 1, Max: 256, Step: 1},
		{Key: "context", Label: "Decode context", Unit: "tokens", Help: "Tokens each running decode already holds.", Kind: lessons.Int, Default: 1024, Min: 1, Max: 32768, Step: 1},
		{Key: "long_prompt", Label: "Long prompt", Unit: "tokens", Kind: lessons.Int, Default: 4000, Min: 64, Max: 32768, Step: 64},
		{Key: "chunk_size", Label: "Token budget per step", Unit: "tokens", Help: "vLLM's max_num_batched_tokens with chunking on: decodes first, the prompt chunk takes the rest.", Kind: lessons.Int, Default: 512, Min: 64, Max: 16384, Step: 64},
		kit.PriceParam, kit.PowerParam,
	},
	Check:   kit.CheckingCosts(checkChunkedPrefill),
	Sim:     sim{},
	MaxWork: chunkedMaxWork,
	HeavyCorners: []map[string]string{
		{"gpu": "b200", "model": "qwen2.5-7b", "decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "7168"},
		{"decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "1024"},
		{"gpu": "b200", "model": "qwen2.5-7b", "decodes": "255", "chunk_size": "16384", "context": "8192", "long_prompt": "8192"},
		{"decodes": "1", "chunk_size": "64", "context": "1", "long_prompt": "32768"},
		// The heaviest `make bench-corners`' seeded search found (BENCHMARKS.md,
		// "Worst settings found by search").
		{"gpu": "b200", "model": "qwen2.5-7b", "decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "7168", "graph_mode": "piecewise"},
	},
}

func init() { lessons.Register(lesson) }

// articleStallMS is Part 14 §3.2's claim: a 4,000-token prefill
// "monopolizes Tensor Cores for 80ms".
const articleStallMS = 80

// prefillRun is one run of the scenario.
type prefillRun struct {
	steps      []scheduler.Step
	arrival    float64
	ttftLong   float64
	maxITL     float64 // largest gap between tokens of any decode, after the prompt arrived
	baseITL    float64 // a decode's gap before the prompt arrived
	longest    float64 // the longest step
	chunks     int     // steps that carried part of the long prompt
	probeGaps  []float64
	probeTimes []float64
	// running is how many decodes the last step before the prompt arrived
	// computed, preemptions how many requests were preempted in the run:
	// the narration tells what the simulation reached, not the knobs.
	running, preemptions int
	// work counts the run's steps and the requests they advanced.
	work int64
}

const longID = 1 << 20

// Decode steps before the long prompt arrives, and its tokens after.
const prefillWarm, prefillAfter = 4, 8

// prefillSteps bounds the steps of a run with this budget: the decodes'
// prompts and then the long prompt, each step's prefill share being at
// least budget − n tokens (running decodes come first), plus the warm-up
// and the prompt's tokens after.
func prefillSteps(n, ctx, long, budget int) int {
	share := max(1, budget-n)
	return (n*ctx+share-1)/share + prefillWarm + (long+share-1)/share + prefillAfter
}

// prefillOut is the output each decode is asked for: enough to keep every
// decode running from its own prefill until the long prompt has its
// tokens, so that the run reaches the state the lesson narrates (all
// decodes running when the prompt arrives).
func prefillOut(n, ctx, long, budget int) int {
	return prefillSteps(n, ctx, long, budget) + 16
}

// prefillFit is what a run with this budget holds at once: n decodes of
// ctx + out tokens and the long prompt, the whole prompt in one step
// without chunking.
func prefillFit(g hardware.GPU, m hardware.Model, w hardware.WeightFormat, n, ctx, long, budget int) hardware.Fit {
	out := prefillOut(n, ctx, long, budget)
	return hardware.Fit{GPU: g, Model: m, FixedTP: true, Weights: w, BatchedTokens: n + long,
		KVTokens: int64(n)*int64(ctx+out) + int64(long+prefillAfter), Positions: ctx + out}
}

// checkChunkedPrefill refuses what a GPU could not hold (the decodes' KV
// cache with the long prompt's, within the model's positions) and runs
// whose work exceeds chunkedPrefill.MaxWork.
func checkChunkedPrefill(v lessons.Values) error {
	n, ctx, long, budget := v.Int("decodes"), v.Int("context"), v.Int("long_prompt"), v.Int("chunk_size")
	if budget <= n {
		return lessons.Relation("chunk_size", strconv.Itoa(budget), fmt.Sprintf("more than decodes (%d), so each step has room for a prompt chunk", n), "decodes")
	}
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	long1 := hardware.Fit{GPU: g, Model: m, FixedTP: true, Weights: kit.WeightFormat(v), BatchedTokens: n + long, KVTokens: int64(long + prefillAfter), Positions: long + prefillAfter}
	if err := kit.CheckFit(v, long1, kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "long_prompt", hardware.LimitPositions: "long_prompt"}); err != nil {
		return err
	}
	if err := kit.CheckFit(v, prefillFit(g, m, kit.WeightFormat(v), n, ctx, long, budget), kit.FitKnobs{hardware.LimitKV: "decodes", hardware.LimitPositions: "context"}); err != nil {
		return err
	}
	if w := prefillWork(g, m, kit.WeightFormat(v), n, ctx, long, budget); w > chunkedWorkLimit {
		return lessons.Relation("long_prompt", strconv.Itoa(long), fmt.Sprintf("runs that re-simulate in about a second: %d decodes riding along a %s-token prompt cut into %s chunks of chunk_size − decodes = %d tokens, "+
			"across the budget sweep, come to about %s units of work (each step 8, each request in a step 1), over the bound of %s; "+
			"shorten long_prompt, run fewer decodes or raise chunk_size", n, kit.Comma(long), kit.Comma((long+budget-n-1)/(budget-n)), budget-n, kit.Comma(int(w)), kit.Comma(chunkedWorkLimit)))
	}
	return nil
}

// Work bound of chunked-prefill (see measuring's): Check lets the estimate
// reach chunkedWorkLimit, Script.Work stays within MaxWork.
const (
	chunkedMaxWork   = 4_500_000
	chunkedWorkLimit = 4_000_000
)

// prefillBudgets are the token budgets of the sweep.
var prefillBudgets = []int{64, 128, 256, 512, 1024, 2048, 4096, 8192}

// prefillWork estimates Script.Work of the lesson: for the whole-prefill
// run, the chunked run and each sweep budget that fits, its steps (the
// decodes' prompts at the budget, the warm-up, the prompt's chunks and its
// tokens after) times the step's work, StepWork plus every request.
func prefillWork(g hardware.GPU, m hardware.Model, wf hardware.WeightFormat, n, ctx, long, budget int) float64 {
	per := float64(kit.StepWork + n + 1)
	w := per * float64(2+prefillWarm+prefillAfter) // whole prefill: prompts, then the long one, in one step each
	w += per * float64(prefillSteps(n, ctx, long, budget))
	for _, b := range prefillBudgets {
		if b > n && prefillFit(g, m, wf, n, ctx, long, b).Check() == nil {
			w += per * float64(prefillSteps(n, ctx, long, b))
		}
	}
	return w
}

// runPrefill runs decodes to steady state, adds the long prompt, and runs
// until it has produced a few tokens.
func runPrefill(e *kit.Engine, v lessons.Values, chunked bool, budget int) (*prefillRun, error) {
	n, ctx, long := v.Int("decodes"), v.Int("context"), v.Int("long_prompt")
	const warm, after = prefillWarm, prefillAfter
	out := prefillOut(n, ctx, long, budget)
	cfg := scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: n + 1, ChunkedPrefill: chunked, BlockSize: 16, NumBlocks: e.KVBlocks}
	if !chunked {
		cfg.MaxNumBatchedTokens = max(budget, n*(ctx+out), long+n+after) // vLLM: budget = max_model_len when chunking is off; here enough for the whole prompt beside the n decodes
	}
	var reqs []scheduler.Request
	for i := 0; i < n; i++ {
		reqs = append(reqs, scheduler.Request{ID: i, Prompt: ctx, Output: out})
	}
	s, err := scheduler.New(cfg, e.Timer(cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens), reqs)
	if err != nil {
		return nil, lessons.Relation("decodes", strconv.Itoa(n), "few enough decodes of this context to fit the GPU's KV cache ("+err.Error()+")")
	}
	s.RecordWork = true
	// Warm up: every decode has its prompt and a few tokens.
	for len(s.TokenTimes(n-1)) < warm {
		if _, err := s.Step(); err != nil {
			return nil, err
		}
	}
	run := &prefillRun{arrival: s.Clock()}
	if err := s.Add(scheduler.Request{ID: longID, Arrival: s.Clock(), Prompt: long, Output: after}); err != nil {
		return nil, lessons.Relation("long_prompt", strconv.Itoa(long), "a prompt that fits the GPU's KV cache ("+err.Error()+")")
	}
	for len(s.TokenTimes(longID)) < after {
		if _, err := s.Step(); err != nil {
			return nil, err
		}
	}
	run.steps = s.Steps()
	run.ttftLong = s.TokenTimes(longID)[0] - run.arrival
	run.work = kit.StepsWork(run.steps)
	for _, st := range run.steps {
		run.preemptions += len(st.Preempted)
		if st.Start < run.arrival {
			run.running = st.DecodeTokens
		}
		if st.Start >= run.arrival {
			run.longest = max(run.longest, st.Duration)
		}
		for _, w := range st.Work {
			if w.Req == longID && w.Prefill {
				run.chunks++
			}
		}
	}
	for i := 0; i < n; i++ {
		tt := s.TokenTimes(i)
		for k := 1; k < len(tt); k++ {
			if tt[k] > run.arrival {
				run.maxITL = max(run.maxITL, tt[k]-tt[k-1])
			} else if k == len(tt)-1 || tt[k+1] > run.arrival {
				run.baseITL = tt[k] - tt[k-1]
			}
		}
	}
	tt := s.TokenTimes(0)
	run.probeTimes = tt[1:]
	for k := 1; k < len(tt); k++ {
		run.probeGaps = append(run.probeGaps, tt[k]-tt[k-1])
	}
	return run, nil
}

// budgetPoint is one token budget of the sweep.
type budgetPoint struct {
	budget         int
	ttft, worstITL float64
}

// chunkedPrefillRun is the scenario run twice (whole prefill, chunked) and
// the budget sweep.
type chunkedPrefillRun struct {
	e                              *kit.Engine
	gpu                            hardware.GPU
	model                          hardware.Model
	decodes, context, long, budget int
	whole, chunk                   *prefillRun
	sweep                          []budgetPoint
	// work counts the steps of every run and the requests they advanced.
	work int64
	// costWhole and costChunk are what the two runs' steps cost on the one
	// GPU (kit.CostOf).
	costWhole, costChunk kit.RunCost
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runChunkedPrefill(v))
}

// runChunkedPrefill runs the scenario without and with chunking, then with
// each budget of the sweep.
func runChunkedPrefill(v lessons.Values) (chunkedPrefillRun, error) {
	// The pool is sized for the largest step prefillFit checks (the
	// decodes and the whole prompt), so that what it accepts is resident.
	e, err := kit.NewEngineAt(v, 16, v.Int("decodes")+v.Int("long_prompt"))
	if err != nil {
		return chunkedPrefillRun{}, err
	}
	r := chunkedPrefillRun{e: e, gpu: e.GPU, model: e.Model, decodes: v.Int("decodes"), context: v.Int("context"), long: v.Int("long_prompt"), budget: v.Int("chunk_size")}
	if r.whole, err = runPrefill(e, v, false, r.budget); err != nil {
		return chunkedPrefillRun{}, err
	}
	if r.chunk, err = runPrefill(e, v, true, r.budget); err != nil {
		return chunkedPrefillRun{}, err
	}
	for _, b := range prefillBudgets {
		// Only budgets whose run the GPU could hold: small budgets keep
		// the decodes running longer.
		if b <= r.decodes || prefillFit(e.GPU, e.Model, e.Weights, r.decodes, r.context, r.long, b).Check() != nil {
			continue
		}
		pr, err := runPrefill(e, v, true, b)
		if err != nil {
			return chunkedPrefillRun{}, err
		}
		r.sweep = append(r.sweep, budgetPoint{budget: b, ttft: pr.ttftLong, worstITL: pr.maxITL})
		r.work += pr.work
	}
	r.work += r.whole.work + r.chunk.work
	usd, watts := kit.CostRates(v, e.GPU)
	r.costWhole, r.costChunk = kit.StepsCost(usd, watts, 1, r.whole.steps), kit.StepsCost(usd, watts, 1, r.chunk.steps)
	return r, nil
}

// stall is the step the article describes: the prompt's whole prefill as
// one step.
func (r chunkedPrefillRun) stall() float64 { return r.whole.longest }

func (r chunkedPrefillRun) sweepChart() *scene.Chart {
	sweep := &scene.Chart{Type: scene.Line, XLabel: "token budget per step", XUnit: "tokens", YLabel: "latency", YUnit: "ms", XLog: true, YLog: true,
		Note: "Smaller budgets: shorter steps, so a smaller worst gap for the decodes, but a later first token for the long prompt."}
	ttftS, itlS := scene.Series{Name: sweepTTFT}, scene.Series{Name: sweepITL}
	for _, p := range r.sweep {
		ttftS.X, ttftS.Y = append(ttftS.X, float64(p.budget)), append(ttftS.Y, kit.Ms(p.ttft))
		itlS.X, itlS.Y = append(itlS.X, float64(p.budget)), append(itlS.Y, kit.Ms(p.worstITL))
	}
	sweep.Series = []scene.Series{ttftS, itlS}
	return sweep
}

// The sweep chart's series names (marks refer to them).
const (
	sweepTTFT = "TTFT of the long prompt"
	sweepITL  = "worst decode ITL"
)

// itlChart plots the gap before each of decode R1's tokens around the
// prompt's arrival, in both runs, as flat steps: each gap holds over the
// time the token waited, so one long stall reads as one long plateau, not
// a ramp.
func (r chunkedPrefillRun) itlChart(chunked bool) *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "time since the prompt arrived", XUnit: "ms", YLabel: "gap before this token of decode R1", YUnit: "ms",
		Note: "Each of R1's tokens, drawn at the time it came out, at the height of its wait since the token before."}
	runs := []struct {
		name string
		run  *prefillRun
	}{{"whole prefill", r.whole}, {"chunked", r.chunk}}
	if !chunked {
		runs = runs[:1]
	}
	for _, x := range runs {
		sr := scene.Series{Name: x.name, Step: true}
		for k, g := range x.run.probeGaps {
			if x.run.probeTimes[k] < x.run.arrival-5*r.whole.baseITL {
				continue // warm-up: show only the last few tokens before the prompt arrives
			}
			sr.X = append(sr.X, kit.Ms(x.run.probeTimes[k]-x.run.arrival))
			sr.Y = append(sr.Y, kit.Ms(g))
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

// The lanes of the GPU timeline (references name them: span:decode:3).
const (
	laneDecode  = "decode"
	lanePrefill = "prefill"
	laneGaps    = "gaps"
)

// gpuPicture is a run's GPU timeline and the bars the narration names.
type gpuPicture struct {
	tl *scene.Timeline
	// Indices of bars: a steady decode step before the prompt and its
	// gap, the step that carried the prompt's first chunk (the stall
	// without chunking) in the decode lane and in the prefill lane, and
	// R1's longest gap after the prompt arrived.
	steady, steadyGap, first, firstChunk, worstGap int
	// Times (ms from the arrival): the first decode-only step, the end of
	// the prompt's last chunk, a decode step's length.
	decodeFrom, chunksEnd, step float64
}

// gpuTimeline draws a run: each step's decode tokens and prefill tokens in
// two stacked lanes on one time axis, and beneath them the gap before each
// of decode R1's tokens. Times are ms from the prompt's arrival; steps
// starting at or after until are left out (step 1 ends at the arrival).
func (pr *prefillRun) gpuTimeline(until float64) gpuPicture {
	p := gpuPicture{steady: -1, steadyGap: -1, first: -1, firstChunk: -1, worstGap: -1, decodeFrom: math.Inf(1)}
	dec := scene.Lane{Label: "decode tokens", Key: laneDecode}
	pre := scene.Lane{Label: "prefill tokens", Key: lanePrefill}
	gaps := scene.Lane{Label: "R1: wait per token", Key: laneGaps}
	at := func(t float64) float64 { return kit.Msr(t - pr.arrival) }
	for _, st := range pr.steps {
		a, b := at(st.Start), at(st.Start+st.Duration)
		if a >= until {
			break
		}
		longN := 0
		for _, w := range st.Work {
			if w.Req == longID && w.Prefill {
				longN = w.NewTokens
			}
		}
		if st.DecodeTokens > 0 {
			if longN > 0 && p.first < 0 {
				p.first = len(dec.Bars)
			}
			if st.PrefillTokens == 0 {
				p.decodeFrom = math.Min(p.decodeFrom, a)
				if b <= 0 {
					p.steady, p.step = len(dec.Bars), b-a
				}
			}
			dec.Bars = append(dec.Bars, scene.Span{Start: a, End: b, Label: strconv.Itoa(st.DecodeTokens), Class: "decode"})
		}
		if st.PrefillTokens > 0 {
			cls := "prefill"
			if longN > 0 {
				if p.firstChunk < 0 {
					p.firstChunk = len(pre.Bars)
				}
				p.chunksEnd = b
			} else {
				cls = "prefill-other"
			}
			pre.Bars = append(pre.Bars, scene.Span{Start: a, End: b, Label: kit.Comma(st.PrefillTokens), Class: cls})
		}
	}
	worst := 0.0
	for k, g := range pr.probeGaps {
		t1 := at(pr.probeTimes[k])
		if t1 > until {
			break
		}
		t0 := kit.Msr(pr.probeTimes[k] - g - pr.arrival)
		cls := "gap"
		if g > 3*pr.baseITL {
			cls = "gap-long"
		}
		if t1 <= 0 {
			p.steadyGap = len(gaps.Bars)
		} else if g > worst {
			worst, p.worstGap = g, len(gaps.Bars)
		}
		gaps.Bars = append(gaps.Bars, scene.Span{Start: t0, End: t1, Label: kit.MsText(g), Class: cls})
	}
	p.tl = &scene.Timeline{Unit: "ms", Lanes: []scene.Lane{dec, pre, gaps}}
	return p
}

// phases names the stretches of a run above its lanes.
func (p gpuPicture) phases(arrived bool) []scene.Span {
	lo := p.tl.Lanes[0].Bars[0].Start
	g := []scene.Span{{Start: lo, End: p.decodeFrom, Label: "the decodes' own prompts", Class: "phase"},
		{Start: p.decodeFrom, End: 0, Label: "decoding", Class: "phase"}}
	if arrived {
		g = append(g, scene.Span{Start: 0, End: p.chunksEnd, Label: "the long prompt", Class: "phase"})
	}
	return g
}

// steadyScene is the first step's main figure: the decodes before the prompt
// arrives, a decode step and its gap marked.
func (r chunkedPrefillRun) steadyScene() (scene.Scene, []scene.Mention, string) {
	pw := r.whole.gpuTimeline(0)
	tl := pw.tl
	tl.Zoom = &scene.Window{Start: pw.decodeFrom, End: 0, Label: "the decode steps"}
	tl.Groups = pw.phases(false)
	step := fmt.Sprintf("a decode step takes %.1f ms", pw.step)
	gap := fmt.Sprintf("a token every %.1f ms", 1000*r.whole.baseITL)
	sc := kit.MainScene(scene.Scene{Kind: scene.KindTimeline, ID: "gpu", Title: "The GPU, step by step (ms; the prompt arrives at 0)", Gantt: tl},
		kit.MarkRef(kit.SpanRef(laneDecode, pw.steady), fmt.Sprintf("one step: %.1f ms", pw.step)),
		kit.MarkRef(kit.SpanRef(laneGaps, pw.steadyGap), fmt.Sprintf("R1 waits %.1f ms", 1000*r.whole.baseITL)))
	return sc, []scene.Mention{kit.Mention(step, "gpu", kit.SpanRef(laneDecode, pw.steady)), kit.Mention(gap, "gpu", kit.SpanRef(laneGaps, pw.steadyGap))}, step + ", so each stream gets " + gap
}

// runScene is a whole run around the prompt: zoomed from two decode steps
// before it arrives to two steps after its last chunk, marks on the step
// that carried its first chunk and on R1's longest wait.
func (r chunkedPrefillRun) runScene(pr *prefillRun, title, firstLabel, worstLabel string) (scene.Scene, gpuPicture) {
	pw := pr.gpuTimeline(math.Inf(1))
	tl := pw.tl
	tl.Zoom = &scene.Window{Start: -2 * pw.step, End: pw.chunksEnd + 2*pw.step, Label: "the long prompt"}
	tl.Groups = pw.phases(true)
	zero := 0.0
	tl.Cursor = &zero
	marks := []scene.Mark{kit.MarkRef(kit.SpanRef(laneGaps, pw.worstGap), worstLabel)}
	if firstLabel != "" {
		marks = append(marks, kit.MarkRef(kit.SpanRef(laneDecode, pw.first), firstLabel))
	} else {
		marks = append(marks, kit.MarkRef(kit.SpanRef(lanePrefill, pw.firstChunk), fmt.Sprintf("chunk 1: %s tokens", tl.Lanes[1].Bars[pw.firstChunk].Label)))
	}
	return kit.MainScene(scene.Scene{Kind: scene.KindTimeline, ID: "gpu", Title: title, Gantt: tl}, marks...), pw
}

// cards are one run's figures beside the steady decode ITL.
func (r chunkedPrefillRun) cards(pr *prefillRun) scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "cards", Title: "This run", Cards: []scene.Card{
		{Label: "worst decode ITL", Value: kit.Ms(pr.maxITL), Unit: "ms"},
		{Label: "steady decode ITL", Value: kit.Ms(r.whole.baseITL), Unit: "ms"},
		{Label: "TTFT of the long prompt", Value: kit.Ms(pr.ttftLong), Unit: "ms"},
		{Label: "longest step", Value: kit.Ms(pr.longest), Unit: "ms"},
	}}
}

// steadyCards are the figures before the prompt arrives.
func (r chunkedPrefillRun) steadyCards() scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "cards", Title: "Before the long prompt", Cards: []scene.Card{
		{Label: "decodes running", Value: float64(r.whole.running)},
		{Label: "steady decode ITL", Value: kit.Ms(r.whole.baseITL), Unit: "ms"},
	}}
}

func (r chunkedPrefillRun) metrics() []lessons.Metric {
	whole, chunk := r.whole, r.chunk
	return []lessons.Metric{
		{Key: "max_itl_ms_unchunked", Label: "Worst decode ITL, whole prefill", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(whole.maxITL)},
		{Key: "max_itl_ms_chunked", Label: "Worst decode ITL, chunked", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(chunk.maxITL)},
		{Key: "ttft_long_ms_unchunked", Label: "TTFT of the long prompt, whole prefill", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(whole.ttftLong)},
		{Key: "ttft_long_ms_chunked", Label: "TTFT of the long prompt, chunked", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(chunk.ttftLong)},
		{Key: "decode_itl_ms", Label: "Decode ITL before the prompt arrived", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(whole.baseITL)},
		{Key: "stall_step_ms", Label: "The whole-prefill step", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.stall())},
		{Key: "chunks", Label: "Steps that carried a chunk of the prompt", Unit: "steps", Value: float64(chunk.chunks)},
	}
}

func (r chunkedPrefillRun) claims() []lessons.Claim {
	whole, chunk := r.whole, r.chunk
	return []lessons.Claim{{
		What:    fmt.Sprintf("A %s-token prefill in one step stalls decodes", kit.Comma(r.long)),
		Article: fmt.Sprintf("%d ms (4,000 tokens; GPU and model not stated)", articleStallMS),
		Model:   fmt.Sprintf("%.1f ms step for %s on %s with %d decodes riding along", 1000*r.stall(), r.model.Name, r.gpu.Name, r.whole.running),
		Why:     "The model prices the step from FLOPs at the GPU's dense BF16 peak × MFU 0.72 plus attention over the context (core/hardware); the article does not say which GPU or model its 80 ms is for.",
	}, {
		What:    "512-token chunks keep ITL smooth",
		Article: "stated (Part 14 §3.2)",
		Model: fmt.Sprintf("worst ITL %.1f ms chunked vs %.1f ms whole (steady decode %.1f ms); TTFT %.1f ms vs %.1f ms",
			1000*chunk.maxITL, 1000*whole.maxITL, 1000*whole.baseITL, 1000*chunk.ttftLong, 1000*whole.ttftLong),
		Why: "Agrees in direction: chunking bounds every step by the token budget, at the cost of a later first token for the long prompt.",
	}}
}

func (r chunkedPrefillRun) Script() *lessons.Script {
	whole, chunk, long, budget, stall := r.whole, r.chunk, r.long, r.budget, r.stall()
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	s.Metrics = append(s.Metrics, append(r.costWhole.MetricsSuffixed("_unchunked", "Whole prefill"), r.costChunk.MetricsSuffixed("_chunked", "Chunked")...)...)
	itlWhole := scene.Scene{Kind: scene.KindChart, ID: "itl", Title: "Gaps between decode R1's tokens", Chart: r.itlChart(false)}
	itlBoth := scene.Scene{Kind: scene.KindChart, ID: "itl", Title: "Gaps between decode R1's tokens", Chart: r.itlChart(true)}
	steady, steadyMentions, steadyText := r.steadyScene()
	stallText := fmt.Sprintf("That step takes %.1f ms", 1000*stall)
	worstWhole := fmt.Sprintf("jumps from %.1f ms to %.1f ms", 1000*whole.baseITL, 1000*whole.maxITL)
	wholeScene, pw := r.runScene(whole, "Without chunking: the GPU, step by step (ms from the prompt's arrival)",
		fmt.Sprintf("the stall: %.1f ms", 1000*stall), fmt.Sprintf("R1 waits %.1f ms", 1000*whole.maxITL))
	chunksText := fmt.Sprintf("%d %s of up to %d tokens", chunk.chunks, kit.Plural(chunk.chunks, "chunk", "chunks"), budget-chunk.running)
	worstChunk := fmt.Sprintf("the worst gap is %.1f ms", 1000*chunk.maxITL)
	chunkScene, pc := r.runScene(chunk, fmt.Sprintf("With a %d-token budget: the GPU, step by step (ms from the prompt's arrival)", budget),
		"", fmt.Sprintf("worst wait %.1f ms", 1000*chunk.maxITL))
	sweep, sweepMentions, sweepText := r.sweepScene()
	s.Steps = []lessons.Step{{
		Title: "Decodes in steady state",
		Narration: fmt.Sprintf("%d %s decoding on one %s with %s, each with %s tokens of context. Every step computes one token for each: %s.%s",
			whole.running, kit.Plural(whole.running, "request is", "requests are"), r.gpu.Name, r.model.Name, kit.Comma(r.context), steadyText, kit.PrecisionNote(r.e)),
		Scenes:   []scene.Scene{steady, r.steadyCards()},
		Mentions: steadyMentions,
	}, {
		Title: "Without chunking: one long step",
		Narration: fmt.Sprintf("A %s-token prompt arrives. With chunked prefill off, vLLM schedules the whole prompt in one step, alongside the decodes. %s (the article says %d ms), "+
			"and no decode gets a token until it ends: the worst gap between tokens %s. The prompt's first token comes %.1f ms after it arrived.",
			kit.Comma(long), stallText, articleStallMS, worstWhole, 1000*whole.ttftLong),
		Scenes: []scene.Scene{wholeScene, r.cards(whole), itlWhole},
		Mentions: []scene.Mention{kit.Mention(stallText, "gpu", kit.SpanRef(laneDecode, pw.first)),
			kit.Mention(worstWhole, "gpu", kit.SpanRef(laneGaps, pw.worstGap))},
	}, {
		Quiz: lessons.ChoiceQuiz(fmt.Sprintf("Now cut the prompt into chunks with a %d-token budget. Will its first token come sooner or later than in one step?", budget),
			[]string{"sooner", "later"}, map[bool]string{true: "later", false: "sooner"}[chunk.ttftLong > whole.ttftLong],
			"Each chunk shares its step with the decodes and pays for reading the weights again, so the prompt finishes later; the decodes stop waiting."),
		Title: fmt.Sprintf("With a %d-token budget: chunks", budget),
		Narration: fmt.Sprintf("With chunked prefill, each step first serves the %d running decodes, then gives the rest of the %d-token budget to the prompt: %s. "+
			"%s, so %s; %s.",
			chunk.running, budget, chunksText, r.longestStep(), worstChunk, r.firstTokenPrice()),
		Scenes: []scene.Scene{chunkScene, r.cards(chunk), itlBoth},
		Mentions: []scene.Mention{kit.Mention(chunksText, "gpu", kit.SpanRef(lanePrefill, pc.firstChunk)),
			kit.Mention(worstChunk, "gpu", kit.SpanRef(laneGaps, pc.worstGap))},
	}, {
		Title: "The trade-off",
		Narration: "Small budgets keep every step short (smooth ITL) but cut the prompt into many chunks, each paying the weights' memory traffic again, so its first token comes later. " +
			"Large budgets approach the unchunked stall. Around the GPU's ridge point a chunk costs little more than a decode step." + sweepText,
		Scenes:   []scene.Scene{sweep},
		Mentions: sweepMentions,
	}, {
		Title:     "Article claim vs this model",
		Narration: fmt.Sprintf("The article's 80 ms stall for a 4,000-token prefill; this model gives %.1f ms for %s on %s. Change the GPU or model to see how the stall scales with FLOPs.", 1000*stall, r.model.Name, r.gpu.Name),
		Scenes:    []scene.Scene{kit.ClaimsTable(s.Claims)},
	}}
	kit.IndexCursors(s.Steps)
	s.Work = r.work
	return s
}

// longestStep says how the chunked run's longest step compares with a
// decode step and with the whole-prefill step; which sentence holds
// depends on the budget (at 256 tokens the longest step is 1.2x a decode
// step, at 2,048 it is 6.9x), so the figures choose it.
func (r chunkedPrefillRun) longestStep() string {
	longest, base, stall := r.chunk.longest, r.whole.baseITL, r.stall()
	switch {
	case longest >= 0.9*stall:
		whole := "nearly the whole prompt"
		if r.chunk.chunks == 1 {
			whole = "the whole prompt"
		}
		return fmt.Sprintf("The budget holds %s: the longest step, %.1f ms, is about as long as the whole-prefill step's %.1f ms", whole, 1000*longest, 1000*stall)
	case longest <= 1.5*base:
		return fmt.Sprintf("No step is much longer than a decode step (the longest takes %.1f ms against %.1f ms)", 1000*longest, 1000*base)
	default:
		return fmt.Sprintf("The longest step takes %.1f ms, %.1f× a decode step of %.1f ms but %.0f%% of the whole-prefill step's %.1f ms",
			1000*longest, longest/base, 1000*base, 100*longest/stall, 1000*stall)
	}
}

// firstTokenPrice says what chunking costs the long prompt's first token:
// nothing when the budget holds it whole.
func (r chunkedPrefillRun) firstTokenPrice() string {
	if r.chunk.ttftLong > r.whole.ttftLong+0.00005 {
		return fmt.Sprintf("the price is a later first token for the long prompt, %.1f ms instead of %.1f ms", 1000*r.chunk.ttftLong, 1000*r.whole.ttftLong)
	}
	return fmt.Sprintf("the long prompt's first token comes when it would without chunking, after %.1f ms", 1000*r.chunk.ttftLong)
}

// sweepScene is the budget sweep with the lesson's own budget marked on
// both curves, when the sweep has it.
func (r chunkedPrefillRun) sweepScene() (scene.Scene, []scene.Mention, string) {
	sc := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "sweep", Title: "Token budget: long prompt's TTFT vs worst decode ITL", Chart: r.sweepChart()})
	for i, p := range r.sweep {
		if p.budget != r.budget {
			continue
		}
		ttft := fmt.Sprintf("its first token after %.1f ms", 1000*p.ttft)
		worst := fmt.Sprintf("the decodes' worst gap is %.1f ms", 1000*p.worstITL)
		tRef, wRef := "point:"+sweepTTFT+":"+strconv.Itoa(i), "point:"+sweepITL+":"+strconv.Itoa(i)
		sc.Marks = []scene.Mark{kit.MarkRef(tRef, fmt.Sprintf("TTFT %.1f ms", 1000*p.ttft)), kit.MarkRef(wRef, fmt.Sprintf("worst gap %.1f ms", 1000*p.worstITL))}
		return sc, []scene.Mention{kit.Mention(ttft, "sweep", tRef), kit.Mention(worst, "sweep", wRef)},
			fmt.Sprintf(" At your budget of %s tokens the prompt gets %s and %s.", kit.Comma(r.budget), ttft, worst)
	}
	return sc, nil, ""
}
