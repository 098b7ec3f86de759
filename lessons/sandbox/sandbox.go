// Package sandbox holds the lesson sandbox: all parts. Compose a cluster
// (GPU, model, CUDA-graph mode, workers, router policy) and a workload, run
// it, and read the dashboard.
//
// Its capacity under the SLO (capacity.go) is core/slo's steady-state
// search, and "steady enough" is decided there for the run length (a probe
// serves enough requests for an overload of the tolerance to push the
// deciding request past its limit on waiting, and past the arrivals'
// noise; the first and last tenth by arrival are not judged) and here for
// what a probe draws: its own stream of the workload, whatever the
// requests and rate knobs say; lengths stratified over the whole
// distribution (stratified.go), so that a seed's few longest requests do
// not decide the answer; and for conversations, a ramp until their
// later turns arrive within half the tolerance of the rate probed
// (ramp.go). The run and the search together count at most the search's
// budget, which keeps every setting within 2 s of CPU; where the
// probes the answer needs do not fit (a large cluster's, or any
// conversation workload's on the quick search), the search stops and the
// lesson reports the highest rate met, a lower bound, and says so.
package sandbox

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "sandbox",
	Title:   "Sandbox: build a cluster, send it traffic, read the dashboard",
	Part:    "All parts",
	Summary: "Pick GPUs, a model, a router and a workload (multi-turn chats, shared system prompts or independent prompts) and see throughput, TTFT, ITL, cache hits and load balance.",
	Engine: "core/cluster: vLLM v1 workers (chunked prefill, prefix caching, CUDA graphs) behind a Dynamo-style router with the chosen policy; steps priced by core/hardware. " +
		"Simplified: aggregated workers, no network latency, open-loop arrivals.",
	Group: "whole", Rank: 20, Thumb: scene.KindCluster,
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam, kit.TPParam(), kit.WeightParam, kit.GraphParam,
		{Key: "workers", Label: "Workers", Kind: lessons.Int, Default: 4, Min: 1, Max: 16, Step: 1},
		{Key: "policy", Label: "Router policy", Kind: lessons.Choice, Choices: []string{"kv_aware", "round_robin", "least_loaded", "random", "cache_aware"}},
		{Key: "workload", Label: "Workload", Help: "chats: multi-turn conversations that grow; shared: independent prompts opening with shared system prompts; plain: nothing shared. Or a real trace: Azure's 2023 conversation or code-completion service (CC-BY 4.0), or Mooncake's (Kimi) conversations, whose block hashes say which prompts share history (Apache-2.0).", Kind: lessons.Choice, Choices: []string{"chats", "shared", "plain", "azure-conv", "azure-code", "mooncake-conversation"}},
		{Key: "requests", Label: "Requests (chats: conversations × 4 turns; a trace: its first requests)", Kind: lessons.Int, Default: 200, Min: 4, Max: 2000, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s (chats: conversations/s)", Help: "A trace keeps its arrival pattern, its times scaled so that requests come at this mean rate.", Kind: lessons.Float, Default: 8, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "max_num_batched_tokens", Label: "max_num_batched_tokens", Unit: "tokens", Help: "Most tokens one step computes. vLLM's default for `vllm serve` is 8,192 on H100, H200 and B200, 2,048 on A100, L4 and L40S.", Kind: lessons.Int, Default: 8192, Min: 64, Max: 65536, Step: 64},
		{Key: "max_num_seqs", Label: "max_num_seqs", Help: "Most requests running at once on each worker. vLLM's default for `vllm serve` is 1,024 on H100, H200 and B200, 256 on A100, L4 and L40S.", Kind: lessons.Int, Default: 1024, Min: 1, Max: 2048, Step: 1},
		sandboxSLOParams[0], sandboxSLOParams[1], kit.SLOKnobs[0], kit.SLOKnobs[1], searchParam,
		kit.PriceParam, kit.PowerParam,
		kit.SeedParam,
	},
	Check: kit.CheckingCosts(func(v lessons.Values) error {
		if seqs, budget := v.Int("max_num_seqs"), v.Int("max_num_batched_tokens"); budget < seqs {
			return lessons.Relation("max_num_batched_tokens", strconv.Itoa(budget), fmt.Sprintf("at least max_num_seqs (%d), as vLLM requires", seqs), "max_num_seqs")
		}
		if b, ok := sandboxBounds(v.Choice("workload")); ok {
			return checkSandboxPreset(v, b)
		}
		work := sandboxGeneratedWorkload(v)
		if err := sandboxFit(v, longestOf(work)); err != nil {
			return err
		}
		return kit.WorkBound(v, "requests", "2 × prompt + 16 × output tokens summed over the workload's requests, and "+pricedRule(v), sandboxWork(v, work), kit.ServingCheckWork)
	}),
	Sim:          sim{},
	MoE:          true,
	TraceIgnores: []string{"workload", "requests", "rate"},
	// The run's bound and the capacity search's budget, its last probe
	// over by at most as much again.
	MaxWork: kit.ServingMaxWork + 2*searchBudget[kit.Precise],
	// The heaviest accepted settings of each workload, the smallest KV pool
	// (L4: preemptions), one request at a time with the
	// smallest budget, and 16 workers behind the cache-aware router; then
	// what `make bench-corners`' seeded search found heaviest: requests
	// served alone with every step priced kernel by kernel (graph_mode
	// piecewise or none).
	HeavyCorners: []map[string]string{
		{"requests": "875", "rate": "1000"},
		{"requests": "815", "rate": "1000", "workload": "shared"},
		{"requests": "1316", "rate": "0.1", "workload": "plain"},
		{"requests": "1316", "rate": "1000", "workload": "plain", "gpu": "l4", "max_num_seqs": "2048"},
		{"requests": "455", "workers": "1", "max_num_seqs": "1", "max_num_batched_tokens": "64"},
		{"requests": "875", "rate": "1000", "workers": "16", "policy": "cache_aware"},
		{"requests": "379", "rate": "0.1", "workload": "plain", "graph_mode": "piecewise"},
		{"requests": "379", "rate": "0.1", "workload": "plain", "graph_mode": "none"},
		// The heaviest `make bench-corners`' seeded search found (BENCHMARKS.md,
		// "Worst settings found by search").
		{"requests": "1316", "rate": "0.3688", "workload": "plain"},
		// With a capacity search (capacity.go; the run and the search share
		// one budget): fewer requests per workload, on the smallest KV
		// pool, kernel by kernel and one request at a time; and searches
		// that bisect with every probe, one on the L4 with preemptions.
		{"requests": "443", "rate": "1000"},
		{"requests": "659", "rate": "0.1", "workload": "plain"},
		{"requests": "659", "rate": "1000", "workload": "plain", "gpu": "l4", "max_num_seqs": "2048"},
		{"requests": "194", "rate": "0.1", "workload": "plain", "graph_mode": "none"},
		{"requests": "231", "workers": "1", "max_num_seqs": "1", "max_num_batched_tokens": "64"},
		{"requests": "111", "rate": "1000", "workload": "shared"},
		{"requests": "201", "rate": "62.5", "workload": "plain", "gpu": "l4", "max_num_seqs": "2048", "slo_ttft_ms": "1000"},
		// FP8 weights and TP 8 at the capacity search's edges.
		{"requests": "659", "rate": "1000", "workload": "plain", "gpu": "l4", "max_num_seqs": "2048", "weight_dtype": "fp8"},
		{"requests": "194", "rate": "0.1", "workload": "plain", "graph_mode": "none", "tp": "8"},
		// The real traces: the most requests Check allows of each, sparse
		// and dense, and fewer beside a capacity search.
		{"requests": "1072", "rate": "0.1", "workload": "azure-conv"},
		{"requests": "687", "rate": "1000", "workload": "azure-code"},
		{"requests": "180", "rate": "1000", "workload": "mooncake-conversation"},
		{"requests": "147", "rate": "0.1", "workload": "mooncake-conversation", "graph_mode": "none"},
		{"requests": "570", "rate": "0.1", "workload": "azure-conv"},
		{"requests": "686", "rate": "0.1", "workload": "azure-code"},
		{"requests": "180", "rate": "0.1", "workload": "mooncake-conversation"},
	},
}

