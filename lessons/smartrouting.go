package lessons

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
	"github.com/inferlab/inferlab/scene"
)

// smart-routing: Part 12 §3.2. The article's experiment — requests sharing
// four system prompts, routed round-robin or by KV cache contents — run by
// the model: Dynamo's KV router over an index fed by the workers' KV events,
// each worker a vLLM v1 engine with prefix caching.
var smartRouting = &Lesson{
	Slug:    "smart-routing",
	Title:   "Smart routing: send requests where their prefix is cached",
	Part:    "Part 12 §3.2",
	Summary: "Round-robin vs Dynamo's KV-aware router on requests that share system prompts: prefix hit rate, TTFT, load balance — and the hot spot pure cache affinity creates.",
	Engine: "NVIDIA Dynamo KV router (cost = overlap_score_weight × prefill blocks + decode blocks, lowest wins; global index fed by vLLM KV events; router-side active load) over vLLM v1 workers (core/cluster). " +
		"Simplified: aggregated workers (each prefills its own requests; the article's 4 prefill workers are folded into them), no network latency.",
	Params: []Param{
		gpuParam, modelParam,
		{Key: "workers", Label: "Workers", Kind: Int, Default: 8, Min: 2, Max: 16, Step: 1},
		{Key: "requests", Label: "Requests", Kind: Int, Default: 60, Min: 8, Max: 600, Step: 1},
		{Key: "system_prompts", Label: "System prompts", Help: "Distinct shared prefixes (the article: 4 agents).", Kind: Int, Default: 4, Min: 1, Max: 32, Step: 1},
		{Key: "prefix_tokens", Label: "System prompt length", Unit: "tokens", Kind: Int, Default: 2048, Min: 16, Max: 16384, Step: 16},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: Int, Default: 2048, Min: 16, Max: 32768, Step: 16},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: Int, Default: 4096, Min: 16, Max: 32768, Step: 16},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: Int, Default: 64, Min: 1, Max: 4096, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: Int, Default: 128, Min: 1, Max: 4096, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s", Kind: Float, Default: 4, Min: 0.1, Max: 500, Step: 0.1},
		{Key: "overlap_weight", Label: "overlap_score_weight", Help: "Dynamo's weight on prefill blocks; 0 = pure load balancing.", Kind: Float, Default: 1, Min: 0, Max: 100, Step: 0.1},
		{Key: "hot_share", Label: "Overload: share of the hottest prompt", Unit: "%", Help: "In the overload run, this share of requests uses system prompt 1.", Kind: Float, Default: 70, Min: 0, Max: 100, Step: 1},
		{Key: "overload_rate", Label: "Overload: arrival rate", Unit: "req/s", Kind: Float, Default: 96, Min: 0.1, Max: 1000, Step: 0.1},
		{Key: "overload_requests", Label: "Overload: requests", Kind: Int, Default: 200, Min: 8, Max: 1000, Step: 1},
		seedParam,
	},
	Check: func(v Values) error {
		if err := checkOrdered(v, lengthPairs...); err != nil {
			return err
		}
		switch {
		case v.Int("prefix_tokens") > v.Int("prompt_min"):
			return Relation("prefix_tokens", strconv.Itoa(v.Int("prefix_tokens")), fmt.Sprintf("at most prompt_min (%d): every prompt starts with its system prompt", v.Int("prompt_min")))
		}
		if err := smartRoutingFit(v); err != nil {
			return err
		}
		stream, overload := smartRoutingWork(v)
		key := "requests"
		if overload > stream {
			key = "overload_requests"
		}
		return workBound(v, key, "2 × prompt + 16 × output tokens per request, the requests served 4 times, once per policy, and the overload_requests twice",
			stream+overload, servingCheckWork)
	},
	MaxWork: servingMaxWork,
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
	},
	Build: buildSmartRouting,
}

func init() { register(smartRouting) }

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
// worker: the model on one GPU with activations at the 8,192-token budget,
// and the longest request's KV beside them within the model's positions.
// More requests than fit at once queue or are preempted in the simulation.
func smartRoutingFit(v Values) error {
	g, m, err := chosenHardware(v)
	if err != nil {
		return err
	}
	n := v.Int("prompt_max") + v.Int("output_max")
	return checkFit(v, hardware.Fit{GPU: g, Model: m, FixedTP: true, BatchedTokens: 8192, KVTokens: int64(n), Positions: n},
		fitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "prompt_max", hardware.LimitPositions: "prompt_max"})
}

