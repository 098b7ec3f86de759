// Package disaggregation holds the lesson disaggregation: Part 12 §3.1 and
// formulation 3. The same stream of long prompts served by monolithic
// workers, where every prefill shares steps with the running decodes, and by
// Dynamo's separate prefill and decode pools, where each prompt's KV crosses
// a link: T = α + B·S_block/BW.
//
// Both deployments' capacity per GPU under the SLO comes from core/slo's
// steady-state search (capacity.go). Steady enough is decided by the
// answer's own uncertainty: the precise search pools workloads until the
// 95% interval of where its probes' margins cross the SLO's limits is
// within 5%, or its work bound stops it and it says how wide the interval
// is; each probe's run is long enough for a 5% overload to show past the
// arrivals' noise and is judged without its first and last tenth, and its
// lengths and gaps between arrivals are stratified
// (workload.StratifiedPoisson), so that probes differ only in which
// request meets which.
package disaggregation

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "disaggregation",
	Title:   "Disaggregation: separate prefill and decode pools",
	Part:    "Part 12 §3.1, formulation 3",
	Summary: "Monolithic workers stall their decodes whenever they prefill a long prompt; separate prefill and decode pools keep ITL smooth but move every prompt's KV over a link: T = α + B·S_block/(BW·η).",
	Engine: "NVIDIA Dynamo disaggregated serving (docs/architecture/disagg_serving.md and docs/router/kv_cache_routing.md @ 391befc: prefill worker → NIXL KV transfer → decode worker; DisaggRouterConf's conditional rule) over vLLM v1 workers with chunked prefill (core/cluster, core/scheduler), steps priced by core/hardware with CUDA graphs. " +
		"Simplified: both pools use the same GPUs, each GPU of the smaller TP group is one path for the KV, and the decode worker receives the KV through its prefix cache, recomputing the prompt's last partial block.",
	Group: "cluster", Rank: 20, Thumb: scene.KindCluster,
	Terms: []lessons.Term{
		{Term: "NIXL", Definition: "NVIDIA Inference Xfer Library: moves KV blocks between GPUs, hosts and storage over RDMA.", Find: "Formulation 3"},
		{Term: "disaggregation", Aliases: []string{"disaggregated serving"}, Definition: "Prefill and decode on separate GPU pools, with the KV cache transferred between them.", Find: "Separate pools"},
	},
	Params: []lessons.Param{
		kit.GPUParam,
		{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: lessons.Choice, Choices: kit.ChoicesFirst(kit.ModelIDs(), "llama-3.1-70b")},
		kit.WeightParam,
		{Key: "tp", Label: "GPUs per worker (TP)", Unit: "GPUs", Help: "Each worker is a tensor-parallel group; each GPU holds and sends its share of the KV. The monolithic workers' TP, and both pools' unless prefill_tp or decode_tp is set.", Kind: lessons.Int, Default: 4, Min: 1, Max: 8, Step: 1},
		{Key: "prefill_tp", Label: "Prefill workers' TP", Unit: "GPUs", Help: "GPUs per prefill worker; 0: the same as tp. Dynamo's recipes give prefill a smaller TP than decode.", Kind: lessons.Int, Default: 0, Min: 0, Max: 8, Step: 1},
		{Key: "decode_tp", Label: "Decode workers' TP", Unit: "GPUs", Help: "GPUs per decode worker; 0: the same as tp.", Kind: lessons.Int, Default: 0, Min: 0, Max: 8, Step: 1},
		{Key: "prefill_workers", Label: "Prefill workers", Help: "The monolithic deployment has as many GPUs as the disaggregated one (prefill_workers × prefill_tp + decode_workers × decode_tp), in workers of tp GPUs each.", Kind: lessons.Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "decode_workers", Label: "Decode workers", Kind: lessons.Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "link", Label: "Prefill → decode link", Help: "Measured GPU-to-GPU paths; NVLink only within one node.", Kind: lessons.Choice, Choices: []string{"ib-ndr", "nvlink4", "rdma-8x400", "tcpxo"}},
		{Key: "requests", Label: "Requests", Kind: lessons.Int, Default: 60, Min: 4, Max: 200, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s", Kind: lessons.Float, Default: 3, Min: 0.1, Max: 100, Step: 0.1},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: lessons.Int, Default: 2048, Min: 16, Max: 32768, Step: 16},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: lessons.Int, Default: 4096, Min: 16, Max: 32768, Step: 16},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: lessons.Int, Default: 100, Min: 2, Max: 2048, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: lessons.Int, Default: 200, Min: 2, Max: 2048, Step: 1},
		{Key: "budget", Label: "Token budget per step", Unit: "tokens", Help: "vLLM's max_num_batched_tokens (8,192 for the API server on H100-class GPUs); a prompt longer than what is left is chunked.", Kind: lessons.Int, Default: 8192, Min: 256, Max: 32768, Step: 256},
		{Key: "conditional", Label: "Conditional disaggregation", Help: "Whether a decode worker may prefill a prompt itself. Dynamo's policies (lib/kv-router/src/conditional_disagg.rs): isl_bounding keeps a prompt local when its uncached part is short and a small share of it; prefill_load when the prefill worker is busy; isl_or_load when either. queue_length is the rule of Dynamo v0.1–v0.3: local unless the uncached prompt is long and the prefill queue short.", Kind: lessons.Choice, Choices: []string{"off", "isl_bounding", "prefill_load", "isl_or_load", "queue_length"}},
		{Key: "eff_isl_threshold", Label: "isl_bounding: eff_isl_threshold", Unit: "tokens", Help: "Local only if the uncached prompt is under this (Dynamo's default 2,048).", Kind: lessons.Int, Default: cluster.DefaultEffISLThreshold, Min: 0, Max: 32768, Step: 1},
		{Key: "eff_isl_ratio_threshold", Label: "isl_bounding: eff_isl_ratio_threshold", Help: "…and under this share of the prompt (Dynamo's default 0.7).", Kind: lessons.Float, Default: cluster.DefaultEffISLRatioThreshold, Min: 0, Max: 1, Step: 0.05},
		{Key: "router_queue_threshold", Label: "prefill_load: router_queue_threshold", Unit: "× budget", Help: "The prefill worker is busy above this many times its max_num_batched_tokens of pending prefill tokens (Dynamo's default 4).", Kind: lessons.Float, Default: cluster.DefaultQueueThreshold, Min: 0, Max: 100, Step: 0.5},
		{Key: "max_local_prefill_length", Label: "queue_length: max_local_prefill_length", Unit: "tokens", Kind: lessons.Int, Default: cluster.DefaultMaxLocalPrefillLength, Min: 0, Max: 32768, Step: 1},
		{Key: "max_prefill_queue_size", Label: "queue_length: max_prefill_queue_size", Unit: "requests", Kind: lessons.Int, Default: cluster.DefaultMaxPrefillQueueSize, Min: 0, Max: 1000, Step: 1},
		{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Help: "A request counts toward goodput when it meets both targets; the defaults are MLPerf's interactive Llama-2-70B limits.", Kind: lessons.Float, Default: 450, Min: 1, Max: 60000, Step: 1},
		{Key: "slo_tpot_ms", Label: "SLO: time per output token", Unit: "ms", Kind: lessons.Float, Default: 40, Min: 1, Max: 1000, Step: 1},
		kit.SLOKnobs[0], kit.SLOKnobs[1], searchParam,
		kit.PriceParam, kit.PowerParam,
		kit.SeedParam,
	},
	Check: kit.CheckingCosts(func(v lessons.Values) error {
		if err := kit.CheckOrdered(v, kit.LengthPairs...); err != nil {
			return err
		}
		if err := disaggFit(v); err != nil {
			return err
		}
		return kit.WorkBound(v, "requests", "2 × prompt + 16 × output tokens per request, every request served twice, monolithic and disaggregated",
			2*kit.RequestWork(disaggLengths(v)), kit.ServingCheckWork)
	}),
	Sim: sim{},
	// The run's bound and the searches' budget, at most one probe over
	// (kit.SearchMaxWork's reasoning).
	MaxWork: kit.ServingMaxWork + searchMaxWork,
	// The heaviest accepted settings of each shape: the most requests, the
	// longest prompts and outputs on 16 workers, long outputs one request
	// at a time, and the smallest budget with conditional disaggregation.
	HeavyCorners: []map[string]string{
		{"requests": "200"},
		{"requests": "35", "model": "llama-3.1-8b", "tp": "1", "prefill_workers": "8", "decode_workers": "8", "prompt_min": "32768", "prompt_max": "32768", "output_min": "2048", "output_max": "2048"},
		{"requests": "106", "model": "llama-3.1-8b", "tp": "1", "rate": "0.1", "prompt_min": "16", "prompt_max": "16", "output_min": "2048", "output_max": "2048"},
		{"requests": "89", "budget": "256", "conditional": "queue_length", "rate": "100", "output_min": "2048", "output_max": "2048"},
		// The heaviest `make bench-corners`' seeded search found (BENCHMARKS.md,
		// "Worst settings found by search").
		{"requests": "41", "budget": "297", "decode_workers": "8", "prefill_workers": "8", "gpu": "h200-sxm", "link": "tcpxo", "model": "llama-3.1-8b", "tp": "1", "prompt_min": "32768", "prompt_max": "32768", "output_min": "2", "output_max": "2048", "slo_tpot_ms": "1000", "slo_ttft_ms": "1"},
		// Per-pool TP and FP8 weights: the 16-worker corner with decode on
		// TP 8, and the default stream on Dynamo's recipe, where both
		// capacity searches take what the bound leaves.
		{"requests": "35", "model": "llama-3.1-8b", "tp": "1", "prefill_tp": "1", "decode_tp": "8", "prefill_workers": "8", "decode_workers": "8", "prompt_min": "32768", "prompt_max": "32768", "output_min": "2048", "output_max": "2048"},
		{"weight_dtype": "fp8", "tp": "2", "prefill_tp": "2", "decode_tp": "4", "prefill_workers": "2", "slo_p99_tbt_ms": "50", "slo_ttft_ms": "1000"},
	},
}

func init() { lessons.Register(lesson) }

// The article's figures (Part 12 §3, §5 formulation 3) and the Dynamo
// documentation's, as the comparison report quotes them.
const (
	articleAlphaRDMA     = 2.5e-6 // s, "GPUDirect base protocol handshake overhead (≈ 2.5 µs)"
	articleFabricBW      = 50e9   // B/s, "400 Gbps = 50 GB/s"
	articleStallTokens   = 4000   // "a new 4,000-token prompt … for 100 milliseconds"
	articleStallMSDisagg = 100
	dynamoGainOneNode    = 1.30 // "+30% throughput/GPU in single-node tests"
	dynamoGainTwoNodes   = 2    // "over 2× gains in two-node setups"
)

