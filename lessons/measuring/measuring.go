// Package measuring holds the lesson measuring: the comparison report (003).
// A load sweep: the same chat-like workload at increasing request rates,
// served by the vLLM v1 scheduler on one GPU, measured the way the report
// prescribes — throughput against TTFT and ITL percentiles — plus goodput
// under a latency SLO.
package measuring

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "measuring",
	Title:   "Measuring a server: throughput, latency percentiles and goodput",
	Part:    "Report 003: benchmarking methodology",
	Summary: "Sweep the request rate: throughput rises, then TTFT explodes. Read p50/p95/p99 TTFT and ITL, and goodput under an SLO.",
	Engine: "vLLM v1 scheduler (core/scheduler) priced by core/hardware's step model with CUDA-graph replay and overlapped host work; " +
		"Poisson arrivals, long-tailed chat lengths (core/workload, illustrative, not fitted to a trace).",
	Group: "whole", Rank: 10, Thumb: scene.KindChart,
	Terms: []lessons.Term{
		{Term: "TTFT", Aliases: []string{"time to first token"}, Definition: "Time from a request's arrival to its first output token.", Find: "TTFT"},
		{Term: "TPOT", Aliases: []string{"time per output token"}, Definition: "Mean gap between a request's output tokens after the first.", Find: "TPOT"},
		{Term: "goodput", Definition: "Requests per second that meet the latency objective (TTFT and TPOT).", Find: "Goodput"},
		{Term: "throughput", Definition: "Tokens (or requests) served per second.", Find: "throughput"},
		{Term: "SLO", Aliases: []string{"service level objective"}, Definition: "The latency a request must meet to count as served well.", Find: "SLO"},
	},
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam, kit.TPParam(), kit.WeightParam, kit.GraphParam,
		{Key: "duration_s", Label: "Arrival window per rate", Unit: "s", Help: "Requests arrive for this long at each rate (at most 3,000 per rate), then the server drains.", Kind: lessons.Float, Default: 20, Min: 1, Max: 600, Step: 1},
		{Key: "rate_min", Label: "Lowest rate", Unit: "req/s", Kind: lessons.Float, Default: 2, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "rate_max", Label: "Highest rate", Unit: "req/s", Kind: lessons.Float, Default: 128, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "points", Label: "Rates measured", Kind: lessons.Int, Default: 7, Min: 2, Max: 12, Step: 1},
		{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Help: "MLPerf's interactive Llama-2-70B limit is 450 ms; 0 for none (Sarathi-Serve's SLO bounds only the gaps between tokens).", Kind: lessons.Float, Default: 450, Min: 0, Max: 60000, Step: 1, Zero: "none"},
		{Key: "slo_tpot_ms", Label: "SLO: time per output token", Unit: "ms", Help: "MLPerf's interactive limit is 40 ms; 0 for none.", Kind: lessons.Float, Default: 40, Min: 0, Max: 10000, Step: 1, Zero: "none"},
		{Key: "max_num_seqs", Label: "max_num_seqs", Help: "Most requests running at once. vLLM's default for `vllm serve` is 1,024 on H100, H200 and B200, 256 on A100, L4 and L40S.", Kind: lessons.Int, Default: 1024, Min: 1, Max: 2048, Step: 1},
		{Key: "max_num_batched_tokens", Label: "max_num_batched_tokens", Unit: "tokens", Help: "Most tokens one step computes. vLLM's default for `vllm serve` is 8,192 on H100, H200 and B200, 2,048 on A100, L4 and L40S.", Kind: lessons.Int, Default: 8192, Min: 64, Max: 65536, Step: 64},
		kit.SLOKnobs[0], kit.SLOKnobs[1],
		kit.PriceParam, kit.PowerParam,
		{Key: "compare_budget", Label: "Compare capacity at budget", Unit: "tokens", Help: "Also search the capacity at this max_num_batched_tokens, to compare chunk sizes (Sarathi-Serve's experiment); 0 for none.", Kind: lessons.Int, Default: 0, Min: 0, Max: 65536, Step: 64},
		{Key: "lengths", Label: "Request lengths", Help: "chat: the lab's illustrative chat lengths (long-tailed, prompts around 200 tokens, outputs around 200). sharegpt-8k: the 30,731 requests of ShareGPT (openchat_sharegpt4) that Sarathi-Serve's chat experiments replay, prompts around 1,730 tokens and outputs around 415, prompt + output ≤ 8,192.",
			Kind: lessons.Choice, Choices: []string{"chat", "sharegpt-8k"}},
		kit.SeedParam,
	},
	Check: kit.CheckingCosts(checkMeasuring),
	Sim:   sim{},
	// The sweep's bound, the capacity searches' (kit.SearchMaxWork) and
	// the measured run's replay: about 2 s of CPU natively (BENCHMARKS.md).
	MaxWork: measuringMaxWork + kit.SearchMaxWork + measuredReplayMaxWork,
	// The declared corners at the edge of the bound, and (the last) the
	// heaviest settings `make bench-corners`' seeded search found
	// (BENCHMARKS.md, "Worst settings found by search").
	HeavyCorners: []map[string]string{
		{"duration_s": "600", "rate_max": "1000", "rate_min": "600", "points": "2"},
		{"duration_s": "28", "points": "12", "max_num_seqs": "2048", "max_num_batched_tokens": "65536"},
		{"max_num_seqs": "2", "max_num_batched_tokens": "64", "duration_s": "9"},
		{"duration_s": "306", "rate_min": "0.1", "rate_max": "2", "points": "12"},
		{"duration_s": "71"},
		{"duration_s": "38", "graph_mode": "none"},
		// TP 8 and FP8 weights: more, shorter steps, each with two
		// all-reduces a layer.
		{"duration_s": "38", "graph_mode": "none", "tp": "8", "weight_dtype": "fp8"},
	},
}

