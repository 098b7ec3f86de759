// Package batching holds the lesson batching: Parts 5 and 13, report 003. One
// seeded request stream served three ways on one GPU with the same number of
// slots: request-level static batching (a full batch runs until its longest
// output is done), Triton's dynamic batcher (batches formed from what is
// queued, within a delay, then run to completion), and iteration-level
// continuous batching (vLLM v1's scheduler: requests join and leave at every
// step).
package batching

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/inferlab/inferlab/core/batching"
	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "batching",
	Title:   "Static, dynamic and continuous batching",
	Part:    "Parts 5 and 13, report 003",
	Summary: "The same stream on one GPU three ways: a batch that waits for its slowest member, Triton's dynamic batcher, and continuous batching. Padding, idle slots, TTFT, throughput and goodput.",
	Engine: "core/batching (request-level: static batches; Triton's dynamic batcher with max_batch_size, preferred_batch_size, max_queue_delay_microseconds) and core/scheduler (vLLM v1, iteration-level), " +
		"every step priced by core/hardware's step-time model with CUDA graphs. Simplified: one model instance; request-level batches pad prompts to the longest and decode every slot until the longest output; no streaming before a batch ends.",
	Group: "scheduling", Rank: 10, Thumb: scene.KindSlots,
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam,
		{Key: "requests", Label: "Requests", Kind: lessons.Int, Default: 200, Min: 20, Max: 500, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s", Help: "Poisson arrivals.", Kind: lessons.Float, Default: 16, Min: 0.5, Max: 500, Step: 0.5},
		{Key: "prompt", Label: "Prompt", Unit: "tokens", Help: "Mean prompt; each is drawn from half to 1.5 times it.", Kind: lessons.Int, Default: 512, Min: 16, Max: 8192, Step: 16},
		{Key: "output", Label: "Output", Unit: "tokens", Help: "Mean output length.", Kind: lessons.Int, Default: 256, Min: 8, Max: 1024, Step: 8},
		{Key: "output_spread", Label: "Output spread", Help: "Outputs are drawn from output × (1 − spread) to output × (1 + spread): 0 makes every output equal.", Kind: lessons.Float, Default: 0.9, Min: 0, Max: 0.95, Step: 0.05},
		{Key: "max_batch_size", Label: "max_batch_size", Unit: "requests", Help: "Triton's max_batch_size, the static batch, and the continuous server's max_num_seqs: every server gets this many slots.", Kind: lessons.Int, Default: 32, Min: 1, Max: 128, Step: 1},
		{Key: "preferred_batch_size", Label: "preferred_batch_size", Unit: "requests", Help: "Triton's preferred batch size (0: none, Triton's advice for most models).", Kind: lessons.Int, Default: 0, Min: 0, Max: 128, Step: 1},
		{Key: "max_queue_delay_us", Label: "max_queue_delay_microseconds", Unit: "µs", Help: "How long Triton may hold a request to form a larger batch (0: Triton's default, no waiting).", Kind: lessons.Int, Default: 500000, Min: 0, Max: 2000000, Step: 1000},
		{Key: "max_num_seqs", Label: "vLLM max_num_seqs", Unit: "requests", Help: "The continuous server of the last comparison, with vLLM's own limit instead of max_batch_size.", Kind: lessons.Int, Default: 256, Min: 1, Max: 1024, Step: 1},
		{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Kind: lessons.Float, Default: 2000, Min: 1, Max: 600000, Step: 1},
		{Key: "slo_tpot_ms", Label: "SLO: time per output token", Unit: "ms", Help: "Measured to the response's end: a request-level batch returns every response when its longest member is done.", Kind: lessons.Float, Default: 50, Min: 1, Max: 10000, Step: 1},
		kit.PriceParam, kit.PowerParam,
		kit.SeedParam,
	},
	Check:   kit.CheckingCosts(checkBatching),
	Sim:     sim{},
	MaxWork: batchingMaxWork,
	// The heaviest accepted settings found by a search over the knobs'
	// ends (3.5–3.8 million units counted; BENCHMARKS.md), and (the last)
	// by `make bench-corners`' seeded search: a max_batch_size whose
	// batches of 5–7 have no full graph (the captured 8 is over it), so
	// every step is priced kernel by kernel.
	HeavyCorners: []map[string]string{
		{"requests": "112", "output": "256", "output_spread": "0", "max_batch_size": "2", "rate": "16", "prompt": "16", "max_num_seqs": "1024"},
		{"requests": "226", "output": "512", "output_spread": "0.95", "max_batch_size": "128", "rate": "16", "prompt": "16", "max_num_seqs": "1024"},
		{"requests": "247", "output": "256", "output_spread": "0.95", "max_batch_size": "8", "rate": "2", "prompt": "16", "max_num_seqs": "1024"},
		{"requests": "42", "max_batch_size": "7", "rate": "500", "max_num_seqs": "1024"},
	},
}

func init() { lessons.Register(lesson) }

// Work bound: Check refuses a setting whose estimate exceeds
// batchingWorkLimit; MaxWork leaves room for the estimate's error.
const (
	batchingMaxWork   = 4_500_000
	batchingWorkLimit = 4_000_000
)

// spreadSweep are the output spreads of the ratio sweep; spreadRequests
// bounds each sweep run. seedRuns are the seeds (from the chosen one) the
// static and dynamic servers also run, to show how much of their
// difference is the luck of which outputs share a batch.
var spreadSweep = []float64{0, 0.25, 0.5, 0.75, 0.95}

const (
	spreadRequests = 100
	seedRuns       = 4
)

// batchingStream draws the stream every server serves.
func batchingStream(v lessons.Values, n int, spread float64) []workload.Request {
	return batchingStreamSeed(v, n, spread, v.Int("seed"))
}

// batchingStreamSeed is batchingStream with another seed.
func batchingStreamSeed(v lessons.Values, n int, spread float64, seed int) []workload.Request {
	p, o := v.Int("prompt"), v.Int("output")
	prompts := workload.Uniform{Min: max(1, p/2), Max: p + p/2}
	outputs := workload.Uniform{Min: max(1, int(math.Round(float64(o)*(1-spread)))), Max: max(1, int(math.Round(float64(o)*(1+spread))))}
	return workload.Poisson(n, v.Float("rate"), prompts, outputs, uint64(seed))
}

