package sandbox

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// The sandbox's capacity under an SLO, as serving benchmarks state it:
// the highest arrival rate at which the cluster serves the knobs' kind of
// workload, in steady state, while the share of requests meeting the TTFT
// and TPOT limits reaches the target (DistServe) and the pooled p99 time
// between tokens stays within its limit (Sarathi-Serve). The search is
// the lessons' shared one (kit.NewSearch over core/slo's Steady) at the
// capacity_search knob's precision: each probe draws its own stream of
// the workload (the same generator with stratified lengths, as many
// requests as the SLO and the tolerance need, at the rate probed, after a
// ramp for conversations) and serves it on the same cluster, so neither
// the requests nor the rate knob moves the answer. A preset
// trace is one fixed stream, replayed faster or slower: its probes take
// its first requests, and one seed is all it has. A trace file has no
// search (its arrival times are fixed).
//
// Work bound: the run at the knobs' rate and the search together count at
// most searchBudget (cluster.Counts.Work and the steps priced kernel by
// kernel); the search stops at the first probe that would not fit and
// says so.

// searchBudget is the most work the run and its capacity search may count
// together, by precision. The sandbox's probes cost 0.024 µs of CPU a unit
// (plain prompts) to 0.047 µs (16 workers behind the cache-aware router)
// on this project's 2-core machine shared with other builds (load 5–9),
// so the quick search's 36 million keep every setting under 2 s of CPU
// there (about 0.9 s at 0.025 µs a unit on an idle core). The precise
// search's 720 million cover its five seeds on the defaults' cluster and
// conversations, whose chat probes each serve a ramp and judge as long
// (457–549 million over eleven seed settings), at about 33 s of CPU
// natively (0.06 µs a unit), as its knob says.
var searchBudget = map[kit.Precision]int64{kit.Quick: 36_000_000, kit.Precise: 720_000_000}

// searchParam is the capacity_search knob, as the sandbox's search costs.
var searchParam = func() lessons.Param {
	p := kit.SearchParam
	p.Help = "quick: within 10% on one seed, within the page's budget, which on a large cluster of conversations stops it after a probe or two (it then says at least or below what rate). " +
		"precise: within 5%, the median of 5 seeds: about 35 s natively on the defaults' four workers and conversations (a second or two on one GPU with plain prompts), and longer in the page, which keeps its last figures, marked stale, until it is done."
	return p
}()

// sandboxProbe is one rate's run: what its requests saw against the
// objective and what held them back. It keeps these figures, not the
// requests' latencies: a precise search's probes would hold hundreds of
// megabytes of gaps between tokens.
type sandboxProbe struct {
	// ttftMet, tpotMet and bothMet are the shares of the requests meeting
	// the objective's TTFT limit, its TPOT limit, and both.
	ttftMet, tpotMet, bothMet float64
	p99TBT, ttftP99           float64
	preemptions               int
	imbalance                 float64
	cost                      kit.RunCost
}

// probeOf is run r as a probe whose judged requests are judged, against o.
func probeOf(r *sandboxRun, judged []scheduler.RequestMetrics, o slo.Objective) sandboxProbe {
	ttft := make([]float64, len(judged))
	for i, m := range judged {
		ttft[i] = m.TTFT
	}
	ls := kit.Latencies(judged)
	return sandboxProbe{
		ttftMet: slo.Objective{TTFT: o.TTFT, Target: o.Target}.Attainment(ls),
		tpotMet: slo.Objective{TPOT: o.TPOT, Target: o.Target}.Attainment(ls),
		bothMet: o.Attainment(ls), p99TBT: slo.P99TBT(ls),
		ttftP99: scheduler.Summarise(ttft).P99, preemptions: r.preemptions, imbalance: r.routing.Imbalance, cost: r.cost}
}

// probeKey names a probe: its seed and rate (req/s).
type probeKey struct {
	seed uint64
	rate float64
}