func init() { lessons.Register(lesson) }

// maxRequestsPerRate bounds the work of one point of the sweep.
const maxRequestsPerRate = 3000

// Work bound: Script.Work counts each step as StepWork units, each step
// priced kernel by kernel StreamedWork more, and each request advanced by
// a step as one (PricedStepsWork). measuringWorkLimit is what Check lets
// the estimate reach, below MaxWork to leave room for preemptions and for
// the estimate's error (within 10% on the settings measured).
const (
	measuringMaxWork   = 5_000_000
	measuringWorkLimit = 4_000_000
)

// checkMeasuring refuses inverted rates, a token budget below
// max_num_seqs (vLLM refuses it too), a model whose weights do not fit
// and sweeps whose work would exceed the bound.
func checkMeasuring(v lessons.Values) error {
	if v.Float("rate_min") >= v.Float("rate_max") {
		return lessons.Relation("rate_min", strconv.FormatFloat(v.Float("rate_min"), 'g', -1, 64), fmt.Sprintf("below rate_max (%g)", v.Float("rate_max")), "rate_max")
	}
	seqs, budget := v.Int("max_num_seqs"), v.Int("max_num_batched_tokens")
	if budget < seqs {
		return lessons.Relation("max_num_batched_tokens", strconv.Itoa(budget), fmt.Sprintf("at least max_num_seqs (%d), as vLLM requires", seqs), "max_num_seqs")
	}
	if other := v.Int("compare_budget"); other != 0 && other < seqs {
		return lessons.Relation("compare_budget", strconv.Itoa(other), fmt.Sprintf("0 (none) or at least max_num_seqs (%d), as vLLM requires of a token budget", seqs), "max_num_seqs")
	}
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	if err := kit.CheckTP(v, m); err != nil {
		return err
	}
	lengths, err := lengthsOf(v, m)
	if err != nil {
		return err
	}
	longest := lengths.longest
	fit := kit.EngineFit(v, g, m)
	fit.BatchedTokens, fit.KVTokens, fit.Positions = budget, int64(longest), longest
	if err := kit.CheckFit(v, fit,
		kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "model", hardware.LimitPositions: "model"}); err != nil {
		return err
	}
	e, err := kit.NewEngineAt(v, 16, v.Int("max_num_batched_tokens"))
	if err != nil {
		return err
	}
	step := e.Timer(seqs, budget).StepSeconds([]scheduler.Work{{NewTokens: 1, Context: lengths.promptMedian}})
	reqs, est := measuringWork(v, step, lengths, e)
	if est > measuringWorkLimit {
		return lessons.Relation("duration_s", v.TextOf("duration_s"), fmt.Sprintf("a sweep that re-simulates in about a second: %s requests (%s rates, each rate × duration_s, at most 3,000) "+
			"of these lengths with max_num_seqs = %d and max_num_batched_tokens = %d come to about %s units of work (each step 8, each step priced kernel by kernel %d more (graph_mode %s, %d layers), each request in a step 1), over the bound of %s; "+
			"shorten duration_s, lower rate_max or points, or raise max_num_seqs or max_num_batched_tokens", kit.Comma(reqs), v.TextOf("points"), seqs, budget, kit.Comma(int(est)),
			kit.StreamedWorkTP(m, kit.WorkerTP(v)), v.Choice("graph_mode"), m.Layers, kit.Comma(measuringWorkLimit)))
	}
	if other := v.Int("compare_budget"); other != 0 {
		if _, err := kit.NewEngineAt(v, 16, other); err != nil {
			return lessons.Relation("compare_budget", strconv.Itoa(other), "a budget whose activations leave room for the KV cache ("+err.Error()+")", "model")
		}
	}
	return nil
}

// sweepRates are the rates the sweep serves and each one's request count.
func sweepRates(v lessons.Values) (rates []float64, counts []int) {
	for _, rate := range kit.Logspace(v.Float("rate_min"), v.Float("rate_max"), v.Int("points")) {
		rates = append(rates, rate)
		counts = append(counts, requestsAt(v, rate))
	}
	return rates, counts
}

// requestsAt is how many requests a run at rate serves: those arriving in
// duration_s, between 10 and maxRequestsPerRate.
func requestsAt(v lessons.Values, rate float64) int {
	return min(maxRequestsPerRate, max(10, int(rate*v.Float("duration_s"))))
}

