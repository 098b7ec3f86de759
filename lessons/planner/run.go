package planner

import (
	"math"
	"sort"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/planner"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// sim is the lesson's simulation: a method, so that the page's
// WebAssembly leaves it out.
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runPlanner(v))
}

// plannerRun is one day of load served three ways: by the SLA planner's
// pools, by a static split and by one monolithic pool, each interval
// sampled; with the planner's profiles and decisions.
type plannerRun struct {
	e                           *kit.Engine
	cfg                         planner.Config
	objective                   slo.Objective
	tp, workers, staticPrefill  int
	seqs, tokenBudget           int
	intervalS, sampleS, startup float64
	curve                       string
	link                        cluster.Link
	profile                     *stepProfile
	intervals                   []plannerInterval
	day                         plannerDay
	regimes                     plannerRegimes
	work                        int64
}

// plannerInterval is one adjustment interval: its load, the pools the
// planner's deployment served it with (a segment per change), what each
// deployment's requests saw, and the decision taken at its end.
type plannerInterval struct {
	rate     float64
	requests int
	isl, osl float64 // mean prompt and output lengths of its requests
	segments []plannerSegment
	planned  outcome
	static   outcome
	mono     outcome
	obs      planner.Observation
	decision planner.Decision
}

// plannerSegment is a stretch of an interval (seconds from its start)
// with a fixed number of serving prefill and decode workers.
type plannerSegment struct {
	from, to        float64
	prefill, decode int
	requests        int
	attainment      float64
}

// outcome is what one deployment's requests saw in one interval.
type outcome struct {
	requests, met              int
	attainment                 float64
	meanTTFT, meanITL, meanE2E float64
	p99TTFT, p99TPOT           float64
}

// plannerDay is the day's totals per deployment: requests meeting the
// SLO over all requests, and the planner's mean GPUs in use.
type plannerDay struct {
	planned, static, mono outcome
	meanGPUs              float64
	peakWant              int // the most GPUs the formula asked for
	clampedIntervals      int
}

// runPlanner serves the knobs' day of load.
func runPlanner(v lessons.Values) (*plannerRun, error) {
	r, err := newPlannerRun(v)
	if err != nil {
		return nil, err
	}
	rates := plannerRates(v)
	pre := planner.NewPool(r.staticPrefill)
	dec := planner.NewPool(r.workers - r.staticPrefill)
	var history []planner.Load
	for k, rate := range rates {
		iv, err := r.serveInterval(v, k, rate, pre, dec)
		if err != nil {
			return nil, err
		}
		history = append(history, iv.obs.Load)
		iv.decision = r.cfg.Plan(iv.obs, planner.Constant(history), r.profile)
		end := float64(k+1) * r.intervalS
		pre.Scale(end, iv.decision.Prefill, r.startup)
		dec.Scale(end, iv.decision.Decode, r.startup)
		r.intervals = append(r.intervals, iv)
	}
	r.work += cluster.DecodeWeight * r.profile.counter.Steps
	r.day = summariseDay(r.intervals, r.intervalS, r.tp)
	r.regimes = classify(r.intervals, r.cfg.Budget)
	return r, nil
}

// newPlannerRun reads the knobs and builds the engine, its profiles and
// the planner's settings.
func newPlannerRun(v lessons.Values) (*plannerRun, error) {
	g, _, err := kit.ChosenHardware(v)
	if err != nil {
		return nil, err
	}
	budget, seqs := kit.VLLMBatch(g)
	tp := v.Int("tp")
	e, err := kit.NewTPEngine(v, tp, "tp", plannerBlock, budget)
	if err != nil {
		return nil, err
	}
	link, err := cluster.LinkByID(v.Choice("link"))
	if err != nil {
		return nil, err
	}
	seqs = min(seqs, budget)
	r := &plannerRun{e: e, tp: tp, workers: v.Int("budget_gpus") / tp, staticPrefill: v.Int("static_prefill"), seqs: seqs, tokenBudget: budget,
		intervalS: float64(v.Int("interval_s")), sampleS: v.Float("sample_s"), startup: float64(v.Int("startup_s")), curve: v.Choice("curve"), link: link,
		objective: slo.Objective{TTFT: v.Float("slo_ttft_ms") / 1000, TPOT: v.Float("slo_itl_ms") / 1000, Target: slo.DefaultTarget}}
	r.cfg = planner.Config{Interval: r.intervalS, PrefillGPUs: tp, DecodeGPUs: tp, Budget: v.Int("budget_gpus"), MinEndpoint: planner.DefaultMinEndpoint, ITL: r.objective.TPOT}
	if err := r.cfg.Validate(); err != nil {
		return nil, err
	}
	r.profile = newStepProfile(e, seqs, budget)
	return r, nil
}

