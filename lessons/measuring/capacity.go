package measuring

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// Capacity under an SLO, as serving papers state it: the highest arrival
// rate at which the requests meet the objective in steady state, found by
// the lessons' shared search (kit.NewSearch over core/slo's Steady). Its
// probes are runs of their own, as long as the objective and the search's
// tolerance need, at rates the search picks from the system's estimated
// saturation rate: nothing the sweep's knobs (duration_s, rate_min,
// rate_max, points) set moves the answer.

// capacityResult is one capacity search and what it cost.
type capacityResult struct {
	// budget is the token budget (max_num_batched_tokens) it ran at.
	budget int
	search slo.Steady
	cap    slo.SteadyCapacity
	// maxGap and p99TBT are the longest gap between tokens of the median
	// seed's run at its highest rate that met the SLO (at its first probe
	// when none did) and that run's p99 TBT as the search judged it (over
	// its steady-state window), in seconds.
	maxGap, p99TBT float64
	work           int64
}

// rate is the capacity in req/s (0 when even the lowest rate missed).
func (c capacityResult) rate() float64 { return c.cap.Rate }

// startSample is how many requests the search's start estimates from.
const startSample = 200

// searchCapacity searches the capacity of e at max_num_seqs seqs and token
// budget under o, over the lengths' requests from seed on, spending from
// spend.
func searchCapacity(e *kit.Engine, seqs, budget int, lengths lengthSource, o slo.Objective, seed uint64, spend *kit.Spend) (capacityResult, error) {
	r := capacityResult{budget: budget}
	cfg := scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: 16, NumBlocks: e.KVBlocks}
	timer := e.Timer(seqs, budget)
	type key struct {
		seed uint64
		rate float64
	}
	maxGaps := map[key]float64{}
	var steps []scheduler.Step // runProbe's buffer, shared by the probes
	trial := func(rate float64, n int, seed uint64) ([]slo.Served, error) {
		var in []scheduler.Request
		for _, q := range lengths.draw(n, rate, seed) {
			in = append(in, scheduler.Request{ID: q.ID, Arrival: q.Arrival, Prompt: q.Prompt, Output: q.Output})
		}
		sc, err := scheduler.New(cfg, timer, in)
		if err != nil {
			return nil, lessons.Relation("max_num_batched_tokens", strconv.Itoa(budget), "a budget and KV pool that hold every request ("+err.Error()+")")
		}
		work, cost, err := runProbe(e, sc, seqs, budget, &steps)
		if err != nil {
			return nil, err
		}
		r.work += work
		spend.Charge(cost, n)
		served := kit.Served(sc.Requests())
		longest := 0.0
		for _, s := range served {
			for _, x := range s.Gaps {
				longest = max(longest, x)
			}
		}
		maxGaps[key{seed, rate}] = longest
		return served, nil
	}
	start := kit.StartRate(timer, lengths.draw(startSample, 1, seed), seqs, int64(e.KVBlocks)*16, budget, o)
	r.search = kit.NewSearch(kit.Precise, start, seed, spend)
	c, err := r.search.Run(o, trial)
	if err != nil {
		return r, err
	}
	r.cap = c
	med := kit.MedianSeed(c)
	at := med.Met
	if at == 0 && len(med.Runs) > 0 {
		at = med.Runs[0].Rate
	}
	r.maxGap = maxGaps[key{med.Seed, at}]
	for _, run := range med.Runs {
		if run.Rate == at {
			r.p99TBT = run.P99TBT
		}
	}
	return r, nil
}

// probeSteps is how many step records runProbe holds at a time.
const probeSteps = 4096

