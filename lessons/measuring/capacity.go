package measuring

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// Capacity under an SLO, as serving papers state it (core/slo): the
// highest arrival rate at which the requests meet the objective, found by
// core/slo's bounded search. A probe is one more point of the sweep: the
// same seeded requests, as many as the sweep serves at that rate, so a
// probe at a swept rate is that point's run. The sweep brackets the
// capacity between the last rate that meets the SLO before the first
// that misses; the search bisects that bracket. The comparison budget has
// no sweep, so its search brackets the whole range itself.
//
// Every search runs as many bisections as the lesson's work bound leaves
// room for after the sweep, at most these (planCapacity):
const (
	// capacityProbes is the most simulations the search at the lesson's
	// budget runs: the bracket's ends (the sweep's runs, free) and five
	// bisections, which leave the answer within a factor r^(1/32) of the
	// capacity for a sweep step r when attainment falls with the rate
	// (2.2% for the default step of 2).
	capacityProbes = 7
	// compareProbes is the most the comparison's search runs: both ends
	// of the range and eight bisections, (hi/lo)^(1/256) (1.6% over the
	// default 2–128 req/s).
	compareProbes = 10
	// capacityResolution stops a bisection earlier, once the highest rate
	// that met the SLO is within 2% of the lowest that did not.
	capacityResolution = 0.02
)

// capacityResult is one capacity search and what it cost.
type capacityResult struct {
	// budget is the token budget (max_num_batched_tokens) it ran at.
	budget int
	cap    slo.Capacity
	// at is the run at the capacity (at the lowest rate when none met the
	// SLO): its longest gap between tokens and its p99 TBT, in seconds.
	maxGap, p99TBT float64
	work           int64
}

// rate is the capacity in req/s (0 when even the lowest rate missed).
func (c capacityResult) rate() float64 { return c.cap.Rate }

// capacityProber serves the chat workload at one rate for a search: a
// vLLM v1 scheduler run of probeCount(rate) Poisson arrivals.
type capacityProber struct {
	e                *kit.Engine
	seqs, budget     int
	prompts, outputs workload.LongTail
	seed             uint64
	count            func(rate float64) int
	// swept are the sweep's runs by rate (for the lesson's own budget),
	// reused instead of re-simulated.
	swept map[float64][]slo.Latency
}

// search runs s under o.
func (p capacityProber) search(s slo.Search, o slo.Objective) (capacityResult, error) {
	r := capacityResult{budget: p.budget}
	cfg := scheduler.Config{MaxNumBatchedTokens: p.budget, MaxNumSeqs: p.seqs, ChunkedPrefill: true, BlockSize: 16, NumBlocks: p.e.KVBlocks}
	runs := map[float64][]slo.Latency{}
	probe := func(rate float64) ([]slo.Latency, error) {
		if ls, ok := p.swept[rate]; ok {
			runs[rate] = ls
			return ls, nil
		}
		var in []scheduler.Request
		for _, q := range workload.Poisson(p.count(rate), rate, p.prompts, p.outputs, p.seed) {
			in = append(in, scheduler.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output})
		}
		sc, err := scheduler.New(cfg, p.e.Timer(p.seqs, p.budget), in)
		if err != nil {
			return nil, lessons.Relation("compare_budget", strconv.Itoa(p.budget), "a budget and KV pool that hold every request ("+err.Error()+")")
		}
		if err := sc.Run(); err != nil {
			return nil, err
		}
		r.work += p.e.PricedStepsWork(sc.Steps(), p.seqs, p.budget)
		ls := kit.Latencies(sc.Requests())
		runs[rate] = ls
		return ls, nil
	}
	c, err := s.Run(o, probe)
	if err != nil {
		return r, err
	}
	r.cap = c
	at := c.Rate
	if c.BelowRange() {
		at = s.Lo
	}
	for _, l := range runs[at] {
		for _, g := range l.Gaps {
			r.maxGap = max(r.maxGap, g)
		}
	}
	r.p99TBT = slo.P99TBT(runs[at])
	return r, nil
}

// sweptBracket is the search at the lesson's budget: between the last
// swept rate that meets o before the first that misses, and that one.
// ok is false when the first rate misses or every rate meets (the
// capacity lies outside the sweep: no search).
func sweptBracket(rates []float64, meets []bool, probes int) (s slo.Search, ok bool) {
	for i := range rates {
		if !meets[i] {
			if i == 0 {
				return slo.Search{}, false
			}
			return slo.Search{Lo: rates[i-1], Hi: rates[i], Probes: probes, Resolution: capacityResolution}, true
		}
	}
	return slo.Search{}, false
}

// fullSearch is the comparison's search over the whole range.
func fullSearch(lo, hi float64, probes int) slo.Search {
	return slo.Search{Lo: lo, Hi: hi, Probes: probes, Resolution: capacityResolution}
}

// capacityPlan is how many probes each search may run.
type capacityPlan struct {
	probes, compareProbes int
	// work bounds both searches' Script.Work.
	work float64
}