// measuringWork estimates the sweep's Script.Work from the requests it will
// serve, drawn as Build draws them. Each request is advanced once per
// output token and once per prefill chunk. A rate's steps are those
// advances divided by the requests running at once, estimated as rate ×
// a request's time alone (its advances × one decode step at batch 1),
// between 1 and max_num_seqs; each step counts StepWork, and each the
// CUDA-graph dispatcher streams StreamedWork more (PricedStepsWork): every
// step under graph_mode none or piecewise or when more run than the
// largest captured size, else the steps that carry a prefill chunk (at
// most one per chunk), which a full graph takes only in FULL mode within
// the captured sizes. Within 15% of the counted work on the settings in
// BENCHMARKS.md, and above it when batches grow (a larger batch makes each
// step longer, so fewer steps).
func measuringWork(v lessons.Values, step float64, lengths lengthSource, e *kit.Engine) (requests int, work float64) {
	rates, counts := sweepRates(v)
	for i, rate := range rates {
		work += pointWork(e, v.Int("max_num_seqs"), v.Int("max_num_batched_tokens"), step, lengths.draw(counts[i], rate, uint64(v.Int("seed"))), rate)
		requests += counts[i]
	}
	return requests, work
}

// pointWork is measuringWork's estimate for one run of reqs, arriving at
// rate, with these batch limits.
func pointWork(e *kit.Engine, maxSeqs, budget int, step float64, reqs []workload.Request, rate float64) float64 {
	seqs := float64(maxSeqs)
	d := cudagraph.New(e.Mode, maxSeqs, budget)
	captured := float64(d.MaxCaptureSize())
	advances, chunks := 0, 0
	count := len(reqs)
	for _, q := range reqs {
		c := (q.Prompt + budget - 1) / budget
		advances += q.Output + c
		chunks += c
	}
	running := rate * float64(advances) / float64(count) * step
	running = max(1, min(seqs, running))
	steps := float64(advances) / running
	streamed := min(steps, float64(chunks))
	switch {
	case e.Mode == cudagraph.None || e.Mode == cudagraph.Piecewise || running > captured:
		streamed = steps
	case e.Mode == cudagraph.Full && budget <= d.MaxCaptureSize():
		streamed = 0
	}
	return float64(advances) + steps*kit.StepWork + streamed*float64(kit.StreamedWorkTP(e.Model, e.TP))
}

// loadPoint is one rate of the sweep.
type loadPoint struct {
	rate float64
	sum  scheduler.Summary
	// What held requests back, from the scheduler's steps: queued counts
	// the steps after which requests waited; of those, atSeqs the ones
	// with max_num_seqs requests running, fullBudget the ones that spent
	// the whole token budget. peakRunning is the most requests running.
	queued, atSeqs, fullBudget, peakRunning int
	// stepPreemptions counts the requests the steps preempted (the
	// narration's count comes from the requests' own).
	stepPreemptions int
	// missTTFT counts the requests over the TTFT limit; missTPOT those
	// within it but over the TPOT limit.
	missTTFT, missTPOT int
	// cost is what the rate's run cost (kit.CostOf); busy the seconds its
	// steps ran.
	cost kit.RunCost
	busy float64
	// inQuarter and inHalf are the requests in the server (running or
	// waiting) a quarter and half way through the arrivals, quarter and
	// half seconds after the first: a server that keeps up holds about as
	// many at both; one that falls behind holds ever more.
	inQuarter, inHalf int
	quarter, half     float64
}

// fallsBehind reports whether requests piled up in the server while they
// arrived: it held at least 1.5 times as many half way through the
// arrivals as a quarter of the way, and the pile grew by more than a
// quarter of the requests that arrived in between (at the default sweep,
// 201 to 420 at 64 req/s, 73 to 88 at 32 req/s).
func (p loadPoint) fallsBehind() bool {
	grew := float64(p.inHalf - p.inQuarter)
	return float64(p.inHalf) >= 1.5*float64(p.inQuarter) && grew > 0.25*p.rate*(p.half-p.quarter)
}

// pointOf summarises one rate's run.
func pointOf(rate float64, s *scheduler.Scheduler, cfg scheduler.Config, slo scheduler.SLO) loadPoint {
	p := loadPoint{rate: rate, sum: s.Summary(slo)}
	for _, m := range s.Requests() {
		switch {
		case m.TTFT > slo.TTFT:
			p.missTTFT++
		case m.TPOT > slo.TPOT:
			p.missTPOT++
		}
	}
	first, last := math.Inf(1), math.Inf(-1)
	for _, m := range s.Requests() {
		first, last = min(first, m.Arrival), max(last, m.Arrival)
	}
	p.quarter, p.half = (last-first)/4, (last-first)/2
	for _, st := range s.Steps() {
		if st.Start <= first+p.quarter {
			p.inQuarter = st.Running + st.Waiting
		}
		if st.Start <= first+p.half {
			p.inHalf = st.Running + st.Waiting
		}
		p.peakRunning = max(p.peakRunning, st.Running)
		p.stepPreemptions += len(st.Preempted)
		if st.Waiting == 0 {
			continue
		}
		p.queued++
		if st.Running >= cfg.MaxNumSeqs {
			p.atSeqs++
		}
		if st.PrefillTokens+st.DecodeTokens >= cfg.MaxNumBatchedTokens {
			p.fullBudget++
		}
	}
	return p
}

