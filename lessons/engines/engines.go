// Package engines holds the lesson engines: Part 4, the landscape of
// inference engines. One stream of requests goes through vLLM v1, SGLang and
// TensorRT-LLM, each scheduling and caching as its source does, on the same
// GPU and the same KV bytes.
package engines

import (
	"fmt"
	"slices"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:  "engines",
	Title: "Three engines, one trace: vLLM, SGLang and TensorRT-LLM",
	Part:  "Part 4",
	Summary: "The same requests through vLLM v1's hashed 16-token blocks and mixed chunked batches, SGLang's page-size-1 radix cache and separate prefill batches, and TensorRT-LLM's 32-token blocks " +
		"under GUARANTEED_NO_EVICT or MAX_UTILIZATION: memories and queues side by side, and where each one wins.",
	Engine: "vLLM v1 (scheduler.py @ b4622cf, block 16, prefix caching, chunked prefill, recompute preemption), SGLang (radix_cache.py @ 95769b2, page size 1, fcfs, chunked_prefill_size by GPU memory, PrefillAdder and retraction) " +
		"and TensorRT-LLM (llm_args.py @ fcd3f31, capacityScheduler.cpp @ cf6abc4: tokens_per_block 32 with block reuse, max_num_tokens 8,192, max_batch_size 2,048, chunked prefill off). " +
		"Simplified: one H100 and Llama-3.1-8B priced by one step-time model for all three (with vLLM's CUDA-graph sizes), synchronous schedulers, each request's max_tokens equal to its output length, and TensorRT-LLM's reuse of whole blocks only (its partial reuse of a partly matching block is not modelled).",
	Group: "whole", Rank: 25, Thumb: scene.KindCluster,
	Terms: []lessons.Term{
		{Term: "GUARANTEED_NO_EVICT", Definition: "TensorRT-LLM's default capacity policy: a request starts only when the KV blocks for its whole prompt and output are free beside every running request's, so nothing is ever evicted.", Find: "GUARANTEED_NO_EVICT"},
		{Term: "MAX_UTILIZATION", Definition: "TensorRT-LLM's packing capacity policy: start requests while this step's blocks fit, and pause (free and later recompute) the last one started when memory runs out.", Find: "MAX_UTILIZATION"},
		{Term: "retraction", Definition: "SGLang's preemption: when decodes run out of KV slots, requests with the fewest outputs are sent back to the queue, their prefix left in the radix cache.", Find: "retract"},
	},
	Params: []lessons.Param{
		{Key: "workload", Label: "Workload", Help: "A generated stream sharing a few system prompts, or the first requests of a real trace: Azure LLM inference 2023, conversation (CC-BY 4.0), or Mooncake's conversation trace (Apache-2.0), requests up to 8,192 tokens.",
			Kind: lessons.Choice, Choices: []string{"shared-prefix", "azure-conv", "mooncake-conversation"}},
		{Key: "requests", Label: "Requests", Help: "How many requests of the stream (a trace: its first ones, in arrival order).", Kind: lessons.Int, Default: 160, Min: 20, Max: 300, Step: 10},
		{Key: "prefix", Label: "Shared prefix", Unit: "tokens", Help: "Generated stream: the system prompt each of 4 groups shares. Not a multiple of 16 or 32, and the block engines cannot reuse its last part.", Kind: lessons.Int, Default: 120, Min: 0, Max: 2000, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s", Help: "Generated stream: Poisson arrivals per second.", Kind: lessons.Int, Default: 40, Min: 1, Max: 200, Step: 1},
		{Key: "kv_tokens", Label: "KV memory", Unit: "tokens", Help: "The KV cache each engine gets, in tokens of Llama-3.1-8B (128 KiB each): the same bytes for all three, far less than an H100 holds, so that memory decides.", Kind: lessons.Int, Default: 40000, Min: 16384, Max: 200000, Step: 1024},
		{Key: "trt_policy", Label: "TensorRT-LLM capacity policy", Help: "GUARANTEED_NO_EVICT (the default) reserves each request's whole length; MAX_UTILIZATION packs and pauses.", Kind: lessons.Choice, Choices: []string{"guaranteed-no-evict", "max-utilization"}},
		kit.PriceParam, kit.PowerParam,
		kit.SeedParam,
	},
	Sim: sim{},
	// Work is every engine's steps, each priced (StreamedWork) and each
	// request it advanced counted: the longest runs are a stream spread
	// over 300 s (one request a second, or the Mooncake window), where
	// three engines step every few milliseconds with few requests each
	// (6.7 million units, 0.9 s natively).
	MaxWork: 9_000_000,
	HeavyCorners: []map[string]string{
		{"requests": "300", "rate": "1", "prefix": "2000", "kv_tokens": "200000"},
		{"requests": "300", "rate": "1", "kv_tokens": "16384", "trt_policy": "max-utilization"},
		{"requests": "300", "workload": "mooncake-conversation", "kv_tokens": "16384"},
		{"requests": "300", "workload": "mooncake-conversation", "kv_tokens": "200000"},
		{"requests": "300", "prefix": "2000", "rate": "200", "kv_tokens": "16384", "trt_policy": "max-utilization"},
	},
}

func init() { lessons.Register(lesson) }

type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runEngines(v))
}