func init() { lessons.Register(lesson) }

// sandboxWork bounds what serving work costs the sandbox's simulation:
// RequestWork, and what pricing its steps kernel by kernel adds under the
// knobs' graph_mode (PricedRequestWork).
func sandboxWork(v lessons.Values, work []workload.Request) int64 {
	m, err := hardware.ModelByID(v.Choice("model"))
	if err != nil {
		return kit.RequestWork(work)
	}
	return kit.RequestWork(work) + kit.PricedRequestWork(work, kit.GraphMode(v), m, kit.WorkerTP(v), v.Int("max_num_seqs"), v.Int("max_num_batched_tokens"))
}

// withDefaultGraphs is v with graph_mode at vLLM's default.
func withDefaultGraphs(v lessons.Values) lessons.Values {
	return v.WithChoice("graph_mode", cudagraph.Default.Key())
}

// pricedRule says in the knobs' terms what PricedRequestWork counts.
func pricedRule(v lessons.Values) string {
	m, err := hardware.ModelByID(v.Choice("model"))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d per step priced kernel by kernel (%s's %d layers: with graph_mode %s, every prefill chunk of max_num_batched_tokens%s)",
		kit.StreamedWorkTP(m, kit.WorkerTP(v)), m.Name, m.Layers, v.Choice("graph_mode"), map[bool]string{true: " and every output token", false: ""}[kit.GraphMode(v) == cudagraph.None || kit.GraphMode(v) == cudagraph.Piecewise])
}