// measuringRun is the load sweep the lesson ran.
type measuringRun struct {
	e     *kit.Engine
	gpu   hardware.GPU
	model hardware.Model
	// duration is the arrival window per rate in seconds; lo and hi the
	// rates swept; sloTTFT and sloTPOT the SLO in ms, as the knobs say.
	duration, lo, hi, sloTTFT, sloTPOT float64
	// lengths are the requests' lengths.
	lengths lengthSource
	points  []loadPoint
	// seqs and budget are max_num_seqs and max_num_batched_tokens.
	seqs, budget int
	// best is the point with the highest goodput (the first of equals).
	best loadPoint
	// work counts every rate's steps and the requests they advanced.
	work int64
	// objective is the SLO the capacity is searched under; capacity the
	// search at max_num_batched_tokens, compare the one at compare_budget
	// (nil when 0); gpus the GPUs serving (capacity per GPU divides by it).
	objective slo.Objective
	capacity  capacityResult
	compare   *capacityResult
	gpus      int
	// searchSpent is the searches' search cost (kit.Engine.WorkAndSearchCost).
	searchSpent int64
	// measured is a published vLLM run replayed (measured.go).
	measured measuredReplay
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runMeasuring(v))
}

// runMeasuring serves a Poisson chat workload at each rate of the sweep.
func runMeasuring(v lessons.Values) (measuringRun, error) {
	e, err := kit.NewEngineAt(v, 16, v.Int("max_num_batched_tokens"))
	if err != nil {
		return measuringRun{}, err
	}
	r := measuringRun{e: e, gpu: e.GPU, model: e.Model, duration: v.Float("duration_s"), lo: v.Float("rate_min"), hi: v.Float("rate_max"),
		sloTTFT: v.Float("slo_ttft_ms"), sloTPOT: v.Float("slo_tpot_ms"), seqs: v.Int("max_num_seqs"), budget: v.Int("max_num_batched_tokens")}
	goal := scheduler.SLO{TTFT: sweepLimit(r.sloTTFT), TPOT: sweepLimit(r.sloTPOT)}
	if r.lengths, err = lengthsOf(v, e.Model); err != nil {
		return measuringRun{}, err
	}
	cfg := scheduler.Config{MaxNumBatchedTokens: v.Int("max_num_batched_tokens"), MaxNumSeqs: v.Int("max_num_seqs"), ChunkedPrefill: true,
		BlockSize: 16, NumBlocks: e.KVBlocks}
	// Prefix caching is left off: these prompts share no prefix, so it
	// would find nothing and only cost simulation time.
	rates, counts := sweepRates(v)
	usd, watts := kit.CostRates(v, e.GPU)
	spend := kit.NewSpend(kit.SearchBudget)
	for i, rate := range rates {
		var in []scheduler.Request
		for _, q := range r.lengths.draw(counts[i], rate, uint64(v.Int("seed"))) {
			in = append(in, scheduler.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output})
		}
		s, err := scheduler.New(cfg, e.Timer(cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens), in)
		if err != nil {
			return measuringRun{}, lessons.Relation("max_num_batched_tokens", strconv.Itoa(cfg.MaxNumBatchedTokens), "a budget and KV pool that hold every request ("+err.Error()+")")
		}
		if err := s.Run(); err != nil {
			return measuringRun{}, err
		}
		work, cost := e.WorkAndSearchCost(s.Steps(), cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens)
		r.work += work
		spend.Take(cost)
		p := pointOf(rate, s, cfg, goal)
		input, output, held := kit.ServedTokens(s.Requests())
		pool := kit.StepsPool(e.TP, held, s.Steps())
		p.busy = pool.Busy.Prefill + pool.Busy.Decode
		p.cost = kit.CostOf(usd, watts, []kit.GPUPool{pool}, input, output)
		r.points = append(r.points, p)
	}
	r.best = r.points[0]
	for _, p := range r.points {
		if p.sum.GoodputReqPerS > r.best.sum.GoodputReqPerS {
			r.best = p
		}
	}
	// One model instance: one GPU, or a TP group of tp.
	r.gpus = e.TP
	r.objective = kit.ObjectiveOf(v)
	seed := uint64(v.Int("seed"))
	if r.capacity, err = searchCapacity(e, r.seqs, r.budget, r.lengths, r.objective, seed, spend); err != nil {
		return measuringRun{}, err
	}
	r.work += r.capacity.work
	if other := v.Int("compare_budget"); other != 0 {
		o, err := kit.NewEngineAt(v, 16, other)
		if err != nil {
			return measuringRun{}, err
		}
		c, err := searchCapacity(o, r.seqs, other, r.lengths, r.objective, seed, spend)
		if err != nil {
			return measuringRun{}, err
		}
		r.compare = &c
		r.work += c.work
	}
	r.searchSpent = kit.SearchBudget - spend.Left
	if r.measured, err = replayMeasured(); err != nil {
		return measuringRun{}, err
	}
	r.work += r.measured.work
	return r, nil
}

// sweepLimit is a latency limit in ms as the sweep's goodput reads it, in
// seconds: none (0) is no limit.
func sweepLimit(ms float64) float64 {
	if ms == 0 {
		return math.Inf(1)
	}
	return ms / 1000
}

func (r measuringRun) first() loadPoint { return r.points[0] }
func (r measuringRun) last() loadPoint  { return r.points[len(r.points)-1] }