// The engines' defaults the lesson runs (docs/SOURCES.md):
const (
	engVLLMBlock  = 16   // vLLM CacheConfig.DEFAULT_BLOCK_SIZE
	engTRTBlock   = 32   // TensorRT-LLM KvCacheConfig.tokens_per_block
	engTRTTokens  = 8192 // TensorRT-LLM max_num_tokens
	engTRTBatch   = 2048 // TensorRT-LLM max_batch_size
	engSGLPrefill = 16384
	engGroups     = 4   // system prompts of the generated stream
	engSnapshots  = 4   // side-by-side moments between start and end
	engCount      = 3   // engines compared
	engTrace      = 300 // seconds of the trace presets loaded
)

// engineOutcome is what one engine did with the stream.
type engineOutcome struct {
	key, name string
	steps     []scheduler.Step
	reqs      []scheduler.RequestMetrics
	sum       scheduler.Summary
	capacity  int         // KV tokens it could hold (whole blocks)
	peakHeld  float64     // most of its KV memory running requests held at once, share
	meanHeld  float64     // the same, averaged over its steps
	config    string      // its scheduler knobs, in words
	cost      kit.RunCost // what its run cost on one GPU (kit.CostOf)
}

// enginesRun is the typed run of the engines lesson.
type enginesRun struct {
	workload   string
	desc       string // the stream, in words
	requests   []workload.Request
	kvTokens   int
	trtPolicy  string
	shared     int // the shared prefix of the generated stream (0 for traces)
	vllmBudget int
	vllmSeqs   int
	sglChunk   int
	eng        [engCount]engineOutcome // vLLM, SGLang, TensorRT-LLM
	times      []float64               // the snapshots' moments, s
	leads      []engineLead
	work       int64
}

func runEngines(v lessons.Values) (*enginesRun, error) {
	g, m := hardware.MustGPU("h100-sxm"), hardware.MustModel("llama-3.1-8b")
	reqs, desc, shared, err := enginesStream(v)
	if err != nil {
		return nil, err
	}
	r := &enginesRun{workload: v.Choice("workload"), desc: desc, requests: reqs, kvTokens: v.Int("kv_tokens"), trtPolicy: v.Choice("trt_policy"), shared: shared}
	r.vllmBudget, r.vllmSeqs = scheduler.BatchDefaults(g, scheduler.APIServer)
	r.sglChunk = sglangChunkedPrefill(g)
	sm, err := hardware.NewStepModel(g, m, 1, hardware.BF16)
	if err != nil {
		return nil, err
	}
	sm.OverlapHost = true
	sm.Dispatcher = cudagraph.New(cudagraph.Default, r.vllmSeqs, r.vllmBudget)
	timer := scheduler.HardwareTimer{Model: sm}
	sreqs := schedulerRequests(reqs)
	if r.eng[0], err = runVLLM(timer, sreqs, r.kvTokens, r.vllmBudget, r.vllmSeqs); err != nil {
		return nil, err
	}
	if r.eng[1], err = runSGLang(timer, sreqs, r.kvTokens, r.sglChunk); err != nil {
		return nil, err
	}
	if r.eng[2], err = runTRT(timer, sreqs, r.kvTokens, r.trtPolicy); err != nil {
		return nil, err
	}
	usd, watts := kit.CostRates(v, g)
	for i, e := range r.eng {
		r.work += kit.StepsWork(e.steps) + int64(len(e.steps))*kit.StreamedWork(m)
		in, out, held := kit.ServedTokens(e.reqs)
		r.eng[i].cost = kit.CostOf(usd, watts, []kit.GPUPool{kit.StepsPool(1, held, e.steps)}, in, out)
	}
	r.times = snapshotTimes(r.eng[:])
	r.leads = enginesLeads(r.eng[:])
	return r, nil
}