// sandboxFit is the shared feasibility check (hardware.Fit) for one worker
// serving requests of up to longest tokens: the model on one GPU with activations at
// max_num_batched_tokens, and the longest request's KV beside them within
// the model's positions (vLLM refuses a longer request). More requests
// than fit at once queue or are preempted in the simulation, and the
// dashboard counts the preemptions.
func sandboxFit(v lessons.Values, longest int) error {
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	if err := kit.CheckTP(v, m); err != nil {
		return err
	}
	budget := v.Int("max_num_batched_tokens")
	fit := kit.EngineFit(v, g, m)
	fit.BatchedTokens, fit.KVTokens, fit.Positions = budget, int64(longest), longest
	knobs := kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "model", hardware.LimitPositions: "model"}
	if budget > 8192 {
		// Weights that fit at vLLM's default budget but not at this one
		// fail on the activations the budget needs.
		def := fit
		def.BatchedTokens = 8192
		if def.Check() == nil {
			knobs[hardware.LimitWeights] = "max_num_batched_tokens"
		}
	}
	return kit.CheckFit(v, fit, knobs)
}

// sandboxTurns is the number of turns of each chat conversation.
const sandboxTurns = 4

func sandboxPolicy(name string, cfg router.KvRouterConfig, seed uint64) router.Policy {
	switch name {
	case "round_robin":
		return router.NewRoundRobin()
	case "least_loaded":
		return router.LeastLoaded{}
	case "random":
		return router.NewRandom(seed)
	case "cache_aware":
		return router.NewCacheAware(router.DefaultCacheAwareConfig())
	}
	return router.NewKVAware(nil, cfg, seed)
}

// sandboxWorkload is the knobs' workload, generated or replayed from a
// trace preset, fitted to the model's context (fitContext).
func sandboxWorkload(v lessons.Values) []workload.Request {
	w, _ := sandboxGenerated(v)
	return w
}

// sandboxGeneratedWorkload is sandboxWorkload for a generated workload
// only: Check calls it, and it never loads a preset, so the page's knob
// checks link none of the presets' files.
func sandboxGeneratedWorkload(v lessons.Values) []workload.Request {
	w, _ := fitModelContext(v, sandboxGeneratedDraw(v))
	return w
}

// sandboxGenerated draws the knobs' workload and fits it to the chosen
// model's context, saying how (cut.requests is 0 when nothing was cut).
func sandboxGenerated(v lessons.Values) ([]workload.Request, contextCut) {
	if _, ok := sandboxBounds(v.Choice("workload")); ok {
		return fitModelContext(v, sandboxReplay(v))
	}
	return fitModelContext(v, sandboxGeneratedDraw(v))
}

// fitModelContext fits w to the chosen model's context (fitContext).
func fitModelContext(v lessons.Values, w []workload.Request) ([]workload.Request, contextCut) {
	m, err := hardware.ModelByID(v.Choice("model"))
	if err != nil {
		return w, contextCut{} // Check refuses the model
	}
	return fitContext(w, m)
}

// longestOf is the most tokens, prompt and output, of any request of w.
func longestOf(w []workload.Request) int {
	longest := 0
	for _, r := range w {
		longest = max(longest, r.Prompt+r.Output)
	}
	return longest
}

// sandboxGeneratedDraw draws the knobs' generated workload as the
// generators make it.
func sandboxGeneratedDraw(v lessons.Values) []workload.Request {
	return sandboxDrawWith(v, func(l workload.Lengths, _ int, _ uint64) workload.Lengths { return l })
}

