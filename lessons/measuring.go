package lessons

import (
	"fmt"
	"strconv"

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

func buildMeasuring(v Values) (*Script, error) {
	e, err := newEngine(v, 16)
	if err != nil {
		return nil, err
	}
	slo := scheduler.SLO{TTFT: v.Float("slo_ttft_ms") / 1000, TPOT: v.Float("slo_tpot_ms") / 1000}
	lo, hi, k := v.Float("rate_min"), v.Float("rate_max"), v.Int("points")
	prompts, outputs := workload.ChatPrompts(), workload.ChatOutputs()
	cfg := scheduler.Config{MaxNumBatchedTokens: v.Int("max_num_batched_tokens"), MaxNumSeqs: v.Int("max_num_seqs"), ChunkedPrefill: true,
		BlockSize: 16, NumBlocks: e.kvBlocks}
	// Prefix caching is left off: these prompts share no prefix, so it
	// would find nothing and only cost simulation time.
	var pts []loadPoint
	for _, rate := range logspace(lo, hi, k) {
		n := min(maxRequestsPerRate, max(10, int(rate*v.Float("duration_s"))))
		reqs := workload.Poisson(n, rate, prompts, outputs, uint64(v.Int("seed")))
		var in []scheduler.Request
		for _, r := range reqs {
			in = append(in, scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output})
		}
		s, err := scheduler.New(cfg, e.timer(cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens), in)
		if err != nil {
			return nil, Relation("max_num_batched_tokens", strconv.Itoa(cfg.MaxNumBatchedTokens), "a budget and KV pool that hold every request ("+err.Error()+")")
		}
		if err := s.Run(); err != nil {
			return nil, err
		}
		pts = append(pts, loadPoint{rate: rate, sum: s.Summary(slo)})
	}

	series := func(name string, f func(scheduler.Summary) float64) scene.Series {
		sr := scene.Series{Name: name}
		for _, p := range pts {
			sr.X = append(sr.X, round2(p.sum.OutputTokensPerS))
			sr.Y = append(sr.Y, round2(f(p.sum)))
		}
		return sr
	}
	ttftChart := &scene.Chart{Type: scene.Line, XLabel: "throughput", XUnit: "output tok/s", YLabel: "TTFT", YUnit: "ms", YLog: true, Series: []scene.Series{
		series("p50 TTFT", func(s scheduler.Summary) float64 { return 1000 * s.TTFT.P50 }),
		series("p95 TTFT", func(s scheduler.Summary) float64 { return 1000 * s.TTFT.P95 }),
		series("p99 TTFT", func(s scheduler.Summary) float64 { return 1000 * s.TTFT.P99 }),
	}}
	itlChart := &scene.Chart{Type: scene.Line, XLabel: "throughput", XUnit: "output tok/s", YLabel: "ITL", YUnit: "ms", Series: []scene.Series{
		series("p50 ITL", func(s scheduler.Summary) float64 { return 1000 * s.ITL.P50 }),
		series("p95 ITL", func(s scheduler.Summary) float64 { return 1000 * s.ITL.P95 }),
		series("p99 ITL", func(s scheduler.Summary) float64 { return 1000 * s.ITL.P99 }),
	}}
	good := &scene.Chart{Type: scene.Line, XLabel: "offered load", XUnit: "req/s", YLabel: "requests per second", YUnit: "req/s", Series: []scene.Series{{Name: "throughput"}, {Name: "goodput (meets the SLO)"}}}
	for _, p := range pts {
		good.Series[0].X, good.Series[0].Y = append(good.Series[0].X, round2(p.rate)), append(good.Series[0].Y, round2(p.sum.RequestsPerS))
		good.Series[1].X, good.Series[1].Y = append(good.Series[1].X, round2(p.rate)), append(good.Series[1].Y, round2(p.sum.GoodputReqPerS))
	}

	best := pts[0]
	for _, p := range pts {
		if p.sum.GoodputReqPerS > best.sum.GoodputReqPerS {
			best = p
		}
	}
	last := pts[len(pts)-1]
	s := &Script{}
	s.Metrics = []Metric{
		{Key: "max_throughput_tok_s", Label: "Output throughput at the highest rate", Unit: "tok/s", Value: round2(last.sum.OutputTokensPerS)},
		{Key: "best_goodput_req_s", Label: "Best goodput over the sweep", Unit: "req/s", Value: round2(best.sum.GoodputReqPerS)},
		{Key: "best_goodput_rate", Label: "Offered rate with the best goodput", Unit: "req/s", Value: round2(best.rate)},
		{Key: "ttft_p50_ms_low", Label: "p50 TTFT at the lowest rate", Unit: "ms", Value: ms(pts[0].sum.TTFT.P50)},
		{Key: "ttft_p99_ms_low", Label: "p99 TTFT at the lowest rate", Unit: "ms", Value: ms(pts[0].sum.TTFT.P99)},
		{Key: "ttft_p99_ms_high", Label: "p99 TTFT at the highest rate", Unit: "ms", Value: ms(last.sum.TTFT.P99)},
		{Key: "itl_p50_ms_low", Label: "p50 ITL at the lowest rate", Unit: "ms", Value: ms(pts[0].sum.ITL.P50)},
		{Key: "itl_p99_ms_high", Label: "p99 ITL at the highest rate", Unit: "ms", Value: ms(last.sum.ITL.P99)},
		{Key: "slo_attainment_pct_high", Label: "Requests meeting the SLO at the highest rate", Unit: "%", Value: round2(100 * last.sum.SLOAttainment)},
	}
	s.Claims = []Claim{{
		What:    "How to benchmark a server",
		Article: "RPS under varying concurrency; TTFT and ITL at percentiles such as p95 and p99 (report 003)",
		Model:   fmt.Sprintf("%d rates from %g to %g req/s; p50/p95/p99 TTFT and ITL at each; goodput under TTFT ≤ %g ms and TPOT ≤ %g ms", k, lo, hi, v.Float("slo_ttft_ms"), v.Float("slo_tpot_ms")),
		Why:     "Same method. Goodput (DistServe) adds the one number a capacity planner needs: the rate the server sustains while meeting the SLO.",
	}}
	cards := func(p loadPoint) scene.Scene {
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
	withCursor := func(c *scene.Chart, x float64) *scene.Chart {
		cc := *c
		cc.Cursor = &x
		return &cc
	}
	s.Steps = append(s.Steps, Step{
		Title: "A load sweep",
		Narration: fmt.Sprintf("For %g s at a time, chat-like requests (prompts and outputs long-tailed around %d and %d tokens) arrive as a Poisson stream, at %d rates from %g to %g requests per second, on one %s serving %s. "+
			"At each rate we record what a load generator would: output tokens per second, TTFT and ITL percentiles, and how many requests met the SLO (TTFT ≤ %g ms and TPOT, the mean gap between output tokens, ≤ %g ms).",
			v.Float("duration_s"), int(prompts.Median), int(outputs.Median), k, lo, hi, e.gpu.Name, e.model.Name, v.Float("slo_ttft_ms"), v.Float("slo_tpot_ms")),
		Scenes: []scene.Scene{cards(pts[0])},
	})
	for i, p := range pts {
		var quiz *Quiz
		if i == len(pts)-1 {
			quiz = choiceQuiz(fmt.Sprintf("At %.3g req/s, will at least half of the requests meet the SLO (TTFT ≤ %g ms, TPOT ≤ %g ms)?", p.rate, v.Float("slo_ttft_ms"), v.Float("slo_tpot_ms")),
				[]string{"yes", "no"}, map[bool]string{true: "yes", false: "no"}[p.sum.SLOAttainment >= 0.5],
				fmt.Sprintf("%.0f%% do.", 100*p.sum.SLOAttainment))
		}
		regime := "the server keeps up: requests barely queue, TTFT is one prefill"
		switch {
		case p.sum.SLOAttainment < 0.5:
			regime = "past saturation: the queue grows for as long as requests keep coming, and TTFT is mostly waiting"
		case p.sum.TTFT.P99 > 4*pts[0].sum.TTFT.P99:
			regime = "near saturation: the tail of TTFT grows first, as bursts queue behind full batches"
		}
		s.Steps = append(s.Steps, Step{
			Quiz:  quiz,
			Title: fmt.Sprintf("%.3g requests per second", p.rate),
			Narration: fmt.Sprintf("At %.3g req/s the server produces %s output tokens/s with %.1f requests running on average: %s. "+
				"TTFT p50 %.0f ms, p99 %.0f ms; ITL p50 %.1f ms, p99 %.1f ms; %.0f%% of requests meet the SLO.",
				p.rate, comma(int(p.sum.OutputTokensPerS)), p.sum.MeanRunningAtStep, regime,
				1000*p.sum.TTFT.P50, 1000*p.sum.TTFT.P99, 1000*p.sum.ITL.P50, 1000*p.sum.ITL.P99, 100*p.sum.SLOAttainment),
			Scenes: []scene.Scene{cards(p), {Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT", Chart: withCursor(ttftChart, round2(p.sum.OutputTokensPerS))}},
		})
	}
	s.Steps = append(s.Steps, Step{
		Title: "Throughput against latency",
		Narration: fmt.Sprintf("Read the curves right to left: more load buys throughput until the batch is full, then only latency. ITL grows with the batch (bigger decode steps, prefill chunks riding along); "+
			"TTFT explodes once requests queue. Goodput peaks at %.2f req/s (offered %.3g req/s) and falls after: pushing more load makes fewer requests meet the SLO.",
			best.sum.GoodputReqPerS, best.rate),
		Scenes: []scene.Scene{
			{Kind: scene.KindChart, ID: "ttft", Title: "Throughput vs TTFT percentiles", Chart: ttftChart},
			{Kind: scene.KindChart, ID: "itl", Title: "Throughput vs ITL percentiles", Chart: itlChart},
			{Kind: scene.KindChart, ID: "goodput", Title: "Throughput and goodput against offered load", Chart: good},
			claimsTable(s.Claims),
		},
	})
	indexCursors(s.Steps)
	return s, nil
}