// batchingWork estimates Script.Work from the streams Build draws and one
// decode step's time at batch 1 (a lower bound of any step, so the
// estimate errs high): a request-level server runs batches that each step
// through their longest output with every slot — full batches for static,
// for the dynamic batcher as many requests as arrive during one batch when
// that is fewer; a continuous server advances each request once per output
// token and prefill chunk, in steps shared by as many requests as run at
// once (as measuring's estimate). The main stream runs both request-level
// servers on seedRuns seeds, continuous batching with max_batch_size and
// with max_num_seqs slots; the spread sweep runs all three on up to
// spreadRequests requests.
func batchingWork(v lessons.Values, step float64, e *kit.Engine) int64 {
	rate, slots := v.Float("rate"), v.Int("max_batch_size")
	streamed := float64(kit.StreamedWork(e.Model))
	var w float64
	requestLevel := func(reqs []workload.Request, full bool) {
		longest, prompt := 0, 0
		for _, q := range reqs {
			longest = max(longest, q.Output)
			prompt = max(prompt, q.Prompt)
		}
		b := float64(min(slots, len(reqs)))
		if !full {
			b = max(1, min(b, rate*float64(longest)*step))
		}
		batches := math.Ceil(float64(len(reqs)) / b)
		// Each batch's prefill is streamed; its decode steps are when
		// its size has no full graph within max_batch_size.
		per := kit.StepWork + b
		if streamsDecode(cudagraph.New(e.Mode, slots, max(8192, slots*prompt)), int(math.Ceil(b))) {
			per += streamed
		}
		w += batches * (float64(longest)*per + streamed)
	}
	cont := func(reqs []workload.Request, seqs int) {
		advances, chunks := 0, 0
		for _, q := range reqs {
			c := (q.Prompt + 8191) / 8192
			advances += q.Output + c
			chunks += c
		}
		running := max(1, min(float64(seqs), rate*float64(advances)/float64(len(reqs))*step))
		steps := float64(advances) / running
		s := min(steps, float64(chunks))
		if streamsDecode(cudagraph.New(e.Mode, seqs, 8192), int(math.Ceil(running))) {
			s = steps
		}
		w += float64(advances) + steps*kit.StepWork + s*streamed
	}
	n, spread := v.Int("requests"), v.Float("output_spread")
	main := batchingStream(v, n, spread)
	cont(main, slots)
	cont(main, v.Int("max_num_seqs"))
	for k := 0; k < seedRuns; k++ {
		reqs := batchingStreamSeed(v, n, spread, v.Int("seed")+k)
		requestLevel(reqs, true)
		requestLevel(reqs, false)
	}
	for _, sp := range spreadSweep {
		reqs := batchingStream(v, min(spreadRequests, n), sp)
		requestLevel(reqs, true)
		requestLevel(reqs, false)
		cont(reqs, slots)
	}
	return int64(w)
}

// checkBatching refuses a preferred size over max_batch_size, setups a GPU
// could not hold (a full static batch of the longest prompt and output), and
// settings whose work exceeds the bound.
func checkBatching(v lessons.Values) error {
	b, pref := v.Int("max_batch_size"), v.Int("preferred_batch_size")
	if pref > b {
		return lessons.Relation("preferred_batch_size", strconv.Itoa(pref), fmt.Sprintf("at most max_batch_size (%d), as Triton requires", b), "max_batch_size")
	}
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	p, o, spread := v.Int("prompt"), v.Int("output"), v.Float("output_spread")
	longest := p + p/2 + int(math.Round(float64(o)*(1+spread)))
	// The model alone (weights and the default activation reserve), then a
	// full static batch: its prefill computes every padded prompt in one
	// step and its KV holds every slot's longest sequence.
	if err := kit.CheckFit(v, hardware.Fit{GPU: g, Model: m, FixedTP: true, Positions: longest}, kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitPositions: "output"}); err != nil {
		return err
	}
	fit := hardware.Fit{GPU: g, Model: m, FixedTP: true, BatchedTokens: max(8192, b*(p+p/2)), KVTokens: int64(b) * int64(longest), Positions: longest}
	if err := kit.CheckFit(v, fit, kit.FitKnobs{hardware.LimitWeights: "max_batch_size", hardware.LimitKV: "max_batch_size", hardware.LimitPositions: "output"}); err != nil {
		return err
	}
	e, err := kit.NewEngine(v, 16)
	if err != nil {
		return err
	}
	step := e.Timer(b, 8192).StepSeconds([]scheduler.Work{{NewTokens: 1, Context: p}})
	return kit.WorkBound(v, "requests", fmt.Sprintf("request-level servers stepping every batch through its longest output with all its slots on %d seeds, continuous servers one step per token shared by the running requests, and a %d-point spread sweep of up to %d requests",
		seedRuns, len(spreadSweep), spreadRequests), batchingWork(v, step, e), batchingWorkLimit)
}

// servedRequest is one request as one server served it.
type servedRequest struct {
	id, slot                                 int
	arrival                                  float64
	prompt, output                           int
	admitted, firstToken, lastToken, returns float64
}

// tpot is the time per output token to the response's end.
func (q servedRequest) tpot() float64 {
	if q.output <= 1 {
		return 0
	}
	return (q.returns - q.firstToken) / float64(q.output-1)
}

// batchGroup is one request-level batch.
type batchGroup struct {
	start, end float64
	members    []int // request ids in slot order
}

// slotSpan is one interval of one slot.
type slotSpan struct {
	slot       int
	start, end float64
	req        int // −1 for an idle slot
	class      string
}

// servedRun is one server over the stream.
type servedRun struct {
	key, name string
	slots     int
	reqs      []servedRequest // by ID
	spans     []slotSpan
	waste     batching.Waste
	busy      float64 // time the GPU ran steps
	batches   int     // request-level batches (0 for continuous)
	// groups are the request-level batches as they ran.
	groups []batchGroup
	servedSummary
	steps int
	work  int64
	// phases is the GPU's time by phase: a request-level batch's prefill
	// until its first tokens, then its decode; a continuous step split by
	// its tokens (kit.CostOf). cost is what the run cost.
	phases cluster.Busy
	cost   kit.RunCost
}

// servedSummary is what a server's requests add up to.
type servedSummary struct {
	makespan, tokPerS, reqPerS, goodput float64
	ttft, e2e, tpot                     scheduler.Percentiles
}

// summarise adds up the requests a server served, goodput under slo.
func summarise(reqs []servedRequest, slo scheduler.SLO) servedSummary {
	first, last := math.Inf(1), 0.0
	var ttft, e2e, tpot []float64
	outputs, good := 0, 0
	for _, q := range reqs {
		first, last = math.Min(first, q.arrival), math.Max(last, q.returns)
		ttft = append(ttft, q.firstToken-q.arrival)
		e2e = append(e2e, q.returns-q.arrival)
		tpot = append(tpot, q.tpot())
		outputs += q.output
		if q.firstToken-q.arrival <= slo.TTFT && q.tpot() <= slo.TPOT {
			good++
		}
	}
	m := last - first
	return servedSummary{makespan: m, tokPerS: float64(outputs) / m, reqPerS: float64(len(reqs)) / m, goodput: float64(good) / m,
		ttft: scheduler.Summarise(ttft), e2e: scheduler.Summarise(e2e), tpot: scheduler.Summarise(tpot)}
}