// disaggFit is the shared feasibility check (hardware.Fit) for each kind
// of worker (monolithic at tp, prefill at prefill_tp, decode at
// decode_tp): its GPU's share of the weights and activations at the token
// budget, and the longest request's KV beside them within the model's
// positions. More requests than fit at once queue or are preempted in the
// simulation, as in vLLM.
func disaggFit(v lessons.Values) error {
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	n := v.Int("prompt_max") + v.Int("output_max")
	if gpus, tp := v.Int("prefill_workers")*disaggTP(v, "prefill_tp")+v.Int("decode_workers")*disaggTP(v, "decode_tp"), v.Int("tp"); gpus%tp != 0 {
		return lessons.Relation("tp", v.TextOf("tp"), fmt.Sprintf("a degree that divides the disaggregated deployment's %d GPUs (prefill_workers × prefill_tp + decode_workers × decode_tp) into monolithic workers, so that both deployments have the same GPUs", gpus), "prefill_workers", "prefill_tp", "decode_workers", "decode_tp")
	}
	for _, key := range []string{"tp", "prefill_tp", "decode_tp"} {
		tp := disaggTP(v, key)
		if !kit.TPSplits(m, tp) {
			return lessons.Relation(key, v.TextOf(key), fmt.Sprintf("a degree that splits %s's %d query heads, %d KV heads and MLP evenly (1, 2, 4 or 8)", m.Name, m.QHeads, m.KVHeads), "model")
		}
		fit := hardware.Fit{GPU: g, Model: m, TP: tp, Weights: kit.WeightFormat(v), BatchedTokens: v.Int("budget"), KVTokens: int64(n), Positions: n}
		if err := kit.CheckFit(v, fit, kit.FitKnobs{hardware.LimitWeights: key, hardware.LimitKV: "prompt_max", hardware.LimitPositions: "prompt_max"}); err != nil {
			return err
		}
	}
	return nil
}

// disaggTP is the TP degree the knob key sets: prefill_tp and decode_tp
// of 0 are tp's.
func disaggTP(v lessons.Values, key string) int {
	if tp := v.Int(key); tp > 0 {
		return tp
	}
	return v.Int("tp")
}

// disaggLengths draws the stream's arrivals and lengths.
func disaggLengths(v lessons.Values) []workload.Request {
	return workload.Poisson(v.Int("requests"), v.Float("rate"), workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")},
		workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}, uint64(v.Int("seed")))
}

// disaggBlock is the KV block size in tokens (vLLM's default).
const disaggBlock = 16

// disaggSweepLinks are the links the "when does the link matter?" step
// compares, fastest first.
var disaggSweepLinks = []string{"nvlink4", "rdma-8x400", "ib-ndr", "tcpxo"}

// disaggRun is what one disaggregation run did: the deployments compared
// and the load they served, both deployments' results, the request the
// lesson follows, the worst monolithic stall, the article's figures priced
// on the chosen GPUs, and the link sweep. Each part is computed by one
// function from the parts before it.
type disaggRun struct {
	// e is the monolithic workers' engine, pre and dec the pools'.
	e, pre, dec *kit.Engine
	disaggDeployment
	disaggLoad
	reqs []cluster.Request

	compared  *cluster.Comparison
	transfers scheduler.Percentiles // transfer times of the remote requests
	perGPU    disaggPerGPU
	followed  disaggFollowed
	stall     disaggStall
	article   disaggArticle
	sweep     disaggSweep
	capacity  disaggCapacities

	longPrompts int   // prompts above max_local_prefill_length (the first releases' rule)
	work        int64 // Script.Work: both deployments' simulated work and the steps priced beside
	// costMono and costDis are what each deployment's run cost
	// (kit.CostOf): the disaggregated one's prefill pool charged to input
	// tokens, its decode pool to output tokens (and to input for the
	// prompts it prefilled itself).
	costMono, costDis kit.RunCost
}

// disaggDeployment is how both deployments are set up: tensor parallelism,
// the disaggregated pools' sizes, each worker's scheduler limits, the KV
// link and the conditional rule.
type disaggDeployment struct {
	tp, prefill, decode, budget int
	// ptp and dtp are the prefill and decode workers' TP degrees.
	ptp, dtp      int
	seqs          int // max_num_seqs: vLLM's default on the GPU, capped at budget
	link          cluster.Link
	rule          cluster.ConditionalDisagg
	conditional   bool
	bytesPerToken int64   // what one path carries per token: S_entry / min(ptp, dtp, kv_heads)
	sEntry        int64   // S_entry, B/token, BF16
	blockBytes    float64 // one path's bytes per block
}

// disGPUs are the disaggregated deployment's GPUs; the monolithic one has
// as many (monoWorkers of tp each), so that every comparison is at equal
// GPUs: disaggFit refuses a split whose GPUs tp does not divide.
func (d disaggDeployment) disGPUs() int     { return d.prefill*d.ptp + d.decode*d.dtp }
func (d disaggDeployment) monoGPUs() int    { return d.disGPUs() }
func (d disaggDeployment) monoWorkers() int { return d.disGPUs() / d.tp }

// pathTP is the smaller of the pools' TP degrees: its GPUs are the paths
// the KV crosses in parallel.
func (d disaggDeployment) pathTP() int { return min(d.ptp, d.dtp) }

// sameTP reports whether every worker has the monolithic TP degree.
func (d disaggDeployment) sameTP() bool { return d.ptp == d.tp && d.dtp == d.tp }

// disaggLoad is the stream both deployments serve and the latency they are
// held to.
type disaggLoad struct {
	rate, sloTTFTms, sloTPOTms                 float64
	promptMin, promptMax, outputMin, outputMax int
}

// disaggPerGPU is each deployment's output tokens/s and requests/s within
// the SLO, per GPU.
type disaggPerGPU struct {
	throughputMono, throughputDisagg, goodputMono, goodputDisagg float64
}

// disaggFollowed is the request the lesson follows: the remote one with the
// median TTFT (index −1 when none went remote), its prompt in blocks, its
// KV over the chosen link, and its prefill and first decode step on an idle
// worker.
type disaggFollowed struct {
	index           int
	journey         cluster.Journey
	prompt, blocks  int
	transfer, alone float64
}

// disaggStall is the monolithic stall: the longest step, on any worker,
// that carried both a prefill and decodes (step −1 when none did), and its
// decodes.
type disaggStall struct {
	worker, step, decodes int
}

// disaggArticle is the article's figures priced on the chosen GPUs: its
// 4,000-token prompt beside as many decodes as the stall carried, and its
// sub-millisecond claim, a 4,096-token Llama-3.1-70B KV (bytes, and time by
// the article's own formula) beside the measured NDR link.
type disaggArticle struct {
	stall4k float64
	kv70    float64
	t70     float64
	ndr     cluster.Link
}

// disaggSweep is the link sweep: prompt lengths, each one's prefill alone,
// and each link's transfer of those prompts' KV and of the followed
// prompt's.
type disaggSweep struct {
	lengths []int
	prefill []float64
	links   []linkSweep
}

// linkSweep is one link's KV transfer times for the sweep's prompt lengths
// and for the followed request.
type linkSweep struct {
	link  cluster.Link
	times []float64
	probe float64
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runDisaggregation(v))
}

// runDisaggregation serves the knobs' stream on both deployments and prices
// the figures the narration quotes.
func runDisaggregation(v lessons.Values) (*disaggRun, error) {
	set, err := newDisaggSetup(v)
	if err != nil {
		return nil, err
	}
	dep, e := set.dep, set.mono
	load := disaggLoad{rate: v.Float("rate"), sloTTFTms: v.Float("slo_ttft_ms"), sloTPOTms: v.Float("slo_tpot_ms"),
		promptMin: v.Int("prompt_min"), promptMax: v.Int("prompt_max"), outputMin: v.Int("output_min"), outputMax: v.Int("output_max")}
	reqs := disaggRequests(disaggLengths(v))
	slo := scheduler.SLO{TTFT: load.sloTTFTms / 1000, TPOT: load.sloTPOTms / 1000}
	compared, err := cluster.CompareDeployments(set.monoCfg, dep.monoGPUs(), set.disCfg, dep.disGPUs(), slo, reqs)
	if err != nil {
		return nil, err
	}
	// The steps priced beside the runs are counted as work: the followed
	// prompt alone and the link sweep on a prefill worker, the article's
	// stall on a monolithic one.
	priced := &kit.StepCounter{Timer: set.preTimer}
	stallPriced := &kit.StepCounter{Timer: set.monoTimer}
	followed := followRequest(compared, reqs, dep, priced)
	stall := worstStall(compared)
	r := &disaggRun{e: e, pre: set.pre, dec: set.dec, disaggDeployment: dep, disaggLoad: load, reqs: reqs, compared: compared,
		transfers: scheduler.Summarise(compared.Disagg.TransferTimes()),
		followed:  followed, stall: stall,
		article: priceArticle(stallPriced, stall.decodes, (load.promptMin+load.promptMax+load.outputMin+load.outputMax)/2),
		sweep:   sweepLinks(priced, set.pre, dep, followed.blocks),
	}
	r.perGPU.throughputMono, r.perGPU.throughputDisagg = compared.ThroughputPerGPU()
	r.perGPU.goodputMono, r.perGPU.goodputDisagg = compared.GoodputPerGPU()
	r.work = compared.Monolithic.Counts.Plus(compared.Disagg.Counts).Work() + cluster.DecodeWeight*(priced.Steps+stallPriced.Steps)
	for _, q := range reqs {
		if len(q.PromptIDs) > dep.rule.MaxLocalPrefillLength {
			r.longPrompts++
		}
	}
	if r.capacity, err = searchCapacities(v, set); err != nil {
		return nil, err
	}
	r.work += r.capacity.work
	r.costMono, r.costDis = disaggCosts(v, e.GPU, dep, compared)
	return r, nil
}

// disaggRequests are a stream's requests for core/cluster.
func disaggRequests(wl []workload.Request) []cluster.Request {
	reqs := make([]cluster.Request, len(wl))
	for i, w := range wl {
		reqs[i] = cluster.Request{ID: w.ID, Arrival: w.Arrival, PromptIDs: w.TokenIDs(), Output: w.Output}
	}
	return reqs
}