// lengthsOf is how a draw takes the lengths l of its n requests (stream
// names which lengths they are).
type lengthsOf func(l workload.Lengths, n int, stream uint64) workload.Lengths

// sandboxDrawWith draws the knobs' generated workload with lengths from
// of: the generators' own, or stratified (probeDraw).
func sandboxDrawWith(v lessons.Values, of lengthsOf) []workload.Request {
	seed := uint64(v.Int("seed"))
	n, rate := v.Int("requests"), v.Float("rate")
	var w []workload.Request
	switch v.Choice("workload") {
	case "chats":
		c := max(1, n/sandboxTurns)
		w = workload.Chats(c, sandboxTurns, of(sandboxSystemPrompt, sandboxSystemPrompts, streamSystem), of(workload.ChatPrompts(), c*sandboxTurns, streamPrompt),
			of(workload.ChatOutputs(), c*sandboxTurns, streamOutput), sandboxSystemPrompts, sandboxThinkTime, rate, seed)
	case "shared":
		w = workload.SharedPrefix(workload.Poisson(n, rate, of(sandboxSharedPrompt, n, streamPrompt), of(workload.ChatOutputs(), n, streamOutput), seed), sandboxSystemPrompts, sandboxSharedPrefix, seed)
	default:
		w = workload.Poisson(n, rate, of(workload.ChatPrompts(), n, streamPrompt), of(workload.ChatOutputs(), n, streamOutput), seed)
	}
	return w
}

// The generated workloads' shapes: chats' system prompts and think time
// between turns (s), and the shared workload's prompts and the system
// prompt they open with.
var (
	sandboxSystemPrompt = workload.Uniform{Min: 256, Max: 1024}
	sandboxSharedPrompt = workload.Uniform{Min: 1024, Max: 3072}
)

const (
	sandboxSystemPrompts = 4
	sandboxThinkTime     = 5.0
	sandboxSharedPrefix  = 768
)

// The shuffles of stratified lengths, one stream per kind of length.
const (
	streamSystem = iota + 1
	streamPrompt
	streamOutput
)

// contextMargin is the tokens a generated request leaves free of the
// model's positions, for the chat template's special tokens.
const contextMargin = 64

// contextCut says how fitContext cut a workload: requests of the total were
// longer than limit tokens (the model's positions less contextMargin);
// their outputs were cut to at most maxOutput, then their prompts' ends.
type contextCut struct {
	model            hardware.Model
	requests, total  int
	limit, maxOutput int
}

// fitContext cuts every request of w longer than m's positions less
// contextMargin, as a load generator fits its dataset to the model: the
// output to at most half the limit, then the prompt's end (its first
// tokens, and the prefixes and history they share, stay). Deterministic;
// w is not modified.
func fitContext(w []workload.Request, m hardware.Model) ([]workload.Request, contextCut) {
	c := contextCut{model: m, total: len(w), limit: kit.ContextLimit(m.MaxPositions) - contextMargin}
	c.maxOutput = c.limit / 2
	out := w
	for i, r := range w {
		if r.Prompt+r.Output <= c.limit {
			continue
		}
		if c.requests == 0 {
			out = slices.Clone(w)
		}
		c.requests++
		r.Output = min(r.Output, c.maxOutput)
		r.Prompt = min(r.Prompt, c.limit-r.Output)
		r.PrefixLen = min(r.PrefixLen, r.Prompt)
		out[i] = r
	}
	return out, c
}

// text is the narration's sentence on the cut, "" when nothing was cut.
func (c contextCut) text() string {
	if c.requests == 0 {
		return ""
	}
	return fmt.Sprintf(" %s of the %s generated requests were longer than %s's %s positions allow, so, as a load generator fits its dataset to the model, their outputs were cut to at most %s tokens and then their prompts' ends, to at most %s tokens in all (%d left for the chat template).",
		kit.Comma(c.requests), kit.Comma(c.total), c.model.Name, kit.Comma(c.model.MaxPositions), kit.Comma(c.maxOutput), kit.Comma(c.limit), contextMargin)
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	w, cut := sandboxGenerated(v)
	r, err := runSandbox(v, w, "")
	if err != nil {
		return nil, err
	}
	r.cut = cut
	if _, ok := sandboxBounds(r.workload); ok {
		r.replayed = presetText(r.workload, w, r.rate)
	}
	if r.capacity, err = searchSandboxCapacity(v, r); err != nil {
		return nil, err
	}
	return r.script(), nil
}

