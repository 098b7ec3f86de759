// Package smartrouting holds the lesson smart-routing: Part 12 §3.2. The
// article's experiment — requests sharing four system prompts, routed
// round-robin or by KV cache contents — run by the model: Dynamo's KV router
// over an index fed by the workers' KV events, each worker a vLLM v1 engine
// with prefix caching.
package smartrouting

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "smart-routing",
	Title:   "Smart routing: send requests where their prefix is cached",
	Part:    "Part 12 §3.2",
	Summary: "Round-robin vs Dynamo's KV-aware router on requests that share system prompts: prefix hit rate, TTFT, load balance — and the hot spot pure cache affinity creates.",
	Engine: "NVIDIA Dynamo KV router (cost = overlap_score_weight × prefill blocks + decode blocks, lowest wins; global index fed by vLLM KV events; router-side active load) over vLLM v1 workers (core/cluster). " +
		"Simplified: aggregated workers (each prefills its own requests; the article's 4 prefill workers are folded into them), no network latency.",
	Group: "cluster", Rank: 10, Thumb: scene.KindCluster,
	Terms: []lessons.Term{
		{Term: "KV-aware routing", Aliases: []string{"smart routing", "kv router"}, Definition: "Send a request to the worker whose cache holds most of its prefix, weighed against that worker's load.", Find: "KV-aware"},
	},
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam, kit.TPParam(), kit.WeightParam,
		{Key: "workers", Label: "Workers", Kind: lessons.Int, Default: 8, Min: 2, Max: 16, Step: 1},
		{Key: "requests", Label: "Requests", Kind: lessons.Int, Default: 60, Min: 8, Max: 600, Step: 1},
		{Key: "system_prompts", Label: "System prompts", Help: "Distinct shared prefixes (the article: 4 agents).", Kind: lessons.Int, Default: 4, Min: 1, Max: 32, Step: 1},
		{Key: "prefix_tokens", Label: "System prompt length", Unit: "tokens", Kind: lessons.Int, Default: 2048, Min: 16, Max: 16384, Step: 16},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: lessons.Int, Default: 2048, Min: 16, Max: 32768, Step: 16},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: lessons.Int, Default: 4096, Min: 16, Max: 32768, Step: 16},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: lessons.Int, Default: 64, Min: 1, Max: 4096, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: lessons.Int, Default: 128, Min: 1, Max: 4096, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s", Kind: lessons.Float, Default: 4, Min: 0.1, Max: 500, Step: 0.1},
		{Key: "overlap_weight", Label: "overlap_score_weight", Help: "Dynamo's weight on prefill blocks; 0 = pure load balancing.", Kind: lessons.Float, Default: 1, Min: 0, Max: 100, Step: 0.1},
		{Key: "hot_share", Label: "Overload: share of the hottest prompt", Unit: "%", Help: "In the overload run, this share of requests uses system prompt 1.", Kind: lessons.Float, Default: 70, Min: 0, Max: 100, Step: 1},
		{Key: "overload_rate", Label: "Overload: arrival rate", Unit: "req/s", Kind: lessons.Float, Default: 96, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "overload_requests", Label: "Overload: requests", Kind: lessons.Int, Default: 200, Min: 8, Max: 1000, Step: 1},
		kit.PriceParam, kit.PowerParam,
		kit.SeedParam,
	},
	Check: kit.CheckingCosts(func(v lessons.Values) error {
		if err := kit.CheckOrdered(v, kit.LengthPairs...); err != nil {
			return err
		}
		switch {
		case v.Int("prefix_tokens") > v.Int("prompt_min"):
			return lessons.Relation("prefix_tokens", strconv.Itoa(v.Int("prefix_tokens")), fmt.Sprintf("at most prompt_min (%d): every prompt starts with its system prompt", v.Int("prompt_min")), "prompt_min")
		}
		if err := smartRoutingFit(v); err != nil {
			return err
		}
		stream, overload := smartRoutingWork(v)
		key := "requests"
		if overload > stream {
			key = "overload_requests"
		}
		return kit.WorkBound(v, key, "2 × prompt + 16 × output tokens per request, the requests served 4 times, once per policy, and the overload_requests twice",
			stream+overload, kit.ServingCheckWork)
	}),
	MaxWork: kit.ServingMaxWork,
	// The heaviest accepted settings of each shape: many requests, a hot
	// overload, the longest prompts, the longest outputs one request at a
	// time (every decode a step of its own), the most workers and prompts,
	// and the smallest KV pool under overload.
	HeavyCorners: []map[string]string{
		{"requests": "222", "overload_requests": "8"},
		{"requests": "8", "overload_requests": "442", "hot_share": "100", "overload_rate": "1000"},
		{"requests": "22", "overload_requests": "8", "prompt_min": "32768", "prompt_max": "32768", "prefix_tokens": "16384"},
		{"requests": "22", "overload_requests": "8", "rate": "0.1", "output_min": "4096", "output_max": "4096", "prompt_min": "16", "prompt_max": "16", "prefix_tokens": "16"},
		{"requests": "222", "overload_requests": "8", "rate": "500", "workers": "16", "system_prompts": "32"},
		{"requests": "8", "overload_requests": "603", "gpu": "l4", "model": "llama-2-7b", "hot_share": "100", "overload_rate": "1000", "prompt_min": "2048", "prompt_max": "2048"},
		// The heaviest `make bench-corners`' seeded search found (BENCHMARKS.md,
		// "Worst settings found by search").
		{"requests": "222", "overload_requests": "8", "hot_share": "0", "prefix_tokens": "16", "workers": "14"},
		// TP 8 on the heaviest stream.
		{"hot_share": "0", "overload_requests": "8", "prefix_tokens": "16", "requests": "222", "tp": "8", "workers": "14"},
	},
	Sim: sim{},
}