// sandboxCapacity is the capacity search of one sandbox run, or why there
// is none.
type sandboxCapacity struct {
	objective slo.Objective
	gpus      int
	gpusText  string // "4 GPUs (one per worker)"
	budget    int    // max_num_batched_tokens
	// decodeStep is one decode step of one request, s: TPOT's floor.
	decodeStep float64
	perRate    float64 // requests per unit of the rate knob
	rate       float64 // the knob's
	requests   int
	precision  kit.Precision
	search     slo.Steady
	cap        slo.SteadyCapacity
	probes     map[probeKey]sandboxProbe
	// work is what the probes counted (Script.Work), beyond the run at rate.
	work int64
	// ramp is how long a chat probe's conversations run before the
	// requests it judges arrive (ramp.go), s; 0 for other workloads.
	ramp float64
	// stratified reports that the probes draw stratified lengths (a
	// generated workload's; a preset replays its own).
	stratified bool
	// own is the run at rate judged against the objective.
	own slo.Outcome
	// skipped says in one sentence why no search ran ("" when one did);
	// ownText then names the run at rate.
	skipped, ownText string
}

// probeValues are the knobs of a probe: n requests (chats: n / 4
// conversations) arriving at rate req/s, drawn from seed.
func probeValues(v lessons.Values, rate float64, n int, seed uint64) lessons.Values {
	per := sandboxPerRate(v)
	return v.WithNumber("requests", float64(n)).WithNumber("rate", rate/per).WithNumber("seed", float64(seed))
}

// searchSandboxCapacity searches the capacity of the knobs' cluster and
// workload (r is the run at the knobs' rate); for a trace file it says why
// there is none.
func searchSandboxCapacity(v lessons.Values, r *sandboxRun) (*sandboxCapacity, error) {
	c := &sandboxCapacity{objective: kit.ObjectiveOf(v), gpus: sandboxGPUs(v), gpusText: sandboxGPUsText(v), budget: r.budget,
		decodeStep: r.e.Timer(r.seqs, r.budget).StepSeconds([]scheduler.Work{{NewTokens: 1, Context: r.promptTokens / max(1, r.requests)}}), perRate: sandboxPerRate(v), rate: r.rate, requests: r.requests,
		precision: kit.PrecisionOf(v), probes: map[probeKey]sandboxProbe{}}
	c.own = c.objective.Judge(r.rate, kit.Latencies(r.res.Requests))
	if r.trace != "" {
		c.skipped = fmt.Sprintf("A trace's arrival times are fixed, so the lab cannot replay %s at other rates and searches no capacity; choose a generated workload to search it.", r.trace)
		c.ownText = "At the trace's own arrivals"
		return c, nil
	}
	spend := kit.NewSpend(searchBudget[c.precision])
	spend.Take(r.res.Counts.Work() + r.streamed)
	_, preset := sandboxBounds(r.workload)
	c.stratified = !preset
	if r.workload == "chats" {
		c.ramp = rampSeconds(kit.PrecisionOf(v).Tolerance/2, sandboxThinkTime, sandboxTurns)
	}
	trial := func(rate float64, n int, seed uint64) ([]slo.Served, error) {
		vr, w := c.probeStream(v, rate, n, seed)
		pr, err := runSandbox(vr, w, "")
		if err != nil {
			return nil, err
		}
		cost := pr.res.Counts.Work() + pr.streamed
		c.work += cost
		spend.Charge(cost, n)
		judged := slices.DeleteFunc(slices.Clone(pr.res.Requests), func(m scheduler.RequestMetrics) bool { return m.Arrival < c.ramp })
		c.probes[probeKey{seed, rate}] = probeOf(pr, judged, c.objective)
		return kit.Served(judged), nil
	}
	seed := uint64(v.Int("seed"))
	sample := probeWorkload(probeValues(v, 1, startSample, seed))
	// The start counts the prompt tokens an earlier prompt of the sample
	// had as cached: all of them behind a router that follows the prefix
	// caches (kv_aware and cache_aware nearly find them), a share of one
	// in workers behind the others, which send a conversation's next turn
	// to the worker holding its history only that often.
	reused := kit.PrefixReuse(sample)
	if r.policy != "kv_aware" && r.policy != "cache_aware" {
		reused /= float64(r.workers)
	}
	start := float64(r.workers) * kit.StartRateReusing(r.e.Timer(r.seqs, r.budget), sample, r.seqs, int64(r.e.KVBlocks)*16, r.budget, c.objective, reused)
	p := c.precision
	c.search = kit.NewSearch(p, start, seed, spend)
	// The start counts the cluster's prefix caches, so the capacity lies
	// near it: the first ladder climbs from it as later seeds do, not by
	// ×2. The precise search's chat probes judge at least as long as their
	// ramp ran: a window of the rule's length (about 500 requests) hides
	// an overload that builds over tens of seconds, and reads the defaults'
	// capacity a tenth high. The quick search keeps the rule's length, so
	// that a probe of a large cluster fits the page's budget at all.
	c.search.FirstStep = 1 + 2*p.Tolerance
	if p == kit.Precise {
		c.search.MinSeconds = c.ramp
	}
	// A conversation brings its turns in a cluster, so a chat probe's
	// requests arrive a few percent off the rate asked; each seed's
	// capacity is read at the rate they arrived at. A preset replays a
	// trace's own bursts, which say nothing of the rate asked: it is read
	// at that rate.
	c.search.ByOffered = !preset
	// Before the first probe Spend knows no cost per request, so the
	// sample's 2 × prompt + 16 × output tokens a request stands in (a
	// chat probe's ramp counted), and a probe that would not fit is not
	// started: one probe of a large cluster at its start rate alone can
	// take more than the whole budget.
	perRequest := float64(kit.RequestWork(sample)) / float64(max(1, len(sample)))
	c.search.Afford = func(rate float64, n int) bool {
		return spend.Afford(rate, n) && perRequest*(float64(n)+math.Ceil(rate*c.ramp)) <= float64(spend.Left)
	}
	if b, ok := sandboxBounds(r.workload); ok {
		// A preset is one stream: one seed, at most its requests a probe.
		c.search.Seeds = c.search.Seeds[:1]
		c.search.MaxRequests = min(c.search.MaxRequests, b.Requests)
		c.search.MinRequests = min(c.search.MinRequests, c.search.MaxRequests)
	}
	// A first probe the budget cannot afford would leave no answer at all:
	// the search then starts at the highest rate it affords (in steps of
	// 1 + Tolerance down from the estimate), so that it can say at least
	// or below what rate.
	for c.search.Start > c.search.Min && !c.search.Afford(c.search.Start, c.search.Requests(c.objective, c.search.Start)) {
		c.search.Start = max(c.search.Start/(1+p.Tolerance), c.search.Min)
	}
	var err error
	c.cap, err = c.search.Run(c.objective, trial)
	return c, err
}

