package sandbox

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// The sandbox's capacity under an SLO, as serving benchmarks state it
// (core/slo): the highest arrival rate at which the cluster serves the
// knobs' workload while the share of requests meeting the TTFT and TPOT
// limits reaches the target (DistServe) and the pooled p99 time between
// tokens stays within its limit (Sarathi-Serve). A probe serves the same
// seeded requests (the same lengths, prefixes and conversations, the
// arrivals drawn from the same stream and scaled) at another rate, on the
// same cluster, so probes differ only in load, as a load generator replays
// a fixed set of prompts at each request rate.
//
// The search centres on the rate knob, whose run is the dashboard's own and
// costs nothing more: when it meets the SLO core/slo's search brackets
// [rate, span × rate], else [rate / span, rate], and bisects. The span is
// the widest its bisections narrow to within sandboxPrecision (2 with up
// to two bisections, 4 with three, then sandboxMaxSpan), so more probes
// look further. A trace has no search (its arrival times are fixed).
//
// Work bound. Every probe serves the same requests, so each costs at most
// sandboxWork of them, the estimate Check holds within ServingCheckWork
// for the run at rate. The search gets what that leaves: the most probes
// whose worst case (Search.MaxCost over both brackets, before any probe
// runs) fits in ServingCheckWork less the run's estimate; when not even
// the far end fits, the capacity is left out and the step says why.
const (
	// capacityProbes is the most rates a search judges: the run at rate,
	// the far end and five bisections, which leave the capacity within a
	// factor 16^(1/32) (9%) when attainment falls with the rate.
	capacityProbes = 7
	// sandboxPrecision is the bracket a span is chosen to leave: 2^(1/4),
	// 19%.
	sandboxPrecision = 1.189207115002721
	// sandboxMinSpan and sandboxMaxSpan bound how far from the rate knob
	// the search looks.
	sandboxMinSpan, sandboxMaxSpan = 2, 16
	// sandboxResolution stops the bisection once the highest rate that
	// met the SLO is within 2% of the lowest that did not.
	sandboxResolution = 0.02
)

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

// withRate is v with the rate knob at rate.
func withRate(v lessons.Values, rate float64) lessons.Values {
	return v.WithNumber("rate", rate)
}

// sandboxSpan is how far from the rate knob a search of probes rates
// looks: sandboxPrecision^(2^bisections), within the span's bounds.
func sandboxSpan(probes int) float64 {
	return min(sandboxMaxSpan, max(sandboxMinSpan, math.Pow(sandboxPrecision, math.Pow(2, float64(probes-slo.MinProbes)))))
}

// sandboxSearches are the two searches around rate with probes rates each:
// above it (when it meets the SLO) and below it.
func sandboxSearches(rate float64, probes int) (up, down slo.Search) {
	span := sandboxSpan(probes)
	return slo.Search{Lo: rate, Hi: span * rate, Probes: probes, Resolution: sandboxResolution},
		slo.Search{Lo: rate / span, Hi: rate, Probes: probes, Resolution: sandboxResolution}
}

// sandboxPlan is the most probes a search around the knobs' rate may run
// and the most work they can cost, the run at rate (estimated at est)
// within ServingCheckWork; ok is false when not even the far end fits.
// Each probe is priced by sandboxWork on its own draw of the workload.
func sandboxPlan(v lessons.Values, est int64) (probes int, work float64, ok bool) {
	rate := v.Float("rate")
	memo := map[float64]float64{rate: 0} // the dashboard's own run
	cost := func(r float64) float64 {
		if w, ok := memo[r]; ok {
			return w
		}
		vr := withRate(v, r)
		w := float64(sandboxWork(vr, sandboxWorkload(vr)))
		memo[r] = w
		return w
	}
	room := float64(kit.ServingCheckWork - est)
	for p := capacityProbes; p >= slo.MinProbes; p-- {
		up, down := sandboxSearches(rate, p)
		if w := max(up.MaxCost(cost), down.MaxCost(cost)); w <= room {
			return p, w, true
		}
	}
	return 0, 0, false
}

// sandboxProbe is one rate's run: what its requests saw and what held
// them back.
type sandboxProbe struct {
	ls          []slo.Latency
	ttftP99     float64
	preemptions int
	imbalance   float64
	cost        kit.RunCost
}

// probeOf is run r as a probe.
func probeOf(r *sandboxRun) sandboxProbe {
	return sandboxProbe{ls: kit.Latencies(r.res.Requests), ttftP99: r.ttft.P99, preemptions: r.preemptions, imbalance: r.routing.Imbalance, cost: r.cost}
}

// sandboxCapacity is the capacity search of one sandbox run, or why there
// is none.
type sandboxCapacity struct {
	objective slo.Objective
	gpus      int
	gpusText  string // "4 GPUs (one per worker)"
	budget    int    // max_num_batched_tokens
	// decodeStep is one decode step of one request, s: TPOT\'s floor.
	decodeStep float64
	perRate    float64 // requests per unit of the rate knob
	rate       float64 // the knob's, the search's centre
	requests   int
	search     slo.Search
	cap        slo.Capacity
	runs       map[float64]sandboxProbe
	// work is what the probes counted (Script.Work), beyond the run at rate.
	work int64
	// own is the run at rate judged against the objective.
	own slo.Outcome
	// skipped says in one sentence why no search ran ("" when one did);
	// ownText then names the run at rate.
	skipped, ownText string
}