func init() { lessons.Register(lesson) }

// The article's figures (Part 12 §6, from its simulator's printed table).
const (
	articleHitKV, articleHitRR   = 93.3, 60.0
	articleTTFTKV, articleTTFTRR = 4.36, 22.26
)

// affinity is the article's "smart" router: the worker holding the longest
// cached prefix, the least loaded one when nobody holds any. It ignores load
// whenever a cache hit exists.
type affinity struct{ idx router.Indexer }

// UseIndex implements cluster.IndexUser.
func (a *affinity) UseIndex(idx router.Indexer) { a.idx = idx }

func (a *affinity) Route(req router.Request, ws []router.WorkerState) router.Decision {
	ov := a.idx.Overlap(req.Hashes)
	best := -1
	for i, w := range ws {
		if o := ov[w.ID]; o > 0 && (best < 0 || o > ov[ws[best].ID] || (o == ov[ws[best].ID] && w.Load() < ws[best].Load())) {
			best = i
		}
	}
	if best < 0 {
		d := router.LeastLoaded{}.Route(req, ws)
		d.Reason = "no cached prefix anywhere: " + d.Reason
		return d
	}
	return router.Decision{Worker: ws[best].ID, Overlap: ov[ws[best].ID], Reason: fmt.Sprintf("cache affinity: worker %d holds %d blocks of the prefix", ws[best].ID, ov[ws[best].ID])}
}

// smartRoutingFit is the shared feasibility check (hardware.Fit) for one
// worker: the model on one GPU with activations at vLLM's default token
// budget for it (VLLMBatch), and the longest request's KV beside them
// within the model's positions.
// More requests than fit at once queue or are preempted in the simulation.
func smartRoutingFit(v lessons.Values) error {
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	if err := kit.CheckTP(v, m); err != nil {
		return err
	}
	n := v.Int("prompt_max") + v.Int("output_max")
	budget, _ := kit.VLLMBatch(g)
	fit := kit.EngineFit(v, g, m)
	fit.BatchedTokens, fit.KVTokens, fit.Positions = budget, int64(n), n
	return kit.CheckFit(v, fit, kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "prompt_max", hardware.LimitPositions: "prompt_max"})
}

// smartRoutingWork is the most work the knobs ask for, from the lengths
// routingStream draws: the stream served four times (round robin,
// KV-aware, random, least loaded) and the overload stream twice (affinity,
// KV-aware).
func smartRoutingWork(v lessons.Values) (stream, overload int64) {
	seed := uint64(v.Int("seed"))
	stream = 4 * kit.RequestWork(routingLengths(v, v.Int("requests"), v.Float("rate"), seed))
	overload = 2 * kit.RequestWork(routingLengths(v, v.Int("overload_requests"), v.Float("overload_rate"), seed+7))
	return stream, overload
}

// routingLengths draws the stream's arrivals and lengths (routingStream
// adds the system prompts and token ids).
func routingLengths(v lessons.Values, n int, rate float64, seed uint64) []workload.Request {
	return workload.Poisson(n, rate, workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")},
		workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}, seed)
}

// routingStream builds the requests: Poisson arrivals, uniform lengths,
// each prompt opening with one of the system prompts. hot > 0 sends that
// share of requests to system prompt 0.
func routingStream(v lessons.Values, n int, rate, hot float64, seed uint64) []cluster.Request {
	reqs := routingLengths(v, n, rate, seed)
	rng := kit.NewRand(int(seed) + 1)
	groups := v.Int("system_prompts")
	out := make([]cluster.Request, len(reqs))
	for i, r := range reqs {
		g := rng.IntN(groups)
		if hot > 0 {
			g = 0
			if rng.Float64()*100 >= hot && groups > 1 {
				g = 1 + rng.IntN(groups-1)
			}
		}
		r.PrefixGroup, r.PrefixLen = g, min(v.Int("prefix_tokens"), r.Prompt)
		out[i] = cluster.Request{ID: r.ID, Arrival: r.Arrival, PromptIDs: r.TokenIDs(), Output: r.Output, Group: g}
	}
	return out
}

// smartRoutingRun is what the smart-routing lesson simulated: four
// policies on one stream, two on the overload stream, and the caches the
// router's index saw at the end.
type smartRoutingRun struct {
	e                                    *kit.Engine
	workers, requests, systemPrompts     int
	prefixTokens, promptMin, promptMax   int
	overloadRequests                     int
	rate, weight, hotShare, overloadRate float64
	seqs, budget                         int            // each worker's max_num_seqs and max_num_batched_tokens: vLLM's defaults on the GPU
	rr, kv, rnd, ll                      kit.RoutingRun // the article's stream
	aff, kvHot                           kit.RoutingRun // the overload stream
	cachedRR, cachedKV                   [][]int        // per worker, per system prompt: blocks the index holds at the end
	cachedRnd, cachedLL                  [][]int
	cachedAff, cachedHot                 [][]int
	watch                                *routeWatch // what the KV router's index held at the routes the lesson walks through
	work                                 int64       // Script.Work: the six runs' simulated work
	costRR, costKV                       kit.RunCost // what round robin's and KV-aware's runs of the article's stream cost (kit.CostOf)
}