// slotTime is the run's slot-seconds: the slots times the time steps ran.
func (r *servedRun) slotTime() float64 { return r.waste.Useful + r.waste.Padding + r.waste.Idle }

// requestLevel serves the stream with a request-level batcher.
func requestLevel(e *kit.Engine, cfg batching.Config, key, name string, stream []workload.Request) (*servedRun, error) {
	reqs := make([]batching.Request, len(stream))
	for i, q := range stream {
		reqs[i] = batching.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output}
	}
	timer := e.CountingTimer(cfg.MaxBatchSize, max(8192, cfg.MaxBatchSize*maxPrompt(stream)))
	res, err := batching.Run(cfg, timer, reqs)
	if err != nil {
		return nil, err
	}
	r := &servedRun{key: key, name: name, slots: cfg.MaxBatchSize, waste: res.Waste, batches: len(res.Batches), steps: res.Steps, work: res.Work + timer.Extra}
	for _, q := range res.Requests {
		b := res.Batches[q.Batch]
		r.reqs = append(r.reqs, servedRequest{id: q.ID, slot: q.Slot, arrival: q.Arrival, prompt: q.Prompt, output: q.Output,
			admitted: b.Start, firstToken: q.FirstToken, lastToken: q.LastToken, returns: q.Returned})
	}
	for _, b := range res.Batches {
		r.groups = append(r.groups, batchGroup{start: b.Start, end: b.End, members: b.Requests})
		r.busy += b.End - b.Start
		if len(b.Requests) > 0 {
			first := res.Requests[b.Requests[0]].FirstToken
			r.phases.Prefill += first - b.Start
			r.phases.Decode += b.End - first
		}
		for slot, id := range b.Requests {
			q := res.Requests[id]
			r.spans = append(r.spans, slotSpan{slot: slot, start: b.Start, end: q.FirstToken, req: id, class: "prefill"},
				slotSpan{slot: slot, start: q.FirstToken, end: q.LastToken, req: id, class: "decode"})
			if q.LastToken < b.End {
				r.spans = append(r.spans, slotSpan{slot: slot, start: q.LastToken, end: b.End, req: id, class: "padding"})
			}
		}
		for slot := len(b.Requests); slot < cfg.MaxBatchSize; slot++ {
			r.spans = append(r.spans, slotSpan{slot: slot, start: b.Start, end: b.End, req: -1, class: "idle"})
		}
	}
	return r, nil
}

func maxPrompt(stream []workload.Request) int {
	m := 1
	for _, q := range stream {
		m = max(m, q.Prompt)
	}
	return m
}

// continuous serves the stream with vLLM v1's scheduler, slots as
// max_num_seqs; a request holds the lowest free slot from the step that
// admits it to the step it finishes (or is preempted in).
func continuous(e *kit.Engine, slots int, key, name string, stream []workload.Request) (*servedRun, error) {
	in := make([]scheduler.Request, len(stream))
	for i, q := range stream {
		in[i] = scheduler.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output}
	}
	cfg := scheduler.Config{MaxNumBatchedTokens: 8192, MaxNumSeqs: slots, ChunkedPrefill: true, BlockSize: 16, NumBlocks: e.KVBlocks}
	s, err := scheduler.New(cfg, e.Timer(slots, cfg.MaxNumBatchedTokens), in)
	if err != nil {
		return nil, err
	}
	if err := s.Run(); err != nil {
		return nil, err
	}
	steps := s.Steps()
	r := &servedRun{key: key, name: name, slots: slots, steps: len(steps), work: e.PricedStepsWork(steps, slots, cfg.MaxNumBatchedTokens)}
	r.phases.AddSteps(steps)
	holder := make([]int, slots) // request holding each slot, −1 free
	since := make([]float64, slots)
	for i := range holder {
		holder[i], since[i] = -1, steps[0].Start
	}
	slotOf := map[int]int{}
	admitted := map[int]float64{}
	release := func(id int, at float64) {
		if sl, ok := slotOf[id]; ok {
			holder[sl], since[sl] = -1, at
			delete(slotOf, id)
		}
	}
	for i, st := range steps {
		end := st.Start + st.Duration
		for _, id := range st.Preempted {
			if sl, ok := slotOf[id]; ok {
				r.spans = append(r.spans, slotSpan{slot: sl, start: since[sl], end: st.Start, req: id, class: "preempted"})
			}
			release(id, st.Start)
		}
		for _, id := range st.Admitted {
			sl := slices.Index(holder, -1)
			if sl < 0 {
				return nil, fmt.Errorf("batching: more than %d requests running", slots)
			}
			if since[sl] < st.Start {
				r.spans = append(r.spans, slotSpan{slot: sl, start: since[sl], end: st.Start, req: -1, class: "idle"})
			}
			holder[sl], slotOf[id], since[sl] = id, sl, st.Start
			if _, seen := admitted[id]; !seen {
				admitted[id] = st.Start
			}
		}
		r.busy += st.Duration
		r.waste.Useful += st.Duration * float64(st.Running)
		r.waste.Idle += st.Duration * float64(slots-st.Running)
		if i+1 < len(steps) && st.Waiting > 0 {
			r.waste.WaitingIdle += steps[i+1].Start - end
		}
		for _, id := range st.Finished {
			sl := slotOf[id]
			tt := s.TokenTimes(id)
			// The slot's prefill runs to the request's first token since it
			// took the slot: a request resumed after a preemption recomputes
			// its prompt and outputs, and its first token came before.
			first := tt[min(sort.SearchFloat64s(tt, since[sl]), len(tt)-1)]
			r.spans = append(r.spans, slotSpan{slot: sl, start: since[sl], end: first, req: id, class: "prefill"},
				slotSpan{slot: sl, start: first, end: end, req: id, class: "decode"})
			release(id, end)
		}
	}
	last := steps[len(steps)-1]
	for sl, id := range holder {
		if id < 0 && since[sl] < last.Start+last.Duration {
			r.spans = append(r.spans, slotSpan{slot: sl, start: since[sl], end: last.Start + last.Duration, req: -1, class: "idle"})
		}
	}
	for _, m := range s.Requests() {
		q := stream[m.ID]
		r.reqs = append(r.reqs, servedRequest{id: m.ID, slot: -1, arrival: m.Arrival, prompt: q.Prompt, output: q.Output,
			admitted: admitted[m.ID], firstToken: m.Arrival + m.TTFT, lastToken: m.Arrival + m.E2E, returns: m.Arrival + m.E2E})
	}
	slices.SortFunc(r.reqs, func(a, b servedRequest) int { return a.id - b.id })
	return r, nil
}