// smartRoutingWork is the most work the knobs ask for, from the lengths
// routingStream draws: the stream served four times (round robin,
// KV-aware, random, least loaded) and the overload stream twice (affinity,
// KV-aware).
func smartRoutingWork(v Values) (stream, overload int64) {
	seed := uint64(v.Int("seed"))
	stream = 4 * requestWork(routingLengths(v, v.Int("requests"), v.Float("rate"), seed))
	overload = 2 * requestWork(routingLengths(v, v.Int("overload_requests"), v.Float("overload_rate"), seed+7))
	return stream, overload
}

// routingLengths draws the stream's arrivals and lengths (routingStream
// adds the system prompts and token ids).
func routingLengths(v Values, n int, rate float64, seed uint64) []workload.Request {
	return workload.Poisson(n, rate, workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")},
		workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}, seed)
}

// routingStream builds the requests: Poisson arrivals, uniform lengths,
// each prompt opening with one of the system prompts. hot > 0 sends that
// share of requests to system prompt 0.
func routingStream(v Values, n int, rate, hot float64, seed uint64) []cluster.Request {
	reqs := routingLengths(v, n, rate, seed)
	rng := newRand(int(seed) + 1)
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
	e                                    *engine
	workers, requests, systemPrompts     int
	prefixTokens, promptMin, promptMax   int
	overloadRequests                     int
	rate, weight, hotShare, overloadRate float64
	rr, kv, rnd, ll                      routingRun // the article's stream
	aff, kvHot                           routingRun // the overload stream
	cachedRR, cachedKV                   [][]int    // per worker, per system prompt: blocks the index holds at the end
	work                                 int64      // Script.Work: the six runs' simulated work
}

func buildSmartRouting(v Values) (*Script, error) {
	r, err := runSmartRouting(v)
	if err != nil {
		return nil, err
	}
	return r.script(), nil
}