// routeWatch is the article stream's KV-aware policy, watched: at the
// routes the lesson walks through (the first three, then ones whose chosen
// worker had the prompt cached, five in all) it records what the router's
// index held at that moment, per worker and system prompt. It only reads
// the index; the decisions are the policy's own.
type routeWatch struct {
	*router.KVAware
	idx      router.Indexer
	prefixes [][]uint64
	workers  int
	seen     int
	views    map[int]cacheView // by route index
	lookups  int64
}

// cacheView is the index at one route: per worker, each system prompt's
// cached blocks and every block it holds.
type cacheView struct {
	perPrompt [][]int
	total     []int
}

// UseIndex implements cluster.IndexUser: the policy reads the cluster's index.
func (w *routeWatch) UseIndex(idx router.Indexer) { w.KVAware.Index, w.idx = idx, idx }

// Route routes as the KV-aware policy does and records the index's view
// when the lesson will show this route.
func (w *routeWatch) Route(req router.Request, ws []router.WorkerState) router.Decision {
	i := w.seen
	w.seen++
	d := w.KVAware.Route(req, ws)
	if w.idx != nil && len(w.views) < 5 && (i < 3 || d.Overlap > 0) {
		v := cacheView{perPrompt: kit.CachedByPrompt(w.idx, w.prefixes, w.workers)}
		for k := 0; k < w.workers; k++ {
			v.total = append(v.total, w.idx.Blocks(k))
		}
		w.views[i] = v
		w.lookups += int64(w.workers * len(w.prefixes))
	}
	return d
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runSmartRouting(v))
}

// runSmartRouting routes the stream with every policy, and the overload
// stream with pure affinity and the KV-aware cost.
func runSmartRouting(v lessons.Values) (*smartRoutingRun, error) {
	g, _, err := kit.ChosenHardware(v)
	if err != nil {
		return nil, err
	}
	// Each worker runs vLLM's defaults for its GPU.
	budget, seqs := kit.VLLMBatch(g)
	e, err := kit.NewEngineAt(v, 16, budget)
	if err != nil {
		return nil, err
	}
	r := &smartRoutingRun{e: e, workers: v.Int("workers"), requests: v.Int("requests"), systemPrompts: v.Int("system_prompts"),
		prefixTokens: v.Int("prefix_tokens"), promptMin: v.Int("prompt_min"), promptMax: v.Int("prompt_max"), overloadRequests: v.Int("overload_requests"),
		rate: v.Float("rate"), weight: v.Float("overlap_weight"), hotShare: v.Float("hot_share"), overloadRate: v.Float("overload_rate"), seqs: seqs, budget: budget}
	sc := scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: 16, NumBlocks: e.KVBlocks}
	timer := e.Timer(sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	seed := uint64(v.Int("seed"))
	kvCfg := router.KvRouterConfig{OverlapScoreWeight: r.weight, BlockSize: sc.BlockSize}
	run := func(dst *kit.RoutingRun, name string, p router.Policy, reqs []cluster.Request) error {
		res, err := cluster.Run(cluster.Config{Workers: r.workers, Scheduler: sc, Timer: func(int) scheduler.Timer { return timer }, Policy: p}, reqs)
		if err != nil {
			return err
		}
		*dst = kit.SummariseRouting(name, res)
		return nil
	}
	r.watch = &routeWatch{KVAware: router.NewKVAware(nil, kvCfg, seed), prefixes: kit.PromptHashes(r.systemPrompts, r.prefixTokens, sc.BlockSize),
		workers: r.workers, views: map[int]cacheView{}}
	stream := routingStream(v, r.requests, r.rate, 0, seed)
	// Overload: one hot system prompt, arriving fast.
	hotStream := routingStream(v, r.overloadRequests, r.overloadRate, r.hotShare, seed+7)
	for _, c := range []struct {
		dst    *kit.RoutingRun
		name   string
		policy router.Policy
		reqs   []cluster.Request
	}{
		{&r.rr, "round robin", router.NewRoundRobin(), stream},
		{&r.kv, "KV-aware", r.watch, stream},
		{&r.rnd, "random", router.NewRandom(seed), stream},
		{&r.ll, "least loaded", router.LeastLoaded{}, stream},
		{&r.aff, "cache affinity (the article's router)", &affinity{}, hotStream},
		{&r.kvHot, "KV-aware", router.NewKVAware(nil, kvCfg, seed), hotStream},
	} {
		if err := run(c.dst, c.name, c.policy, c.reqs); err != nil {
			return nil, err
		}
	}
	prefixes := r.watch.prefixes
	for _, c := range []struct {
		dst *[][]int
		run kit.RoutingRun
	}{{&r.cachedRR, r.rr}, {&r.cachedKV, r.kv}, {&r.cachedRnd, r.rnd}, {&r.cachedLL, r.ll}, {&r.cachedAff, r.aff}, {&r.cachedHot, r.kvHot}} {
		*c.dst = kit.CachedByPrompt(c.run.Result.Index, prefixes, r.workers)
		r.work += c.run.Result.Counts.Work() + int64(r.workers*len(prefixes))
	}
	r.work += r.watch.lookups
	usd, watts := kit.CostRates(v, g)
	for _, c := range []struct {
		dst *kit.RunCost
		run kit.RoutingRun
	}{{&r.costRR, r.rr}, {&r.costKV, r.kv}} {
		in, out, held := kit.ServedTokens(c.run.Result.Requests)
		*c.dst = kit.CostOf(usd, watts, []kit.GPUPool{{GPUs: r.workers * e.TP, Held: held, Busy: c.run.Result.Busy}}, in, out)
	}
	return r, nil
}