// batchingRun is what the lesson computed.
type batchingRun struct {
	gpu                      hardware.GPU
	model                    hardware.Model
	slots, preferred         int
	delay                    float64 // seconds
	rate, spread             float64
	prompt, output, requests int
	slo                      scheduler.SLO
	static, dynamic, cont    *servedRun
	// wide is continuous batching with vLLM's max_num_seqs.
	wide *servedRun
	// sweep is the three servers' throughput at each output spread;
	// seeds the request-level servers' on the main stream drawn with the
	// chosen seed and the next ones.
	sweep []spreadPoint
	seeds []seedPoint
	work  int64
}

// seedPoint is the two request-level servers on one seed's stream.
type seedPoint struct {
	seed            int
	static, dynamic float64 // output tok/s
}

// spreadPoint is one spread of the sweep.
type spreadPoint struct {
	spread, static, dynamic, cont float64 // output tok/s
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runBatching(v))
}

// requestLevelPair serves one stream with static batches and Triton's
// dynamic batcher.
func requestLevelPair(e *kit.Engine, v lessons.Values, stream []workload.Request) (st, dyn *servedRun, err error) {
	cfg := batching.Config{Policy: batching.Static, MaxBatchSize: v.Int("max_batch_size")}
	if st, err = requestLevel(e, cfg, "static", "static batching", stream); err != nil {
		return nil, nil, err
	}
	cfg.Policy, cfg.MaxQueueDelay = batching.Dynamic, float64(v.Int("max_queue_delay_us"))/1e6
	if p := v.Int("preferred_batch_size"); p > 0 {
		cfg.PreferredBatchSizes = []int{p}
	}
	if dyn, err = requestLevel(e, cfg, "dynamic", "Triton dynamic batcher", stream); err != nil {
		return nil, nil, err
	}
	return st, dyn, nil
}

// batchingServers serves one stream three ways with the same slots.
func batchingServers(e *kit.Engine, v lessons.Values, stream []workload.Request) (st, dyn, cont *servedRun, err error) {
	if st, dyn, err = requestLevelPair(e, v, stream); err != nil {
		return nil, nil, nil, err
	}
	if cont, err = continuous(e, v.Int("max_batch_size"), "continuous", "continuous batching", stream); err != nil {
		return nil, nil, nil, err
	}
	return st, dyn, cont, nil
}

// runBatching serves the stream three ways, then with vLLM's max_num_seqs,
// then the spread sweep.
func runBatching(v lessons.Values) (batchingRun, error) {
	e, err := kit.NewEngine(v, 16)
	if err != nil {
		return batchingRun{}, err
	}
	r := batchingRun{gpu: e.GPU, model: e.Model, slots: v.Int("max_batch_size"), preferred: v.Int("preferred_batch_size"), delay: float64(v.Int("max_queue_delay_us")) / 1e6,
		rate: v.Float("rate"), spread: v.Float("output_spread"), prompt: v.Int("prompt"), output: v.Int("output"), requests: v.Int("requests"),
		slo: scheduler.SLO{TTFT: v.Float("slo_ttft_ms") / 1000, TPOT: v.Float("slo_tpot_ms") / 1000}}
	stream := batchingStream(v, r.requests, r.spread)
	if r.static, r.dynamic, r.cont, err = batchingServers(e, v, stream); err != nil {
		return batchingRun{}, err
	}
	if r.wide, err = continuous(e, v.Int("max_num_seqs"), "wide", fmt.Sprintf("continuous, max_num_seqs %d", v.Int("max_num_seqs")), stream); err != nil {
		return batchingRun{}, err
	}
	usd, watts := kit.CostRates(v, e.GPU)
	for _, x := range []*servedRun{r.static, r.dynamic, r.cont, r.wide} {
		x.servedSummary = summarise(x.reqs, r.slo)
		r.work += x.work
		var in, out int64
		for _, q := range x.reqs {
			in, out = in+int64(q.prompt), out+int64(q.output)
		}
		x.cost = kit.CostOf(usd, watts, []kit.GPUPool{{GPUs: 1, Held: x.makespan, Busy: x.phases}}, in, out)
	}
	r.seeds = append(r.seeds, seedPoint{seed: v.Int("seed"), static: r.static.tokPerS, dynamic: r.dynamic.tokPerS})
	for k := 1; k < seedRuns; k++ {
		stream := batchingStreamSeed(v, r.requests, r.spread, v.Int("seed")+k)
		st, dyn, err := requestLevelPair(e, v, stream)
		if err != nil {
			return batchingRun{}, err
		}
		st.servedSummary = summarise(st.reqs, r.slo)
		dyn.servedSummary = summarise(dyn.reqs, r.slo)
		r.work += st.work + dyn.work
		r.seeds = append(r.seeds, seedPoint{seed: v.Int("seed") + k, static: st.tokPerS, dynamic: dyn.tokPerS})
	}
	for _, sp := range spreadSweep {
		st, dyn, cont, err := batchingServers(e, v, batchingStream(v, min(spreadRequests, r.requests), sp))
		if err != nil {
			return batchingRun{}, err
		}
		for _, x := range []*servedRun{st, dyn, cont} {
			x.servedSummary = summarise(x.reqs, r.slo)
			r.work += x.work
		}
		r.sweep = append(r.sweep, spreadPoint{spread: sp, static: st.tokPerS, dynamic: dyn.tokPerS, cont: cont.tokPerS})
	}
	return r, nil
}

// ---- Script ----

// servers are the three servers of the main comparison.
func (r batchingRun) servers() []*servedRun { return []*servedRun{r.static, r.dynamic, r.cont} }

// slotScene draws the three servers' slots between from and to seconds.
func (r batchingRun) slotScene(from, to float64, mentions []scene.Mention, labels map[string]string) scene.Scene {
	sc := &scene.SlotChart{Unit: "s", From: kit.Round4(from), To: kit.Round4(to)}
	for _, x := range r.servers() {
		lane := scene.SlotLane{Key: x.key, Label: x.name, Slots: x.slots, Note: kit.Comma(int(x.tokPerS)) + " tok/s"}
		for _, sp := range x.spans {
			if sp.end <= from || sp.start >= to || sp.end <= sp.start {
				continue
			}
			bar := scene.SlotBar{Slot: sp.slot, Start: kit.Round4(max(sp.start, from)), End: kit.Round4(min(sp.end, to)), Req: sp.req, Class: sp.class}
			if sp.req >= 0 {
				bar.Label = kit.ReqName(sp.req)
			} else {
				bar.Req = scene.Free
			}
			lane.Bars = append(lane.Bars, bar)
		}
		sc.Lanes = append(sc.Lanes, lane)
	}
	return scene.Scene{Kind: scene.KindSlots, ID: "slots", Title: fmt.Sprintf("Slots of each server, %s to %s s", strconv.FormatFloat(kit.Round2(from), 'f', -1, 64), strconv.FormatFloat(kit.Round2(to), 'f', -1, 64)),
		Slots: sc, Main: true, Marks: kit.MarksFor(mentions, labels)}
}