// planCapacity picks the most probes whose searches' work, bounded before
// they run, fits in room: the search at the lesson's budget p (which
// bisects one of the sweep's brackets, not yet known: the costliest
// counts) and the comparison q over [lo, hi] (nil for none), one probe
// fewer each in turn. ok is false when even the comparison's two ends do
// not fit. Probes' estimates are memoised by rate, so the plan costs a few
// hundred draws of the workload.
func planCapacity(p capacityProber, rates []float64, q *capacityProber, lo, hi, room float64) (plan capacityPlan, ok bool) {
	pc, qc := p.memoCost(), capacityCost(nil)
	if q != nil {
		qc = q.memoCost()
	}
	for m, c := capacityProbes, compareProbes; ; m, c = max(slo.MinProbes, m-1), c-1 {
		plan = capacityPlan{probes: m, compareProbes: c}
		for i := 1; i < len(rates); i++ {
			plan.work = max(plan.work, slo.Search{Lo: rates[i-1], Hi: rates[i], Probes: m, Resolution: capacityResolution}.MaxCost(pc))
		}
		if q != nil {
			plan.work += fullSearch(lo, hi, c).MaxCost(qc)
		}
		if plan.work <= room {
			return plan, true
		}
		if q == nil && m == slo.MinProbes || c == slo.MinProbes {
			return plan, m == slo.MinProbes && q == nil
		}
	}
}

// capacityCost prices a probe at a rate in Script.Work.
type capacityCost = func(rate float64) float64

// memoCost is pointWork's estimate of a probe, memoised by rate; swept
// rates cost nothing.
func (p capacityProber) memoCost() capacityCost {
	step := p.e.Timer(p.seqs, p.budget).StepSeconds([]scheduler.Work{{NewTokens: 1, Context: int(p.prompts.Median)}})
	memo := map[float64]float64{}
	return func(rate float64) float64 {
		if _, ok := p.swept[rate]; ok {
			return 0
		}
		if w, ok := memo[rate]; ok {
			return w
		}
		w := pointWork(p.e, p.seqs, p.budget, step, p.prompts, p.outputs, rate, p.count(rate), p.seed)
		memo[rate] = w
		return w
	}
}

// capacityRateText is a capacity for narration: "12.3 req/s", or below or
// above the range searched.
func capacityRateText(c slo.Capacity, lo, hi float64) string {
	switch {
	case c.BelowRange():
		return fmt.Sprintf("below %s (even the lowest rate searched misses the SLO)", kit.RateText(lo))
	case c.AboveRange():
		return fmt.Sprintf("at least %s (the highest rate searched meets the SLO)", kit.RateText(hi))
	}
	return kit.RateText(c.Rate)
}

// probesText lists a search's probes: "2 ✓, 128 ✗, 16 ✓ …".
func probesText(c slo.Capacity) string {
	parts := make([]string, len(c.Runs))
	for i, p := range c.Runs {
		mark := "✗"
		if p.Meets {
			mark = "✓"
		}
		parts[i] = fmt.Sprintf("%.3g %s", p.Rate, mark)
	}
	return strings.Join(parts, ", ")
}

// capacityCards are the searches' figures.
func (r measuringRun) capacityCards() scene.Scene {
	cards := []scene.Card{
		{Label: "capacity at " + kit.Comma(r.budget) + " tokens", Value: kit.Round2(r.capacity.rate()), Unit: "req/s"},
		{Label: "capacity per GPU", Value: kit.Round2(slo.PerGPU(r.capacity.rate(), r.gpus)), Unit: "req/s"},
		{Label: "p99 TBT there", Value: kit.Ms(r.capacity.p99TBT), Unit: "ms"},
		{Label: "longest gap there", Value: kit.Ms(r.capacity.maxGap), Unit: "ms"},
	}
	if c := r.compare; c != nil {
		cards = append(cards,
			scene.Card{Label: "capacity at " + kit.Comma(c.budget) + " tokens", Value: kit.Round2(c.rate()), Unit: "req/s"},
			scene.Card{Label: "p99 TBT there", Value: kit.Ms(c.p99TBT), Unit: "ms"},
			scene.Card{Label: "longest gap there", Value: kit.Ms(c.maxGap), Unit: "ms"})
	}
	return scene.Scene{Kind: scene.KindCards, ID: "capacity", Title: "Capacity under " + kit.SLOText(r.objective), Cards: cards}
}