// SimulateTrace runs the sandbox on the given requests; trace names
// their source when they come from a file. A trace is not cut: a request
// longer than the model's positions is refused, as vLLM refuses it.
func (sim) SimulateTrace(v lessons.Values, work []workload.Request, trace string) (*lessons.Script, error) {
	r, err := runSandbox(v, work, trace)
	if err != nil {
		return nil, err
	}
	if r.capacity, err = searchSandboxCapacity(v, r); err != nil {
		return nil, err
	}
	return r.script(), nil
}

// traceWork is the sandbox's bound on a trace (Lesson.TraceWork): the
// work of serving it once without preemption (RequestWork) within
// ServingCheckWork, as Check holds the generated workloads.
func (sim) TraceWork() (perPrompt, perOutput, bound int64) {
	return 2, cluster.DecodeWeight, kit.ServingCheckWork
}

// sandboxRun is one sandbox run: the cluster's result and the figures the
// dashboard shows.
type sandboxRun struct {
	e                       *kit.Engine
	workers                 int
	policy, workload, graph string
	rate                    float64
	seqs, budget            int        // max_num_seqs and max_num_batched_tokens
	cut                     contextCut // how the generated requests were fitted to the model's context
	trace                   string     // the trace's name, "" for generated requests
	replayed                string     // what a preset's replay is (presetText), "" for none
	lastArrival             float64    // of the trace's requests
	requests, promptTokens  int
	res                     *cluster.Result
	routing                 kit.RoutingRun
	ttft, itl               scheduler.Percentiles
	outputs, preemptions    int
	makespan                float64          // first arrival to last token, s
	streamed                int64            // Script.Work of the steps priced kernel by kernel (streamCounter)
	capacity                *sandboxCapacity // the capacity search around rate (sandbox_capacity.go)
	cost                    kit.RunCost      // what the run cost (kit.CostOf)
}