// sec formats seconds with two decimals.
func sec(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) + " s" }

// firstBatchFacts are what the opening steps narrate of a request-level
// server's first batch.
type firstBatchFacts struct {
	g                        batchGroup
	shortest, longest        servedRequest
	paddingShare, idleBefore float64
}

func (x *servedRun) firstBatch() firstBatchFacts {
	f := firstBatchFacts{g: x.groups[0]}
	f.shortest, f.longest = x.reqs[f.g.members[0]], x.reqs[f.g.members[0]]
	pad, total := 0.0, 0.0
	for _, id := range f.g.members {
		q := x.reqs[id]
		if q.output < f.shortest.output {
			f.shortest = q
		}
		if q.output > f.longest.output {
			f.longest = q
		}
	}
	for _, id := range f.g.members {
		pad += float64(f.longest.output - x.reqs[id].output)
		total += float64(f.longest.output)
	}
	f.paddingShare = pad / total
	first := math.Inf(1)
	for _, q := range x.reqs {
		first = math.Min(first, q.arrival)
	}
	f.idleBefore = f.g.start - first
	return f
}

// handover finds the first slot of the continuous server that passes from
// one request to the next: the request that left and the one that joined.
func (x *servedRun) handover() (left, joined int, at float64, ok bool) {
	best := math.Inf(1)
	last := map[int]slotSpan{} // the slot's last request span
	for _, sp := range x.spans {
		if sp.req < 0 {
			continue
		}
		if prev, seen := last[sp.slot]; seen && prev.req != sp.req && sp.class == "prefill" && sp.start < best {
			best, left, joined, ok = sp.start, prev.req, sp.req, true
		}
		if sp.class == "decode" {
			last[sp.slot] = sp
		}
	}
	return left, joined, best, ok
}

func (r batchingRun) introSteps() []lessons.Step {
	st, dyn, cont := r.static, r.dynamic, r.cont
	fs, fd := st.firstBatch(), dyn.firstBatch()
	window := fs.g.end * 1.05
	n := fmt.Sprintf("%d requests arrive at about %g per second (Poisson, seed fixed), prompts of %s to %s tokens and outputs of %s to %s. "+
		"Three servers take the same stream on one %s with %s, each with %d slots: static batching, Triton's dynamic batcher and continuous batching. Each row of a lane is one slot; each bar a request holding it.",
		r.requests, r.rate, kit.Comma(max(1, r.prompt/2)), kit.Comma(r.prompt+r.prompt/2), kit.Comma(max(1, int(math.Round(float64(r.output)*(1-r.spread))))), kit.Comma(max(1, int(math.Round(float64(r.output)*(1+r.spread))))),
		r.gpu.Name, r.model.Name, r.slots)
	ms := kit.Linked(n, "slots", "static batching", "lane:static", "Triton's dynamic batcher", "lane:dynamic", "continuous batching", "lane:continuous")
	steps := []lessons.Step{{Title: "One stream, three servers", Narration: n, Mentions: ms, Scenes: []scene.Scene{r.slotScene(0, window, ms, nil)}}}

	filler := fs.g.members[len(fs.g.members)-1]
	n = fmt.Sprintf("Static batching waits for a full batch: the GPU sits idle %s until %s, the %s request, arrives. Then all %d run together, one prefill padded to the longest prompt (%s tokens) and then one token per step for each.",
		sec(fs.idleBefore), kit.ReqName(filler), kit.Ordinal(len(fs.g.members)), len(fs.g.members), kit.Comma(maxPromptOf(st, fs.g)))
	ms = kit.Linked(n, "slots", kit.ReqName(filler), "slot:static:"+kit.ReqName(filler), "Static batching", "lane:static")
	steps = append(steps, lessons.Step{Title: "Static batching waits for a full batch", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{r.slotScene(0, window, ms, map[string]string{"slot:static:" + kit.ReqName(filler): "completes the batch"})}})

	sh, lo := fs.shortest, fs.longest
	n = fmt.Sprintf("A batch runs until its longest output is done. %s needed %d tokens and had them at %s, but its slot keeps computing padding until %s finishes its %d at %s, and only then do the responses return. "+
		"In this batch %s of the slot steps are padding.",
		kit.ReqName(sh.id), sh.output, sec(sh.lastToken), kit.ReqName(lo.id), lo.output, sec(lo.lastToken), kit.Pct(fs.paddingShare))
	padRef := "pad:static:" + kit.ReqName(sh.id)
	ms = kit.Linked(n, "slots", "computing padding", padRef, kit.ReqName(lo.id)+" finishes", "slot:static:"+kit.ReqName(lo.id))
	steps = append(steps, lessons.Step{Title: "The batch waits for its slowest member",
		Quiz: lessons.ChoiceQuiz(fmt.Sprintf("%s of the first static batch needs only %d tokens. When does its response reach the client?", kit.ReqName(sh.id), sh.output),
			[]string{"when its own last token is computed", "when the batch's longest output is done"}, map[bool]string{true: "when the batch's longest output is done", false: "when its own last token is computed"}[sh.returns > sh.lastToken],
			"A request-level batch returns together: its short members wait for the longest, their slots padding meanwhile."),
		Narration: n, Mentions: ms, Scenes: []scene.Scene{r.slotScene(0, window, ms, map[string]string{padRef: "padding", "slot:static:" + kit.ReqName(lo.id): "longest"})}})

	n = fmt.Sprintf("Triton's dynamic batcher forms a batch when the GPU is free: %d requests if that many wait, else a preferred size if set, else it holds the queue up to max_queue_delay_microseconds (%s) "+
		"and sends what it has. Its first batch leaves at %s with %d requests, %d slots idle; from then on the queue is long and batches are full. It starts %s earlier than static batching, but each batch still runs to its longest output. "+
		"This request-level batcher is for Triton backends without their own scheduling: Triton's TensorRT-LLM backend runs in-flight (continuous) batching instead (batching_strategy: inflight_fused_batching).",
		r.slots, kit.Comma(int(r.delay*1e6))+" µs", sec(fd.g.start), len(fd.g.members), r.slots-len(fd.g.members), sec(fs.g.start-fd.g.start))
	ms = kit.Linked(n, "slots", "Triton's dynamic batcher", "lane:dynamic", "slots idle", "idle:dynamic")
	steps = append(steps, lessons.Step{Title: "Triton's dynamic batcher", Narration: n, Mentions: ms, Scenes: []scene.Scene{r.slotScene(0, window, ms, nil)}})

	if left, joined, at, ok := cont.handover(); ok {
		n = fmt.Sprintf("Continuous batching schedules every step, not every batch: a request joins as soon as a slot is free and leaves the moment its last token is out. %s finished, and at %s %s took its slot while the others kept decoding. No slot pads, and no response waits for another.",
			kit.ReqName(left), sec(at), kit.ReqName(joined))
		lref, jref := "slot:continuous:"+kit.ReqName(left), "slot:continuous:"+kit.ReqName(joined)
		ms = kit.Linked(n, "slots", kit.ReqName(left)+" finished", lref, kit.ReqName(joined)+" took", jref, "Continuous batching", "lane:continuous")
		steps = append(steps, lessons.Step{Title: "Continuous batching: join and leave at every step", Narration: n, Mentions: ms,
			Scenes: []scene.Scene{r.slotScene(0, window, ms, map[string]string{lref: "leaves", jref: "joins"})}})
	}
	return steps
}