// runSmartRouting routes the stream with every policy, and the overload
// stream with pure affinity and the KV-aware cost.
func runSmartRouting(v Values) (*smartRoutingRun, error) {
	e, err := newEngine(v, 16)
	if err != nil {
		return nil, err
	}
	r := &smartRoutingRun{e: e, workers: v.Int("workers"), requests: v.Int("requests"), systemPrompts: v.Int("system_prompts"),
		prefixTokens: v.Int("prefix_tokens"), promptMin: v.Int("prompt_min"), promptMax: v.Int("prompt_max"), overloadRequests: v.Int("overload_requests"),
		rate: v.Float("rate"), weight: v.Float("overlap_weight"), hotShare: v.Float("hot_share"), overloadRate: v.Float("overload_rate")}
	sc := scheduler.Config{MaxNumBatchedTokens: 8192, MaxNumSeqs: 256, ChunkedPrefill: true, BlockSize: 16, NumBlocks: e.kvBlocks}
	timer := e.timer(sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	seed := uint64(v.Int("seed"))
	kvCfg := router.KvRouterConfig{OverlapScoreWeight: r.weight, BlockSize: sc.BlockSize}
	run := func(dst *routingRun, name string, p router.Policy, reqs []cluster.Request) error {
		res, err := cluster.Run(cluster.Config{Workers: r.workers, Scheduler: sc, Timer: func(int) scheduler.Timer { return timer }, Policy: p}, reqs)
		if err != nil {
			return err
		}
		*dst = summariseRouting(name, res)
		return nil
	}
	stream := routingStream(v, r.requests, r.rate, 0, seed)
	// Overload: one hot system prompt, arriving fast.
	hotStream := routingStream(v, r.overloadRequests, r.overloadRate, r.hotShare, seed+7)
	for _, c := range []struct {
		dst    *routingRun
		name   string
		policy router.Policy
		reqs   []cluster.Request
	}{
		{&r.rr, "round robin", router.NewRoundRobin(), stream},
		{&r.kv, "KV-aware", router.NewKVAware(nil, kvCfg, seed), stream},
		{&r.rnd, "random", router.NewRandom(seed), stream},
		{&r.ll, "least loaded", router.LeastLoaded{}, stream},
		{&r.aff, "cache affinity (the article's router)", &affinity{}, hotStream},
		{&r.kvHot, "KV-aware", router.NewKVAware(nil, kvCfg, seed), hotStream},
	} {
		if err := run(c.dst, c.name, c.policy, c.reqs); err != nil {
			return nil, err
		}
	}
	r.cachedRR, r.cachedKV = r.cachedPrompts(r.rr.res.Index, sc.BlockSize), r.cachedPrompts(r.kv.res.Index, sc.BlockSize)
	for _, run := range []routingRun{r.rr, r.kv, r.rnd, r.ll, r.aff, r.kvHot} {
		r.work += run.res.Counts.Work()
	}
	return r, nil
}

// cachedPrompts asks the router's index, for each worker, how many leading
// blocks of each system prompt it caches.
func (r *smartRoutingRun) cachedPrompts(idx *router.Index, blockSize int) [][]int {
	var prefixes [][]uint64
	for g := 0; g < r.systemPrompts; g++ {
		wr := workload.Request{ID: 0, Prompt: r.prefixTokens, PrefixGroup: g, PrefixLen: r.prefixTokens}
		prefixes = append(prefixes, router.BlockHashes(wr.TokenIDs(), blockSize, ""))
	}
	out := make([][]int, r.workers)
	for w := range out {
		for _, hs := range prefixes {
			out[w] = append(out[w], idx.Overlap(hs)[w])
		}
	}
	return out
}

func (r *smartRoutingRun) script() *Script {
	s := &Script{Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
	s.Steps = r.steps(s.Claims)
	indexCursors(s.Steps)
	return s
}

func (r *smartRoutingRun) metrics() []Metric {
	rr, kv, affRun, kvHot := r.rr, r.kv, r.aff, r.kvHot
	return []Metric{
		{Key: "hit_rate_pct_round_robin", Label: "Round robin: prompt tokens found cached", Unit: "%", Value: round2(100 * rr.hitTokens)},
		{Key: "hit_rate_pct_kv_aware", Label: "KV-aware: prompt tokens found cached", Unit: "%", Value: round2(100 * kv.hitTokens)},
		{Key: "request_hit_pct_round_robin", Label: "Round robin: requests that found their prefix cached", Unit: "%", Value: round2(100 * rr.hitRequests)},
		{Key: "request_hit_pct_kv_aware", Label: "KV-aware: requests that found their prefix cached", Unit: "%", Value: round2(100 * kv.hitRequests)},
		{Key: "ttft_mean_ms_round_robin", Label: "Round robin: mean TTFT", Unit: "ms", Value: ms(rr.ttftMean)},
		{Key: "ttft_mean_ms_kv_aware", Label: "KV-aware: mean TTFT", Unit: "ms", Value: ms(kv.ttftMean)},
		{Key: "ttft_p99_ms_round_robin", Label: "Round robin: p99 TTFT", Unit: "ms", Value: ms(rr.ttftP99)},
		{Key: "ttft_p99_ms_kv_aware", Label: "KV-aware: p99 TTFT", Unit: "ms", Value: ms(kv.ttftP99)},
		{Key: "imbalance_round_robin", Label: "Round robin: busiest worker's mean active requests / the mean", Unit: "× the mean", Value: round2(rr.imbalance)},
		{Key: "imbalance_kv_aware", Label: "KV-aware: busiest worker's mean active requests / the mean", Unit: "× the mean", Value: round2(kv.imbalance)},
		{Key: "ttft_mean_ms_affinity_overload", Label: "Overload, pure cache affinity: mean TTFT", Unit: "ms", Value: ms(affRun.ttftMean)},
		{Key: "ttft_mean_ms_kv_aware_overload", Label: "Overload, KV-aware cost: mean TTFT", Unit: "ms", Value: ms(kvHot.ttftMean)},
		{Key: "imbalance_affinity_overload", Label: "Overload, pure cache affinity: imbalance", Unit: "× the mean", Value: round2(affRun.imbalance)},
		{Key: "imbalance_kv_aware_overload", Label: "Overload, KV-aware cost: imbalance", Unit: "× the mean", Value: round2(kvHot.imbalance)},
	}
}

func (r *smartRoutingRun) claims() []Claim {
	rr, kv := r.rr, r.kv
	return []Claim{{
		What:    "KV cache hit rate, KV-aware vs round robin",
		Article: fmt.Sprintf("%.1f%% vs %.1f%% (60 requests, 4 system prompts, 8 decode workers)", articleHitKV, articleHitRR),
		Model:   fmt.Sprintf("%.1f%% vs %.1f%% of requests found their prefix cached; %.1f%% vs %.1f%% of prompt tokens", 100*kv.hitRequests, 100*rr.hitRequests, 100*kv.hitTokens, 100*rr.hitTokens),
		Why:     "The article counts a request as a hit when its system prompt is cached on the chosen worker, as the first figure here does; the token share is lower because each prompt also carries tokens no one has seen.",
	}, {
		What:    "Mean TTFT, KV-aware vs round robin",
		Article: fmt.Sprintf("%.2f ms vs %.2f ms", articleTTFTKV, articleTTFTRR),
		Model:   fmt.Sprintf("%.2f ms vs %.2f ms on %s with %s", 1000*kv.ttftMean, 1000*rr.ttftMean, r.e.gpu.Name, r.e.model.Name),
		Why:     "The article types in a 1.2 ms hit and 0.018 ms per prompt token on a miss and serves requests one at a time; here a hit still computes the prompt's unshared tokens, every step is priced on the GPU, and requests queue behind each other.",
	}}
}

func workerLabel(w int) string { return "W" + strconv.Itoa(w+1) }

// cacheMap is which worker caches which system prompt at the end of run
// name, as the router's index saw it.
func (r *smartRoutingRun) cacheMap(name string, cached [][]int) scene.Scene {
	cols := []string{"worker"}
	for g := 0; g < r.systemPrompts; g++ {
		cols = append(cols, fmt.Sprintf("prompt %d", g+1))
	}
	tbl := &scene.Table{Columns: cols}
	for w, row := range cached {
		cells := []string{workerLabel(w)}
		for _, n := range row {
			cell := "—"
			if n > 0 {
				cell = fmt.Sprintf("%d blocks", n)
			}
			cells = append(cells, cell)
		}
		tbl.Rows = append(tbl.Rows, cells)
	}
	return scene.Scene{Kind: scene.KindTable, ID: "cache-" + name, Title: "Cached system-prompt blocks per worker at the end (" + name + ")", Table: tbl}
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
	return scene.Scene{Kind: scene.KindTable, ID: "decision", Title: "The KV router's view of each worker", Table: tbl}
}

// workerBars charts the requests each worker served under each run.
func workerBars(runs ...routingRun) *scene.Chart {
	c := &scene.Chart{Type: scene.Bar, XLabel: "worker", YLabel: "requests served"}
	for _, r := range runs {
		sr := scene.Series{Name: r.name}
		for w, n := range r.perWorker {
			sr.X = append(sr.X, float64(w+1))
			sr.Y = append(sr.Y, float64(n))
		}
		c.Series = append(c.Series, sr)
	}
	return c
}

// shownRoutes picks the KV-aware decisions the lesson walks through: the
// first three, then ones that found a cached prefix (or the last), five in
// all.
func (r *smartRoutingRun) shownRoutes() []cluster.Routed {
	var out []cluster.Routed
	routes := r.kv.res.Routes
	for i, rt := range routes {
		if len(out) == 5 {
			break
		}
		if i > 0 && i < len(routes)-1 && len(out) >= 3 && rt.Overlap == 0 {
			continue
		}
		out = append(out, rt)
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
			inFlight = fmt.Sprintf("despite the %d %s it already has in flight", n, plural(n, "request", "requests"))
		}
		why := fmt.Sprintf("%s already caches %d blocks (%s tokens) of this prompt, which takes them off its prefill term, %s: ", w, rt.Overlap, comma(16*rt.Overlap), inFlight)
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
			sizes = append(sizes, fmt.Sprintf("%s (%s)", workerLabel(o.Worker), comma(o.TreeSize)))
		}
		return fmt.Sprintf("Ties go to the smallest indexed tree: %s caches %s blocks in all, fewer than %s, so it wins the tie.", w, comma(chosen.TreeSize), strings.Join(sizes, ", "))
	case chosen.TreeSize == 0:
		return fmt.Sprintf("None of the tied workers holds any of the prompt, so Dynamo has no tree size for them and picks one at random: here a seeded draw chose %s.", w)
	}
	return fmt.Sprintf("Ties go to the smallest indexed tree; %d of the tied workers have the same, %d blocks, so a random pick decides: here a seeded draw chose %s.", equal+1, chosen.TreeSize, w)
}