// sglangChunkedPrefill is SGLang's chunked_prefill_size default by GPU
// memory (server_args.py, _handle_gpu_memory_settings): 2,048 below 35 GB,
// 4,096 below 60 GB, 8,192 below 160 GB (H100, H200), 16,384 above (B200).
func sglangChunkedPrefill(g hardware.GPU) int {
	gb := float64(g.MemoryBytes) / 1e9
	switch {
	case gb < 35:
		return 2048
	case gb < 60:
		return 4096
	case gb < 160:
		return 8192
	}
	return 16384
}

// enginesStream is the requests the knobs choose, a sentence on them, and
// the generated stream's shared prefix.
func enginesStream(v lessons.Values) ([]workload.Request, string, int, error) {
	n, seed := v.Int("requests"), uint64(v.Int("seed"))
	if w := v.Choice("workload"); w != "shared-prefix" {
		all, err := workload.LoadPreset(w, engTrace)
		if err != nil {
			return nil, "", 0, err
		}
		var out []workload.Request
		for _, q := range all {
			if q.Prompt+q.Output <= engTRTTokens && q.Prompt+q.Output <= v.Int("kv_tokens") && len(out) < n {
				q.ID = len(out)
				out = append(out, q)
			}
		}
		p, _ := workload.PresetByID(w)
		return out, fmt.Sprintf("the first %d requests of %s (%s; %s) whose prompt and output fit TensorRT-LLM's max_num_tokens of 8,192 (without chunked prefill a whole prompt must), at their published arrival times",
			len(out), p.Title, p.Licence, p.Attribution), 0, nil
	}
	prefix := v.Int("prefix")
	reqs := workload.Poisson(n, float64(v.Int("rate")), workload.Uniform{Min: prefix + 50, Max: prefix + 850}, workload.Uniform{Min: 100, Max: 400}, seed)
	reqs = workload.SharedPrefix(reqs, engGroups, prefix, seed)
	return reqs, fmt.Sprintf("%d generated requests at %d a second, each opening with one of %d shared %s-token prompts, then 50–850 tokens of its own, and 100–400 output tokens",
		n, v.Int("rate"), engGroups, kit.Comma(prefix)), prefix, nil
}

func schedulerRequests(reqs []workload.Request) []scheduler.Request {
	out := make([]scheduler.Request, len(reqs))
	for i, w := range reqs {
		out[i] = scheduler.Request{ID: w.ID, Arrival: w.Arrival, Prompt: w.Prompt, Output: w.Output, PromptIDs: w.TokenIDs()}
	}
	return out
}

// outcome summarises one engine's run.
func newEngineOutcome(key, name, config string, steps []scheduler.Step, ms []scheduler.RequestMetrics, capacity int) engineOutcome {
	o := engineOutcome{key: key, name: name, config: config, steps: steps, reqs: ms, capacity: capacity, sum: scheduler.SummariseRequests(ms, scheduler.SLO{})}
	for _, st := range steps {
		o.peakHeld = max(o.peakHeld, st.KVUsage)
		o.meanHeld += st.KVUsage
	}
	if len(steps) > 0 {
		o.meanHeld /= float64(len(steps))
	}
	return o
}

// served is what the lesson reads of an engine's scheduler once it has run.
type served interface {
	Run() error
	Steps() []scheduler.Step
	Requests() []scheduler.RequestMetrics
}

// runEngine runs the scheduler s (built with error err) to the end and
// summarises it as the engine key, named name and configured as config,
// whose KV holds capacity tokens.
func runEngine(s served, err error, key, name, config string, capacity int) (engineOutcome, error) {
	if err != nil {
		return engineOutcome{}, err
	}
	if err := s.Run(); err != nil {
		return engineOutcome{}, err
	}
	return newEngineOutcome(key, name, config, slices.Clone(s.Steps()), s.Requests(), capacity), nil
}

func runVLLM(t scheduler.Timer, reqs []scheduler.Request, kv, budget, seqs int) (engineOutcome, error) {
	c := scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: engVLLMBlock, NumBlocks: kv / engVLLMBlock, PrefixCaching: true}
	s, err := scheduler.New(c, t, reqs)
	return runEngine(s, err, "vllm", "vLLM", fmt.Sprintf("16-token blocks, prompts chunked into a %s-token budget beside the decodes", kit.Comma(budget)),
		c.NumBlocks*engVLLMBlock)
}