// probeStream is what a probe of n judged requests at rate serves, and
// its knobs: the probe's own stream of the workload, a chat probe's with
// its ramp first (the requests arriving before c.ramp, not judged) and
// none after its last judged request.
func (c *sandboxCapacity) probeStream(v lessons.Values, rate float64, n int, seed uint64) (lessons.Values, []workload.Request) {
	vr := probeValues(v, rate, n+int(math.Ceil(rate*c.ramp)), seed)
	w := probeWorkload(vr)
	if c.ramp > 0 {
		w = arrivingBefore(w, c.ramp+float64(n)/rate)
	}
	return vr, w
}

// probeWorkload is a probe's workload: a preset's replay, or the knobs'
// generated workload with stratified lengths (workload.Stratify), fitted to
// the model's context.
func probeWorkload(v lessons.Values) []workload.Request {
	if _, ok := sandboxBounds(v.Choice("workload")); ok {
		return sandboxWorkload(v)
	}
	seed := uint64(v.Int("seed"))
	w, _ := fitModelContext(v, sandboxDrawWith(v, func(l workload.Lengths, n int, s uint64) workload.Lengths { return workload.Stratify(l, n, seed, s) }))
	return w
}

// sandboxSLOParams are the per-request limits of the SLO the capacity is
// searched under (SLOKnobs add the rest); 0 leaves a limit out.
var sandboxSLOParams = []lessons.Param{
	{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Help: "Each request's time to first token must be within this (MLPerf's interactive Llama-2-70B limit is 450 ms); 0 for none.", Kind: lessons.Float, Default: 450, Min: 0, Max: 60000, Step: 1, Zero: "none"},
	{Key: "slo_tpot_ms", Label: "SLO: time per output token", Unit: "ms", Help: "Each request's mean gap between output tokens must be within this (MLPerf's interactive limit is 40 ms); 0 for none.", Kind: lessons.Float, Default: 40, Min: 0, Max: 10000, Step: 1, Zero: "none"},
}

// sandboxGPUs counts every GPU of the deployment: workers × tensor-parallel
// size (1 without a tp knob).
func sandboxGPUs(v lessons.Values) int {
	tp := 1
	if v.Has("tp") {
		tp = v.Int("tp")
	}
	return v.Int("workers") * tp
}