// runSandbox serves work on the knobs' cluster.
func runSandbox(v lessons.Values, work []workload.Request, trace string) (*sandboxRun, error) {
	if trace != "" {
		// The page's bound, or through RunTraceNative the native one
		// (Values.TraceWorkBound).
		bound, within := int64(kit.ServingCheckWork), "re-simulates in about a second"
		if b := v.TraceWorkBound(); b > bound {
			bound, within = b, "runs natively within the command line's bound"
		}
		if w := kit.RequestWork(work); w > bound {
			// ParseTrace refuses such a file (TraceLimits); this is for
			// requests handed to RunTrace directly.
			return nil, &workload.TraceError{Msg: fmt.Sprintf("sandbox: the trace %s is too heavy to simulate here: its %d requests need %s of work (2 × prompt + 16 × output tokens summed), at most %s",
				trace, len(work), kit.Comma64(w), kit.Comma64(bound))}
		}
		if err := sandboxFit(v, longestOf(work)); err != nil {
			return nil, fmt.Errorf("sandbox: the trace %s: %w", trace, err)
		}
		// The trace's bound (TraceWork) holds in vLLM's default graph mode,
		// where its heaviest traces were measured (BENCHMARKS.md); another
		// mode adds what pricing more of its steps kernel by kernel costs.
		if w := kit.RequestWork(work) + sandboxWork(v, work) - sandboxWork(withDefaultGraphs(v), work); w > bound {
			return nil, lessons.Relation("graph_mode", v.Choice("graph_mode"), fmt.Sprintf("a mode with which the trace %s %s: its work (2 × prompt + 16 × output tokens, and %s) is %s, over %s",
				trace, within, pricedRule(v), kit.Comma64(w), kit.Comma64(bound)), "max_num_batched_tokens", "max_num_seqs", "model")
		}
	}
	e, err := kit.NewEngineAt(v, 16, v.Int("max_num_batched_tokens"))
	if err != nil {
		return nil, err
	}
	r := &sandboxRun{e: e, workers: v.Int("workers"), policy: v.Choice("policy"), workload: v.Choice("workload"), graph: v.Choice("graph_mode"),
		rate: v.Float("rate"), trace: trace, requests: len(work), seqs: v.Int("max_num_seqs"), budget: v.Int("max_num_batched_tokens")}
	sc := scheduler.Config{MaxNumBatchedTokens: v.Int("max_num_batched_tokens"), MaxNumSeqs: v.Int("max_num_seqs"), ChunkedPrefill: true, BlockSize: 16, NumBlocks: e.KVBlocks}
	timer := e.CountingTimer(sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	seed := uint64(v.Int("seed"))
	var reqs []cluster.Request
	for _, w := range work {
		reqs = append(reqs, cluster.Request{ID: w.ID, Arrival: w.Arrival, PromptIDs: w.TokenIDs(), Output: w.Output, OutputIDs: w.OutputTokenIDs(), Group: w.PrefixGroup})
		r.promptTokens += w.Prompt
		r.lastArrival = max(r.lastArrival, w.Arrival)
	}
	policy := sandboxPolicy(r.policy, router.KvRouterConfig{OverlapScoreWeight: 1, BlockSize: sc.BlockSize}, seed)
	r.res, err = cluster.Run(cluster.Config{Workers: r.workers, Scheduler: sc, Timer: func(int) scheduler.Timer { return timer }, Policy: policy}, reqs)
	if err != nil {
		return nil, lessons.Relation("max_num_batched_tokens", strconv.Itoa(sc.MaxNumBatchedTokens), "a budget and KV pool that hold every request ("+err.Error()+")")
	}
	r.streamed = timer.Extra
	r.routing = kit.SummariseRouting(r.policy, r.res)
	var ttft, itl []float64
	start, end := 1e18, 0.0
	for _, m := range r.res.Requests {
		ttft = append(ttft, m.TTFT)
		itl = append(itl, m.ITL...)
		r.outputs += m.Output
		r.preemptions += m.Preemptions
		start, end = min(start, m.Arrival), max(end, m.Arrival+m.E2E)
	}
	r.ttft, r.itl = scheduler.Summarise(ttft), scheduler.Summarise(itl)
	r.makespan = max(end-start, 1e-9)
	in, out, held := kit.ServedTokens(r.res.Requests)
	usd, watts := kit.CostRates(v, e.GPU)
	r.cost = kit.CostOf(usd, watts, []kit.GPUPool{{GPUs: r.workers * e.TP, Held: held, Busy: r.res.Busy}}, in, out)
	return r, nil
}

func (r *sandboxRun) script() *lessons.Script {
	s := &lessons.Script{Metrics: append(r.metrics(), kit.LatencyReportFrom(r.res.Requests).Metrics()...), Work: r.res.Counts.Work() + r.streamed}
	s.Steps = r.steps(s.Metrics)
	s.Metrics = append(s.Metrics, r.cost.Metrics()...)
	r.addCapacity(s)
	kit.IndexCursors(s.Steps)
	return s
}

func (r *sandboxRun) metrics() []lessons.Metric {
	gpus := float64(r.workers * r.e.TP)
	return []lessons.Metric{
		{Key: "throughput_tok_s", Label: "Output throughput", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(float64(r.outputs) / r.makespan)},
		{Key: "throughput_per_gpu_tok_s", Label: "Output throughput per GPU", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(float64(r.outputs) / r.makespan / gpus)},
		{Key: "ttft_p50_ms", Label: "TTFT p50", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.ttft.P50)},
		{Key: "ttft_p99_ms", Label: "TTFT p99", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.ttft.P99)},
		{Key: "itl_p50_ms", Label: "ITL p50", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.itl.P50)},
		{Key: "itl_p99_ms", Label: "ITL p99", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.itl.P99)},
		{Key: "hit_rate_pct", Label: "Prompt tokens found in a prefix cache", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * r.routing.HitTokens)},
		{Key: "imbalance", Label: "Busiest worker's mean active requests / the mean", Unit: "× the mean", Better: lessons.LowerIsBetter, Value: kit.Round2(r.routing.Imbalance)},
		{Key: "preemptions", Label: "Preemptions", Unit: "preemptions", Better: lessons.LowerIsBetter, Value: float64(r.preemptions)},
		{Key: "requests", Label: "Requests served", Unit: "requests", Value: float64(len(r.res.Requests))},
	}
}

