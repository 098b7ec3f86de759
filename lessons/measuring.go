package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/scene"
)

// measuring: the comparison report (003). A load sweep: the same chat-like
// workload at increasing request rates, served by the vLLM v1 scheduler on
// one GPU, measured the way the report prescribes — throughput against TTFT
// and ITL percentiles — plus goodput under a latency SLO.
var measuring = &Lesson{
	Slug:    "measuring",
	Title:   "Measuring a server: throughput, latency percentiles and goodput",
	Part:    "Report 003: benchmarking methodology",
	Summary: "Sweep the request rate: throughput rises, then TTFT explodes. Read p50/p95/p99 TTFT and ITL, and goodput under an SLO.",
	Engine: "vLLM v1 scheduler (core/scheduler) priced by core/hardware's step model with CUDA-graph replay and overlapped host work; " +
		"Poisson arrivals, long-tailed chat lengths (core/workload, illustrative, not fitted to a trace).",
	Params: []Param{
		gpuParam, modelParam, graphParam,
		{Key: "duration_s", Label: "Arrival window per rate", Unit: "s", Help: "Requests arrive for this long at each rate (at most 3,000 per rate), then the server drains.", Kind: Float, Default: 20, Min: 1, Max: 600, Step: 1},
		{Key: "rate_min", Label: "Lowest rate", Unit: "req/s", Kind: Float, Default: 2, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "rate_max", Label: "Highest rate", Unit: "req/s", Kind: Float, Default: 64, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "points", Label: "Rates measured", Kind: Int, Default: 6, Min: 2, Max: 12, Step: 1},
		{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Help: "MLPerf's interactive Llama-2-70B limit is 450 ms.", Kind: Float, Default: 450, Min: 1, Max: 60000, Step: 1},
		{Key: "slo_tpot_ms", Label: "SLO: time per output token", Unit: "ms", Help: "MLPerf's interactive limit is 40 ms.", Kind: Float, Default: 40, Min: 1, Max: 10000, Step: 1},
		{Key: "max_num_seqs", Label: "max_num_seqs", Kind: Int, Default: 256, Min: 1, Max: 2048, Step: 1},
		{Key: "max_num_batched_tokens", Label: "max_num_batched_tokens", Unit: "tokens", Kind: Int, Default: 8192, Min: 64, Max: 65536, Step: 64},
		seedParam,
	},
	Check: func(v Values) error {
		if v.Float("rate_min") >= v.Float("rate_max") {
			return Relation("rate_min", strconv.FormatFloat(v.Float("rate_min"), 'g', -1, 64), fmt.Sprintf("below rate_max (%g)", v.Float("rate_max")))
		}
		return nil
	},
	Build: buildMeasuring,
}

func init() { register(measuring) }

// maxRequestsPerRate bounds the work of one point of the sweep.
const maxRequestsPerRate = 3000

// loadPoint is one rate of the sweep.
type loadPoint struct {
	rate float64
	sum  scheduler.Summary
}

// measuringRun is the load sweep the lesson ran.
type measuringRun struct {
	gpu   hardware.GPU
	model hardware.Model
	// duration is the arrival window per rate in seconds; lo and hi the
	// rates swept; sloTTFT and sloTPOT the SLO in ms, as the knobs say.
	duration, lo, hi, sloTTFT, sloTPOT float64
	// promptMedian and outputMedian describe the chat workload.
	promptMedian, outputMedian int
	points                     []loadPoint
	// best is the point with the highest goodput (the first of equals).
	best loadPoint
}

func buildMeasuring(v Values) (*Script, error) {
	r, err := runMeasuring(v)
	if err != nil {
		return nil, err
	}
	return r.script(), nil
}

// runMeasuring serves a Poisson chat workload at each rate of the sweep.
func runMeasuring(v Values) (measuringRun, error) {
	e, err := newEngine(v, 16)
	if err != nil {
		return measuringRun{}, err
	}
	r := measuringRun{gpu: e.gpu, model: e.model, duration: v.Float("duration_s"), lo: v.Float("rate_min"), hi: v.Float("rate_max"),
		sloTTFT: v.Float("slo_ttft_ms"), sloTPOT: v.Float("slo_tpot_ms")}
	slo := scheduler.SLO{TTFT: r.sloTTFT / 1000, TPOT: r.sloTPOT / 1000}
	prompts, outputs := workload.ChatPrompts(), workload.ChatOutputs()
	r.promptMedian, r.outputMedian = int(prompts.Median), int(outputs.Median)
	cfg := scheduler.Config{MaxNumBatchedTokens: v.Int("max_num_batched_tokens"), MaxNumSeqs: v.Int("max_num_seqs"), ChunkedPrefill: true,
		BlockSize: 16, NumBlocks: e.kvBlocks}
	// Prefix caching is left off: these prompts share no prefix, so it
	// would find nothing and only cost simulation time.
	for _, rate := range logspace(r.lo, r.hi, v.Int("points")) {
		n := min(maxRequestsPerRate, max(10, int(rate*r.duration)))
		reqs := workload.Poisson(n, rate, prompts, outputs, uint64(v.Int("seed")))
		var in []scheduler.Request
		for _, q := range reqs {
			in = append(in, scheduler.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output})
		}
		s, err := scheduler.New(cfg, e.timer(cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens), in)
		if err != nil {
			return measuringRun{}, Relation("max_num_batched_tokens", strconv.Itoa(cfg.MaxNumBatchedTokens), "a budget and KV pool that hold every request ("+err.Error()+")")
		}
		if err := s.Run(); err != nil {
			return measuringRun{}, err
		}
		r.points = append(r.points, loadPoint{rate: rate, sum: s.Summary(slo)})
	}
	r.best = r.points[0]
	for _, p := range r.points {
		if p.sum.GoodputReqPerS > r.best.sum.GoodputReqPerS {
			r.best = p
		}
	}
	return r, nil
}