// sandboxGPUsText says how sandboxGPUs counts.
func sandboxGPUsText(v lessons.Values) string {
	n := sandboxGPUs(v)
	if v.Has("tp") {
		return fmt.Sprintf("%d %s (%d workers × TP %d)", n, kit.Plural(n, "GPU", "GPUs"), v.Int("workers"), v.Int("tp"))
	}
	return fmt.Sprintf("%d %s (one per worker)", n, kit.Plural(n, "GPU", "GPUs"))
}

// sandboxPerRate is how many requests one unit of the rate knob brings:
// a chat conversation is sandboxTurns requests.
func sandboxPerRate(v lessons.Values) float64 {
	if v.Choice("workload") == "chats" {
		return sandboxTurns
	}
	return 1
}

// startSample is how many requests the search's start estimates from.
const startSample = 200

// rateText is a rate in req/s for narration (chats: with conversations
// per second).
func (c *sandboxCapacity) rateText(rate float64) string {
	t := figureText(rate) + " req/s"
	if c.perRate != 1 {
		t += " (" + figureText(rate/c.perRate) + " conversations/s)"
	}
	return t
}

// figureText is a rate with three significant digits, in full from 1,000.
func figureText(x float64) string {
	if x >= 1000 {
		return kit.Comma(int(math.Round(x)))
	}
	return fmt.Sprintf("%.3g", x)
}

// capacity is the capacity in req/s: the median seed's, 0 when even the
// lowest rate missed.
func (c *sandboxCapacity) capacity() float64 { return c.cap.Rate }

// median is the median seed's search.
func (c *sandboxCapacity) median() slo.SeedCapacity { return kit.MedianSeed(c.cap) }

// metrics are the capacity's metrics, none without a search.
func (c *sandboxCapacity) metrics() []lessons.Metric {
	if c.skipped != "" {
		return nil
	}
	under := kit.SLOText(c.objective)
	bound := ""
	switch {
	case c.cap.AboveRange():
		bound = "; at least this: the highest rate searched met it"
	case c.cap.Truncated && c.cap.Complete() == 0 && c.cap.Rate > 0:
		bound = "; at least this: the work bound stopped the search"
	case c.cap.Truncated && c.cap.Complete() == 0:
		bound = "; none found: the work bound stopped the search before a probe met the SLO"
	}
	return []lessons.Metric{
		{Key: "capacity_req_s", Label: fmt.Sprintf("Capacity: highest arrival rate meeting %s in steady state (median of the seeds)%s", under, bound), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(c.capacity())},
		{Key: "capacity_per_gpu_req_s", Label: fmt.Sprintf("Capacity per GPU (%d %s) under %s%s", c.gpus, kit.Plural(c.gpus, "GPU", "GPUs"), under, bound), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(slo.PerGPU(c.capacity(), c.gpus))},
		{Key: "capacity_spread_pct", Label: "Capacity: the seeds' range over the median", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(kit.SpreadPct(c.cap))},
	}
}

// addCapacity adds the run's capacity metrics, its step and its probes'
// work to s (nothing without a capacity).
func (r *sandboxRun) addCapacity(s *lessons.Script) {
	c := r.capacity
	if c == nil {
		return
	}
	s.Metrics = append(s.Metrics, c.metrics()...)
	if st, ok := c.costStep(r); ok {
		s.Steps = append(s.Steps, st)
	}
	s.Steps = append(s.Steps, c.step(r))
	s.Work += c.work
}

// medianRuns are the median seed's probes by rate (req/s), in order.
func (c *sandboxCapacity) medianRuns() (rates []float64, runs []sandboxProbe, outs []slo.Outcome) {
	sc := c.median()
	seen := map[float64]bool{}
	sorted := append([]slo.SteadyOutcome(nil), sc.Runs...)
	slices.SortFunc(sorted, func(a, b slo.SteadyOutcome) int { return cmp.Compare(a.Rate, b.Rate) })
	for _, o := range sorted {
		if seen[o.Rate] {
			continue
		}
		seen[o.Rate] = true
		rates, runs, outs = append(rates, o.Rate), append(runs, c.probes[probeKey{sc.Seed, o.Rate}]), append(outs, o.Outcome)
	}
	return rates, runs, outs
}

// attainmentSeries names the chart's series (marks refer to its points).
const attainmentSeries = "requests meeting the SLO"