func (r *smartRoutingRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
	s.Metrics = append(s.Metrics, append(r.costRR.MetricsSuffixed("_round_robin", "Round robin"), r.costKV.MetricsSuffixed("_kv_aware", "KV-aware")...)...)
	s.Steps = r.steps()
	kit.IndexCursors(s.Steps)
	return s
}

func (r *smartRoutingRun) metrics() []lessons.Metric {
	affRun, kvHot := r.aff, r.kvHot
	var ms []lessons.Metric
	// Each policy on the same stream: its cache hits, its latencies as
	// serving benchmarks report them (mean and percentiles of TTFT and of
	// end-to-end latency) and its balance. Random is Dynamo's baseline for
	// its KV-routing claims, round robin SGLang's for its router's.
	for _, p := range []struct {
		run         kit.RoutingRun
		suffix, who string
	}{{r.rr, "_round_robin", "Round robin"}, {r.kv, "_kv_aware", "KV-aware"}, {r.rnd, "_random", "Random"}} {
		rep := kit.LatencyReportFrom(p.run.Result.Requests)
		ms = append(ms,
			lessons.Metric{Key: "hit_rate_pct" + p.suffix, Label: p.who + ": prompt tokens found cached", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * p.run.HitTokens)},
			lessons.Metric{Key: "request_hit_pct" + p.suffix, Label: p.who + ": requests that found their prefix cached", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * p.run.HitRequests)},
			lessons.Metric{Key: "ttft_p50_ms" + p.suffix, Label: p.who + ": median TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(rep.TTFT.P50)},
			lessons.Metric{Key: "ttft_p99_ms" + p.suffix, Label: p.who + ": p99 TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(rep.TTFT.P99)},
			lessons.Metric{Key: "imbalance" + p.suffix, Label: p.who + ": busiest worker's mean active requests / the mean", Unit: "× the mean", Better: lessons.LowerIsBetter, Value: kit.Round2(p.run.Imbalance)})
		ms = append(ms, rep.MetricsSuffixed(p.suffix, p.who)...)
	}
	return append(ms,
		lessons.Metric{Key: "ttft_mean_ms_affinity_overload", Label: "Overload, pure cache affinity: mean TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(affRun.TTFTMean)},
		lessons.Metric{Key: "ttft_mean_ms_kv_aware_overload", Label: "Overload, KV-aware cost: mean TTFT", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(kvHot.TTFTMean)},
		lessons.Metric{Key: "imbalance_affinity_overload", Label: "Overload, pure cache affinity: imbalance", Unit: "× the mean", Better: lessons.LowerIsBetter, Value: kit.Round2(affRun.Imbalance)},
		lessons.Metric{Key: "imbalance_kv_aware_overload", Label: "Overload, KV-aware cost: imbalance", Unit: "× the mean", Better: lessons.LowerIsBetter, Value: kit.Round2(kvHot.Imbalance)})
}

func (r *smartRoutingRun) claims() []lessons.Claim {
	rr, kv := r.rr, r.kv
	return []lessons.Claim{{
		What:    "KV cache hit rate, KV-aware vs round robin",
		Article: fmt.Sprintf("%.1f%% vs %.1f%% (60 requests, 4 system prompts, 8 decode workers)", articleHitKV, articleHitRR),
		Model:   fmt.Sprintf("%.1f%% vs %.1f%% of requests found their prefix cached; %.1f%% vs %.1f%% of prompt tokens", 100*kv.HitRequests, 100*rr.HitRequests, 100*kv.HitTokens, 100*rr.HitTokens),
		Why:     "The article counts a request as a hit when its system prompt is cached on the chosen worker, as the first figure here does; the token share is lower because each prompt also carries tokens no one has seen.",
	}, {
		What:    "Mean TTFT, KV-aware vs round robin",
		Article: fmt.Sprintf("%.2f ms vs %.2f ms", articleTTFTKV, articleTTFTRR),
		Model:   fmt.Sprintf("%.2f ms vs %.2f ms on %s with %s", 1000*kv.TTFTMean, 1000*rr.TTFTMean, r.e.GPUsText(), r.e.ModelText()),
		Why:     "The article types in a 1.2 ms hit and 0.018 ms per prompt token on a miss and serves requests one at a time; here a hit still computes the prompt's unshared tokens, every step is priced on the GPU, and requests queue behind each other.",
	}}
}

func workerLabel(w int) string { return "W" + strconv.Itoa(w+1) }

// routeCluster is the cluster as the KV router saw it when it routed rt:
// each worker's cache by system prompt (the index's view), its requests
// running or waiting, and its cost for rt; rt travels to its worker.
func (r *smartRoutingRun) routeCluster(i int, rt cluster.Routed, marks []scene.Mark) scene.Scene {
	v := r.watch.views[i]
	pool := scene.Pool{Label: fmt.Sprintf("%d workers (%s, %s)", r.workers, r.e.GPUsText(), r.e.ModelText())}
	for _, sc := range rt.Decision.Scores {
		w := sc.Worker
		pool.Workers = append(pool.Workers, scene.Worker{ID: workerLabel(w), Cache: kit.CacheFills(v.perPrompt[w], v.total[w]), Queue: float64(sc.Load),
			Cost: fmt.Sprintf("cost %.1f", sc.Logit), Chosen: w == rt.Worker, Lines: []string{fmt.Sprintf("R%d hits %s", rt.Request+1, kit.Comma(sc.Overlap))}})
	}
	c := r.clusterFrame(pool)
	c.Travel = &scene.Travel{Ref: "req:" + kit.ReqName(rt.Request), Group: rt.Group, From: "router", To: workerLabel(rt.Worker),
		Label: fmt.Sprintf("R%d · prompt %d", rt.Request+1, rt.Group+1)}
	return scene.Scene{Kind: scene.KindCluster, ID: "cluster", Main: true, Marks: marks, Cluster: c,
		Title: fmt.Sprintf("R%d is routed: the router's view at %.2f s", rt.Request+1, rt.Arrival)}
}

// clusterFrame is the article stream's cluster around pool, on the scales
// every routing step shares.
func (r *smartRoutingRun) clusterFrame(pools ...scene.Pool) *scene.Cluster {
	cacheMax, queueMax := 0.0, 1.0
	for _, v := range r.watch.views {
		for _, t := range v.total {
			cacheMax = max(cacheMax, float64(t))
		}
	}
	for _, rt := range r.kv.Result.Routes {
		for _, l := range rt.Load {
			queueMax = max(queueMax, float64(l))
		}
	}
	return &scene.Cluster{Router: fmt.Sprintf("KV router: cost = %g × prefill blocks + decode blocks, lowest wins", r.weight),
		Pools: pools, Groups: kit.PromptGroups(r.systemPrompts), CacheLabel: "blocks the router's index holds (16 tokens each)", CacheUnit: "blocks",
		QueueLabel: "requests running + waiting", QueueUnit: "in flight",
		CacheMax: cacheMax, QueueMax: queueMax}
}

// decisionTable is the KV router's view of every worker for one request.
func decisionTable(d router.Decision) scene.Scene {
	tbl := &scene.Table{Columns: []string{"worker", "cached blocks of this prompt", "prefill blocks", "decode blocks", "cost (lower wins)", "in flight"}}
	for _, sc := range d.Scores {
		mark := ""
		if sc.Worker == d.Worker {
			mark = " ← chosen"
		}
		tbl.Rows = append(tbl.Rows, []string{workerLabel(sc.Worker) + mark, strconv.Itoa(sc.Overlap), fmt.Sprintf("%.1f", sc.PrefillBlocks), fmt.Sprintf("%.0f", sc.DecodeBlocks), fmt.Sprintf("%.1f", sc.Logit), strconv.Itoa(sc.Load)})
	}
	return scene.Scene{Kind: scene.KindTable, ID: "decision", Title: "The cost terms behind each worker's cost", Table: tbl}
}

// workerBars charts the requests each worker served under each run.
func workerBars(runs ...kit.RoutingRun) *scene.Chart {
	c := &scene.Chart{Type: scene.Bar, XLabel: "worker", YLabel: "requests served"}
	for _, r := range runs {
		sr := scene.Series{Name: r.Name}
		for w, n := range r.PerWorker {
			sr.X = append(sr.X, float64(w+1))
			sr.Y = append(sr.Y, float64(n))
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

// shownRoutes are the KV-aware decisions the lesson walks through: those
// the watch recorded (the first three, then ones whose chosen worker had
// the prompt cached, five at most), with their route index.
func (r *smartRoutingRun) shownRoutes() []cluster.Routed {
	var out []cluster.Routed
	for i, rt := range r.kv.Result.Routes {
		if _, ok := r.watch.views[i]; ok {
			out = append(out, rt)
		}
	}
	return out
}

// shownIndex is the route index of each shown route.
func (r *smartRoutingRun) shownIndex() []int {
	var out []int
	for i := range r.kv.Result.Routes {
		if _, ok := r.watch.views[i]; ok {
			out = append(out, i)
		}
	}
	return out
}

// routeWhy explains one KV-aware decision from its scores, saying so
// when the lowest cost was a tie and how the tie was broken.
func routeWhy(rt cluster.Routed) string {
	var chosen router.Score
	var tied []router.Score // every other worker at the chosen cost
	next := math.Inf(1)
	for _, sc := range rt.Decision.Scores {
		if sc.Worker == rt.Worker {
			chosen = sc
		}
	}
	for _, sc := range rt.Decision.Scores {
		if sc.Worker == rt.Worker {
			continue
		}
		next = math.Min(next, sc.Logit)
		if sc.Logit == chosen.Logit {
			tied = append(tied, sc)
		}
	}
	w := workerLabel(rt.Worker)
	if rt.Overlap > 0 {
		inFlight := "with nothing in flight"
		if n := rt.Load[rt.Worker]; n > 0 {
			inFlight = fmt.Sprintf("despite the %d %s it already has in flight", n, kit.Plural(n, "request", "requests"))
		}
		why := fmt.Sprintf("%s already caches %d blocks (%s tokens) of this prompt, which takes them off its prefill term, %s: ", w, rt.Overlap, kit.Comma(16*rt.Overlap), inFlight)
		if len(tied) == 0 {
			return why + fmt.Sprintf("its cost is %.1f against the next best %.1f.", chosen.Logit, next)
		}
		return why + fmt.Sprintf("its cost is %.1f, a tie with %s. %s", chosen.Logit, workerList(tied), tieBreakText(chosen, tied))
	}
	why := fmt.Sprintf("No worker holds system prompt %d yet, so every cost is the full prompt's prefill blocks plus the worker's load; ", rt.Group+1)
	if len(tied) == 0 {
		return why + fmt.Sprintf("%s has the lowest, %.1f against %.1f.", w, chosen.Logit, next)
	}
	return why + fmt.Sprintf("%s ties with %s at %.1f. %s", w, workerList(tied), chosen.Logit, tieBreakText(chosen, tied))
}

// workerList names the workers of scores: "W2", "W2 and W5", "W2, W3 and
// W5".
func workerList(scores []router.Score) string {
	var ws []string
	for _, sc := range scores {
		ws = append(ws, workerLabel(sc.Worker))
	}
	if len(ws) == 1 {
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// tieBreakText says how Dynamo's selector broke a tie between chosen and
// the others at its cost: the smallest indexed tree, where a worker holding
// none of the prompt counts 0, then a random pick (seeded here).
func tieBreakText(chosen router.Score, others []router.Score) string {
	smaller, equal := 0, 0
	for _, o := range others {
		switch {
		case o.TreeSize > chosen.TreeSize:
			smaller++
		case o.TreeSize == chosen.TreeSize:
			equal++
		}
	}
	w := workerLabel(chosen.Worker)
	switch {
	case equal == 0 && chosen.Overlap == 0:
		return fmt.Sprintf("Ties go to the smallest indexed tree, and Dynamo knows tree sizes only for workers holding part of the prompt, counting the others as 0: %s holds none of it, so it wins the tie.", w)
	case equal == 0:
		var sizes []string
		for _, o := range others {
			sizes = append(sizes, fmt.Sprintf("%s (%s)", workerLabel(o.Worker), kit.Comma(o.TreeSize)))
		}
		return fmt.Sprintf("Ties go to the smallest indexed tree: %s caches %s blocks in all, fewer than %s, so it wins the tie.", w, kit.Comma(chosen.TreeSize), strings.Join(sizes, ", "))
	case chosen.TreeSize == 0:
		return fmt.Sprintf("None of the tied workers holds any of the prompt, so Dynamo has no tree size for them and picks one at random: here a seeded draw chose %s.", w)
	}
	return fmt.Sprintf("Ties go to the smallest indexed tree; %d of the tied workers have the same, %d blocks, so a random pick decides: here a seeded draw chose %s.", equal+1, chosen.TreeSize, w)
}

// routeSteps walk through a few of the KV router's decisions, each over the
// cluster as the router saw it.
func (r *smartRoutingRun) routeSteps() []lessons.Step {
	var choices []string
	for w := 0; w < r.workers; w++ {
		choices = append(choices, workerLabel(w))
	}
	var steps []lessons.Step
	idx := r.shownIndex()
	for i, rt := range r.shownRoutes() {
		var quiz *lessons.Quiz
		if i == 3 {
			quiz = lessons.ChoiceQuiz(fmt.Sprintf("R%d opens with system prompt %d. Which worker will the KV-aware router pick?", rt.Request+1, rt.Group+1), choices, workerLabel(rt.Worker),
				"The lowest cost: cached blocks cut the prefill term, the worker's active blocks and pending prefill add to it.")
		}
		narration := fmt.Sprintf("R%d arrives at %.2f s. The router scores each worker: cost = %g × prefill blocks + decode blocks. %s", rt.Request+1, rt.Arrival, r.weight, routeWhy(rt))
		a := &kit.Annotator{Scene: "cluster"}
		a.Mark("req:"+kit.ReqName(rt.Request), "", fmt.Sprintf("R%d arrives", rt.Request+1), narration)
		var chosen float64
		for _, sc := range rt.Decision.Scores {
			if sc.Worker == rt.Worker {
				chosen = sc.Logit
			}
		}
		w := workerLabel(rt.Worker)
		a.Mark("worker:"+w, fmt.Sprintf("chosen: cost %.1f", chosen), kit.FirstIn(narration, w+" already caches", w+" has the lowest", w+" ties with", "chose "+w), narration)
		var tied []int
		for _, sc := range rt.Decision.Scores {
			if sc.Worker != rt.Worker && sc.Logit == chosen {
				tied = append(tied, sc.Worker)
			}
		}
		if len(tied) <= 2 { // a tie among many reads from the costs printed on every worker
			for _, t := range tied {
				a.Mark("worker:"+workerLabel(t), fmt.Sprintf("tie: cost %.1f", chosen), "", narration)
			}
		}
		a.Mark("router:R", "", "The router scores each worker", narration)
		steps = append(steps, lessons.Step{
			Quiz:      quiz,
			Key:       fmt.Sprintf("route:R%d", rt.Request+1),
			Title:     fmt.Sprintf("Routing R%d (system prompt %d)", rt.Request+1, rt.Group+1),
			Narration: narration,
			Scenes:    []scene.Scene{r.routeCluster(idx[i], rt, a.Marks), decisionTable(rt.Decision)},
			Mentions:  a.Mentions,
		})
	}
	return steps
}

// startCluster is the cluster before the first request: nothing cached,
// nothing queued.
func (r *smartRoutingRun) startCluster(marks []scene.Mark) scene.Scene {
	pool := scene.Pool{Label: fmt.Sprintf("%d workers (%s, %s)", r.workers, r.e.GPUsText(), r.e.ModelText())}
	for w := 0; w < r.workers; w++ {
		pool.Workers = append(pool.Workers, scene.Worker{ID: workerLabel(w)})
	}
	return scene.Scene{Kind: scene.KindCluster, ID: "cluster", Main: true, Marks: marks, Cluster: r.clusterFrame(pool),
		Title: "The cluster before the first request"}
}

// policyCluster is the stream's end under several policies as small
// multiples on one scale.
func (r *smartRoutingRun) policyCluster(id, title string, marks []scene.Mark, runs []kit.RoutingRun, cached [][][]int) scene.Scene {
	var pools []scene.Pool
	for i, run := range runs {
		pools = append(pools, kit.EndPool(run.Name, fmt.Sprintf("p%d-", i+1), run, cached[i]))
	}
	c := &scene.Cluster{Pools: pools, Groups: kit.PromptGroups(r.systemPrompts), CacheLabel: "system-prompt blocks cached at the end", CacheUnit: "blocks",
		QueueLabel: "requests running + waiting, mean over the run", QueueUnit: "in flight"}
	return scene.Scene{Kind: scene.KindCluster, ID: id, Main: true, Marks: marks, Cluster: c, Title: title}
}

// steps narrates the run.
func (r *smartRoutingRun) steps() []lessons.Step {
	rr, kv := r.rr, r.kv
	intro := fmt.Sprintf("%d requests arrive at %g per second, each opening with one of %d system prompts of %s tokens and totalling %s–%s tokens, on %d workers (%s, %s, prefix caching on; vLLM's defaults on this GPU, max_num_seqs %s and max_num_batched_tokens %s). "+
		"A request reuses KV only on the worker that already holds its system prompt. The KV router in front of them scores every worker for each request.%s",
		r.requests, r.rate, r.systemPrompts, kit.Comma(r.prefixTokens), kit.Comma(r.promptMin), kit.Comma(r.promptMax), r.workers, r.e.GPUsText(), r.e.ModelText(), kit.Comma(r.seqs), kit.Comma(r.budget), kit.PrecisionNote(r.e))
	a := &kit.Annotator{Scene: "cluster"}
	a.Mark("router:R", "KV router", "The KV router", intro)
	steps := []lessons.Step{{Key: "intro", Title: "Agents sharing system prompts", Narration: intro, Scenes: []scene.Scene{r.startCluster(a.Marks)}, Mentions: a.Mentions}}
	steps = append(steps, r.routeSteps()...)

	sendsBack, price := "The KV router sends each prompt back where it is cached", "The price is balance: requests gather where their prompts live, and the busiest"
	if r.weight == 0 {
		// overlap_score_weight 0 leaves the prefill a worker would save out of the cost
		sendsBack, price = "With overlap_score_weight 0 the KV router's cost leaves out the prefill a cache saves, so it balances load and ignores the caches too", "The busiest"
	}
	cmp := fmt.Sprintf("Round robin ignores the caches: each system prompt gets computed on worker after worker, and %.0f%% of requests found theirs cached. %s: %.0f%%. "+
		"Mean TTFT goes from %.1f ms to %.1f ms (p99 %.1f → %.1f ms). %s worker carried %.2f× the mean load under KV-aware routing against %.2f× under round robin.",
		100*rr.HitRequests, sendsBack, 100*kv.HitRequests, 1000*rr.TTFTMean, 1000*kv.TTFTMean, 1000*rr.TTFTP99, 1000*kv.TTFTP99, price, kv.Imbalance, rr.Imbalance)
	a = &kit.Annotator{Scene: "end"}
	a.Mark("pool:"+rr.Name, fmt.Sprintf("%.0f%% of requests hit", 100*rr.HitRequests), "Round robin", cmp)
	a.Mark("pool:"+kv.Name, fmt.Sprintf("%.0f%% of requests hit", 100*kv.HitRequests), "The KV router", cmp)
	a.Mark("worker:p2-"+workerLabel(kv.Busiest()), fmt.Sprintf("busiest: %.2f× the mean", kv.Imbalance), "the busiest worker", cmp)
	steps = append(steps, lessons.Step{
		Key: "compare", Title: "Round robin vs KV-aware", Narration: cmp, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.policyCluster("end", "Where each prompt ended up cached, and each worker's load", a.Marks, []kit.RoutingRun{rr, kv}, [][][]int{r.cachedRR, r.cachedKV})},
	})
	return append(steps, r.closingSteps()...)
}

// closingSteps compare every policy, then the overload.
func (r *smartRoutingRun) closingSteps() []lessons.Step {
	rr, kv, affRun, kvHot := r.rr, r.kv, r.aff, r.kvHot
	pol := &scene.Table{Columns: []string{"policy", "requests with a cached prefix", "prompt tokens cached", "mean TTFT", "p99 TTFT", "mean end-to-end", "p99 end-to-end", "imbalance"}}
	for _, p := range []kit.RoutingRun{rr, r.rnd, r.ll, kv} {
		e2e := kit.LatencyReportFrom(p.Result.Requests).E2E
		pol.Rows = append(pol.Rows, []string{p.Name, fmt.Sprintf("%.1f%%", 100*p.HitRequests), fmt.Sprintf("%.1f%%", 100*p.HitTokens),
			fmt.Sprintf("%.1f ms", 1000*p.TTFTMean), fmt.Sprintf("%.1f ms", 1000*p.TTFTP99), fmt.Sprintf("%.1f ms", 1000*e2e.Mean), fmt.Sprintf("%.1f ms", 1000*e2e.P99), fmt.Sprintf("%.2f", p.Imbalance)})
	}
	rndE2E, kvE2E := kit.LatencyReportFrom(r.rnd.Result.Requests).E2E, kit.LatencyReportFrom(kv.Result.Requests).E2E
	every := "Random and least-loaded routing spread load but scatter each prompt's cache; only the cache-aware cost keeps both hit rate and balance. " +
		fmt.Sprintf("Against random routing, the baseline of Dynamo's KV-routing claims (3× faster TTFT, half the mean latency, on its 70B model under load), the KV-aware router here cuts mean TTFT %.2f× (%.1f to %.1f ms) and mean end-to-end latency %.2f× (%.0f to %.0f ms); round robin, SGLang's baseline, is the first comparison above.",
			r.rnd.TTFTMean/kv.TTFTMean, 1000*r.rnd.TTFTMean, 1000*kv.TTFTMean, rndE2E.Mean/kvE2E.Mean, 1000*rndE2E.Mean, 1000*kvE2E.Mean)
	a := &kit.Annotator{Scene: "policies-cluster"}
	a.Mark("pool:"+r.rnd.Name, fmt.Sprintf("%.0f%% hit · imbalance %.2f", 100*r.rnd.HitRequests, r.rnd.Imbalance), "Random", every)
	a.Mark("pool:"+r.ll.Name, fmt.Sprintf("%.0f%% hit · imbalance %.2f", 100*r.ll.HitRequests, r.ll.Imbalance), "least-loaded", every)
	a.Mark("pool:"+kv.Name, fmt.Sprintf("%.0f%% hit · imbalance %.2f", 100*kv.HitRequests, kv.Imbalance), "the cache-aware cost", every)
	spreads := "Dynamo's cost counts the pending prefill tokens and active blocks too, so once the hot worker is loaded a cold worker's full prefill is cheaper and the hot prompt spreads"
	if r.weight == 0 {
		spreads = "Dynamo's cost at overlap_score_weight 0 counts only the active blocks, so the hot prompt spreads over every worker from the start"
	}
	overload := fmt.Sprintf("Now %d requests arrive at %g per second and %.0f%% of them share one system prompt. The article's router sends every request to the worker that caches its prefix: that worker queues (imbalance %.2f, mean TTFT %.0f ms). "+
		"%s (imbalance %.2f, mean TTFT %.0f ms).",
		r.overloadRequests, r.overloadRate, r.hotShare, affRun.Imbalance, 1000*affRun.TTFTMean, spreads, kvHot.Imbalance, 1000*kvHot.TTFTMean)
	b := &kit.Annotator{Scene: "overload-cluster"}
	b.Mark("worker:p1-"+workerLabel(affRun.Busiest()), fmt.Sprintf("hot spot: %.2f× the mean", affRun.Imbalance), "that worker queues", overload)
	b.Mark("pool:"+kvHot.Name, fmt.Sprintf("imbalance %.2f", kvHot.Imbalance), "the hot prompt spreads", overload)
	return []lessons.Step{{
		Key: "policies", Title: "Every policy on the same stream", Narration: every, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.policyCluster("policies-cluster", "Every policy on the same stream, at its end", a.Marks,
			[]kit.RoutingRun{rr, r.rnd, r.ll, kv}, [][][]int{r.cachedRR, r.cachedRnd, r.cachedLL, r.cachedKV}),
			{Kind: scene.KindTable, ID: "policies", Title: "Policies compared", Table: pol}},
	}, {
		Key: "overload", Title: "Overload: when affinity hot-spots one worker", Narration: overload, Mentions: b.Mentions,
		Scenes: []scene.Scene{r.policyCluster("overload-cluster", "The overload stream at its end", b.Marks, []kit.RoutingRun{affRun, kvHot}, [][][]int{r.cachedAff, r.cachedHot}),
			{Kind: scene.KindChart, ID: "overload", Title: "Requests per worker under overload", Chart: workerBars(affRun, kvHot)}},
	}}
}