// percentileChart plots a summary's percentiles against throughput, the
// p99 points labelled with their offered rate, and the SLO as a line.
func (r measuringRun) percentileChart(name string, yLog bool, f func(scheduler.Summary) scheduler.Percentiles, slo []scene.Guide) *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "throughput", XUnit: "output tok/s", YLabel: name, YUnit: "ms", YLog: yLog,
		Note:   "One point per offered rate (labelled on p99): throughput grows with load until the server saturates, then only latency does.",
		Guides: slo}
	for _, q := range []struct {
		label string
		of    func(scheduler.Percentiles) float64
	}{{"p50", func(p scheduler.Percentiles) float64 { return p.P50 }}, {"p95", func(p scheduler.Percentiles) float64 { return p.P95 }}, {"p99", func(p scheduler.Percentiles) float64 { return p.P99 }}} {
		sr := scene.Series{Name: q.label + " " + name}
		for _, p := range r.points {
			sr.X = append(sr.X, kit.Round2(p.sum.OutputTokensPerS))
			sr.Y = append(sr.Y, kit.Round2(1000*q.of(f(p.sum))))
			if q.label == "p99" {
				sr.Labels = append(sr.Labels, kit.RateText(p.rate))
			}
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

// goodput chart series names (marks refer to them).
const (
	seriesThroughput = "throughput"
	seriesGoodput    = "goodput (meets the SLO)"
)

// goodputChart plots throughput and goodput against the offered rate.
func (r measuringRun) goodputChart() *scene.Chart {
	good := &scene.Chart{Type: scene.Line, XLabel: "offered load", XUnit: "req/s", YLabel: "requests per second", YUnit: "req/s", Series: []scene.Series{{Name: seriesThroughput}, {Name: seriesGoodput}},
		Note: "Requests served per second, and those that met the SLO: goodput rises with the load, peaks, then falls as queues build."}
	for _, p := range r.points {
		good.Series[0].X, good.Series[0].Y = append(good.Series[0].X, kit.Round2(p.rate)), append(good.Series[0].Y, kit.Round2(p.sum.RequestsPerS))
		good.Series[1].X, good.Series[1].Y = append(good.Series[1].X, kit.Round2(p.rate)), append(good.Series[1].Y, kit.Round2(p.sum.GoodputReqPerS))
	}
	return good
}

func (r measuringRun) metrics() []lessons.Metric {
	first, last, best := r.first(), r.last(), r.best
	ms := []lessons.Metric{
		{Key: "max_throughput_tok_s", Label: "Output throughput at the highest rate", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(last.sum.OutputTokensPerS)},
		{Key: "best_goodput_req_s", Label: "Best goodput over the sweep", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(best.sum.GoodputReqPerS)},
		{Key: "best_goodput_rate", Label: "Offered rate with the best goodput", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(best.rate)},
		{Key: "ttft_p50_ms_low", Label: "p50 TTFT at the lowest rate", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(first.sum.TTFT.P50)},
		{Key: "ttft_p99_ms_low", Label: "p99 TTFT at the lowest rate", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(first.sum.TTFT.P99)},
		{Key: "ttft_p99_ms_high", Label: "p99 TTFT at the highest rate", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(last.sum.TTFT.P99)},
		{Key: "itl_p50_ms_low", Label: "p50 ITL at the lowest rate", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(first.sum.ITL.P50)},
		{Key: "itl_p99_ms_high", Label: "p99 ITL at the highest rate", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(last.sum.ITL.P99)},
		{Key: "slo_attainment_pct_high", Label: "Requests meeting the SLO at the highest rate", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * last.sum.SLOAttainment)},
	}
	ms = append(append(ms, kit.LatencyReportOf(first.sum).MetricsAt("_low", " at the lowest rate")...), kit.LatencyReportOf(last.sum).MetricsAt("_high", " at the highest rate")...)
	under := kit.SLOText(r.objective)
	ms = append(ms,
		lessons.Metric{Key: "capacity_req_s", Label: fmt.Sprintf("Capacity: the highest rate meeting %s in steady state, at max_num_batched_tokens %s (median of the seeds)", under, kit.Comma(r.budget)), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(r.capacity.rate())},
		lessons.Metric{Key: "capacity_spread_pct", Label: "Capacity: the seeds' range over the median", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(kit.SpreadPct(r.capacity.cap))},
		lessons.Metric{Key: "capacity_per_gpu_req_s", Label: fmt.Sprintf("Capacity per GPU (%d %s) under %s", r.gpus, kit.Plural(r.gpus, "GPU", "GPUs"), under), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(slo.PerGPU(r.capacity.rate(), r.gpus))})
	ms = append(ms, r.last().cost.MetricsAt(" at the highest rate")...)
	if c := r.compare; c != nil {
		ms = append(ms, lessons.Metric{Key: "capacity_compare_req_s", Label: fmt.Sprintf("Capacity under %s, at compare_budget %s", under, kit.Comma(c.budget)), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(c.rate())})
		if c.rate() > 0 {
			ms = append(ms, lessons.Metric{Key: "capacity_ratio", Label: fmt.Sprintf("Capacity at max_num_batched_tokens %s over capacity at %s, under %s", kit.Comma(r.budget), kit.Comma(c.budget), under), Unit: "×", Value: kit.Round2(r.capacity.rate() / c.rate())})
		}
	}
	return ms
}

// pointCards are one rate's figures.
func pointCards(p loadPoint) scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "point", Title: fmt.Sprintf("At %.3g req/s offered", p.rate), Cards: []scene.Card{
		{Label: "output throughput", Value: kit.Round2(p.sum.OutputTokensPerS), Unit: "tok/s"},
		{Label: "p50 TTFT", Value: kit.Ms(p.sum.TTFT.P50), Unit: "ms"},
		{Label: "p99 TTFT", Value: kit.Ms(p.sum.TTFT.P99), Unit: "ms"},
		{Label: "p50 ITL", Value: kit.Ms(p.sum.ITL.P50), Unit: "ms"},
		{Label: "p99 ITL", Value: kit.Ms(p.sum.ITL.P99), Unit: "ms"},
		{Label: "meets the SLO", Value: kit.Round2(100 * p.sum.SLOAttainment), Unit: "%"},
		{Label: "mean running", Value: kit.Round2(p.sum.MeanRunningAtStep)},
		{Label: "preemptions", Value: float64(p.sum.Preemptions)},
	}}
}