// chart plots the median seed's probes' attainment against their rate,
// the target as a band.
func (c *sandboxCapacity) chart() *scene.Chart {
	s := scene.Series{Name: attainmentSeries}
	_, _, outs := c.medianRuns()
	for _, o := range outs {
		s.X, s.Y = append(s.X, kit.Round2(o.Rate)), append(s.Y, kit.Round2(100*o.Attainment))
		s.Labels = append(s.Labels, map[bool]string{true: "meets", false: "misses"}[o.Meets])
	}
	return &scene.Chart{Type: scene.Line, XLabel: "arrival rate", XUnit: "req/s", YLabel: "requests meeting TTFT and TPOT", YUnit: "%", Series: []scene.Series{s},
		Guides: []scene.Guide{{ID: "target", Axis: "y", From: 100 * c.objective.Target, To: 100, Label: fmt.Sprintf("attainment target: %g%%", 100*c.objective.Target)}},
		Note:   "Each point is one probe of the median seed: its own stream of the workload at that rate, judged in steady state; a rate counts when it reaches the target (and, with a p99 TBT limit, keeps the p99 gap within it)."}
}

// cards are the capacity's figures, or the run at rate's without a search.
func (c *sandboxCapacity) cards() scene.Scene {
	at := c.own
	cards := []scene.Card{}
	if c.skipped == "" {
		med := c.median()
		at = outcomeAt(med, med.Met)
		if med.Met == 0 && len(med.Runs) > 0 {
			at = med.Runs[0].Outcome
		}
		cards = append(cards, scene.Card{Label: "capacity", Value: kit.Round2(c.capacity()), Unit: "req/s"},
			scene.Card{Label: fmt.Sprintf("per GPU (%d)", c.gpus), Value: kit.Round2(slo.PerGPU(c.capacity(), c.gpus)), Unit: "req/s"},
			scene.Card{Label: "probes run", Value: float64(c.cap.Probes()), Unit: "runs"})
	}
	where := fmt.Sprintf("at %s req/s", figureText(at.Rate))
	if c.skipped != "" {
		where = "a" + strings.TrimPrefix(c.ownText, "A") // a trace's run is at its own arrivals, not at the rate knob
	}
	cards = append(cards, scene.Card{Label: "meeting the SLO " + where, Value: kit.Round2(100 * at.Attainment), Unit: "%"},
		scene.Card{Label: "p99 TBT there", Value: kit.Ms(at.P99TBT), Unit: "ms"})
	return scene.Scene{Kind: scene.KindCards, ID: "slo", Title: "Under " + kit.SLOText(c.objective), Cards: cards}
}

// outcomeAt is seed sc's probe at rate (the zero Outcome when none).
func outcomeAt(sc slo.SeedCapacity, rate float64) slo.Outcome {
	for _, o := range sc.Runs {
		if o.Rate == rate {
			return o.Outcome
		}
	}
	return slo.Outcome{Rate: rate}
}

// step narrates the capacity: what it is and what limits it, on the
// cluster r served at the knobs' rate, with the capacity on its dashboard.
func (c *sandboxCapacity) step(r *sandboxRun) lessons.Step {
	st := lessons.Step{Title: "Capacity under the SLO"}
	pool := r.poolRef()
	a := &kit.Annotator{Scene: "cluster"}
	if c.skipped != "" {
		st.Narration = fmt.Sprintf("%s %s, %.1f%% of the requests meet %s (p99 TBT %.1f ms).", c.skipped, c.ownText, 100*c.own.Attainment, kit.SLOText(c.objective), 1000*c.own.P99TBT)
		a.Mark(pool, fmt.Sprintf("%.1f%% meet the SLO", 100*c.own.Attainment), c.ownText, st.Narration)
		st.Scenes = []scene.Scene{r.clusterScene("The cluster, judged against the SLO", true, nil, nil, a.Marks), c.cards()}
		st.Mentions = a.Mentions
		return st
	}
	capText := "Capacity is " + kit.CapacityText(c.cap, c.search)
	quick := ""
	if c.precision == kit.Quick {
		quick = " For five seeds' median: capacity_search=precise."
	}
	// The median seed's probes are the capacity chart's points, so the
	// narration leaves them to it: the laptop's narration panel holds
	// about 850 characters.
	st.Narration = fmt.Sprintf("%s, %s req/s per GPU on %s, under %s. %s%s %s%s",
		capText, figureText(slo.PerGPU(c.capacity(), c.gpus)), c.gpusText, kit.SLOText(c.objective), kit.SearchMethod(c.cap, c.search, c.objective), c.drawText(), c.limitText(), quick)
	a.Mark(pool, strings.TrimPrefix(capText, "Capacity is "), capText, st.Narration)
	stats := []scene.Stat{{Label: "capacity", Value: figureText(c.capacity()) + " req/s"}, {Label: "capacity per GPU", Value: figureText(slo.PerGPU(c.capacity(), c.gpus)) + " req/s"}}
	st.Scenes = []scene.Scene{
		r.clusterScene("The cluster, with its capacity under the SLO", true, stats, nil, a.Marks),
		{Kind: scene.KindChart, ID: "capacity", Title: "Requests meeting the SLO at each rate the median seed probed", Chart: c.chart()},
		c.cards(),
	}
	st.Mentions = a.Mentions
	return st
}