func runSGLang(t scheduler.Timer, reqs []scheduler.Request, kv, chunk int) (engineOutcome, error) {
	c := scheduler.RadixConfig{ChunkedPrefillSize: chunk, MaxPrefillTokens: engSGLPrefill, MaxRunningRequests: engTRTBatch, TotalTokens: kv}
	s, err := scheduler.NewRadix(c, t, reqs)
	return runEngine(s, err, "sglang", "SGLang", fmt.Sprintf("a radix cache of single tokens, separate prefill batches (chunked_prefill_size %s)", kit.Comma(chunk)), kv)
}

func runTRT(t scheduler.Timer, reqs []scheduler.Request, kv int, policy string) (engineOutcome, error) {
	c := scheduler.Config{MaxNumBatchedTokens: engTRTTokens, MaxNumSeqs: engTRTBatch, BlockSize: engTRTBlock, NumBlocks: kv / engTRTBlock, PrefixCaching: true}
	name := "MAX_UTILIZATION"
	if policy == "guaranteed-no-evict" {
		c.Capacity, name = scheduler.GuaranteedNoEvict, "GUARANTEED_NO_EVICT"
	}
	s, err := scheduler.New(c, t, reqs)
	return runEngine(s, err, "trtllm", "TensorRT-LLM", fmt.Sprintf("32-token blocks with reuse, %s, max_num_tokens 8,192, whole prompts (chunked prefill off)", name),
		c.NumBlocks*engTRTBlock)
}

// snapshotTimes are the moments the side-by-side steps show: evenly
// between the first arrival and the last engine's end.
func snapshotTimes(eng []engineOutcome) []float64 {
	end := 0.0
	for _, e := range eng {
		if n := len(e.steps); n > 0 {
			end = max(end, e.steps[n-1].Start+e.steps[n-1].Duration)
		}
	}
	out := make([]float64, engSnapshots)
	for k := range out {
		out[k] = end * float64(k+1) / float64(engSnapshots+1)
	}
	return out
}

// engineState is one engine at a moment: the last step started by then.
type engineState struct {
	running, waiting, finished, preempted int
	held                                  float64 // share of KV memory running requests hold
}

func stateAt(e engineOutcome, t float64) engineState {
	var s engineState
	for _, st := range e.steps {
		if st.Start > t {
			break
		}
		s.running, s.waiting, s.held = st.Running, st.Waiting, st.KVUsage
		s.finished += len(st.Finished)
		s.preempted += len(st.Preempted)
	}
	return s
}

// engineLead is the engine that does best on one metric, and by how much.
type engineLead struct {
	metric      string // metric key suffix, e.g. "ttft_p50"
	label, unit string
	best        int     // index in enginesRun.eng; -1 on a tie
	value       float64 // the best value
	next        float64 // the runner-up's
	lower       bool    // lower is better
}

// engineMetrics are the compared figures: key, label, unit, lower is
// better, and how to read each from an outcome.
var engineMetrics = []struct {
	key, label, unit string
	lower            bool
	of               func(engineOutcome) float64
}{
	{"ttft_p50", "median TTFT", "ms", true, func(e engineOutcome) float64 { return kit.Ms(e.sum.TTFT.P50) }},
	{"ttft_p99", "p99 TTFT", "ms", true, func(e engineOutcome) float64 { return kit.Ms(e.sum.TTFT.P99) }},
	{"throughput", "output throughput", "tok/s", false, func(e engineOutcome) float64 { return kit.Round1(e.sum.OutputTokensPerS) }},
	{"hit_rate", "prefix hit rate", "%", false, func(e engineOutcome) float64 { return kit.Round1(100 * e.sum.PrefixHitRate) }},
	{"preemptions", "preemptions", "", true, func(e engineOutcome) float64 { return float64(e.sum.Preemptions) }},
	{"itl_p99", "p99 gap between tokens", "ms", true, func(e engineOutcome) float64 { return kit.Ms(e.sum.ITL.P99) }},
}

// enginesLeads finds, for each compared metric, the engine that does best.
func enginesLeads(eng []engineOutcome) []engineLead {
	var out []engineLead
	for _, m := range engineMetrics {
		l := engineLead{metric: m.key, label: m.label, unit: m.unit, lower: m.lower, best: -1}
		vals := make([]float64, len(eng))
		for i, e := range eng {
			vals[i] = m.of(e)
		}
		order := []int{0, 1, 2}
		slices.SortStableFunc(order, func(a, b int) int {
			if (vals[a] < vals[b]) == m.lower && vals[a] != vals[b] {
				return -1
			}
			if vals[a] == vals[b] {
				return 0
			}
			return 1
		})
		l.value, l.next = vals[order[0]], vals[order[1]]
		if l.value != l.next {
			l.best = order[0]
		}
		out = append(out, l)
	}
	return out
}