// saturated reports whether requests queue at p: the TTFT tail has grown
// four-fold over the lowest rate, or most requests miss the SLO and more
// of them on TTFT than on TPOT alone.
func (r measuringRun) saturated(p loadPoint) bool {
	return p.sum.TTFT.P99 > 4*r.first().sum.TTFT.P99 || (p.sum.SLOAttainment < 0.5 && p.missTTFT >= p.missTPOT)
}

// regime says how the server fares at p and, once requests queue, what
// holds them back.
func (r measuringRun) regime(p loadPoint) string {
	tpot := fmt.Sprintf("%s of %s requests miss the TPOT limit with their TTFT within it", kit.Comma(p.missTPOT), kit.Comma(p.sum.Requests))
	switch {
	case p.sum.SLOAttainment < 0.5 && p.missTTFT < p.missTPOT:
		return fmt.Sprintf("decode is too slow for the SLO: with up to %s running, the median gap between tokens is %.1f ms against the %g ms allowed, and %s",
			kit.Comma(p.peakRunning), 1000*p.sum.ITL.P50, r.sloTPOT, tpot)
	case p.sum.SLOAttainment < 0.5:
		return "past saturation: " + r.limit(p) + ", so the queue grows for as long as requests keep coming, and TTFT is mostly waiting"
	case r.saturated(p):
		return "near saturation: the tail of TTFT grows first, as bursts queue (" + r.limit(p) + ")"
	case p.fallsBehind():
		// A request is admitted at once (TTFT stays short), so the backlog
		// is in the running batch, not the queue: the run's served rate,
		// not its TTFT, shows it.
		missed := ""
		if p.missTPOT > 0 {
			missed = ", and " + tpot
		}
		return fmt.Sprintf("requests barely wait to be admitted, yet the server falls behind: %s requests were in it %.0f s into the arrivals and %s at %.0f s, up to %s running at once with every decode step carrying them all. "+
			"Over the whole run, %.1f s to the last token, it serves %.1f req/s of the %.3g offered (the throughput curve later), and a longer run at this rate would pile up more%s",
			kit.Comma(p.inQuarter), p.quarter, kit.Comma(p.inHalf), p.half, kit.Comma(p.peakRunning), p.sum.Makespan, p.sum.RequestsPerS, p.rate, missed)
	case p.missTPOT > p.missTTFT && 20*p.missTPOT >= p.sum.Requests:
		return fmt.Sprintf("requests barely queue, but up to %s run at once and every decode step carries them all, so %s", kit.Comma(p.peakRunning), tpot)
	}
	return "the server keeps up: requests barely queue, TTFT is one prefill"
}

// limit says what held requests back at p, from the scheduler's steps: a
// full KV cache (preemptions), a full batch (max_num_seqs running), a
// spent token budget, or else only the steps' length.
func (r measuringRun) limit(p loadPoint) string {
	switch {
	case p.sum.Preemptions > 0:
		return fmt.Sprintf("the KV cache fills (%s preemptions) and requests wait for blocks", kit.Comma(p.sum.Preemptions))
	case p.peakRunning >= r.seqs:
		return fmt.Sprintf("the batch fills: max_num_seqs (%s) requests run while others wait", kit.Comma(r.seqs))
	case p.fullBudget > 0:
		return fmt.Sprintf("steps spend their whole %s-token budget", kit.Comma(r.budget))
	}
	return fmt.Sprintf("steps lengthen as the batch grows (at most %s of max_num_seqs %s ran)", kit.Comma(p.peakRunning), kit.Comma(r.seqs))
}

// engineText is the engine's batch limits, and what vLLM would default to
// on this GPU when they differ.
func (r measuringRun) engineText() string {
	t := fmt.Sprintf("The engine runs at most %s requests at once (max_num_seqs) and %s tokens a step (max_num_batched_tokens)", kit.Comma(r.seqs), kit.Comma(r.budget))
	if note := kit.VLLMBatchNote(r.gpu, r.seqs, r.budget); note != "" {
		return t + "." + note
	}
	return t + ", vLLM's defaults on this GPU."
}