// maxPromptOf is a batch's longest prompt.
func maxPromptOf(x *servedRun, g batchGroup) int {
	m := 0
	for _, id := range g.members {
		m = max(m, x.reqs[id].prompt)
	}
	return m
}

// outputs is the stream's output tokens.
func (x *servedRun) outputs() int {
	n := 0
	for _, q := range x.reqs {
		n += q.output
	}
	return n
}

// factors are the terms of throughput = slots × busy share × useful share
// ÷ slot-seconds per token, an identity: useful slot-seconds over output
// tokens is the cost of a token, slots × busy time the slot time.
type factors struct {
	busyShare, usefulShare, paddingShare, idleShare, perToken float64
}

func (x *servedRun) factors() factors {
	t := x.slotTime()
	return factors{busyShare: x.busy / x.makespan, usefulShare: x.waste.Useful / t, paddingShare: x.waste.Padding / t, idleShare: x.waste.Idle / t,
		perToken: x.waste.Useful / float64(x.outputs())}
}

func (r batchingRun) wasteTable() *scene.Table {
	tbl := &scene.Table{Columns: []string{"server", "slots", "GPU busy", "useful slot time", "padding", "idle slots", "GPU idle, requests waiting", "slot-ms per token", "throughput"}}
	for _, x := range r.servers() {
		f := x.factors()
		tbl.Rows = append(tbl.Rows, []string{x.name, strconv.Itoa(x.slots), kit.Pct(f.busyShare), kit.Pct(f.usefulShare), kit.Pct(f.paddingShare), kit.Pct(f.idleShare),
			sec(x.waste.WaitingIdle), strconv.FormatFloat(1000*f.perToken, 'f', 2, 64),
			fmt.Sprintf("%s tok/s = %d × %.3f × %.3f ÷ %.5f s", kit.Comma(int(x.tokPerS)), x.slots, f.busyShare, f.usefulShare, f.perToken)})
	}
	return tbl
}

func (r batchingRun) resultSteps() []lessons.Step {
	st, dyn, cont := r.static, r.dynamic, r.cont
	end := 0.0
	for _, x := range r.servers() {
		for _, q := range x.reqs {
			end = max(end, q.returns)
		}
	}
	best := st
	for _, x := range r.servers() {
		if x.tokPerS > best.tokPerS {
			best = x
		}
	}
	n := fmt.Sprintf("The whole stream: static batching delivers %s output tokens per second, the dynamic batcher %s, continuous batching %s (%.2f× static). "+
		"The last response leaves at %s, %s and %s.",
		kit.Comma(int(st.tokPerS)), kit.Comma(int(dyn.tokPerS)), kit.Comma(int(cont.tokPerS)), cont.tokPerS/st.tokPerS, sec(st.makespan), sec(dyn.makespan), sec(cont.makespan))
	ms := kit.Linked(n, "slots", "static batching", "lane:static", "the dynamic batcher", "lane:dynamic", "continuous batching", "lane:continuous")
	steps := []lessons.Step{{Title: "The whole stream",
		Quiz: lessons.ChoiceQuiz("Over the whole stream, which server delivers the most output tokens per second?", []string{st.name, dyn.name, cont.name}, best.name,
			"Throughput is slots × the share of time the GPU is busy × the share of slot time that computes a needed token ÷ the slot time a token costs; the next step splits it up."),
		Narration: n, Mentions: ms, Scenes: []scene.Scene{r.slotScene(0, end, ms, nil)}}}

	fs, fd, fc := st.factors(), dyn.factors(), cont.factors()
	n = fmt.Sprintf("Where the slot time went. Static batching spends %s of it padding finished requests and leaves the GPU idle %s waiting for full batches; "+
		"the dynamic batcher waits %s but pads %s and runs %s of its slots empty in partial batches; continuous batching pads nothing and computes needed tokens in %s of its slot time. "+
		"Throughput is the product of these shares, so the ranking follows: %s.",
		kit.Pct(fs.paddingShare), sec(st.waste.WaitingIdle), sec(dyn.waste.WaitingIdle), kit.Pct(fd.paddingShare), kit.Pct(fd.idleShare), kit.Pct(fc.usefulShare), r.ranking())
	ms = kit.Linked(n, "waste", "Static batching spends", "row:0", "the dynamic batcher waits", "row:1", "continuous batching pads nothing", "row:2")
	steps = append(steps, lessons.Step{Title: "Padding and idle slots", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{{Kind: scene.KindTable, ID: "waste", Title: "Where each server's slot time went (throughput = slots × busy × useful ÷ slot-seconds per token)", Table: r.wasteTable(), Main: true,
			Marks: kit.MarksFor(ms, map[string]string{"row:0": kit.Pct(fs.paddingShare) + " padding", "row:2": kit.Pct(fc.usefulShare) + " useful"})}}})

	lat := &scene.Table{Columns: []string{"server", "TTFT p50", "TTFT p99", "time per token to the response's end, p50", "response time p50", "goodput (meets the SLO)"}}
	for _, x := range r.servers() {
		lat.Rows = append(lat.Rows, []string{x.name, kit.MsText(x.ttft.P50), kit.MsText(x.ttft.P99), kit.MsText(x.tpot.P50), sec(x.e2e.P50), fmt.Sprintf("%.2f req/s", x.goodput)})
	}
	n = fmt.Sprintf("Latency tells them apart even more. A request-level batch makes new arrivals wait for the whole batch: p50 TTFT %s static, %s dynamic, %s continuous. "+
		"Under an SLO of TTFT ≤ %s and %s per token, goodput is %.2f, %.2f and %.2f requests per second.",
		kit.MsText(st.ttft.P50), kit.MsText(dyn.ttft.P50), kit.MsText(cont.ttft.P50), kit.MsText(r.slo.TTFT), kit.MsText(r.slo.TPOT), st.goodput, dyn.goodput, cont.goodput)
	ms = kit.Linked(n, "latency", kit.MsText(st.ttft.P50)+" static", "row:0", kit.MsText(dyn.ttft.P50)+" dynamic", "row:1", kit.MsText(cont.ttft.P50)+" continuous", "row:2")
	steps = append(steps, lessons.Step{Title: "Latency and goodput", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{{Kind: scene.KindTable, ID: "latency", Title: "What users see", Table: lat, Main: true, Marks: kit.MarksFor(ms, nil)}}})
	return steps
}