// searchSandboxCapacity searches the capacity around r's rate for the
// knobs v (r is the run at the knobs' rate, est its work estimate); for a
// trace it says why there is none.
func searchSandboxCapacity(v lessons.Values, r *sandboxRun, est int64) (*sandboxCapacity, error) {
	c := &sandboxCapacity{objective: kit.ObjectiveOf(v), gpus: sandboxGPUs(v), gpusText: sandboxGPUsText(v), budget: r.budget,
		decodeStep: r.e.Timer(r.seqs, r.budget).StepSeconds([]scheduler.Work{{NewTokens: 1, Context: r.promptTokens / max(1, r.requests)}}), perRate: sandboxPerRate(v), rate: r.rate, requests: r.requests,
		runs: map[float64]sandboxProbe{r.rate: probeOf(r)}}
	c.own = c.objective.Judge(r.rate, c.runs[r.rate].ls)
	if r.trace != "" {
		c.skipped = fmt.Sprintf("A trace's arrival times are fixed, so the lab cannot replay %s at other rates and searches no capacity; choose a generated workload to search it.", r.trace)
		c.ownText = "At the trace's own arrivals"
		return c, nil
	}
	probes, _, ok := sandboxPlan(v, est)
	if !ok {
		c.skipped = fmt.Sprintf("The capacity search is left out: the run at %s already needs about %s of the %s units of work the lab allows, and one more run of these %s requests needs about as much again; lower requests to search it.",
			c.rateText(r.rate), kit.Comma64(est), kit.Comma64(kit.ServingCheckWork), kit.Comma(r.requests))
		c.ownText = "At " + c.rateText(r.rate)
		return c, nil
	}
	up, down := sandboxSearches(r.rate, probes)
	c.search = up
	if !c.own.Meets {
		c.search = down
	}
	probe := func(rate float64) ([]slo.Latency, error) {
		if p, ok := c.runs[rate]; ok {
			return p.ls, nil
		}
		vr := withRate(v, rate)
		pr, err := runSandbox(vr, sandboxWorkload(vr), "")
		if err != nil {
			return nil, err
		}
		c.work += pr.res.Counts.Work() + pr.streamed
		c.runs[rate] = probeOf(pr)
		return c.runs[rate].ls, nil
	}
	var err error
	c.cap, err = c.search.Run(c.objective, probe)
	return c, err
}

// reqRate is a rate of the knob in requests per second.
func (c *sandboxCapacity) reqRate(rate float64) float64 { return rate * c.perRate }