// disaggSetup is both deployments ready to serve a stream: the engines of
// the monolithic, prefill and decode workers, their timers and the
// deployments' configs.
type disaggSetup struct {
	dep                           disaggDeployment
	mono, pre, dec                *kit.Engine
	monoTimer, preTimer, decTimer scheduler.Timer
	monoCfg, disCfg               cluster.DisaggConfig
}

// newDisaggSetup builds the engines and the deployments for the knobs.
func newDisaggSetup(v lessons.Values) (*disaggSetup, error) {
	const bs = disaggBlock
	budget := v.Int("budget")
	engines := map[int]*kit.Engine{}
	engineAt := func(key string) (*kit.Engine, error) {
		tp := disaggTP(v, key)
		if e, ok := engines[tp]; ok {
			return e, nil
		}
		e, err := kit.NewTPEngine(v, tp, key, bs, budget)
		engines[tp] = e
		return e, err
	}
	set := &disaggSetup{}
	var err error
	if set.mono, err = engineAt("tp"); err != nil {
		return nil, err
	}
	if set.pre, err = engineAt("prefill_tp"); err != nil {
		return nil, err
	}
	if set.dec, err = engineAt("decode_tp"); err != nil {
		return nil, err
	}
	if set.dep, err = disaggDeploymentOf(v, set.mono); err != nil {
		return nil, err
	}
	dep := set.dep
	sched := func(e *kit.Engine) scheduler.Config {
		return scheduler.Config{MaxNumBatchedTokens: dep.budget, MaxNumSeqs: dep.seqs, ChunkedPrefill: true, BlockSize: bs, NumBlocks: e.KVBlocks}
	}
	set.monoTimer = set.mono.Timer(dep.seqs, dep.budget)
	set.preTimer = set.pre.Timer(dep.seqs, dep.budget)
	set.decTimer = set.dec.Timer(dep.seqs, dep.budget)
	preSched := sched(set.pre)
	set.disCfg = cluster.DisaggConfig{Prefill: dep.prefill, Decode: dep.decode, Scheduler: sched(set.dec), PrefillScheduler: &preSched,
		Link: dep.link, KVBytesPerToken: float64(dep.bytesPerToken),
		Timer: func(prefill bool, _ int) scheduler.Timer {
			if prefill {
				return set.preTimer
			}
			return set.decTimer
		}}
	if dep.conditional {
		rule := dep.rule
		set.disCfg.Conditional = &rule
	}
	set.monoCfg = cluster.DisaggConfig{Decode: dep.monoWorkers(), Scheduler: sched(set.mono), Link: dep.link, KVBytesPerToken: float64(dep.bytesPerToken),
		Timer: func(bool, int) scheduler.Timer { return set.monoTimer }}
	return set, nil
}

// disaggDeploymentOf reads the deployments' knobs.
func disaggDeploymentOf(v lessons.Values, e *kit.Engine) (disaggDeployment, error) {
	link, err := cluster.LinkByID(v.Choice("link"))
	if err != nil {
		return disaggDeployment{}, err
	}
	d := disaggDeployment{tp: v.Int("tp"), ptp: disaggTP(v, "prefill_tp"), dtp: disaggTP(v, "decode_tp"), prefill: v.Int("prefill_workers"), decode: v.Int("decode_workers"), budget: v.Int("budget"),
		link: link, conditional: v.Choice("conditional") != "off",
		rule: cluster.ConditionalDisagg{Policy: cluster.ConditionalPolicy(v.Choice("conditional")),
			EffISLThreshold: v.Int("eff_isl_threshold"), EffISLRatioThreshold: v.Float("eff_isl_ratio_threshold"), QueueThreshold: v.Float("router_queue_threshold"),
			MaxLocalPrefillLength: v.Int("max_local_prefill_length"), MaxPrefillQueueSize: v.Int("max_prefill_queue_size")},
		sEntry: e.Model.KVBytesPerToken(2)}
	if !d.conditional {
		d.rule.Policy = cluster.IslBounding
	}
	d.bytesPerToken = hardware.KVBytesPerTokenPerGPU(e.Model, d.pathTP(), 2)
	d.blockBytes = float64(disaggBlock) * float64(d.bytesPerToken)
	// max_num_seqs is vLLM's default on the GPU, capped at the budget as
	// vLLM caps it (docs/SOURCES.md#vllm-batch-defaults).
	_, seqs := kit.VLLMBatch(e.GPU)
	d.seqs = min(seqs, d.budget)
	return d, nil
}

// followRequest picks the request to follow, the remote one with the median
// TTFT, and prices its KV transfer and its prefill alone.
func followRequest(c *cluster.Comparison, reqs []cluster.Request, dep disaggDeployment, timer scheduler.Timer) disaggFollowed {
	const bs = disaggBlock
	var remote []int
	for i, j := range c.Disagg.Journeys {
		if j.Remote {
			remote = append(remote, i)
		}
	}
	sort.SliceStable(remote, func(a, b int) bool {
		return c.Disagg.Requests[remote[a]].TTFT < c.Disagg.Requests[remote[b]].TTFT
	})
	f := disaggFollowed{index: -1}
	if len(remote) > 0 {
		f.index = remote[len(remote)/2]
		f.journey = c.Disagg.Journeys[f.index]
	}
	p := len(reqs[max(f.index, 0)].PromptIDs)
	f.prompt, f.blocks = p, (p+bs-1)/bs
	f.transfer = dep.link.Transfer(float64(f.blocks) * dep.blockBytes)
	f.alone = kit.PrefillSeconds(timer, p, dep.budget) + timer.StepSeconds([]scheduler.Work{{NewTokens: p - (p-1)/bs*bs, Context: (p - 1) / bs * bs, Prefill: true}})
	return f
}

// worstStall finds the monolithic stall: the longest step, on any worker,
// that carried both a prefill and decodes.
func worstStall(c *cluster.Comparison) disaggStall {
	st := disaggStall{step: -1}
	for w, steps := range c.Monolithic.DecodeSteps {
		for i, x := range steps {
			if x.PrefillTokens > 0 && x.DecodeTokens > 0 && (st.step < 0 || x.Duration > c.Monolithic.DecodeSteps[st.worker][st.step].Duration) {
				st.worker, st.step = w, i
			}
		}
	}
	if st.step >= 0 {
		st.decodes = c.Monolithic.DecodeSteps[st.worker][st.step].DecodeTokens
	}
	return st
}

// priceArticle prices the article's stall, a 4,000-token prompt in one step
// beside decodes at meanCtx of context, and its KV sizes.
func priceArticle(timer scheduler.Timer, decodes, meanCtx int) disaggArticle {
	stallBatch := []scheduler.Work{{NewTokens: articleStallTokens, Prefill: true}}
	for i := 0; i < decodes; i++ {
		stallBatch = append(stallBatch, scheduler.Work{NewTokens: 1, Context: meanCtx})
	}
	kv70 := float64(4096 * hardware.MustModel("llama-3.1-70b").KVBytesPerToken(2))
	return disaggArticle{stall4k: timer.StepSeconds(stallBatch), kv70: kv70, t70: articleAlphaRDMA + kv70/articleFabricBW, ndr: cluster.MustLink("ib-ndr")}
}

// sweepLinks prices, for prompts of doubling lengths that fit the pool,
// each one's prefill alone and its KV's transfer on each link of the sweep,
// and the followed prompt's (followedBlocks) on each.
func sweepLinks(timer scheduler.Timer, e *kit.Engine, dep disaggDeployment, followedBlocks int) disaggSweep {
	const bs = disaggBlock
	var sw disaggSweep
	for n := 256; n <= min(kit.ContextLimit(e.Model.MaxPositions), 131072); n *= 2 {
		if (n+bs-1)/bs <= e.KVBlocks {
			sw.lengths = append(sw.lengths, n)
			sw.prefill = append(sw.prefill, kit.PrefillSeconds(timer, n, dep.budget))
		}
	}
	for _, id := range disaggSweepLinks {
		ls := linkSweep{link: cluster.MustLink(id)}
		for _, n := range sw.lengths {
			ls.times = append(ls.times, ls.link.Transfer(float64((n+bs-1)/bs)*dep.blockBytes))
		}
		ls.probe = ls.link.Transfer(float64(followedBlocks) * dep.blockBytes)
		sw.links = append(sw.links, ls)
	}
	return sw
}

// followedKV is the followed request's KV per GPU, in bytes.
func (r *disaggRun) followedKV() float64 { return float64(r.followed.blocks) * r.blockBytes }

// disaggCosts price both deployments' runs: the monolithic one as one
// pool of all its GPUs, the disaggregated one as its two pools.
func disaggCosts(v lessons.Values, g hardware.GPU, dep disaggDeployment, c *cluster.Comparison) (mono, dis kit.RunCost) {
	usd, watts := kit.CostRates(v, g)
	in, out, held := kit.ServedTokens(c.Monolithic.Requests)
	mono = kit.CostOf(usd, watts, []kit.GPUPool{kit.StepsPool(dep.monoGPUs(), held, c.Monolithic.DecodeSteps...)}, in, out)
	in, out, held = kit.ServedTokens(c.Disagg.Requests)
	dis = kit.CostOf(usd, watts, []kit.GPUPool{kit.StepsPool(dep.prefill*dep.ptp, held, c.Disagg.PrefillSteps...), kit.StepsPool(dep.decode*dep.dtp, held, c.Disagg.DecodeSteps...)}, in, out)
	return mono, dis
}

func (r *disaggRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
	s.Metrics = append(s.Metrics, append(kit.LatencyReportOf(r.compared.Mono).MetricsSuffixed("_monolithic", "Monolithic"), kit.LatencyReportOf(r.compared.Dis).MetricsSuffixed("_disagg", "Disaggregated")...)...)
	s.Metrics = append(s.Metrics, append(r.costMono.MetricsSuffixed("_monolithic", "Monolithic"), r.costDis.MetricsSuffixed("_disagg", "Disaggregated")...)...)
	s.Steps = r.steps()
	kit.IndexCursors(s.Steps)
	return s
}