// ranking names the servers by throughput, fastest last.
func (r batchingRun) ranking() string {
	xs := slices.Clone(r.servers())
	slices.SortStableFunc(xs, func(a, b *servedRun) int {
		switch {
		case a.tokPerS < b.tokPerS:
			return -1
		case a.tokPerS > b.tokPerS:
			return 1
		}
		return 0
	})
	out := xs[0].name
	for _, x := range xs[1:] {
		out += " < " + x.name
	}
	return out
}

// seedRange is the dynamic batcher's throughput against static
// batching's, lowest and highest over the seeds, and at which seeds (their
// index in r.seeds).
func (r batchingRun) seedRange() (lo, hi float64, iLo, iHi int) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, p := range r.seeds {
		d := p.dynamic/p.static - 1
		if d < lo {
			lo, iLo = d, i
		}
		if d > hi {
			hi, iHi = d, i
		}
	}
	return lo, hi, iLo, iHi
}

func (r batchingRun) sweepSteps() []lessons.Step {
	lo, hi, iLo, iHi := r.seedRange()
	seeds := &scene.Chart{Type: scene.Line, XLabel: "seed", YLabel: "output throughput", YUnit: "tok/s", Series: []scene.Series{{Name: "static batching"}, {Name: "Triton dynamic batcher"}}}
	for _, p := range r.seeds {
		seeds.Series[0].X, seeds.Series[0].Y = append(seeds.Series[0].X, float64(p.seed)), append(seeds.Series[0].Y, kit.Round2(p.static))
		seeds.Series[1].X, seeds.Series[1].Y = append(seeds.Series[1].X, float64(p.seed)), append(seeds.Series[1].Y, kit.Round2(p.dynamic))
	}
	n := fmt.Sprintf("Static batching and the dynamic batcher run batches the same way; they differ only in how batches form. Over %d seeds of this stream the dynamic batcher's throughput is %+.1f%% to %+.1f%% of static batching's: "+
		"the waits it saves are partly spent on partial batches, and which outputs share a batch decides each batch's length. Its clear gain is latency at light load.",
		len(r.seeds), 100*lo, 100*hi)
	dynPoint := func(i int) string { return "point:" + seeds.Series[1].Name + ":" + strconv.Itoa(i) }
	ms := kit.Linked(n, "seeds", fmt.Sprintf("%+.1f%%", 100*lo), dynPoint(iLo), fmt.Sprintf("%+.1f%%", 100*hi), dynPoint(iHi))
	steps := []lessons.Step{{Title: "Dynamic vs static: how batches form", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "seeds", Title: "The same knobs, other seeds", Chart: seeds, Main: true,
			Marks: kit.MarksFor(ms, map[string]string{dynPoint(iLo): fmt.Sprintf("seed %d: %+.1f%%", r.seeds[iLo].seed, 100*lo), dynPoint(iHi): fmt.Sprintf("seed %d: %+.1f%%", r.seeds[iHi].seed, 100*hi)})}}}}

	sw := &scene.Chart{Type: scene.Line, XLabel: "output spread", YLabel: "output throughput", YUnit: "tok/s", Series: []scene.Series{{Name: "static batching"}, {Name: "Triton dynamic batcher"}, {Name: "continuous batching"}}}
	for _, p := range r.sweep {
		for i, y := range []float64{p.static, p.dynamic, p.cont} {
			sw.Series[i].X, sw.Series[i].Y = append(sw.Series[i].X, p.spread), append(sw.Series[i].Y, kit.Round2(y))
		}
	}
	first, last := r.sweep[0], r.sweep[len(r.sweep)-1]
	n = fmt.Sprintf("The more outputs differ, the more a request-level batch pads: with every output equal, continuous batching serves %.2f× static batching's tokens per second; with outputs spread ±%.0f%%, %.2f× (%d requests each).",
		first.cont/first.static, 100*last.spread, last.cont/last.static, min(spreadRequests, r.requests))
	contPoint := func(i int) string { return "point:" + sw.Series[2].Name + ":" + strconv.Itoa(i) }
	ms = kit.Linked(n, "spread", "with every output equal", contPoint(0), fmt.Sprintf("with outputs spread ±%.0f%%", 100*last.spread), contPoint(len(r.sweep)-1))
	steps = append(steps, lessons.Step{Title: "Output spread makes the difference", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "spread", Title: "Throughput against the spread of output lengths", Chart: sw, Main: true,
			Marks: kit.MarksFor(ms, map[string]string{contPoint(0): fmt.Sprintf("%.2f×", first.cont/first.static), contPoint(len(r.sweep) - 1): fmt.Sprintf("%.2f×", last.cont/last.static)})}}})

	w := r.wide
	n = fmt.Sprintf("So far every server had %d slots. A static batch must hold its whole padded batch in memory, while vLLM pages the KV cache and admits requests up to max_num_seqs = %d as memory allows. "+
		"With its own limit the continuous server delivers %s tokens per second, %.2f× static batching, at a p50 TTFT of %s.",
		r.slots, w.slots, kit.Comma(int(w.tokPerS)), w.tokPerS/r.static.tokPerS, kit.MsText(w.ttft.P50))
	steps = append(steps, lessons.Step{Title: "vLLM's own limit: max_num_seqs", Narration: n,
		Scenes: []scene.Scene{{Kind: scene.KindCards, ID: "wide", Title: "Output throughput", Main: true, Cards: []scene.Card{
			{Label: r.static.name, Value: kit.Round2(r.static.tokPerS), Unit: "tok/s"},
			{Label: fmt.Sprintf("continuous, %d slots", r.slots), Value: kit.Round2(r.cont.tokPerS), Unit: "tok/s"},
			{Label: w.name, Value: kit.Round2(w.tokPerS), Unit: "tok/s"},
		}}}})
	return steps
}