// batchClaim puts vLLM's batch defaults beside the run's, and where the
// sweep saturated with them.
func (r measuringRun) batchClaim() lessons.Claim {
	budget, seqs := kit.VLLMBatch(r.gpu)
	where := "no rate of the sweep saturates the server"
	if i := r.firstSaturated(); i >= 0 {
		where = fmt.Sprintf("the server saturates from %s: %s", kit.RateText(r.points[i].rate), r.limit(r.points[i]))
	}
	return lessons.Claim{
		What: "max_num_seqs and max_num_batched_tokens",
		Article: fmt.Sprintf("vLLM's defaults for `vllm serve` (get_batch_defaults): 1,024 sequences and 8,192 tokens on H100, H200 and B200; 256 and 2,048 on A100, L4 and L40S — %s and %s on the %s",
			kit.Comma(seqs), kit.Comma(budget), r.gpu.Name),
		Model: fmt.Sprintf("%s and %s; %s; best goodput at %s", kit.Comma(r.seqs), kit.Comma(r.budget), where, kit.RateText(r.best.rate)),
		Why: "The limits decide where a sweep saturates. A small max_num_seqs fills first and queues requests (TTFT fails first); a large one admits them, " +
			"so every decode step carries more sequences and ITL grows (TPOT can fail first) until the KV cache fills and requests are preempted.",
	}
}

// firstSaturated is the index of the first point near or past saturation,
// -1 if none.
func (r measuringRun) firstSaturated() int {
	for i, p := range r.points {
		if r.saturated(p) {
			return i
		}
	}
	return -1
}

// saturationText says where more load stops buying throughput, and why.
func (r measuringRun) saturationText() string {
	i := r.firstSaturated()
	if i < 0 {
		return fmt.Sprintf("no rate of this sweep saturates the server (at most %s requests ran at once); raise rate_max to find where it does.", kit.Comma(r.last().peakRunning))
	}
	p := r.points[i]
	behind := ""
	for _, q := range r.points[:i] {
		if q.fallsBehind() {
			behind = fmt.Sprintf(" (it falls behind already at %s, piling requests into the running batch rather than the queue)", kit.RateText(q.rate))
			break
		}
	}
	return fmt.Sprintf("more load buys throughput until the server saturates, here from %s%s, where %s; then it buys only latency.", kit.RateText(p.rate), behind, r.limit(p))
}

// pointStep narrates rate i of the sweep, its point marked on the TTFT
// chart; the last one asks a quiz.
func (r measuringRun) pointStep(i int, ttftChart *scene.Chart) lessons.Step {
	p := r.points[i]
	var quiz *lessons.Quiz
	if i == len(r.points)-1 {
		quiz = lessons.ChoiceQuiz(fmt.Sprintf("At %.3g req/s, will at least half of the requests meet the SLO (%s)?", p.rate, r.sweepSLOText()),
			[]string{"yes", "no"}, map[bool]string{true: "yes", false: "no"}[p.sum.SLOAttainment >= 0.5],
			fmt.Sprintf("%.0f%% do.", 100*p.sum.SLOAttainment))
	}
	regime := r.regime(p)
	cursor := kit.Round2(p.sum.OutputTokensPerS)
	withCursor := *ttftChart
	withCursor.Cursor = &cursor
	ttftText := fmt.Sprintf("TTFT p50 %.0f ms, p99 %.0f ms", 1000*p.sum.TTFT.P50, 1000*p.sum.TTFT.P99)
	ref := "point:p99 TTFT:" + strconv.Itoa(i)
	chart := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT", Chart: &withCursor},
		kit.MarkRef(ref, fmt.Sprintf("%s: p99 %.0f ms", kit.RateText(p.rate), 1000*p.sum.TTFT.P99)))
	return lessons.Step{
		Quiz:  quiz,
		Title: fmt.Sprintf("%.3g requests per second", p.rate),
		Narration: fmt.Sprintf("At %.3g req/s the server produces %s output tokens/s with %.1f requests running on average: %s. "+
			"%s; ITL p50 %.1f ms, p99 %.1f ms; %.0f%% of requests meet the SLO.",
			p.rate, kit.Comma(int(p.sum.OutputTokensPerS)), p.sum.MeanRunningAtStep, regime,
			ttftText, 1000*p.sum.ITL.P50, 1000*p.sum.ITL.P99, 100*p.sum.SLOAttainment),
		Scenes:   []scene.Scene{chart, pointCards(p)},
		Mentions: []scene.Mention{kit.Mention(ttftText, "ttft", ref)},
	}
}