// runProbe runs sc, a probe of e at max_num_seqs seqs and token budget
// budget, and returns its Script.Work and its search cost
// (kit.Engine.WorkAndSearchCost). Both are sums over the steps, so they
// are taken over probeSteps records at a time, held in *buf, and sc keeps
// none (scheduler DiscardSteps): a probe at two sequences a step runs
// tens of thousands of steps, and nothing else reads them.
func runProbe(e *kit.Engine, sc *scheduler.Scheduler, seqs, budget int, buf *[]scheduler.Step) (work, cost int64, err error) {
	sc.DiscardSteps = true
	if *buf == nil {
		*buf = make([]scheduler.Step, 0, probeSteps)
	}
	steps := (*buf)[:0]
	count := func() {
		w, c := e.WorkAndSearchCost(steps, seqs, budget)
		work, cost = work+w, cost+c
		steps = steps[:0]
	}
	err = sc.RunEach(func(st scheduler.Step) error {
		if steps = append(steps, st); len(steps) == cap(steps) {
			count()
		}
		return nil
	})
	count()
	return work, cost, err
}

// text is the capacity for narration (kit.CapacityText).
func (c capacityResult) text() string { return kit.CapacityText(c.cap, c.search) }

// atRate is the rate of the run maxGap and p99TBT come from.
func (c capacityResult) atRate() float64 {
	med := kit.MedianSeed(c.cap)
	if med.Met == 0 && len(med.Runs) > 0 {
		return med.Runs[0].Rate
	}
	return med.Met
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
	capText := "Capacity is " + c.text()
	med := kit.MedianSeed(c.cap)
	how := fmt.Sprintf("A rate counts when, in steady state, %s. %s The median seed's probes: %s.", under, kit.SearchMethod(c.cap, c.search, r.objective), kit.ProbesText(med))
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
	t := fmt.Sprintf("At max_num_batched_tokens = %s the capacity is %s", kit.Comma(o.budget), o.text())
	switch {
	case small.rate() > large.rate():
		t += fmt.Sprintf(": the smaller budget (%s tokens) sustains more. With %s tokens a step, a long prompt's prefill runs in one step and every decode in that step waits for it: "+
			"the longest gap between tokens is %.0f ms at %s against %.0f ms with chunks of %s, so the p99 TBT and the TPOT of the requests caught behind it reach their limits at a lower rate (chunked prefill, Sarathi-Serve).",
			kit.Comma(small.budget), kit.Comma(large.budget), 1000*large.maxGap, kit.RateText(large.atRate()), 1000*small.maxGap, kit.Comma(small.budget))
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
	workload := "The lab's workload here is its illustrative chat lengths, not Sarathi-Serve's data set (lengths=sharegpt-8k replays it)"
	if r.lengths.rows != nil {
		workload = "The lengths are Sarathi-Serve's own ShareGPT table"
	}
	cl := lessons.Claim{
		What: "Chunked prefill's capacity under a p99 TBT SLO",
		Article: "Sarathi-Serve (OSDI'24, https://arxiv.org/abs/2403.02310, abstract and §5.1): 2.6× the serving capacity of vLLM for Mistral-7B on one A100, " +
			"under P99 TBT ≤ 100 ms with a median scheduling delay ≤ 2 s; the baseline is vLLM with batch 128 and whole prefills (max_num_batched_tokens = max_model_len), against chunks of 512",
		Why: "Same mechanism: a large budget lets one long prefill stall every decode in its step, and the p99 gap between tokens fails first; chunks cap each step. " +
			workload + "; the scheduler is vLLM v1's (decodes first, then chunks), close to Sarathi-Serve's stall-free batching, and its baseline runs whole prompts in steps that also carry the running decodes, where vLLM v0 paused them.",
	}
	if o := r.compare; o != nil && o.rate() > 0 {
		cl.Model = fmt.Sprintf("%.2f× (%s at %s tokens, %s at %s) on %s, %s, under %s", r.capacity.rate()/o.rate(), kit.RateText(r.capacity.rate()), kit.Comma(r.budget), kit.RateText(o.rate()), kit.Comma(o.budget), r.gpu.Name, r.model.Name, kit.SLOText(r.objective))
	} else {
		cl.Model = fmt.Sprintf("capacity %s at %s tokens under %s; set compare_budget to compute the ratio", r.capacity.text(), kit.Comma(r.budget), kit.SLOText(r.objective))
	}
	return cl
}