// RateText is a rate of the knob for narration, in req/s (chats: with
// conversations per second).
func (c *sandboxCapacity) rateText(rate float64) string {
	t := figureText(c.reqRate(rate)) + " req/s"
	if c.perRate != 1 {
		t += " (" + figureText(rate) + " conversations/s)"
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

// capacity is the capacity in req/s: the highest rate searched when it met
// the SLO, 0 when even the lowest missed.
func (c *sandboxCapacity) capacity() float64 { return c.reqRate(c.cap.Rate) }

// metrics are the capacity's metrics, none without a search.
func (c *sandboxCapacity) metrics() []lessons.Metric {
	if c.skipped != "" {
		return nil
	}
	under := kit.SLOText(c.objective)
	bound := ""
	if c.cap.AboveRange() {
		bound = "; at least this: the highest rate searched met it"
	}
	return []lessons.Metric{
		{Key: "capacity_req_s", Label: fmt.Sprintf("Capacity: highest arrival rate meeting %s%s", under, bound), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(c.capacity())},
		{Key: "capacity_per_gpu_req_s", Label: fmt.Sprintf("Capacity per GPU (%d %s) under %s%s", c.gpus, kit.Plural(c.gpus, "GPU", "GPUs"), under, bound), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round2(slo.PerGPU(c.capacity(), c.gpus))},
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

// judged are every run at its rate (the run at rate and the search's
// probes) judged against the objective, by rate.
func (c *sandboxCapacity) judged() []slo.Outcome {
	var out []slo.Outcome
	for _, rate := range slices.Sorted(maps.Keys(c.runs)) {
		out = append(out, c.objective.Judge(rate, c.runs[rate].ls))
	}
	return out
}

// attainmentSeries names the chart's series (marks refer to its points).
const attainmentSeries = "requests meeting the SLO"

// chart plots each probe's attainment against its rate, the target as a
// band.
func (c *sandboxCapacity) chart() *scene.Chart {
	s := scene.Series{Name: attainmentSeries}
	for _, o := range c.judged() {
		s.X, s.Y = append(s.X, kit.Round2(c.reqRate(o.Rate))), append(s.Y, kit.Round2(100*o.Attainment))
		s.Labels = append(s.Labels, map[bool]string{true: "meets", false: "misses"}[o.Meets])
	}
	return &scene.Chart{Type: scene.Line, XLabel: "arrival rate", XUnit: "req/s", YLabel: "requests meeting TTFT and TPOT", YUnit: "%", Series: []scene.Series{s},
		Guides: []scene.Guide{{ID: "target", Axis: "y", From: 100 * c.objective.Target, To: 100, Label: fmt.Sprintf("attainment target: %g%%", 100*c.objective.Target)}},
		Note:   "Each point is one run of the same requests at that rate; a rate counts when it reaches the target (and, with a p99 TBT limit, keeps the p99 gap within it)."}
}

// cards are the capacity's figures, or the run at rate's without a search.
func (c *sandboxCapacity) cards() scene.Scene {
	at := c.own
	cards := []scene.Card{}
	if c.skipped == "" {
		at = c.cap.At()
		cards = append(cards, scene.Card{Label: "capacity", Value: kit.Round2(c.capacity()), Unit: "req/s"},
			scene.Card{Label: fmt.Sprintf("per GPU (%d)", c.gpus), Value: kit.Round2(slo.PerGPU(c.capacity(), c.gpus)), Unit: "req/s"},
			scene.Card{Label: "rates run", Value: float64(len(c.runs)), Unit: "runs"})
		if c.cap.BelowRange() {
			at = c.cap.Runs[0]
		}
	}
	where := fmt.Sprintf("at %s req/s", figureText(c.reqRate(at.Rate)))
	if c.skipped != "" {
		where = "a" + strings.TrimPrefix(c.ownText, "A") // a trace's run is at its own arrivals, not at the rate knob
	}
	cards = append(cards, scene.Card{Label: "meeting the SLO " + where, Value: kit.Round2(100 * at.Attainment), Unit: "%"},
		scene.Card{Label: "p99 TBT there", Value: kit.Ms(at.P99TBT), Unit: "ms"})
	return scene.Scene{Kind: scene.KindCards, ID: "slo", Title: "Under " + kit.SLOText(c.objective), Cards: cards}
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
	var capText string
	switch {
	case c.cap.BelowRange():
		capText = "Capacity is below " + c.rateText(c.search.Lo)
	case c.cap.AboveRange():
		capText = "Capacity is at least " + c.rateText(c.cap.Rate)
	default:
		capText = "Capacity is " + c.rateText(c.cap.Rate)
	}
	st.Narration = fmt.Sprintf("%s, %s req/s per GPU over the deployment's %s, under %s. %s %s",
		capText, figureText(slo.PerGPU(c.capacity(), c.gpus)), c.gpusText, kit.SLOText(c.objective), c.howText(), c.limitText())
	a.Mark(pool, strings.TrimPrefix(capText, "Capacity is "), capText, st.Narration)
	stats := []scene.Stat{{Label: "capacity", Value: figureText(c.capacity()) + " req/s"}, {Label: "capacity per GPU", Value: figureText(slo.PerGPU(c.capacity(), c.gpus)) + " req/s"}}
	st.Scenes = []scene.Scene{
		r.clusterScene("The cluster, with its capacity under the SLO", true, stats, nil, a.Marks),
		{Kind: scene.KindChart, ID: "capacity", Title: "Requests meeting the SLO at each rate searched", Chart: c.chart()},
		c.cards(),
	}
	st.Mentions = a.Mentions
	return st
}

// howText says how the search ran.
func (c *sandboxCapacity) howText() string {
	var probed []string
	for _, o := range c.judged() {
		probed = append(probed, fmt.Sprintf("%s %s", figureText(c.reqRate(o.Rate)), map[bool]string{true: "✓", false: "✗"}[o.Meets]))
	}
	t := fmt.Sprintf("The same %s requests were served at %d more %s, searching %s to %s around the dashboard's rate: %s req/s",
		kit.Comma(c.requests), len(c.runs)-1, kit.Plural(len(c.runs)-1, "rate", "rates"), c.rateText(c.search.Lo), c.rateText(c.search.Hi), strings.Join(probed, ", "))
	if !c.cap.BelowRange() && !c.cap.AboveRange() {
		return t + fmt.Sprintf(", which leaves it within %.1f%%.", 100*(c.cap.Above/c.cap.Rate-1))
	}
	return t + "; move rate toward it to bracket it."
}

// limitText says what limits the capacity: at the lowest rate above it
// that missed the SLO, which limit failed and why.
func (c *sandboxCapacity) limitText() string {
	if c.cap.AboveRange() {
		o := c.cap.At()
		return fmt.Sprintf("Nothing in this range limits it: at %s, %.1f%% of the requests meet the limits (p99 TBT %.1f ms); %s requests are too few to load the cluster past them, even arriving this fast.",
			c.rateText(o.Rate), 100*o.Attainment, 1000*o.P99TBT, kit.Comma(c.requests))
	}
	rate := c.cap.Above
	p := c.runs[rate]
	o := c.objective
	ttft := slo.Objective{TTFT: o.TTFT, Target: o.Target}.Attainment(p.ls)
	tpot := slo.Objective{TPOT: o.TPOT, Target: o.Target}.Attainment(p.ls)
	both := o.Attainment(p.ls)
	p99 := slo.P99TBT(p.ls)
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