// clusterScene is the sandbox's cluster: the router with its policy and
// each worker as the run ended (t < 0) or, before it, empty. Under the
// shared workload the cache bars split by system prompt.
func (r *sandboxRun) clusterScene(title string, end bool, stats []scene.Stat, lines func(w int) []string, marks []scene.Mark) scene.Scene {
	c := &scene.Cluster{Router: "router: " + r.policy + " " + sandboxPolicyText[r.policy], CacheLabel: "blocks the router's index holds (16 tokens each)", CacheUnit: "blocks", Stats: stats}
	var cached [][]int
	if r.workload == "shared" && r.trace == "" {
		c.Groups = kit.PromptGroups(4)
		cached = kit.CachedByPrompt(r.res.Index, kit.PromptHashes(4, 768, 16), r.workers)
	}
	if end {
		c.QueueLabel, c.QueueUnit = "requests running + waiting, mean over the run", "in flight"
		p := kit.EndPool(fmt.Sprintf("%d workers (%s, %s)", r.workers, r.e.GPUsText(), r.e.ModelText()), "", r.routing, nil)
		for w := range p.Workers {
			var per []int
			if cached != nil {
				per = cached[w]
			}
			p.Workers[w].Cache = kit.CacheFills(per, r.res.Index.Blocks(w))
			if lines != nil {
				p.Workers[w].Lines = lines(w)
			}
		}
		c.Pools = []scene.Pool{p}
	} else {
		p := scene.Pool{Label: fmt.Sprintf("%d workers (%s, %s)", r.workers, r.e.GPUsText(), r.e.ModelText())}
		for w := 0; w < r.workers; w++ {
			p.Workers = append(p.Workers, scene.Worker{ID: "W" + strconv.Itoa(w+1), Lines: []string{fmt.Sprintf("%s KV blocks", kit.Comma(r.e.KVBlocks))}})
		}
		c.Pools = []scene.Pool{p}
	}
	return scene.Scene{Kind: scene.KindCluster, ID: "cluster", Title: title, Main: true, Marks: marks, Cluster: c}
}

// sandboxPolicyText says in a few words what each policy looks at.
var sandboxPolicyText = map[string]string{
	"kv_aware":     "(Dynamo: cost = prefill blocks + decode blocks, lowest wins)",
	"round_robin":  "(each worker in turn, caches ignored)",
	"least_loaded": "(fewest requests in flight)",
	"random":       "(a seeded random worker)",
	"cache_aware":  "(SGLang: longest cached prefix unless the load is unbalanced)",
}

// dashboardStats are the metrics as a dashboard.
func dashboardStats(metrics []lessons.Metric) []scene.Stat {
	var out []scene.Stat
	for _, m := range metrics {
		v := strconv.FormatFloat(m.Value, 'f', -1, 64)
		if m.Unit != "" {
			v += " " + m.Unit
		}
		out = append(out, scene.Stat{Label: m.Label, Value: v})
	}
	return out
}

// ttftChart is every request's TTFT by arrival.
func (r *sandboxRun) ttftChart() scene.Scene {
	ttft := scene.Series{Name: "TTFT", Type: scene.Scatter}
	for _, m := range r.res.Requests {
		ttft.X = append(ttft.X, kit.Round2(m.Arrival))
		ttft.Y = append(ttft.Y, kit.Ms(m.TTFT))
	}
	return scene.Scene{Kind: scene.KindChart, ID: "ttft", Title: "TTFT of each request by arrival time", Chart: &scene.Chart{Type: scene.Scatter, XLabel: "arrival", XUnit: "s", YLabel: "TTFT", YUnit: "ms", Series: []scene.Series{ttft}}}
}

// workerTable is each worker's share of the run.
func (r *sandboxRun) workerTable() scene.Scene {
	perWorker := &scene.Table{Columns: []string{"worker", "requests", "mean in flight", "TTFT p50", "TTFT p99", "prompt tokens cached"}}
	for w, wr := range r.res.Workers {
		perWorker.Rows = append(perWorker.Rows, []string{"W" + strconv.Itoa(w+1), strconv.Itoa(wr.Requests), fmt.Sprintf("%.1f", wr.MeanActive),
			fmt.Sprintf("%.1f ms", 1000*wr.Summary.TTFT.P50), fmt.Sprintf("%.1f ms", 1000*wr.Summary.TTFT.P99), fmt.Sprintf("%.1f%%", 100*wr.Summary.PrefixHitRate)})
	}
	return scene.Scene{Kind: scene.KindTable, ID: "workers", Title: "Workers", Table: perWorker}
}

// batchText ends the setup's sentence on the engine's limits: vLLM's
// defaults on this GPU, or what they would be.
func (r *sandboxRun) batchText() string {
	if note := kit.VLLMBatchNote(r.e.GPU, r.seqs, r.budget); note != "" {
		return "." + note
	}
	return ", vLLM's defaults on this GPU."
}