func (r batchingRun) claims() []lessons.Claim {
	first, last := r.sweep[0], r.sweep[len(r.sweep)-1]
	same, wide := r.cont.tokPerS/r.static.tokPerS, r.wide.tokPerS/r.static.tokPerS
	lo, hi, _, _ := r.seedRange()
	return []lessons.Claim{{
		What:    "Iteration-level scheduling vs request-level batching",
		Article: "Orca (OSDI '22): 36.9× throughput over NVIDIA FasterTransformer at the same latency, GPT-3 175B",
		Model:   fmt.Sprintf("%.2f× with the same %d slots; %.2f× with vLLM's max_num_seqs %d (%s, %s)", same, r.slots, wide, r.wide.slots, r.model.Name, r.gpu.Name),
		Why: "Orca reads its ratio at equal latency on a 175B model whose request-level baseline could only hold small batches; here every server is priced by the same step model and, in the first figure, given the same slots, " +
			"so only padding, waiting and idle slots separate them. The published setup (hardware, trace, latency threshold) is not in the abstract.",
	}, {
		What:    "Continuous batching over naive static batching",
		Article: "Anyscale (2023): up to 23× with vLLM, 8× with continuous batching alone (Ray Serve, TGI); OPT-13B, 1,000 prompts of 512 tokens sent at once, exponential outputs up to 1,536",
		Model:   fmt.Sprintf("%.2f× at equal slots, %.2f× with max_num_seqs %d", same, wide, r.wide.slots),
		Why: "Anyscale's baseline is Hugging Face pipelines at static batch sizes of 4 to 16 (their own 4× for FasterTransformer is kernel speed, which this model gives every server alike); " +
			"vLLM's 23× adds paged memory, which admits far larger batches. The lab's stream, model and GPU differ; set rate high to send everything at once.",
	}, {
		What:    "Continuous batching gains more when output lengths vary",
		Article: "\"Continuous batching performs better the more variance there is in sequence lengths\" (Anyscale's hypothesis)",
		Model:   fmt.Sprintf("%.2f× at spread 0, %.2f× at spread %.2f", first.cont/first.static, last.cont/last.static, last.spread),
		Why:     "Agrees: a request-level batch lasts as long as its longest output, so the spread becomes padding.",
	}, {
		What:    "Triton's throughput is configurable via batch size",
		Article: "report 003; Triton's dynamic batcher forms batches up to max_batch_size within max_queue_delay_microseconds",
		Model:   fmt.Sprintf("dynamic batcher %s tok/s vs static %s at max_batch_size %d; %+.1f%% to %+.1f%% over %d seeds", kit.Comma(int(r.dynamic.tokPerS)), kit.Comma(int(r.static.tokPerS)), r.slots, 100*lo, 100*hi, len(r.seeds)),
		Why:     "Batch size sets how many requests share each step; the batcher's delay trades waiting for fuller batches. It does not change how a batch runs, so it keeps the padding continuous batching removes.",
	}, {
		What:    "Triton serves LLMs with in-flight batching",
		Article: "Triton's TensorRT-LLM backend: batching_strategy inflight_fused_batching, in-flight (continuous) batching (tensorrtllm_backend docs/model_config.md); the dynamic batcher (batcher.md) is request-level",
		Model:   fmt.Sprintf("continuous batching %s tok/s, %.2f× the dynamic batcher's %s at %d slots", kit.Comma(int(r.cont.tokPerS)), r.cont.tokPerS/r.dynamic.tokPerS, kit.Comma(int(r.dynamic.tokPerS)), r.slots),
		Why:     "The lesson's dynamic batcher is Triton's request-level one, which applies to backends without in-flight batching; an LLM served by Triton's TensorRT-LLM backend is batched like the lesson's continuous server.",
	}}
}

func (r batchingRun) metrics() []lessons.Metric {
	out := []lessons.Metric{}
	for _, x := range []*servedRun{r.static, r.dynamic, r.cont, r.wide} {
		out = append(out,
			lessons.Metric{Key: "throughput_tok_s_" + x.key, Label: "Output throughput, " + x.name, Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(x.tokPerS)},
			lessons.Metric{Key: "ttft_p50_ms_" + x.key, Label: "p50 TTFT, " + x.name, Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(x.ttft.P50)},
			lessons.Metric{Key: "goodput_req_s_" + x.key, Label: "Goodput, " + x.name, Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(x.goodput)})
	}
	for _, x := range []*servedRun{r.static, r.dynamic, r.cont, r.wide} {
		out = append(out, kit.LatencyReport{TTFT: x.ttft, TPOT: x.tpot, E2E: x.e2e}.MetricsSuffixed("_"+x.key, x.name)...)
	}
	for _, x := range []*servedRun{r.static, r.dynamic, r.cont, r.wide} {
		out = append(out, x.cost.MetricsSuffixed("_"+x.key, x.name)...)
	}
	fs, fd := r.static.factors(), r.dynamic.factors()
	return append(out,
		lessons.Metric{Key: "padding_pct_static", Label: "Slot time spent padding, static batching", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(100 * fs.paddingShare)},
		lessons.Metric{Key: "padding_pct_dynamic", Label: "Slot time spent padding, dynamic batcher", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(100 * fd.paddingShare)},
		lessons.Metric{Key: "idle_slots_pct_dynamic", Label: "Slot time left empty, dynamic batcher", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(100 * fd.idleShare)},
		lessons.Metric{Key: "waiting_idle_s_static", Label: "GPU idle while requests waited, static batching", Unit: "s", Better: lessons.LowerIsBetter, Value: kit.Round2(r.static.waste.WaitingIdle)},
		lessons.Metric{Key: "continuous_over_static", Label: "Continuous over static throughput, same slots", Unit: "×", Value: kit.Round2(r.cont.tokPerS / r.static.tokPerS)},
		lessons.Metric{Key: "batches_static", Label: "Static batches", Unit: "batches", Value: float64(r.static.batches)},
		lessons.Metric{Key: "batches_dynamic", Label: "Dynamic batches", Unit: "batches", Value: float64(r.dynamic.batches)},
	)
}

func (r batchingRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	s.Steps = append(s.Steps, r.introSteps()...)
	s.Steps = append(s.Steps, r.resultSteps()...)
	s.Steps = append(s.Steps, r.sweepSteps()...)
	s.Steps = append(s.Steps, lessons.Step{Title: "Published figures vs this model",
		Narration: fmt.Sprintf("Orca and Anyscale report far larger ratios than the %.2f× this model gives at equal slots; the table says why. The model's figure comes from padding and waiting alone, on one GPU priced the same for all three.", r.cont.tokPerS/r.static.tokPerS),
		Scenes:    []scene.Scene{kit.ClaimsTable(s.Claims)}})
	kit.IndexCursors(s.Steps)
	s.Work = r.work
	return s
}

// streamsDecode reports whether a decode step of n sequences is streamed
// by d: n pads to no captured size within max_num_seqs.
func streamsDecode(d cudagraph.Dispatcher, n int) bool {
	p, ok := d.Pad(n)
	return d.Mode == cudagraph.None || !ok || (d.Mode != cudagraph.Full && p > d.MaxNumSeqs) || d.Mode == cudagraph.Piecewise
}