func (r measuringRun) first() loadPoint { return r.points[0] }
func (r measuringRun) last() loadPoint  { return r.points[len(r.points)-1] }

// percentileChart plots a summary's percentiles against throughput.
func (r measuringRun) percentileChart(name string, yLog bool, f func(scheduler.Summary) scheduler.Percentiles) *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "throughput", XUnit: "output tok/s", YLabel: name, YUnit: "ms", YLog: yLog}
	for _, q := range []struct {
		label string
		of    func(scheduler.Percentiles) float64
	}{{"p50", func(p scheduler.Percentiles) float64 { return p.P50 }}, {"p95", func(p scheduler.Percentiles) float64 { return p.P95 }}, {"p99", func(p scheduler.Percentiles) float64 { return p.P99 }}} {
		sr := scene.Series{Name: q.label + " " + name}
		for _, p := range r.points {
			sr.X = append(sr.X, round2(p.sum.OutputTokensPerS))
			sr.Y = append(sr.Y, round2(1000*q.of(f(p.sum))))
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

// goodputChart plots throughput and goodput against the offered rate.
func (r measuringRun) goodputChart() *scene.Chart {
	good := &scene.Chart{Type: scene.Line, XLabel: "offered load", XUnit: "req/s", YLabel: "requests per second", YUnit: "req/s", Series: []scene.Series{{Name: "throughput"}, {Name: "goodput (meets the SLO)"}}}
	for _, p := range r.points {
		good.Series[0].X, good.Series[0].Y = append(good.Series[0].X, round2(p.rate)), append(good.Series[0].Y, round2(p.sum.RequestsPerS))
		good.Series[1].X, good.Series[1].Y = append(good.Series[1].X, round2(p.rate)), append(good.Series[1].Y, round2(p.sum.GoodputReqPerS))
	}
	return good
}

func (r measuringRun) metrics() []Metric {
	first, last, best := r.first(), r.last(), r.best
	return []Metric{
		{Key: "max_throughput_tok_s", Label: "Output throughput at the highest rate", Unit: "tok/s", Value: round2(last.sum.OutputTokensPerS)},
		{Key: "best_goodput_req_s", Label: "Best goodput over the sweep", Unit: "req/s", Value: round2(best.sum.GoodputReqPerS)},
		{Key: "best_goodput_rate", Label: "Offered rate with the best goodput", Unit: "req/s", Value: round2(best.rate)},
		{Key: "ttft_p50_ms_low", Label: "p50 TTFT at the lowest rate", Unit: "ms", Value: ms(first.sum.TTFT.P50)},
		{Key: "ttft_p99_ms_low", Label: "p99 TTFT at the lowest rate", Unit: "ms", Value: ms(first.sum.TTFT.P99)},
		{Key: "ttft_p99_ms_high", Label: "p99 TTFT at the highest rate", Unit: "ms", Value: ms(last.sum.TTFT.P99)},
		{Key: "itl_p50_ms_low", Label: "p50 ITL at the lowest rate", Unit: "ms", Value: ms(first.sum.ITL.P50)},
		{Key: "itl_p99_ms_high", Label: "p99 ITL at the highest rate", Unit: "ms", Value: ms(last.sum.ITL.P99)},
		{Key: "slo_attainment_pct_high", Label: "Requests meeting the SLO at the highest rate", Unit: "%", Value: round2(100 * last.sum.SLOAttainment)},
	}
}

// pointCards are one rate's figures.
func pointCards(p loadPoint) scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "point", Title: fmt.Sprintf("At %.3g req/s offered", p.rate), Cards: []scene.Card{
		{Label: "output throughput", Value: round2(p.sum.OutputTokensPerS), Unit: "tok/s"},
		{Label: "p50 TTFT", Value: ms(p.sum.TTFT.P50), Unit: "ms"},
		{Label: "p99 TTFT", Value: ms(p.sum.TTFT.P99), Unit: "ms"},
		{Label: "p50 ITL", Value: ms(p.sum.ITL.P50), Unit: "ms"},
		{Label: "p99 ITL", Value: ms(p.sum.ITL.P99), Unit: "ms"},
		{Label: "meets the SLO", Value: round2(100 * p.sum.SLOAttainment), Unit: "%"},
		{Label: "mean running", Value: round2(p.sum.MeanRunningAtStep)},
		{Label: "preemptions", Value: float64(p.sum.Preemptions)},
	}}
}