func (r measuringRun) Script() *lessons.Script {
	// The SLO as a band: everything under it meets it (the TTFT axis is
	// logarithmic, so its band starts at 1 ms, below every point).
	var sloTTFT, sloTPOT []scene.Guide
	if r.sloTTFT > 0 {
		sloTTFT = append(sloTTFT, scene.Guide{ID: "slo", Axis: "y", From: min(1, r.sloTTFT/2), To: r.sloTTFT, Label: fmt.Sprintf("meets the SLO: TTFT ≤ %g ms", r.sloTTFT)})
	}
	if r.sloTPOT > 0 {
		sloTPOT = append(sloTPOT, scene.Guide{ID: "slo", Axis: "y", From: 0, To: r.sloTPOT, Label: fmt.Sprintf("meets the SLO on the mean gap: TPOT ≤ %g ms", r.sloTPOT)})
	}
	ttftChart := r.percentileChart("TTFT", true, func(s scheduler.Summary) scheduler.Percentiles { return s.TTFT }, sloTTFT)
	itlChart := r.percentileChart("ITL", false, func(s scheduler.Summary) scheduler.Percentiles { return s.ITL }, sloTPOT)
	s := &lessons.Script{Metrics: r.metrics()}
	s.Claims = []lessons.Claim{{
		What:    "How to benchmark a server",
		Article: "RPS under varying concurrency; TTFT and ITL at percentiles such as p95 and p99 (report 003)",
		Model:   fmt.Sprintf("%d rates from %g to %g req/s; p50/p95/p99 TTFT and ITL at each; goodput under %s", len(r.points), r.lo, r.hi, r.sweepSLOText()),
		Why:     "Same method. Goodput (DistServe) adds the one number a capacity planner needs: the rate the server sustains while meeting the SLO.",
	}, r.batchClaim(), r.sarathiClaim()}
	var mentions []scene.Mention
	var marks []scene.Mark
	sloText := r.sweepSLOText()
	if r.sloTTFT > 0 {
		ttftText := fmt.Sprintf("TTFT ≤ %g ms", r.sloTTFT)
		marks = append(marks, kit.MarkRef("guide:slo", "the SLO"))
		mentions = append(mentions, kit.Mention(ttftText, "ttft", "guide:slo"))
	}
	first := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT", Chart: ttftChart}, marks...)
	s.Steps = append(s.Steps, lessons.Step{
		Title: "A load sweep",
		Narration: fmt.Sprintf("For %g s at a time, %s arrive as a Poisson stream, at %d rates from %g to %g requests per second, on %s serving %s. "+
			"%s%s At each rate we record what a load generator would: output tokens per second, TTFT and ITL percentiles, and how many requests met the SLO (%s; TPOT is the mean gap between a request's output tokens).",
			r.duration, r.lengths.text(), len(r.points), r.lo, r.hi, r.e.OneWorkerText(), r.e.ModelText(), r.engineText(), kit.PrecisionNote(r.e), sloText),
		Scenes:   []scene.Scene{first, pointCards(r.first())},
		Mentions: mentions,
	})
	for i := range r.points {
		s.Steps = append(s.Steps, r.pointStep(i, ttftChart))
	}
	best := 0
	for i, p := range r.points {
		if p.rate == r.best.rate {
			best = i
		}
	}
	bestRef := "point:" + seriesGoodput + ":" + strconv.Itoa(best)
	bestText := fmt.Sprintf("Goodput peaks at %.2f req/s (offered %.3g req/s)", r.best.sum.GoodputReqPerS, r.best.rate)
	after := " and falls after: pushing more load makes fewer requests meet the SLO."
	switch {
	case r.best.sum.GoodputReqPerS == 0:
		bestText = "No request meets the SLO at any rate of this sweep"
		after = ": loosen the SLO or pick a faster GPU or smaller model to find the goodput peak."
	case best == len(r.points)-1:
		bestText = fmt.Sprintf("Goodput is highest at the last rate, %.2f req/s (offered %.3g req/s)", r.best.sum.GoodputReqPerS, r.best.rate)
		after = ": the sweep stops before it falls; raise rate_max to find the peak."
	}
	s.Steps = append(s.Steps, lessons.Step{
		Title: "Throughput against latency",
		Narration: fmt.Sprintf("Read the curves right to left: %s ITL grows with the batch (bigger decode steps, prefill chunks riding along); "+
			"TTFT explodes once requests queue. %s%s", r.saturationText(), bestText, after),
		Scenes: []scene.Scene{
			kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "goodput", Title: "Throughput and goodput against offered load", Chart: r.goodputChart()},
				kit.MarkRef(bestRef, fmt.Sprintf("best goodput: %.2f req/s", r.best.sum.GoodputReqPerS))),
			{Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT percentiles", Chart: ttftChart},
			{Kind: scene.KindChart, ID: "itl", Title: "Throughput vs ITL percentiles", Chart: itlChart},
		},
		Mentions: []scene.Mention{kit.Mention(bestText, "goodput", bestRef)},
	}, r.costStep(), r.capacityStep(), r.measured.step(), lessons.Step{
		Title:     "Article claim vs this model",
		Narration: "Report 003's method, applied to this sweep.",
		Scenes:    []scene.Scene{kit.ClaimsTable(s.Claims)},
	})
	kit.IndexCursors(s.Steps)
	s.Work = r.work
	return s
}

// sweepSLOText is the sweep's per-request SLO: "TTFT ≤ 450 ms and TPOT ≤
// 40 ms", one of them, or none.
func (r measuringRun) sweepSLOText() string {
	var parts []string
	if r.sloTTFT > 0 {
		parts = append(parts, fmt.Sprintf("TTFT ≤ %g ms", r.sloTTFT))
	}
	if r.sloTPOT > 0 {
		parts = append(parts, fmt.Sprintf("TPOT ≤ %g ms", r.sloTPOT))
	}
	if len(parts) == 0 {
		return "no TTFT or TPOT limit, so every request meets it"
	}
	return strings.Join(parts, " and ")
}