// steps narrates the run.
func (r *sandboxRun) steps(metrics []lessons.Metric) []lessons.Step {
	gpus := float64(r.workers * r.e.TP)
	rate := fmt.Sprintf("at %g per second", r.rate)
	if r.workload == "chats" {
		// the rate knob counts conversations; each brings its turns
		rate = fmt.Sprintf("as %g conversations per second (%s req/s)", r.rate, figureText(r.rate*sandboxTurns))
	}
	kind := map[string]string{"chats": fmt.Sprintf("%d-turn conversations whose prompts grow with every turn", sandboxTurns),
		"shared": "independent prompts opening with one of 4 shared system prompts", "plain": "independent chat-like prompts that share nothing"}[r.workload]
	if r.trace != "" {
		rate = fmt.Sprintf("over %.1f s", r.lastArrival)
		kind = "from the trace " + r.trace
	} else if r.replayed != "" {
		rate = fmt.Sprintf("at a mean %g per second", r.rate)
		kind = "replayed from a real trace: " + r.replayed
	}
	thr := float64(r.outputs) / r.makespan
	setup := fmt.Sprintf("%d requests (%s) arrive %s at %s serving %s, routed by %s. Each worker is a vLLM v1 engine with chunked prefill, prefix caching and %s CUDA graphs, "+
		"running at most %s requests at once (max_num_seqs) and %s tokens a step (max_num_batched_tokens)%s%s%s",
		r.requests, kind, rate, r.e.WorkersText(r.workers), r.e.ModelText(), r.policy, r.graph, kit.Comma(r.seqs), kit.Comma(r.budget), r.batchText(), r.cut.text(), kit.PrecisionNote(r.e))
	if r.replayed != "" {
		setup += presetNote(r.workload)
	}
	a := &kit.Annotator{Scene: "cluster"}
	a.Mark("router:R", r.policy, "routed by "+r.policy, setup)
	dash := fmt.Sprintf("%s output tokens/s (%s per GPU). TTFT p50 %.1f ms, p99 %.1f ms; ITL p50 %.1f ms, p99 %.1f ms. %.1f%% of prompt tokens came from a prefix cache; the busiest worker carried %.2f× the mean load; %d preemptions.",
		kit.Comma(int(thr)), kit.Comma(int(thr/gpus)), 1000*r.ttft.P50, 1000*r.ttft.P99, 1000*r.itl.P50, 1000*r.itl.P99, 100*r.routing.HitTokens, r.routing.Imbalance, r.preemptions)
	b := &kit.Annotator{Scene: "cluster"}
	busiest := "worker:W" + strconv.Itoa(r.routing.Busiest()+1)
	b.Mark(busiest, fmt.Sprintf("busiest: %.2f× the mean", r.routing.Imbalance), "the busiest worker", dash)
	per := "How the router spread the work, and what each worker's cache gave back."
	c := &kit.Annotator{Scene: "cluster"}
	c.Mark(busiest, "busiest", "", per)
	c.Mark("router:R", r.policy, "the router", per)
	served := func(w int) []string {
		wr := r.res.Workers[w]
		return []string{fmt.Sprintf("served %d", wr.Requests), fmt.Sprintf("TTFT p50 %.0f ms", 1000*wr.Summary.TTFT.P50), fmt.Sprintf("prefix hit %.0f%%", 100*wr.Summary.PrefixHitRate)}
	}
	return []lessons.Step{{
		Title: "The setup", Narration: setup, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.clusterScene("The cluster before the first request", false, nil, nil, a.Marks)},
		Quiz: lessons.ChoiceQuiz(fmt.Sprintf("With %s routing this workload, will more than a third of the prompt tokens be found in a prefix cache?", r.policy),
			[]string{"yes", "no"}, map[bool]string{true: "yes", false: "no"}[r.routing.HitTokens > 1.0/3],
			fmt.Sprintf("%.1f%% were.", 100*r.routing.HitTokens)),
	}, {
		Title: "The dashboard", Narration: dash, Mentions: b.Mentions,
		Scenes: []scene.Scene{r.clusterScene("The cluster at the end of the run, with its dashboard", true, dashboardStats(metrics), nil, b.Marks), r.ttftChart()},
	}, {
		Title: "Per worker", Narration: per, Mentions: c.Mentions,
		Scenes: []scene.Scene{r.clusterScene("What each worker served and what its cache gave back", true, nil, served, c.Marks), r.workerTable()},
	}}
}