func (r *disaggRun) metrics() []lessons.Metric {
	mono, dis := r.compared.Mono, r.compared.Dis
	ms := []lessons.Metric{
		{Key: "ttft_p50_ms_monolithic", Label: "Monolithic: median TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(mono.TTFT.P50)},
		{Key: "ttft_p50_ms_disagg", Label: "Disaggregated: median TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(dis.TTFT.P50)},
		{Key: "ttft_p99_ms_monolithic", Label: "Monolithic: p99 TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(mono.TTFT.P99)},
		{Key: "ttft_p99_ms_disagg", Label: "Disaggregated: p99 TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(dis.TTFT.P99)},
		{Key: "itl_p50_ms_monolithic", Label: "Monolithic: median ITL", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(mono.ITL.P50)},
		{Key: "itl_p50_ms_disagg", Label: "Disaggregated: median ITL", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(dis.ITL.P50)},
		{Key: "itl_p99_ms_monolithic", Label: "Monolithic: p99 ITL", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(mono.ITL.P99)},
		{Key: "itl_p99_ms_disagg", Label: "Disaggregated: p99 ITL", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(dis.ITL.P99)},
		{Key: "itl_max_ms_monolithic", Label: "Monolithic: worst ITL", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(mono.ITL.Max)},
		{Key: "itl_max_ms_disagg", Label: "Disaggregated: worst ITL", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(dis.ITL.Max)},
		{Key: "transfer_ms", Label: "Mean KV transfer time per request", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.transfers.Mean)},
		{Key: "transfer_p99_ms", Label: "p99 KV transfer time", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.transfers.P99)},
		{Key: "kv_mb_per_gpu", Label: "KV one GPU sends for the followed request", Unit: "MB", Value: kit.Round2(r.followedKV() / 1e6)},
		{Key: "throughput_per_gpu_monolithic", Label: "Monolithic: output tokens/s per GPU", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(r.perGPU.throughputMono)},
		{Key: "throughput_per_gpu_disagg", Label: "Disaggregated: output tokens/s per GPU", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(r.perGPU.throughputDisagg)},
		{Key: "goodput_per_gpu_monolithic", Label: "Monolithic: requests/s per GPU meeting the SLO", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(r.perGPU.goodputMono)},
		{Key: "goodput_per_gpu_disagg", Label: "Disaggregated: requests/s per GPU meeting the SLO", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(r.perGPU.goodputDisagg)},
		{Key: "gpus", Label: "GPUs in the monolithic deployment", Unit: "GPUs", Value: float64(r.compared.MonoGPUs)},
		{Key: "gpus_disagg", Label: "GPUs in the disaggregated deployment", Unit: "GPUs", Value: float64(r.compared.DisGPUs)},
		{Key: "local_prefills", Label: "Prompts the decode workers prefilled themselves (conditional)", Unit: "requests", Value: float64(r.compared.Disagg.Local)},
	}
	return append(ms, r.capacityMetrics()...)
}

// timesText is a/b as "1.23×", or "—" when b is 0.
func timesText(a, b float64) string {
	if b == 0 {
		return "—"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
}

func (r *disaggRun) claims() []lessons.Claim {
	ndr := r.article.ndr
	return []lessons.Claim{{
		What:    "Formulation 3's constants",
		Article: fmt.Sprintf("α_RDMA ≈ %.1f µs; BW_fabric = 400 Gbps = %.0f GB/s", articleAlphaRDMA*1e6, articleFabricBW/1e9),
		Model:   fmt.Sprintf("%s: α = %.0f µs, BW·η = %s (%.0f%% of %s)", ndr.Name, ndr.Alpha*1e6, kit.GBps(ndr.Effective()), 100*ndr.Eff, kit.GBps(ndr.Bandwidth)),
		Why: fmt.Sprintf("The article takes the line rate and a protocol handshake; the model takes NCCL send/recv measured between two H100 nodes (vidur's profiles), where software and protocol overhead cost %.0f%% of the bandwidth and the small-message latency is %.0f µs.",
			100*(1-ndr.Eff), ndr.Alpha*1e6),
	}, {
		What:    "\"Sub-millisecond inter-node KV migration\"",
		Article: "sub-millisecond latency over 400 Gbps RDMA",
		Model: fmt.Sprintf("a 4,096-token Llama-3.1-70B KV is %s: %s by the article's own formula (α + bytes/50 GB/s), %s at the measured NDR rate; here the followed %s-token prompt's %s per GPU takes %s over %s",
			kit.BytesText(r.article.kv70), kit.MsText(r.article.t70), kit.MsText(ndr.Transfer(r.article.kv70)), kit.Comma(r.followed.prompt), kit.BytesText(r.followedKV()), kit.MsText(r.followed.transfer), r.link.Name),
		Why: "Sub-millisecond holds only for small transfers (a few blocks) or when the KV is split over many NICs; a whole prompt's KV is hundreds of MB to GB, so the bytes term, not α, sets the time.",
	}, {
		What:    fmt.Sprintf("A %s-token prefill stalls the decodes", kit.Comma(articleStallTokens)),
		Article: fmt.Sprintf("%d ms of latency spikes (GPU and model not stated)", articleStallMSDisagg),
		Model: fmt.Sprintf("a %s-token prefill beside %d decodes: a %s step on %d× %s with %s; in the run the worst ITL was %s monolithic vs %s disaggregated",
			kit.Comma(articleStallTokens), r.stall.decodes, kit.MsText(r.article.stall4k), r.tp, r.e.GPU.Name, r.e.ModelText(), kit.MsText(r.compared.Mono.ITL.Max), kit.MsText(r.compared.Dis.ITL.Max)),
		Why: "The model prices the step from its FLOPs and bytes on the chosen GPUs (core/hardware); the article's 100 ms is a round figure for an unstated GPU and model. In the run a step can carry more than one prompt, up to the token budget, so the worst gap can exceed one prompt's stall.",
	}, {
		What:    "Disaggregation's throughput gain (Dynamo docs)",
		Article: fmt.Sprintf("+%.0f%% throughput/GPU on one node, over %d× on two (R1-Distill-Llama-70B FP8, H100, ISL 3K / OSL 150)", 100*(dynamoGainOneNode-1), dynamoGainTwoNodes),
		Model:   r.dynamoModel(),
		Why: "Dynamo's figure is measured at a latency target with each pool's TP and size tuned, in FP8, over a load sweep; the lab's counterpart is capacity per GPU under the lesson's SLO, with FP8 weights and per-pool TP as knobs. " +
			"The lab has no layer-by-layer transfer overlap and no router network latency, and compares one split, not the best of many; where prefill and decode interfere little (short prompts, low load) the split loses, as it does here at such settings.",
	}}
}

// loadAt is a worker's requests running or waiting at time t: as its last
// step started at or before t left them.
func loadAt(steps []scheduler.Step, t float64) int {
	i := sort.Search(len(steps), func(i int) bool { return steps[i].Start > t }) - 1
	if i < 0 {
		return 0
	}
	return steps[i].Running + steps[i].Waiting
}

// poolOf draws one pool's workers at time t (t < 0: no queue shown), with
// lines.
func poolOf(label, prefix string, steps [][]scheduler.Step, t float64, lines func(w int) []string) scene.Pool {
	p := scene.Pool{Label: label}
	for w := range steps {
		wk := scene.Worker{ID: prefix + strconv.Itoa(w+1)}
		if t >= 0 {
			wk.Queue = float64(loadAt(steps[w], t))
		}
		if lines != nil {
			wk.Lines = lines(w)
		}
		p.Workers = append(p.Workers, wk)
	}
	return p
}

// disaggCluster is the disaggregated deployment at time t: its prefill and
// decode pools with each worker's requests in flight, and the link between
// them; with travel, the followed request's KV crossing it.
func (r *disaggRun) disaggCluster(id, title string, t float64, travel bool, marks []scene.Mark) scene.Scene {
	d := r.compared.Disagg
	pre := poolOf(r.poolLabel("prefill"), "P", d.PrefillSteps, t, nil)
	dec := poolOf(r.poolLabel("decode"), "D", d.DecodeSteps, t, nil)
	c := &scene.Cluster{Pools: []scene.Pool{pre, dec},
		Link: &scene.Link{Label: r.link.Name, Rate: kit.GBps(r.link.Effective()) + " (BW·η)", Note: fmt.Sprintf("α %g µs", kit.Round2(r.link.Alpha*1e6))}}
	if t >= 0 {
		c.QueueLabel, c.QueueUnit = "requests running + waiting on the worker", "in flight"
	}
	if travel && r.followed.index >= 0 {
		p := r.followed.journey
		c.Travel = &scene.Travel{Ref: "req:" + kit.ReqName(p.ID), Group: p.ID, From: fmt.Sprintf("P%d", p.PrefillWorker+1), To: fmt.Sprintf("D%d", p.DecodeWorker+1),
			Label: fmt.Sprintf("%s's KV: %s per GPU", kit.ReqName(p.ID), kit.BytesText(p.Bytes))}
	}
	return scene.Scene{Kind: scene.KindCluster, ID: id, Title: title, Main: true, Marks: marks, Cluster: c}
}

// monoCluster is the monolithic deployment's workers.
func (r *disaggRun) monoCluster(lines func(w int) []string) scene.Scene {
	pool := poolOf(fmt.Sprintf("monolithic: %d workers (%d× %s each)", r.monoWorkers(), r.tp, r.e.GPU.Name), "W", r.compared.Monolithic.DecodeSteps, -1, lines)
	return scene.Scene{Kind: scene.KindCluster, ID: "mono-cluster", Title: "The monolithic deployment: every worker prefills and decodes",
		Cluster: &scene.Cluster{Pools: []scene.Pool{pool}}}
}

// window is the interval the step timelines zoom to: a dozen steps either
// side of the stall, or the first 25 steps of W1 when there was none.
func (r *disaggRun) window() (float64, float64) {
	if r.stall.step < 0 {
		steps := r.compared.Monolithic.DecodeSteps[0]
		if len(steps) == 0 {
			return 0, 1
		}
		last := steps[min(len(steps)-1, 24)]
		return steps[0].Start, last.Start + last.Duration
	}
	steps := r.compared.Monolithic.DecodeSteps[r.stall.worker]
	a, b := max(0, r.stall.step-12), min(len(steps)-1, r.stall.step+12)
	return steps[a].Start, steps[b].Start + steps[b].Duration
}

// stepClass is what a step carried.
func stepClass(st scheduler.Step) string {
	if st.PrefillTokens > 0 {
		return "prefill"
	}
	return "decode"
}

// stepLane draws the steps of one worker inside [t0, t1) (ms since the
// first arrival), highlighting step hl; it returns the highlighted bar's
// index (−1 when not drawn).
func stepLane(label string, steps []scheduler.Step, hl int, t0, t1 float64) (scene.Lane, int) {
	l, at := scene.Lane{Label: label}, -1
	for i, st := range steps {
		end := st.Start + st.Duration
		if end <= t0 || st.Start >= t1 || st.Duration == 0 {
			continue
		}
		lbl := fmt.Sprintf("%d dec", st.DecodeTokens)
		if st.PrefillTokens > 0 {
			lbl = fmt.Sprintf("%d prefill", st.PrefillTokens)
			if st.DecodeTokens > 0 {
				lbl = fmt.Sprintf("%d dec + %d prefill", st.DecodeTokens, st.PrefillTokens)
			}
		}
		if i == hl {
			at = len(l.Bars)
		}
		l.Bars = append(l.Bars, scene.Span{Start: kit.Msr(max(st.Start, t0)), End: kit.Msr(min(end, t1)), Label: lbl, Class: stepClass(st), Highlight: i == hl})
	}
	return l, at
}

// mergedLane is one worker's whole run as context: back-to-back steps of
// the same class merged into one bar.
func mergedLane(label string, steps []scheduler.Step) scene.Lane {
	l := scene.Lane{Label: label}
	for _, st := range steps {
		if st.Duration == 0 {
			continue
		}
		cls, end := stepClass(st), kit.Msr(st.Start+st.Duration)
		if n := len(l.Bars); n > 0 && l.Bars[n-1].Class == cls && l.Bars[n-1].End >= kit.Msr(st.Start) {
			l.Bars[n-1].End = end
			continue
		}
		l.Bars = append(l.Bars, scene.Span{Start: kit.Msr(st.Start), End: end, Class: cls})
	}
	return l
}

// transferLane is the KV transfers that overlap [t0, t1).
func (r *disaggRun) transferLane(t0, t1 float64) scene.Lane {
	l := scene.Lane{Label: "KV transfers"}
	for _, j := range r.compared.Disagg.Journeys {
		if j.Remote && j.TransferEnd > t0 && j.TransferStart < t1 {
			l.Bars = append(l.Bars, scene.Span{Start: kit.Msr(max(j.TransferStart, t0)), End: kit.Msr(min(j.TransferEnd, t1)), Label: kit.ReqName(j.ID), Class: "transfer"})
		}
	}
	return l
}

// timelines are the monolithic worker's steps zoomed on the stall and the
// disaggregated pools over the same interval, each over its whole run.
func (r *disaggRun) timelines(monoMarks, disMarks []scene.Mark) (mono, dis scene.Scene) {
	t0, t1 := r.window()
	zoom := &scene.Window{Start: kit.Msr(t0), End: kit.Msr(t1), Label: "25 steps around the stall"}
	w := fmt.Sprintf("monolithic W%d", r.stall.worker+1)
	lane, _ := stepLane(w, r.compared.Monolithic.DecodeSteps[r.stall.worker], r.stall.step, t0, t1)
	mono = scene.Scene{Kind: scene.KindJourney, ID: "steps-mono", Title: "A monolithic worker's steps, zoomed on its worst stall (ms)", Main: true, Marks: monoMarks,
		Journey: &scene.Journey{Unit: "ms", Lanes: []scene.Lane{lane}, Zoom: zoom,
			Context: []scene.Lane{mergedLane(w, r.compared.Monolithic.DecodeSteps[r.stall.worker])}, ContextLabel: "the whole run (steps with a prefill in violet)"}}
	var lanes, ctx []scene.Lane
	if len(r.compared.Disagg.PrefillSteps) > 0 {
		l, _ := stepLane("prefill P1", r.compared.Disagg.PrefillSteps[0], -1, t0, t1)
		lanes, ctx = append(lanes, l), append(ctx, mergedLane("prefill P1", r.compared.Disagg.PrefillSteps[0]))
	}
	dl, _ := stepLane("decode D1", r.compared.Disagg.DecodeSteps[0], -1, t0, t1)
	lanes = append(lanes, r.transferLane(t0, t1), dl)
	ctx = append(ctx, r.transferLane(0, math.Inf(1)), mergedLane("decode D1", r.compared.Disagg.DecodeSteps[0]))
	same := *zoom
	same.Label = "the interval of the monolithic stall"
	dis = scene.Scene{Kind: scene.KindJourney, ID: "steps-disagg", Title: "The disaggregated pools over the same interval (ms)", Main: true, Marks: disMarks,
		Journey: &scene.Journey{Unit: "ms", Lanes: lanes, Zoom: &same, Context: ctx, ContextLabel: "the whole run"}}
	return mono, dis
}

// stallRef is the reference of the stall's bar in the monolithic timeline
// ("" when no step mixed a prefill with decodes).
func (r *disaggRun) stallRef() string {
	if r.stall.step < 0 {
		return ""
	}
	t0, t1 := r.window()
	w := fmt.Sprintf("monolithic W%d", r.stall.worker+1)
	_, at := stepLane(w, r.compared.Monolithic.DecodeSteps[r.stall.worker], r.stall.step, t0, t1)
	return "span:" + w + ":" + strconv.Itoa(at)
}

// itlScene is the gaps between the tokens of the request the worst stall
// hit hardest, in both deployments.
func (r *disaggRun) itlScene() scene.Scene {
	worst, worstGap := 0, -1.0
	for i, m := range r.compared.Monolithic.Requests {
		for _, g := range m.ITL {
			if g > worstGap {
				worst, worstGap = i, g
			}
		}
	}
	chart := &scene.Chart{Type: scene.Line, XLabel: "output token", YLabel: fmt.Sprintf("gap before this token of %s", kit.ReqName(r.reqs[worst].ID)), YUnit: "ms"}
	for _, d := range []struct {
		name string
		m    scheduler.RequestMetrics
	}{{"monolithic", r.compared.Monolithic.Requests[worst]}, {"disaggregated", r.compared.Disagg.Requests[worst]}} {
		sr := scene.Series{Name: d.name}
		for k, g := range d.m.ITL {
			sr.X, sr.Y = append(sr.X, float64(k+2)), append(sr.Y, kit.Ms(g))
		}
		chart.Series = append(chart.Series, sr)
	}
	return scene.Scene{Kind: scene.KindChart, ID: "itl", Title: "Gaps between one request's tokens", Chart: chart}
}

// deploymentCards are one deployment's headline figures.
func deploymentCards(title string, sum scheduler.Summary, thr float64) scene.Scene {
	return scene.Scene{Kind: scene.KindCards, ID: "cards", Title: title, Cards: []scene.Card{
		{Label: "median ITL", Value: kit.Ms(sum.ITL.P50), Unit: "ms"},
		{Label: "p99 ITL", Value: kit.Ms(sum.ITL.P99), Unit: "ms"},
		{Label: "median TTFT", Value: kit.Ms(sum.TTFT.P50), Unit: "ms"},
		{Label: "output tokens/s per GPU", Value: kit.Round2(thr)},
	}}
}

// formulaScene is formulation 3 for the followed request.
func (r *disaggRun) formulaScene() scene.Scene {
	const bs = disaggBlock
	link := r.link
	return scene.Scene{Kind: scene.KindFormula, ID: "formula", Title: "Formulation 3: KV migration time", Formula: &scene.Formula{
		Expr: "T = α + B · S_block / (BW · η)",
		Terms: []scene.Term{
			{Symbol: "α", Meaning: "fixed start-up cost of " + link.Name, Value: fmt.Sprintf("%g µs", kit.Round2(link.Alpha*1e6))},
			{Symbol: "B", Meaning: fmt.Sprintf("blocks of %s's %s-token prompt (⌈%d / %d⌉)", kit.ReqName(r.followed.journey.ID), kit.Comma(r.followed.prompt), r.followed.prompt, bs), Value: kit.Comma(r.followed.blocks)},
			{Symbol: "S_block", Meaning: fmt.Sprintf("bytes one GPU holds per block: %d tokens × S_entry %s B / %d GPUs", bs, kit.Comma(int(r.sEntry)), int(r.sEntry/r.bytesPerToken)), Value: kit.Comma(int(r.blockBytes)) + " B"},
			{Symbol: "BW", Meaning: "nominal rate per direction", Value: kit.GBps(link.Bandwidth)},
			{Symbol: "η", Meaning: "measured share of it: " + link.Note, Value: strconv.FormatFloat(link.Eff, 'f', 3, 64)},
		},
		Result: fmt.Sprintf("%s + %s / %s = %s", kit.MsText(link.Alpha), kit.BytesText(r.followedKV()), kit.GBps(link.Effective()), kit.MsText(r.followed.transfer)),
	}}
}

// journeyScene is the followed request from arrival to its last token,
// zoomed from its arrival to its first token, with marks.
func (r *disaggRun) journeyScene(marks []scene.Mark) scene.Scene {
	p := r.followed.journey
	journey := scene.Scene{Kind: scene.KindJourney, ID: "journey", Main: true, Marks: marks, Title: fmt.Sprintf("%s from arrival to its last token (ms)", kit.ReqName(p.ID))}
	if r.followed.index < 0 {
		journey.Journey = &scene.Journey{Unit: "ms"}
		return journey
	}
	// The zoom: from the end of the prefill (its last part as context) to
	// the first token, so the link and the decode worker's first step are
	// as wide as the figure allows.
	ttft, pe := r.at(p.FirstToken), r.at(p.PrefillEnd)
	gap := ttft - pe
	journey.Journey = &scene.Journey{Unit: "ms", Lanes: r.journeyLanes(), Cursor: &ttft, CursorLabel: "token 1 at " + kit.MsText(p.FirstToken-p.Arrival),
		Zoom:         &scene.Window{Start: kit.Round4(max(0, pe-0.6*gap)), End: kit.Round4(ttft + 0.15*gap), Label: "the end of its prefill to its first token"},
		ContextLabel: "arrival to the last token"}
	return journey
}

// at is a time of the followed request in ms since its arrival.
func (r *disaggRun) at(x float64) float64 { return kit.Ms(x - r.followed.journey.Arrival) }

// journeyLanes are the followed request's lanes: its prefill worker, the
// link and its decode worker, without empty bars.
func (r *disaggRun) journeyLanes() []scene.Lane {
	p, at := r.followed.journey, r.at
	lanes := []scene.Lane{
		{Label: fmt.Sprintf("prefill P%d", p.PrefillWorker+1), Bars: []scene.Span{
			{Start: 0, End: at(p.PrefillStart), Label: "queued", Class: "wait"},
			{Start: at(p.PrefillStart), End: at(p.PrefillEnd), Label: fmt.Sprintf("prefill %s tokens", kit.Comma(r.followed.prompt)), Class: "prefill"}}},
		{Label: "link", Bars: []scene.Span{
			{Start: at(p.PrefillEnd), End: at(p.TransferStart), Label: "link busy", Class: "wait"},
			{Start: at(p.TransferStart), End: at(p.TransferEnd), Label: "KV " + kit.BytesText(p.Bytes) + " per GPU", Class: "transfer", Highlight: true}}},
		{Label: fmt.Sprintf("decode D%d", p.DecodeWorker+1), Bars: []scene.Span{
			{Start: at(p.TransferEnd), End: at(p.KVPlaced), Label: "waits for room", Class: "wait"},
			{Start: at(p.KVPlaced), End: at(p.DecodeAdmit), Label: "waits for a step", Class: "wait"},
			{Start: at(p.DecodeAdmit), End: at(p.FirstToken), Label: "tail + token 1", Class: "prefill"},
			{Start: at(p.FirstToken), End: at(p.LastToken), Label: fmt.Sprintf("%d more tokens", r.reqs[r.followed.index].Output-1), Class: "decode"}}},
	}
	for i := range lanes {
		kept := lanes[i].Bars[:0]
		for _, b := range lanes[i].Bars {
			if b.End > b.Start {
				kept = append(kept, b)
			}
		}
		lanes[i].Bars = kept
	}
	return lanes
}

// journeyRef is the reference of the followed request's bar of class cls
// on lane (by its label's start), "" when it was not drawn.
func journeyRef(lanes []scene.Lane, lane, cls string) string {
	for _, l := range lanes {
		if !strings.HasPrefix(l.Label, lane) {
			continue
		}
		for i, b := range l.Bars {
			if b.Class == cls {
				return "span:" + l.Label + ":" + strconv.Itoa(i)
			}
		}
	}
	return ""
}

// percentileScene sets both deployments' percentiles side by side.
func (r *disaggRun) percentileScene() scene.Scene {
	mono, dis := r.compared.Mono, r.compared.Dis
	tbl := &scene.Table{Columns: []string{"", "monolithic", "disaggregated"}}
	row := func(name string, a, b float64, unit string) {
		tbl.Rows = append(tbl.Rows, []string{name, strconv.FormatFloat(a, 'f', 1, 64) + unit, strconv.FormatFloat(b, 'f', 1, 64) + unit})
	}
	row("TTFT p50", 1000*mono.TTFT.P50, 1000*dis.TTFT.P50, " ms")
	row("TTFT p90", 1000*mono.TTFT.P90, 1000*dis.TTFT.P90, " ms")
	row("TTFT p99", 1000*mono.TTFT.P99, 1000*dis.TTFT.P99, " ms")
	row("ITL p50", 1000*mono.ITL.P50, 1000*dis.ITL.P50, " ms")
	row("ITL p99", 1000*mono.ITL.P99, 1000*dis.ITL.P99, " ms")
	row("ITL max", 1000*mono.ITL.Max, 1000*dis.ITL.Max, " ms")
	row("TPOT p50", 1000*mono.TPOT.P50, 1000*dis.TPOT.P50, " ms")
	row("output tokens/s per GPU", r.perGPU.throughputMono, r.perGPU.throughputDisagg, "")
	row("SLO attainment", 100*mono.SLOAttainment, 100*dis.SLOAttainment, "%")
	tbl.Rows = append(tbl.Rows, []string{"goodput per GPU", strconv.FormatFloat(r.perGPU.goodputMono, 'f', 3, 64) + " req/s", strconv.FormatFloat(r.perGPU.goodputDisagg, 'f', 3, 64) + " req/s"})
	return scene.Scene{Kind: scene.KindTable, ID: "percentiles", Title: fmt.Sprintf("Same %d requests, %s", len(r.reqs), r.sameGPUsText()), Table: tbl}
}

// linkScenes are the link sweep: transfer per link against the prompt's
// prefill, and a table for the followed request.
func (r *disaggRun) linkScenes() (scene.Scene, *scene.Table) {
	chart := &scene.Chart{Type: scene.Line, XLabel: "prompt", XUnit: "tokens", YLabel: "time", YUnit: "ms", XLog: true, YLog: true}
	pre := scene.Series{Name: "prefill of the prompt (one worker, alone)"}
	for i, n := range r.sweep.lengths {
		pre.X, pre.Y = append(pre.X, float64(n)), append(pre.Y, kit.Ms(r.sweep.prefill[i]))
	}
	chart.Series = append(chart.Series, pre)
	tbl := &scene.Table{Columns: []string{"link", "α", "BW · η", fmt.Sprintf("%s's KV (%s tokens)", kit.ReqName(r.followed.journey.ID), kit.Comma(r.followed.prompt)), "share of its TTFT alone"}}
	for _, ls := range r.sweep.links {
		sr := scene.Series{Name: ls.link.Name}
		for i, n := range r.sweep.lengths {
			sr.X, sr.Y = append(sr.X, float64(n)), append(sr.Y, kit.Round4(1000*ls.times[i]))
		}
		chart.Series = append(chart.Series, sr)
		name := ls.link.Name
		if ls.link.ID == r.link.ID {
			name += " (chosen)"
		}
		tbl.Rows = append(tbl.Rows, []string{name, fmt.Sprintf("%g µs", kit.Round2(ls.link.Alpha*1e6)), kit.GBps(ls.link.Effective()), kit.MsText(ls.probe), kit.Pct(ls.probe / (r.followed.alone + ls.probe))})
	}
	return scene.Scene{Kind: scene.KindChart, ID: "links", Title: "KV transfer per link vs the prompt's prefill", Chart: chart}, tbl
}

// ndrProbe is the followed request's KV over one NDR NIC.
func (r *disaggRun) ndrProbe() float64 { return r.article.ndr.Transfer(r.followedKV()) }

// seqsCap says where max_num_seqs comes from: vLLM's default on the GPU,
// capped at the token budget as vLLM caps it.
func (r *disaggRun) seqsCap() string {
	if _, seqs := kit.VLLMBatch(r.e.GPU); seqs > r.seqs {
		return fmt.Sprintf(": vLLM's default on this GPU, %s, capped at the %s-token budget as vLLM caps it", kit.Comma(seqs), kit.Comma(r.budget))
	}
	return ", vLLM's default on this GPU"
}

// steps narrates the run.
func (r *disaggRun) steps() []lessons.Step {
	mono, dis := r.compared.Mono, r.compared.Dis
	itl := r.itlScene()
	setup := fmt.Sprintf("%d requests arrive at %g per second, with prompts of %s–%s tokens and %d–%d output tokens. %s running %s, at most %s requests at once (max_num_seqs%s). "+
		"The baseline is the monolithic deployment: %d workers that each prefill and decode their own requests; %s.%s",
		len(r.reqs), r.rate, kit.Comma(r.promptMin), kit.Comma(r.promptMax), r.outputMin, r.outputMax, r.workersText(), r.e.ModelText(), kit.Comma(r.seqs), r.seqsCap(),
		r.monoWorkers(), r.splitText(), kit.PrecisionNote(r.e))
	a := &kit.Annotator{Scene: "cluster"}
	a.Mark("pool:"+r.poolLabel("prefill"), fmt.Sprintf("%d prefill %s", r.prefill, kit.Plural(r.prefill, "worker", "workers")), fmt.Sprintf("%d prefill", r.prefill), setup)
	a.Mark("pool:"+r.poolLabel("decode"), fmt.Sprintf("%d decode %s", r.decode, kit.Plural(r.decode, "worker", "workers")), fmt.Sprintf("%d decode", r.decode), setup)
	a.Mark("link:KV", "every prompt's KV crosses here", "", setup)

	stall := fmt.Sprintf("vLLM serves running decodes first and gives the rest of its %s-token budget to a new prompt, so a long prompt rides in the same step as every decode on that worker, and no decode gets its next token until the step ends. %s "+
		"Median ITL is %.1f ms but p99 is %.1f ms and the worst gap %.1f ms.",
		kit.Comma(r.budget), r.stallText(), 1000*mono.ITL.P50, 1000*mono.ITL.P99, 1000*mono.ITL.Max)
	b := &kit.Annotator{Scene: "steps-mono"}
	if ref := r.stallRef(); ref != "" {
		st := r.compared.Monolithic.DecodeSteps[r.stall.worker][r.stall.step]
		b.Mark(ref, "stall: "+kit.MsText(st.Duration), "The worst such step", stall)
	}
	smooth := fmt.Sprintf("Each prompt is computed on a prefill worker, its KV crosses the %s, and a decode worker generates the tokens. The decode worker never computes a prompt — only the last partial block of each arriving one — so its steps stay short: "+
		"median ITL %.1f ms, p99 %.1f ms, worst %.1f ms (monolithic: %.1f, %.1f, %.1f ms).",
		r.link.Name, 1000*dis.ITL.P50, 1000*dis.ITL.P99, 1000*dis.ITL.Max, 1000*mono.ITL.P50, 1000*mono.ITL.P99, 1000*mono.ITL.Max)
	c := &kit.Annotator{Scene: "steps-disagg"}
	c.Mark("lane:KV transfers", "KV over "+r.link.Name, "its KV crosses the", smooth)
	c.Mark("lane:decode D1", fmt.Sprintf("p99 ITL %.1f ms", 1000*dis.ITL.P99), "its steps stay short", smooth)
	monoTimeline, disTimeline := r.timelines(b.Marks, c.Marks)
	steps := []lessons.Step{{
		Title: "One stream, two deployments", Narration: setup, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.disaggCluster("cluster", "The disaggregated deployment: prefill pool → link → decode pool, "+r.poolsText(), 0, false, a.Marks),
			r.monoCluster(func(int) []string { return []string{"prefills and decodes"} })},
	}, {
		Title: "Monolithic: every prefill stalls the decodes", Narration: stall, Mentions: b.Mentions,
		Scenes: []scene.Scene{monoTimeline, itl, deploymentCards("Monolithic", mono, r.perGPU.throughputMono)},
	}, {
		Quiz: lessons.ChoiceQuiz("Now the prompts go to a separate prefill pool. Will the decode worker's p99 ITL be below or above the monolithic p99?",
			[]string{"below", "above"}, map[bool]string{true: "below", false: "above"}[dis.ITL.P99 < mono.ITL.P99],
			"A decode worker's steps carry only decodes (and each arriving prompt's short tail), so no step waits for a long prefill."),
		Title: "Separate pools: smooth decodes", Narration: smooth, Mentions: c.Mentions,
		Scenes: []scene.Scene{disTimeline, itl, deploymentCards("Disaggregated", dis, r.perGPU.throughputDisagg)},
	}, r.formulaStep()}
	if r.followed.index >= 0 {
		steps = append(steps, r.journeyStep())
	}
	return append(append(steps, r.tradeSteps()...), r.capacityStep())
}

// poolLabel is the label of the disaggregated cluster's prefill or decode
// pool.
func (r *disaggRun) poolLabel(kind string) string {
	return kind + " pool"
}

// formulaStep prices the followed request's transfer with formulation 3,
// over the cluster at the moment its KV crosses the link.
func (r *disaggRun) formulaStep() lessons.Step {
	narration := fmt.Sprintf("The article's formula for moving B blocks of S_block bytes: T = α + B·S_block/BW. With the measured efficiency η the chosen link moves %s's %s of KV per GPU in %s. "+
		"Across the run the mean transfer took %s (p99 %s); α is %.2f%% of it — the bytes decide.",
		kit.ReqName(r.followed.journey.ID), kit.BytesText(r.followedKV()), kit.MsText(r.followed.transfer), kit.MsText(r.transfers.Mean), kit.MsText(r.transfers.P99), 100*r.link.Alpha/math.Max(r.followed.transfer, 1e-12))
	a := &kit.Annotator{Scene: "cluster"}
	a.Mark("link:KV", fmt.Sprintf("T = %s for %s", kit.MsText(r.followed.transfer), kit.BytesText(r.followedKV())), "the chosen link", narration)
	if r.followed.index >= 0 {
		a.Mark("req:"+kit.ReqName(r.followed.journey.ID), "", fmt.Sprintf("%s's %s of KV", kit.ReqName(r.followed.journey.ID), kit.BytesText(r.followedKV())), narration)
	}
	t := r.followed.journey.TransferStart
	return lessons.Step{
		Quiz: lessons.NumberQuiz(fmt.Sprintf("%s's prompt has %s tokens. Each of the %d GPUs holds %s B of KV per token. How many milliseconds does its KV take over %s (α %g µs, %s effective)?",
			kit.ReqName(r.followed.journey.ID), kit.Comma(r.followed.prompt), r.pathTP(), kit.Comma(int(r.bytesPerToken)), r.link.Name, kit.Round2(r.link.Alpha*1e6), kit.GBps(r.link.Effective())),
			kit.Round2(1000*r.followed.transfer), 0.05, "The GPUs of a TP group send their shards at once, so the time is one shard's: α plus its whole blocks at BW·η."),
		Title: "Formulation 3, live", Narration: narration, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.disaggCluster("cluster", fmt.Sprintf("At %.2f s: %s's KV leaves its prefill worker", t, kit.ReqName(r.followed.journey.ID)), t, true, a.Marks), r.formulaScene()},
	}
}

// stallText narrates the worst monolithic step that mixed a prefill with
// decodes.
func (r *disaggRun) stallText() string {
	if r.stall.step < 0 {
		return "No step mixed a prefill with decodes in this run."
	}
	st := r.compared.Monolithic.DecodeSteps[r.stall.worker][r.stall.step]
	return fmt.Sprintf("The worst such step, on W%d, computed %s prompt tokens beside %d decodes and took %s, while a decode-only step takes about %s (the article: a 4,000-token prompt stalls tables for 100 ms; here such a step takes %s).",
		r.stall.worker+1, kit.Comma(st.PrefillTokens), st.DecodeTokens, kit.MsText(st.Duration), kit.MsText(r.compared.Dis.ITL.P50), kit.MsText(r.article.stall4k))
}

// journeyStep follows one remote request through both pools.
func (r *disaggRun) journeyStep() lessons.Step {
	p := r.followed.journey
	narration := fmt.Sprintf("%s (the median TTFT) %s for prefill worker P%d, was prefilled in %s, crossed the link in %s%s,%s then decode worker D%d computed its last partial block with the running decodes and sampled token 1 at %s: that is its TTFT. "+
		"Its remaining %d tokens came every %s on average.",
		kit.ReqName(p.ID), waited(p.PrefillStart-p.Arrival), p.PrefillWorker+1, kit.MsText(p.PrefillEnd-p.PrefillStart), kit.MsText(p.TransferEnd-p.TransferStart),
		map[bool]string{true: fmt.Sprintf(" (after %s waiting for the link)", kit.MsText(p.TransferStart-p.PrefillEnd)), false: ""}[p.TransferStart > p.PrefillEnd],
		map[bool]string{true: fmt.Sprintf(" waited %s for room on the decode worker,", kit.MsText(p.KVPlaced-p.TransferEnd)), false: ""}[p.KVPlaced > p.TransferEnd],
		p.DecodeWorker+1, kit.MsText(p.FirstToken-p.Arrival), r.reqs[r.followed.index].Output-1, kit.MsText(r.compared.Disagg.Requests[r.followed.index].TPOT))
	lanes := r.journeyLanes()
	a := &kit.Annotator{Scene: "journey"}
	for _, m := range []struct{ lane, cls, label, text string }{
		{"prefill", "prefill", "prefill " + kit.MsText(p.PrefillEnd-p.PrefillStart), "was prefilled in"},
		{"link", "transfer", "KV over the link " + kit.MsText(p.TransferEnd-p.TransferStart), "crossed the link in"},
		{"decode", "prefill", "token 1", "sampled token 1"},
	} {
		if ref := journeyRef(lanes, m.lane, m.cls); ref != "" {
			a.Mark(ref, m.label, m.text, narration)
		}
	}
	return lessons.Step{Title: fmt.Sprintf("%s's journey", kit.ReqName(p.ID)), Narration: narration, Mentions: a.Mentions, Scenes: []scene.Scene{r.journeyScene(a.Marks)}}
}

// tradeSteps are the closing steps: the trade, the link and the
// conditional rule.
func (r *disaggRun) tradeSteps() []lessons.Step {
	mono, dis := r.compared.Mono, r.compared.Dis
	linkChart, linkTbl := r.linkScenes()
	ttftWinner := map[bool]string{true: "disaggregated", false: "monolithic"}[dis.TTFT.P99 < mono.TTFT.P99]
	trade := fmt.Sprintf("p99 ITL: %.1f ms monolithic vs %.1f ms disaggregated. Median TTFT: %.1f vs %.1f ms, p99 %.1f vs %.1f ms — each disaggregated TTFT carries a transfer (mean %s) and a decode step, and %d of %d GPUs do all the prefills. "+
		"Output tokens per second per GPU: %.0f vs %.0f; requests meeting the SLO (TTFT ≤ %g ms, TPOT ≤ %g ms): %.0f%% vs %.0f%%.",
		1000*mono.ITL.P99, 1000*dis.ITL.P99, 1000*mono.TTFT.P50, 1000*dis.TTFT.P50, 1000*mono.TTFT.P99, 1000*dis.TTFT.P99, kit.MsText(r.transfers.Mean), r.prefill*r.ptp, r.compared.DisGPUs,
		r.perGPU.throughputMono, r.perGPU.throughputDisagg, r.sloTTFTms, r.sloTPOTms, 100*mono.SLOAttainment, 100*dis.SLOAttainment)
	a := &kit.Annotator{Scene: "cluster"}
	a.Mark("link:KV", "mean transfer "+kit.MsText(r.transfers.Mean), "each disaggregated TTFT carries a transfer", trade)
	a.Mark("pool:"+r.poolLabel("prefill"), fmt.Sprintf("%d of %d GPUs: every prefill", r.prefill*r.ptp, r.compared.DisGPUs), fmt.Sprintf("%d of %d GPUs do all the prefills", r.prefill*r.ptp, r.compared.DisGPUs), trade)
	a.Mark("pool:"+r.poolLabel("decode"), fmt.Sprintf("p99 ITL %.1f ms", 1000*dis.ITL.P99), "", trade)
	end := r.disaggCluster("cluster", "Both deployments over the whole run: monolithic → disaggregated", -1, false, a.Marks)
	end.Cluster.Stats = r.tradeStats()
	r.workerLines(end.Cluster)

	linkText := fmt.Sprintf("Transfer time grows with the prompt like prefill does, but far more slowly on a fast fabric: for %s's prompt alone (prefill + first decode step %s), NVLink adds %s, %s, and GPUDirect-TCPXO %s. "+
		"The link matters when its time is a visible share of TTFT: short prompts on slow paths, or models with many KV bytes per FLOP (no grouped-query attention).",
		kit.ReqName(r.followed.journey.ID), kit.MsText(r.followed.alone), linkTbl.Rows[0][3], "one NDR NIC "+kit.MsText(r.ndrProbe()), linkTbl.Rows[3][3])
	b := &kit.Annotator{Scene: "link-race"}
	b.Mark("race:nvlink4", "NVLink adds "+linkTbl.Rows[0][3], "NVLink adds", linkText)
	b.Mark("race:ib-ndr", "one NDR NIC adds "+kit.MsText(r.ndrProbe()), "one NDR NIC", linkText)
	b.Mark("race:tcpxo", "TCPXO adds "+linkTbl.Rows[3][3], "GPUDirect-TCPXO", linkText)

	cond := r.conditionalText()
	c := &kit.Annotator{Scene: "cluster"}
	c.Mark("pool:"+r.poolLabel("prefill"), fmt.Sprintf("%d prompts prefilled here", r.compared.Disagg.Remote), kit.FirstIn(cond, fmt.Sprintf("%d prompts went remote", r.compared.Disagg.Remote), "every prompt went remote"), cond)
	if r.conditional {
		c.Mark("pool:"+r.poolLabel("decode"), fmt.Sprintf("%d prefilled locally", r.compared.Disagg.Local), fmt.Sprintf("%d were prefilled locally", r.compared.Disagg.Local), cond)
	}
	where := r.disaggCluster("cluster", "Where each prompt was prefilled", -1, false, c.Marks)
	r.prefillLines(where.Cluster)
	return []lessons.Step{{
		Quiz: lessons.ChoiceQuiz("Which deployment has the lower p99 TTFT on this stream?", []string{"monolithic", "disaggregated"}, ttftWinner,
			"Disaggregation adds the transfer and a decode step to every TTFT and gives prompts fewer GPUs; monolithic workers prefill on every GPU but interleave with decodes. Which wins depends on the split and the load."),
		Title: "The trade: ITL for TTFT and a link", Narration: trade, Mentions: a.Mentions,
		Scenes: []scene.Scene{end, r.percentileScene()},
	}, {
		Title: "When does the link matter?", Narration: linkText, Mentions: b.Mentions,
		Scenes: []scene.Scene{r.linkRace(b.Marks), linkChart, {Kind: scene.KindTable, ID: "link-table", Title: "Links: measured α and BW·η", Table: linkTbl}},
	}, {
		Title: "Conditional disaggregation", Narration: cond, Mentions: c.Mentions,
		Scenes: []scene.Scene{where},
	}}
}

// tradeStats are the two deployments' figures, monolithic → disaggregated.
func (r *disaggRun) tradeStats() []scene.Stat {
	mono, dis := r.compared.Mono, r.compared.Dis
	pair := func(a, b float64, unit string) string {
		return strconv.FormatFloat(a, 'f', 1, 64) + " → " + strconv.FormatFloat(b, 'f', 1, 64) + unit
	}
	return []scene.Stat{
		{Label: "p99 ITL", Value: pair(1000*mono.ITL.P99, 1000*dis.ITL.P99, " ms")},
		{Label: "median TTFT", Value: pair(1000*mono.TTFT.P50, 1000*dis.TTFT.P50, " ms")},
		{Label: "p99 TTFT", Value: pair(1000*mono.TTFT.P99, 1000*dis.TTFT.P99, " ms")},
		{Label: "output tokens/s per GPU", Value: pair(r.perGPU.throughputMono, r.perGPU.throughputDisagg, "")},
		{Label: "requests meeting the SLO", Value: pair(100*mono.SLOAttainment, 100*dis.SLOAttainment, "%")},
		{Label: "mean KV transfer", Value: kit.MsText(r.transfers.Mean)},
	}
}

// workerLines prints each disaggregated worker's share of the run.
func (r *disaggRun) workerLines(c *scene.Cluster) {
	d := r.compared.Disagg
	for i := range c.Pools[0].Workers {
		c.Pools[0].Workers[i].Lines = []string{fmt.Sprintf("prefilled %d prompts", d.Prefill[i].Requests)}
	}
	for i := range c.Pools[1].Workers {
		s := d.Decode[i].Summary
		c.Pools[1].Workers[i].Lines = []string{fmt.Sprintf("decoded %d requests", d.Decode[i].Requests), fmt.Sprintf("ITL p99 %.1f ms", 1000*s.ITL.P99)}
	}
}

// prefillLines prints where each worker's prompts were prefilled.
func (r *disaggRun) prefillLines(c *scene.Cluster) {
	remote := make([]int, len(c.Pools[0].Workers))
	local := make([]int, len(c.Pools[1].Workers))
	for _, j := range r.compared.Disagg.Journeys {
		if j.Remote {
			remote[j.PrefillWorker]++
		} else {
			local[j.DecodeWorker]++
		}
	}
	for i := range c.Pools[0].Workers {
		c.Pools[0].Workers[i].Lines = []string{fmt.Sprintf("prefilled %d prompts", remote[i])}
	}
	for i := range c.Pools[1].Workers {
		c.Pools[1].Workers[i].Lines = []string{fmt.Sprintf("prefilled %d itself", local[i])}
	}
}

// linkRace races the followed prompt to its first token over each link:
// its prefill and first step alone, then its KV over the link.
func (r *disaggRun) linkRace(marks []scene.Mark) scene.Scene {
	t := &scene.Tiers{Subject: fmt.Sprintf("%s's %s-token prompt: prefill alone, then its KV over each link", kit.ReqName(r.followed.journey.ID), kit.Comma(r.followed.prompt)), Unit: "ms"}
	best := -1
	for i, ls := range r.sweep.links {
		if best < 0 || ls.probe < r.sweep.links[best].probe {
			best = i
		}
	}
	for i, ls := range r.sweep.links {
		t.Races = append(t.Races, scene.Race{Ref: "race:" + ls.link.ID, Label: ls.link.Name, Winner: i == best, Bars: []scene.RaceBar{
			{Label: "prefill + first step", Class: "compute", Value: kit.Round4(1000 * r.followed.alone)},
			{Label: "KV " + kit.MsText(ls.probe), Class: "fetch", Value: kit.Round4(1000 * ls.probe)},
		}})
	}
	return scene.Scene{Kind: scene.KindTiers, ID: "link-race", Title: "What each link adds to the first token", Main: true, Marks: marks, Tiers: t}
}

// conditionalText narrates conditional disaggregation: the policy of the
// run, or (off) what Dynamo's policies would have done with these prompts.
func (r *disaggRun) conditionalText() string {
	rule := r.rule
	d := r.compared.Disagg
	if r.conditional {
		return fmt.Sprintf("Conditional disaggregation is on with %s. %s "+
			"%d prompts went remote and %d were prefilled locally — each local one is a monolithic-style stall on its decode worker (worst ITL %.1f ms), traded for no transfer and no wait for the prefill pool.",
			policyName(rule.Policy), policyRule(rule), d.Remote, d.Local, 1000*r.compared.Dis.ITL.Max)
	}
	return fmt.Sprintf("Dynamo can let a decode worker prefill a prompt itself (conditional disaggregation, off by default). Its current policies (lib/kv-router/src/conditional_disagg.rs): %s %s IslOrLoad keeps it local when either does. "+
		"It is off in this run: every prompt went remote. These prompts share no prefix, so IslBounding would send every one remote too; under the rule of the first releases (v0.1–v0.3: length and queue) %d of these %d are long enough to go remote.",
		policyRule(withPolicy(rule, cluster.IslBounding)), policyRule(withPolicy(rule, cluster.PrefillLoad)), r.longPrompts, len(r.reqs))
}

// withPolicy is rule with another policy.
func withPolicy(rule cluster.ConditionalDisagg, p cluster.ConditionalPolicy) cluster.ConditionalDisagg {
	rule.Policy = p
	return rule
}

// policyName names a policy as Dynamo does.
func policyName(p cluster.ConditionalPolicy) string {
	switch p {
	case cluster.IslBounding:
		return "Dynamo's IslBounding policy"
	case cluster.PrefillLoad:
		return "Dynamo's PrefillLoad policy"
	case cluster.IslOrLoad:
		return "Dynamo's IslOrLoad policy (IslBounding or PrefillLoad)"
	}
	return "the rule of Dynamo's first releases (v0.1–v0.3)"
}

// policyRule states one policy's rule with the run's thresholds.
func policyRule(rule cluster.ConditionalDisagg) string {
	isl := fmt.Sprintf("IslBounding keeps a prompt local only when its uncached part is under eff_isl_threshold (%s tokens) and under eff_isl_ratio_threshold (%g) of the prompt — a conversation the decode worker mostly caches, never a fresh prompt.",
		kit.Comma(rule.EffISLThreshold), rule.EffISLRatioThreshold)
	load := fmt.Sprintf("PrefillLoad keeps it local when the prefill worker the router would pick holds more than router_queue_threshold (%g) × its token budget of pending prefill tokens.", rule.QueueThreshold)
	switch rule.Policy {
	case cluster.IslBounding:
		return isl
	case cluster.PrefillLoad:
		return load
	case cluster.IslOrLoad:
		return isl + " " + load
	}
	return fmt.Sprintf("A prompt goes remote only if the prompt minus what the decode worker caches exceeds max_local_prefill_length (%d) and fewer than max_prefill_queue_size (%d) requests wait for a prefill worker.",
		rule.MaxLocalPrefillLength, rule.MaxPrefillQueueSize)
}

// waited says how long something queued, or that it did not.
func waited(s float64) string {
	if s < 1e-4 {
		return "did not wait"
	}
	return "waited " + kit.MsText(s)
}

// splitText says how the disaggregated deployment uses the same GPUs:
// split into pools, or into pools of their own TP.
func (r *disaggRun) splitText() string {
	if r.sameTP() {
		return fmt.Sprintf("the disaggregated one splits the same %d GPUs into %d prefill and %d decode %s", r.compared.DisGPUs, r.prefill, r.decode, kit.Plural(r.decode, "worker", "workers"))
	}
	return fmt.Sprintf("the disaggregated one splits the same %d GPUs into %d prefill %s of %d GPUs and %d decode %s of %d",
		r.compared.DisGPUs, r.prefill, kit.Plural(r.prefill, "worker", "workers"), r.ptp, r.decode, kit.Plural(r.decode, "worker", "workers"), r.dtp)
}

// workersText says what each worker is: "Each worker is 4× H100", or each
// kind's TP when they differ.
func (r *disaggRun) workersText() string {
	if r.sameTP() {
		return fmt.Sprintf("Each worker is %d× %s", r.tp, r.e.GPU.Name)
	}
	return fmt.Sprintf("Each monolithic worker is %d× %s, each prefill worker %d× and each decode worker %d×", r.tp, r.e.GPU.Name, r.ptp, r.dtp)
}

// poolsText is the pools' workers for a figure title: "each worker 4×
// H100", or each pool's TP when they differ.
func (r *disaggRun) poolsText() string {
	if r.ptp == r.dtp {
		return fmt.Sprintf("each worker %d× %s", r.ptp, r.e.GPU.Name)
	}
	return fmt.Sprintf("prefill workers %d× and decode workers %d× %s", r.ptp, r.dtp, r.e.GPU.Name)
}

// sameGPUsText titles the percentile table: "same 8 GPUs", or both counts.
func (r *disaggRun) sameGPUsText() string {
	if c := r.compared; c.MonoGPUs != c.DisGPUs {
		return fmt.Sprintf("%d GPUs monolithic, %d disaggregated", c.MonoGPUs, c.DisGPUs)
	}
	return fmt.Sprintf("same %d GPUs", r.compared.MonoGPUs)
}

// dynamoModel is the lab's side of Dynamo's claim: capacity per GPU both
// ways when the searches ran, else the offered-rate throughput.
func (r *disaggRun) dynamoModel() string {
	setup := fmt.Sprintf("%d prefill (TP %d) + %d decode (TP %d) workers against %d monolithic (TP %d), %d GPUs each, %s weights", r.prefill, r.ptp, r.decode, r.dtp, r.monoWorkers(), r.tp, r.disGPUs(), kit.WeightName(r.e.Weights))
	c := r.capacity
	return fmt.Sprintf("capacity per GPU under %s: %s disaggregated vs %s monolithic (%s), %s",
		kit.SLOText(c.objective), kit.RateText(c.dis.perGPU()), kit.RateText(c.mono.perGPU()), timesText(c.dis.perGPU(), c.mono.perGPU()), setup)
}