// drawText says how a probe draws its stream beyond what the shared
// search says: stratified lengths, and a chat probe's ramp.
func (c *sandboxCapacity) drawText() string {
	if c.perRate == 1 && c.ramp == 0 {
		if c.stratified {
			return " Probes draw lengths stratified, so each holds the whole distribution, tail included."
		}
		return ""
	}
	at := kit.ReferenceRate(c.cap, c.search)
	judged := ""
	if c.search.MinSeconds > 0 {
		judged = ", then judge as long"
	}
	return fmt.Sprintf(" Lengths are stratified (each probe holds the whole distribution); conversation probes first serve %.0f s unjudged (%s requests at %s), until turns %.0f s apart reach %.0f%% of the rate%s.",
		c.ramp, kit.Comma(int(math.Ceil(c.ramp*at))), figureText(at)+" req/s", sandboxThinkTime, 100*offeredShare(c.ramp, sandboxThinkTime, sandboxTurns), judged)
}

// limitText says what limits the capacity: at the median seed's lowest
// rate above it that missed the SLO, which limit failed and why.
func (c *sandboxCapacity) limitText() string {
	med := c.median()
	if c.cap.Truncated && c.cap.Complete() == 0 && med.Above == 0 {
		return "What limits it is unknown: no probe missed the SLO before the bound."
	}
	if c.cap.AboveRange() || med.Above == 0 {
		o := outcomeAt(med, med.Met)
		return fmt.Sprintf("Nothing in the range searched limits it: at %s, %.1f%% of the requests meet the limits (p99 TBT %.1f ms).",
			c.rateText(o.Rate), 100*o.Attainment, 1000*o.P99TBT)
	}
	rate := med.Above
	p := c.probes[probeKey{med.Seed, rate}]
	o := c.objective
	ttft, tpot, both, p99 := p.ttftMet, p.tpotMet, p.bothMet, p.p99TBT
	t := fmt.Sprintf("What limits it, at %s: ", c.rateText(rate))
	var why []string
	if o.TTFT > 0 && ttft < o.Target {
		w := fmt.Sprintf("only %.1f%% of the requests get their first token within %g ms (p99 TTFT %.0f ms): prompts arrive faster than the workers' prefill clears them, so requests queue", 100*ttft, 1000*o.TTFT, 1000*p.ttftP99)
		if p.imbalance > 1.2 {
			w += fmt.Sprintf(", most on the busiest worker (%.2f× the mean load)", p.imbalance)
		}
		why = append(why, w)
	}
	if o.TPOT > 0 && tpot < o.Target {
		w := fmt.Sprintf("only %.1f%% keep TPOT within %g ms: ", 100*tpot, 1000*o.TPOT)
		if c.decodeStep > o.TPOT {
			w += fmt.Sprintf("one request decoding alone takes %.1f ms a token on this GPU, so no rate meets it", 1000*c.decodeStep)
		} else {
			w += "decode batches grow and prefill chunks share their steps, so every step takes longer"
		}
		why = append(why, w)
	}
	if o.P99TBT > 0 && p99 > o.P99TBT {
		why = append(why, fmt.Sprintf("the p99 gap between tokens is %.1f ms, over %g ms: a step that carries a prefill chunk of up to max_num_batched_tokens (%s) stalls every decode in it (a smaller budget, chunked prefill as in Sarathi-Serve, caps the stall)", 1000*p99, 1000*o.P99TBT, kit.Comma(c.budget)))
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("%.1f%% of the requests meet TTFT and TPOT together (%.1f%% and %.1f%% alone), under the %g%% target", 100*both, 100*ttft, 100*tpot, 100*o.Target))
	}
	t += strings.Join(why, "; ")
	if p.preemptions > 0 {
		t += fmt.Sprintf("; %s preemptions recompute requests when the KV pools fill", kit.Comma(p.preemptions))
	}
	return t + "."
}