// capacityStep narrates the searches: where the capacity lies and how the
// search found it, and, with a comparison budget, which budget sustains
// more load under the SLO and why.
func (r measuringRun) capacityStep() lessons.Step {
	c := r.capacity
	under := kit.SLOText(r.objective)
	capText := "Capacity is " + capacityRateText(c.cap, r.lo, r.hi)
	how := fmt.Sprintf("A rate counts when %s. ", under)
	switch {
	case c.cap.BelowRange(), c.cap.AboveRange():
		how += "The sweep's own runs settle it, so no more runs were needed."
	default:
		how += fmt.Sprintf("The sweep brackets it between %s and %s; %d more runs of the same requests bisect the bracket (%s), leaving it within %.1f%% (the most runs the lesson's work bound leaves room for, at most %d).",
			kit.RateText(c.cap.Runs[0].Rate), kit.RateText(c.cap.Runs[1].Rate), len(c.cap.Runs)-2, probesText(c.cap), 100*(c.cap.Above/c.cap.Rate-1), capacityProbes-2)
	}
	on := "on this one GPU"
	if r.gpus > 1 {
		on = fmt.Sprintf("over these %d GPUs", r.gpus)
	}
	narr := fmt.Sprintf("%s, %s per GPU %s, at max_num_batched_tokens = %s. %s", capText, kit.RateText(slo.PerGPU(c.rate(), r.gpus)), on, kit.Comma(r.budget), how)
	if o := r.compare; o != nil {
		narr += " " + r.compareText(*o)
	} else {
		narr += " Set compare_budget to search the capacity at another token budget beside it."
	}
	guide := scene.Guide{ID: "capacity", Axis: "x", From: kit.Round2(r.lo), To: kit.Round2(max(r.lo, c.rate())), Label: "meets the SLO: capacity " + kit.RateText(c.rate())}
	chart := *r.goodputChart()
	chart.Guides = append(chart.Guides, guide)
	return lessons.Step{
		Title:     "Capacity under the SLO",
		Narration: narr,
		Scenes: []scene.Scene{
			kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "goodput", Title: "Throughput and goodput against offered load", Chart: &chart}, kit.MarkRef("guide:capacity", "capacity "+kit.RateText(c.rate()))),
			r.capacityCards(),
		},
		Mentions: []scene.Mention{kit.Mention(capText, "goodput", "guide:capacity")},
	}
}

// compareText says which budget sustains more load and why, from the
// runs at each capacity.
func (r measuringRun) compareText(o capacityResult) string {
	c := r.capacity
	small, large := c, o
	if o.budget < c.budget {
		small, large = o, c
	}
	t := fmt.Sprintf("At max_num_batched_tokens = %s the capacity is %s", kit.Comma(o.budget), capacityRateText(o.cap, r.lo, r.hi))
	switch {
	case small.rate() > large.rate():
		t += fmt.Sprintf(": the smaller budget (%s tokens) sustains more. With %s tokens a step, a long prompt's prefill runs in one step and every decode in that step waits for it: "+
			"the longest gap between tokens is %.0f ms at %s against %.0f ms with chunks of %s, so the p99 TBT and the TPOT of the requests caught behind it reach their limits at a lower rate (chunked prefill, Sarathi-Serve).",
			kit.Comma(small.budget), kit.Comma(large.budget), 1000*large.maxGap, kit.RateText(max(large.rate(), r.lo)), 1000*small.maxGap, kit.Comma(small.budget))
	case large.rate() > small.rate():
		t += fmt.Sprintf(": the larger budget (%s tokens) sustains more. Under this SLO the stalls a whole prefill causes (longest gap %.0f ms) stay within the limits, while chunks of %s tokens spread each prompt over more steps, "+
			"each reading the weights again, so requests wait longer for their first token and the server saturates sooner.", kit.Comma(large.budget), 1000*large.maxGap, kit.Comma(small.budget))
	default:
		t += ": the same. Neither budget's stalls decide this SLO; the server saturates at the same rate."
	}
	return t
}

// sarathiClaim puts Sarathi-Serve's capacity gain beside the lesson's.
func (r measuringRun) sarathiClaim() lessons.Claim {
	cl := lessons.Claim{
		What:    "Chunked prefill's capacity under a p99 TBT SLO",
		Article: "Sarathi-Serve (OSDI'24, https://arxiv.org/abs/2403.02310): 2.6× the serving capacity of vLLM without chunking for Mistral-7B on one A100, under a P99 TBT SLO",
		Why: "Same mechanism: a large budget lets one long prefill stall every decode in its step, and the p99 gap between tokens fails first; chunks cap each step. " +
			"The lab's workload is illustrative chat lengths, not Sarathi-Serve's datasets, and its scheduler is vLLM v1's (decodes first, then chunks), close to Sarathi-Serve's stall-free batching.",
	}
	if o := r.compare; o != nil && o.rate() > 0 {
		cl.Model = fmt.Sprintf("%.2f× (%s at %s tokens, %s at %s) on %s, %s, under %s", r.capacity.rate()/o.rate(), kit.RateText(r.capacity.rate()), kit.Comma(r.budget), kit.RateText(o.rate()), kit.Comma(o.budget), r.gpu.Name, r.model.Name, kit.SLOText(r.objective))
	} else {
		cl.Model = fmt.Sprintf("capacity %s at %s tokens under %s; set compare_budget to compute the ratio", capacityRateText(r.capacity.cap, r.lo, r.hi), kit.Comma(r.budget), kit.SLOText(r.objective))
	}
	return cl
}