// deployment is a disaggregated deployment of p prefill and d decode
// workers, or (p = 0) a monolithic one of d workers.
func (r *plannerRun) deployment(p, d int) cluster.DisaggConfig {
	timer := r.e.Timer(r.seqs, r.tokenBudget)
	return cluster.DisaggConfig{Prefill: p, Decode: d,
		Scheduler: scheduler.Config{MaxNumBatchedTokens: r.tokenBudget, MaxNumSeqs: r.seqs, ChunkedPrefill: true, BlockSize: plannerBlock, NumBlocks: r.e.KVBlocks},
		Link:      r.link, KVBytesPerToken: float64(hardware.KVBytesPerTokenPerGPU(r.e.Model, r.tp, 2)),
		Timer: func(bool, int) scheduler.Timer { return timer }}
}

// plannerRequests are interval k's sampled arrivals at rate.
func plannerRequests(v lessons.Values, k int, rate float64) []cluster.Request {
	return disaggRequestsOf(plannerStream(v, k, rate))
}

// disaggRequestsOf are a stream's requests for core/cluster.
func disaggRequestsOf(wl []workload.Request) []cluster.Request {
	reqs := make([]cluster.Request, len(wl))
	for i, w := range wl {
		reqs[i] = cluster.Request{ID: w.ID, Arrival: w.Arrival, PromptIDs: w.TokenIDs(), Output: w.Output}
	}
	return reqs
}

// serveInterval serves interval k at rate on the three deployments, the
// planner's with the pools pre and dec as they stand.
func (r *plannerRun) serveInterval(v lessons.Values, k int, rate float64, pre, dec *planner.Pool) (plannerInterval, error) {
	reqs := plannerRequests(v, k, rate)
	iv := plannerInterval{rate: rate, requests: len(reqs)}
	for _, q := range reqs {
		iv.isl += float64(len(q.PromptIDs)) / float64(len(reqs))
		iv.osl += float64(q.Output) / float64(len(reqs))
	}
	var planned []scheduler.RequestMetrics
	for _, seg := range segmentsOf(pre, dec, float64(k)*r.intervalS, r.intervalS) {
		part := r.inSegment(reqs, seg)
		if len(part) > 0 {
			ms, err := r.serve(seg.prefill, seg.decode, part)
			if err != nil {
				return iv, err
			}
			seg.requests, seg.attainment = len(ms), r.objective.Attainment(kit.Latencies(ms))
			planned = append(planned, ms...)
		}
		iv.segments = append(iv.segments, seg)
	}
	static, err := r.serve(r.staticPrefill, r.workers-r.staticPrefill, reqs)
	if err != nil {
		return iv, err
	}
	mono, err := r.serve(0, r.workers, reqs)
	if err != nil {
		return iv, err
	}
	iv.planned, iv.static, iv.mono = r.outcomeOf(planned), r.outcomeOf(static), r.outcomeOf(mono)
	last := iv.segments[len(iv.segments)-1]
	iv.obs = planner.Observation{Load: planner.Load{Requests: float64(len(reqs)) / r.sampleS * r.intervalS, ISL: iv.isl, OSL: iv.osl},
		TTFT: iv.planned.meanTTFT, ITL: iv.planned.meanITL, RequestDuration: iv.planned.meanE2E, DecodeWorkers: last.decode}
	return iv, nil
}