// routeSteps walk through a few of the KV router's decisions.
func (r *smartRoutingRun) routeSteps() []Step {
	var choices []string
	for w := 0; w < r.workers; w++ {
		choices = append(choices, workerLabel(w))
	}
	var steps []Step
	for i, rt := range r.shownRoutes() {
		var quiz *Quiz
		if i == 3 {
			quiz = choiceQuiz(fmt.Sprintf("R%d opens with system prompt %d. Which worker will the KV-aware router pick?", rt.Request+1, rt.Group+1), choices, workerLabel(rt.Worker),
				"The lowest cost: cached blocks cut the prefill term, the worker's active blocks and pending prefill add to it.")
		}
		steps = append(steps, Step{
			Quiz:      quiz,
			Title:     fmt.Sprintf("Routing R%d (system prompt %d)", rt.Request+1, rt.Group+1),
			Narration: fmt.Sprintf("R%d arrives at %.2f s. The router scores each worker: cost = %g × prefill blocks + decode blocks. %s", rt.Request+1, rt.Arrival, r.weight, routeWhy(rt)),
			Scenes:    []scene.Scene{decisionTable(rt.Decision)},
		})
	}
	return steps
}

// steps narrates the run.
func (r *smartRoutingRun) steps(claims []Claim) []Step {
	rr, kv, affRun, kvHot := r.rr, r.kv, r.aff, r.kvHot
	steps := []Step{{
		Title: "Agents sharing system prompts",
		Narration: fmt.Sprintf("%d requests arrive at %g per second, each opening with one of %d system prompts of %s tokens and totalling %s–%s tokens, on %d workers (%s, %s, prefix caching on). "+
			"A request reuses KV only on the worker that already holds its system prompt.",
			r.requests, r.rate, r.systemPrompts, comma(r.prefixTokens), comma(r.promptMin), comma(r.promptMax), r.workers, r.e.gpu.Name, r.e.model.Name),
		Scenes: []scene.Scene{{Kind: scene.KindCards, ID: "setup", Title: "Setup", Cards: []scene.Card{
			{Label: "workers", Value: float64(r.workers)}, {Label: "system prompts", Value: float64(r.systemPrompts)},
			{Label: "requests", Value: float64(r.requests)}, {Label: "overlap_score_weight", Value: r.weight}}}},
	}}
	steps = append(steps, r.routeSteps()...)
	pol := &scene.Table{Columns: []string{"policy", "requests with a cached prefix", "prompt tokens cached", "mean TTFT", "p99 TTFT", "imbalance"}}
	for _, p := range []routingRun{rr, r.rnd, r.ll, kv} {
		pol.Rows = append(pol.Rows, []string{p.name, fmt.Sprintf("%.1f%%", 100*p.hitRequests), fmt.Sprintf("%.1f%%", 100*p.hitTokens),
			fmt.Sprintf("%.1f ms", 1000*p.ttftMean), fmt.Sprintf("%.1f ms", 1000*p.ttftP99), fmt.Sprintf("%.2f", p.imbalance)})
	}
	return append(steps, Step{
		Title: "Round robin vs KV-aware",
		Narration: fmt.Sprintf("Round robin ignores the caches: each system prompt gets computed on worker after worker, and %.0f%% of requests found theirs cached. The KV router sends each prompt back where it is cached: %.0f%%. "+
			"Mean TTFT goes from %.1f ms to %.1f ms (p99 %.1f → %.1f ms). The price is balance: requests gather where their prompts live, and the busiest worker carried %.2f× the mean load under KV-aware routing against %.2f× under round robin.",
			100*rr.hitRequests, 100*kv.hitRequests, 1000*rr.ttftMean, 1000*kv.ttftMean, 1000*rr.ttftP99, 1000*kv.ttftP99, kv.imbalance, rr.imbalance),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "per-worker", Title: "Requests per worker", Chart: workerBars(rr, kv)}, r.cacheMap(rr.name, r.cachedRR), r.cacheMap(kv.name, r.cachedKV)},
	}, Step{
		Title:     "Every policy on the same stream",
		Narration: "Random and least-loaded routing spread load but scatter each prompt's cache; only the cache-aware cost keeps both hit rate and balance.",
		Scenes:    []scene.Scene{{Kind: scene.KindTable, ID: "policies", Title: "Policies compared", Table: pol}},
	}, Step{
		Title: "Overload: when affinity hot-spots one worker",
		Narration: fmt.Sprintf("Now %d requests arrive at %g per second and %.0f%% of them share one system prompt. The article's router sends every request to the worker that caches its prefix: that worker queues (imbalance %.2f, mean TTFT %.0f ms). "+
			"Dynamo's cost counts the pending prefill tokens and active blocks too, so once the hot worker is loaded a cold worker's full prefill is cheaper and the hot prompt spreads (imbalance %.2f, mean TTFT %.0f ms).",
			r.overloadRequests, r.overloadRate, r.hotShare, affRun.imbalance, 1000*affRun.ttftMean, kvHot.imbalance, 1000*kvHot.ttftMean),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "overload", Title: "Requests per worker under overload", Chart: workerBars(affRun, kvHot)}},
	}, Step{Title: "Article claim vs this model", Narration: "The article's simulator beside this model, same experiment.", Scenes: []scene.Scene{claimsTable(claims)}})
}