// pointStep narrates rate i of the sweep; the last one asks a quiz.
func (r measuringRun) pointStep(i int, ttftChart *scene.Chart) Step {
	p := r.points[i]
	var quiz *Quiz
	if i == len(r.points)-1 {
		quiz = choiceQuiz(fmt.Sprintf("At %.3g req/s, will at least half of the requests meet the SLO (TTFT ≤ %g ms, TPOT ≤ %g ms)?", p.rate, r.sloTTFT, r.sloTPOT),
			[]string{"yes", "no"}, map[bool]string{true: "yes", false: "no"}[p.sum.SLOAttainment >= 0.5],
			fmt.Sprintf("%.0f%% do.", 100*p.sum.SLOAttainment))
	}
	regime := "the server keeps up: requests barely queue, TTFT is one prefill"
	switch {
	case p.sum.SLOAttainment < 0.5:
		regime = "past saturation: the queue grows for as long as requests keep coming, and TTFT is mostly waiting"
	case p.sum.TTFT.P99 > 4*r.first().sum.TTFT.P99:
		regime = "near saturation: the tail of TTFT grows first, as bursts queue behind full batches"
	}
	cursor := round2(p.sum.OutputTokensPerS)
	withCursor := *ttftChart
	withCursor.Cursor = &cursor
	return Step{
		Quiz:  quiz,
		Title: fmt.Sprintf("%.3g requests per second", p.rate),
		Narration: fmt.Sprintf("At %.3g req/s the server produces %s output tokens/s with %.1f requests running on average: %s. "+
			"TTFT p50 %.0f ms, p99 %.0f ms; ITL p50 %.1f ms, p99 %.1f ms; %.0f%% of requests meet the SLO.",
			p.rate, comma(int(p.sum.OutputTokensPerS)), p.sum.MeanRunningAtStep, regime,
			1000*p.sum.TTFT.P50, 1000*p.sum.TTFT.P99, 1000*p.sum.ITL.P50, 1000*p.sum.ITL.P99, 100*p.sum.SLOAttainment),
		Scenes: []scene.Scene{pointCards(p), {Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT", Chart: &withCursor}},
	}
}

func (r measuringRun) script() *Script {
	ttftChart := r.percentileChart("TTFT", true, func(s scheduler.Summary) scheduler.Percentiles { return s.TTFT })
	itlChart := r.percentileChart("ITL", false, func(s scheduler.Summary) scheduler.Percentiles { return s.ITL })
	s := &Script{Metrics: r.metrics()}
	s.Claims = []Claim{{
		What:    "How to benchmark a server",
		Article: "RPS under varying concurrency; TTFT and ITL at percentiles such as p95 and p99 (report 003)",
		Model:   fmt.Sprintf("%d rates from %g to %g req/s; p50/p95/p99 TTFT and ITL at each; goodput under TTFT ≤ %g ms and TPOT ≤ %g ms", len(r.points), r.lo, r.hi, r.sloTTFT, r.sloTPOT),
		Why:     "Same method. Goodput (DistServe) adds the one number a capacity planner needs: the rate the server sustains while meeting the SLO.",
	}}
	s.Steps = append(s.Steps, Step{
		Title: "A load sweep",
		Narration: fmt.Sprintf("For %g s at a time, chat-like requests (prompts and outputs long-tailed around %d and %d tokens) arrive as a Poisson stream, at %d rates from %g to %g requests per second, on one %s serving %s. "+
			"At each rate we record what a load generator would: output tokens per second, TTFT and ITL percentiles, and how many requests met the SLO (TTFT ≤ %g ms and TPOT, the mean gap between output tokens, ≤ %g ms).",
			r.duration, r.promptMedian, r.outputMedian, len(r.points), r.lo, r.hi, r.gpu.Name, r.model.Name, r.sloTTFT, r.sloTPOT),
		Scenes: []scene.Scene{pointCards(r.first())},
	})
	for i := range r.points {
		s.Steps = append(s.Steps, r.pointStep(i, ttftChart))
	}
	s.Steps = append(s.Steps, Step{
		Title: "Throughput against latency",
		Narration: fmt.Sprintf("Read the curves right to left: more load buys throughput until the batch is full, then only latency. ITL grows with the batch (bigger decode steps, prefill chunks riding along); "+
			"TTFT explodes once requests queue. Goodput peaks at %.2f req/s (offered %.3g req/s) and falls after: pushing more load makes fewer requests meet the SLO.",
			r.best.sum.GoodputReqPerS, r.best.rate),
		Scenes: []scene.Scene{
			{Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT percentiles", Chart: ttftChart},
			{Kind: scene.KindChart, ID: "itl", Title: "Throughput vs ITL percentiles", Chart: itlChart},
			{Kind: scene.KindChart, ID: "goodput", Title: "Throughput and goodput against offered load", Chart: r.goodputChart()},
			claimsTable(s.Claims),
		},
	})
	indexCursors(s.Steps)
	return s
}