// serve runs reqs on p prefill and d decode workers (p = 0: d monolithic
// workers) and counts the work.
func (r *plannerRun) serve(p, d int, reqs []cluster.Request) ([]scheduler.RequestMetrics, error) {
	res, err := cluster.RunDisagg(r.deployment(p, d), reqs)
	if err != nil {
		return nil, err
	}
	r.work += res.Counts.Work()
	return res.Requests, nil
}

// inSegment are the requests whose arrival, scaled from the sample to the
// interval, falls in seg (the last segment takes any later).
func (r *plannerRun) inSegment(reqs []cluster.Request, seg plannerSegment) []cluster.Request {
	var out []cluster.Request
	for _, q := range reqs {
		at := q.Arrival * r.intervalS / r.sampleS
		if at >= seg.from && (at < seg.to || math.IsInf(seg.to, 1)) {
			out = append(out, q)
		}
	}
	return out
}

// segmentsOf cuts the interval [t0, t0 + length) where starting workers
// begin to serve: each segment's serving pools, times from the interval's
// start, the last one open-ended.
func segmentsOf(pre, dec *planner.Pool, t0, length float64) []plannerSegment {
	cuts := append(pre.Changes(t0, t0+length), dec.Changes(t0, t0+length)...)
	sort.Float64s(cuts)
	starts := []float64{t0}
	for _, c := range cuts {
		if c > starts[len(starts)-1] {
			starts = append(starts, c)
		}
	}
	out := make([]plannerSegment, len(starts))
	for i, s := range starts {
		out[i] = plannerSegment{from: s - t0, to: math.Inf(1), prefill: pre.Serving(s), decode: dec.Serving(s)}
		if i+1 < len(starts) {
			out[i].to = starts[i+1] - t0
		}
	}
	return out
}

// outcomeOf summarises one deployment's requests in an interval.
func (r *plannerRun) outcomeOf(ms []scheduler.RequestMetrics) outcome {
	o := outcome{requests: len(ms)}
	if len(ms) == 0 {
		return o
	}
	ttfts, tpots := make([]float64, len(ms)), make([]float64, len(ms))
	gaps, gapSum := 0, 0.0
	for i, m := range ms {
		if r.objective.Attains(slo.Latency{TTFT: m.TTFT, TPOT: m.TPOT}) {
			o.met++
		}
		ttfts[i], tpots[i] = m.TTFT, m.TPOT
		o.meanTTFT += m.TTFT / float64(len(ms))
		o.meanE2E += m.E2E / float64(len(ms))
		for _, g := range m.ITL {
			gapSum += g
			gaps++
		}
	}
	if gaps > 0 {
		o.meanITL = gapSum / float64(gaps)
	}
	o.attainment = float64(o.met) / float64(o.requests)
	o.p99TTFT, o.p99TPOT = slo.Percentile(ttfts, 99), slo.Percentile(tpots, 99)
	return o
}

// summariseDay adds up the day: each deployment's requests and those
// meeting the SLO, the planner's mean GPUs (weighted by time) and the
// budget's binding.
func summariseDay(ivs []plannerInterval, length float64, tp int) plannerDay {
	var d plannerDay
	add := func(sum *outcome, o outcome) {
		sum.requests += o.requests
		sum.met += o.met
	}
	gpuSeconds := 0.0
	for _, iv := range ivs {
		add(&d.planned, iv.planned)
		add(&d.static, iv.static)
		add(&d.mono, iv.mono)
		for _, s := range iv.segments {
			gpuSeconds += float64((s.prefill+s.decode)*tp) * (math.Min(s.to, length) - s.from)
		}
		d.peakWant = max(d.peakWant, iv.decision.WantGPUs)
		if iv.decision.Clamped {
			d.clampedIntervals++
		}
	}
	for _, o := range []*outcome{&d.planned, &d.static, &d.mono} {
		if o.requests > 0 {
			o.attainment = float64(o.met) / float64(o.requests)
		}
	}
	d.meanGPUs = gpuSeconds / (length * float64(len(ivs)))
	return d
}
