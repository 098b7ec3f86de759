package disaggregation

import (
	"fmt"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/slo"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// Capacity per GPU under the SLO, each deployment's: the highest arrival
// rate at which the share of requests the SLO asks for meet its TTFT and
// TPOT limits (and its p99 TBT, when set) in steady state, divided by the
// deployment's GPUs, which both deployments have as many of. Dynamo's and
// DistServe's results are stated this way, at a latency target, not at one
// offered rate.
//
// Each deployment's search is the lessons' shared one (core/slo's Steady)
// at the capacity_search knob's precision: its probes serve streams of the
// knobs' lengths, as long as the SLO and the tolerance need, at rates it
// picks from the deployment's estimated saturation rate, so neither the
// requests nor the rate knob moves the answer.
//
// Steady enough. One workload's answer is not the deployment's: near
// capacity the requests queue behind each other, so the share meeting
// the SLO wanders by two or three points from one stream of 488 requests
// to the next (standard deviation 0.026 at 3.44 req/s on Dynamo's recipe,
// disaggregated, 60 streams), while it falls only about 0.16 per unit of
// the rate's logarithm (the defaults, disaggregated: 0.90 at 1.28 req/s,
// 0.885 at 1.41, 40 streams each), and a p99 TBT limit counts the few
// stalls a prefill causes. One seed's answer moves by 5–15%. So the
// precise search pools its seeds (kit.NewPooledSearch): after the first
// seed's bisection each further workload is served once near the answer,
// the answer is where a line through every probe's margin crosses 0, and
// the search stops once that crossing's 95% interval (Fieller's, from the
// probes' scatter about the line) is within 5% after at least twenty
// workloads, or when its work bound stops it, and says which. The quick
// search is the first seed's answer alone.
//
// Stratified probes. A probe's stream is workload.StratifiedPoisson's:
// its lengths, and its gaps between arrivals, are one from each of as
// many equally likely strata of their distributions as it has requests,
// in an order the seed shuffles (each gap on its own exactly exponential
// at the probed rate), so every probe holds the same lengths and the same
// share of short gaps and the seeds differ only in which request meets
// which. The share meeting the SLO then scatters about an eighth less:
// 0.026 to 0.023 in the case above; 0.026 to 0.023 at the defaults,
// monolithic, at 3.56 req/s (60 streams); 0.020 to 0.018 at the defaults,
// disaggregated, at 1.28 (100 streams). What is left is each request's
// own luck: there a request misses TTFT when it arrives while the prefill
// worker is busy with a long prompt, and whether the rest of that step
// and its own prefill outlast the limit is a toss for each request (390
// judged requests missing 10% of the time scatter by 0.015 however the
// stream is drawn). That search is bounded by its work, not by its
// interval, which ends near ±3%.
//
// Each search spends from its own budget in cluster.Counts.Work units
// (searchBudget), and says so when it stops it.

// searchBudget is the most cluster.Counts.Work each deployment's search
// may spend, by precision: a run costs 0.03–0.05 µs of CPU a unit
// natively (500 requests of Dynamo's recipe: about 4 million units), so
// the quick searches take under a second together and the precise ones
// about 25 s of CPU (at the defaults, on the two-core
// machine the benchmarks are measured on, where 170 million units each
// took 18 s and left the defaults' disaggregated answers 6% apart over
// six seed settings).
var searchBudget = map[kit.Precision]int64{kit.Quick: 8_000_000, kit.Precise: 255_000_000}

// probeTokens caps a probe's requests at this many tokens' worth (the
// longest prompt and output each): a probe's workers keep every block of
// every prompt in their prefix caches, about 100 bytes a token, so that
// one probe of 122 requests of 32,768 + 2,048 tokens on 16 workers
// peaked near 490 MB. A probe cut shorter than the search's rule exposes
// a larger overload (slo.SteadyOutcome.Overload).
const probeTokens = 2_500_000

// searchMaxWork bounds the work both searches count: each stops within
// its budget, the last probe over it by at most as much again.
const searchMaxWork = 2 * 2 * 255_000_000

// searchParam is the capacity_search knob, as this lesson's searches use
// it.
var searchParam = func() lessons.Param {
	p := kit.SearchParam
	p.Help = "quick: the first seed's answer, bisected to 10%, within the page's budget (one workload's answer can lie a fifth from another's). " +
		"precise: bisected to 5%, then further workloads pooled until the answer's 95% interval is within 5% or the work bound stops it: " +
		"about 25 s natively at the defaults and longer in the page, which keeps its last figures, marked stale, until it is done."
	return p
}()

// disaggCapacity is one deployment's capacity search.
type disaggCapacity struct {
	search slo.Steady
	cap    slo.SteadyCapacity
	gpus   int
}

// perGPU is the capacity per GPU, req/s.
func (c disaggCapacity) perGPU() float64 { return slo.PerGPU(c.cap.Rate, c.gpus) }

// disaggCapacities are both deployments' searches, and the objective.
type disaggCapacities struct {
	objective slo.Objective
	precision kit.Precision
	mono, dis disaggCapacity
	work      int64
}

// searchCapacities runs both deployments' capacity searches for the knobs
// on set.
func searchCapacities(v lessons.Values, set *disaggSetup) (disaggCapacities, error) {
	out := disaggCapacities{objective: kit.ObjectiveOf(v), precision: kit.PrecisionOf(v)}
	prompts := workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")}
	outputs := workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}
	seed := uint64(v.Int("seed"))
	search := func(cfg cluster.DisaggConfig, workers int, c *disaggCapacity) error {
		spend := kit.NewSpend(searchBudget[out.precision])
		trial := func(rate float64, n int, seed uint64) ([]slo.Served, error) {
			res, err := cluster.RunDisagg(cfg, disaggRequests(workload.StratifiedPoisson(n, rate, prompts, outputs, seed)))
			if err != nil {
				return nil, err
			}
			w := res.Counts.Work()
			out.work += w
			spend.Charge(w, n)
			return kit.Served(res.Requests), nil
		}
		// One worker's saturation rate, times the workers: the monolithic
		// deployment's estimate, which the disaggregated one starts from too
		// (its pools' balance decides how far it lies from it).
		start := float64(workers) * kit.StartRate(set.monoTimer, workload.Poisson(200, 1, prompts, outputs, seed), set.dep.seqs, int64(set.mono.KVBlocks)*disaggBlock, set.dep.budget, out.objective)
		c.search = kit.NewPooledSearch(out.precision, start, seed, spend)
		if most := max(10, probeTokens/(prompts.Max+outputs.Max)); most < c.search.MaxRequests {
			c.search.MaxRequests, c.search.MinRequests = most, min(c.search.MinRequests, most)
		}
		var err error
		c.cap, err = c.search.Run(out.objective, trial)
		return err
	}
	dep := set.dep
	out.mono.gpus, out.dis.gpus = dep.monoGPUs(), dep.disGPUs()
	if err := search(set.monoCfg, dep.monoWorkers(), &out.mono); err != nil {
		return out, err
	}
	if err := search(set.disCfg, dep.monoWorkers(), &out.dis); err != nil {
		return out, err
	}
	return out, nil
}

// capacityText is a capacity as narrated (kit.CapacityText).
func (c disaggCapacity) capacityText() string { return kit.CapacityText(c.cap, c.search) }

// capacityMetrics are the capacity_* metrics, with the SLO in their
// labels.
func (r *disaggRun) capacityMetrics() []lessons.Metric {
	c := r.capacity
	under := kit.SLOText(c.objective)
	return []lessons.Metric{
		{Key: "capacity_req_s_monolithic", Label: "Monolithic: capacity (highest rate meeting " + under + " in steady state, median of the seeds)", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.mono.cap.Rate)},
		{Key: "capacity_req_s_disagg", Label: "Disaggregated: capacity (highest rate meeting " + under + " in steady state, median of the seeds)", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.dis.cap.Rate)},
		{Key: "capacity_per_gpu_req_s_monolithic", Label: fmt.Sprintf("Monolithic: capacity per GPU (%d GPUs) under %s", c.mono.gpus, under), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.mono.perGPU())},
		{Key: "capacity_per_gpu_req_s_disagg", Label: fmt.Sprintf("Disaggregated: capacity per GPU (%d GPUs) under %s", c.dis.gpus, under), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.dis.perGPU())},
		{Key: "capacity_spread_pct_monolithic", Label: "Monolithic: the seeds' capacities, range over the median", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(kit.SpreadPct(c.mono.cap))},
		{Key: "capacity_spread_pct_disagg", Label: "Disaggregated: the seeds' capacities, range over the median", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round2(kit.SpreadPct(c.dis.cap))},
	}
}

// failText says what failed at the median seed's probe just above its
// capacity: the p99 gap between tokens or the share of requests meeting
// TTFT and TPOT.
func (c disaggCapacity) failText(o slo.Objective) string {
	sc := kit.MedianSeed(c.cap)
	for _, run := range sc.Runs {
		if run.Rate != sc.Above || run.Meets {
			continue
		}
		if o.P99TBT > 0 && run.P99TBT > o.P99TBT {
			return fmt.Sprintf("at %s its p99 gap between tokens reached %.0f ms", kit.RateText(run.Rate), 1000*run.P99TBT)
		}
		return fmt.Sprintf("at %s only %.0f%% met the SLO", kit.RateText(run.Rate), 100*run.Attainment)
	}
	return "no probed rate missed the SLO"
}

// capacityVerdict says which deployment serves more per GPU, and why, from
// the probes above each capacity. A capacity at the top of its search
// range is a lower bound, so it decides only when it is already the larger.
func (r *disaggRun) capacityVerdict() string {
	c, o := r.capacity, r.capacity.objective
	m, d := c.mono.perGPU(), c.dis.perGPU()
	switch {
	case c.mono.cap.BelowRange() && c.dis.cap.BelowRange():
		return "Neither deployment meets the SLO at any rate searched: loosen the SLO."
	case m == 0 || d == 0:
		// One search found no rate that meets the SLO (the lowest rate
		// searched missed it, or the work bound stopped the search first):
		// a ratio to 0 says nothing.
		return "One deployment's search found no rate that meets the SLO (above), so this does not settle which serves more per GPU."
	case (c.mono.cap.AboveRange() && m <= d) || (c.dis.cap.AboveRange() && d <= m) || (c.mono.cap.AboveRange() && c.dis.cap.AboveRange()):
		return "The searches' range does not settle which serves more per GPU."
	case d > m:
		return fmt.Sprintf("Disaggregated serves %.2f× as much per GPU: monolithic workers prefill beside their decodes, so a long prompt stalls every running request (%s); "+
			"the decode pool never computes a prompt, so its gaps stay one decode step (%s).", d/m, c.mono.failText(o), c.dis.failText(o))
	case m > d:
		atLeast := ""
		if c.mono.cap.AboveRange() {
			atLeast = "at least "
		}
		return fmt.Sprintf("Monolithic serves %s%.2f× as much per GPU: the disaggregated prefill pool has %d of the %d GPUs and each TTFT carries a KV transfer (%s); "+
			"monolithic workers prefill on every GPU (%s).", atLeast, m/d, r.prefill*r.ptp, c.dis.gpus, c.dis.failText(o), c.mono.failText(o))
	}
	return "Both serve the same per GPU."
}

// capacityStep narrates both searches.
func (r *disaggRun) capacityStep() lessons.Step {
	c := r.capacity
	n := fmt.Sprintf("Capacity: the highest rate at which, in steady state, %s, on each deployment's %d GPUs. %s "+
		"Monolithic (the baseline): %s, %s per GPU. Disaggregated: %s, %s per GPU. %s",
		kit.SLOText(c.objective), c.mono.gpus, kit.SearchMethod(c.mono.cap, c.mono.search, c.objective),
		c.mono.capacityText(), kit.RateText(c.mono.perGPU()), c.dis.capacityText(), kit.RateText(c.dis.perGPU()), r.capacityVerdict())
	if c.precision == kit.Quick {
		n += " capacity_search=precise pools seeds until each 95% interval is within 5%."
	}
	if !r.fp8PerPool() {
		n += " Dynamo's recipe: weight_dtype=fp8 tp=2 prefill_tp=2 decode_tp=4 prefill_workers=2 slo_p99_tbt_ms=50."
	}
	a := &kit.Annotator{Scene: "capacity-race"}
	a.Mark("race:monolithic", "monolithic "+kit.RateText(c.mono.perGPU())+"/GPU", "Monolithic (the baseline):", n)
	a.Mark("race:disaggregated", "disaggregated "+kit.RateText(c.dis.perGPU())+"/GPU", "Disaggregated:", n)
	return lessons.Step{Title: "Capacity per GPU under the SLO", Narration: n, Mentions: a.Mentions, Scenes: []scene.Scene{r.capacityRace(a.Marks), r.capacityScene()}}
}

// capacityRace sets both deployments' capacity per GPU side by side.
func (r *disaggRun) capacityRace(marks []scene.Mark) scene.Scene {
	c := r.capacity
	t := &scene.Tiers{Subject: "Capacity per GPU under " + kit.SLOText(c.objective), Unit: "req/s per GPU"}
	for _, d := range []struct {
		id, name string
		c        disaggCapacity
		win      bool
	}{{"monolithic", "monolithic", c.mono, c.mono.perGPU() > c.dis.perGPU()}, {"disaggregated", "disaggregated", c.dis, c.dis.perGPU() > c.mono.perGPU()}} {
		t.Races = append(t.Races, scene.Race{Ref: "race:" + d.id, Label: fmt.Sprintf("%s (%d GPUs)", d.name, d.c.gpus), Winner: d.win, Bars: []scene.RaceBar{
			{Label: "capacity " + kit.RateText(d.c.cap.Rate), Class: "compute", Value: kit.Round4(d.c.perGPU())},
		}})
	}
	return scene.Scene{Kind: scene.KindTiers, ID: "capacity-race", Title: "Which deployment serves more per GPU", Main: true, Marks: marks, Tiers: t}
}

// fp8PerPool reports whether the run follows Dynamo's recipes: FP8
// weights and pools of different TP.
func (r *disaggRun) fp8PerPool() bool { return r.e.Weights == "fp8" && r.ptp != r.dtp }

// capacityScene is each deployment's median seed's probes: attainment
// against the rate.
func (r *disaggRun) capacityScene() scene.Scene {
	chart := &scene.Chart{Type: scene.Line, XLabel: "arrival rate", XUnit: "req/s", XLog: true, YLabel: "requests meeting the SLO", YUnit: "%"}
	for _, d := range []struct {
		name string
		c    disaggCapacity
	}{{"monolithic", r.capacity.mono}, {"disaggregated", r.capacity.dis}} {
		s := scene.Series{Name: d.name}
		runs := append([]slo.SteadyOutcome(nil), kit.MedianSeed(d.c.cap).Runs...)
		sortOutcomes(runs)
		for _, o := range runs {
			s.X, s.Y = append(s.X, kit.Round4(o.Rate)), append(s.Y, kit.Round2(100*o.Attainment))
		}
		chart.Series = append(chart.Series, s)
	}
	chart.Guides = append(chart.Guides, scene.Guide{ID: "target", Axis: "y", From: kit.Round2(100 * r.capacity.objective.Target), To: kit.Round2(100 * r.capacity.objective.Target), Label: fmt.Sprintf("target %g%%", 100*r.capacity.objective.Target)})
	return scene.Scene{Kind: scene.KindChart, ID: "capacity", Title: "Each deployment's search, its median seed: attainment at each probed rate", Chart: chart}
}

// sortOutcomes orders probes by rate.
func sortOutcomes(os []slo.SteadyOutcome) {
	for i := 1; i < len(os); i++ {
		for j := i; j > 0 && os[j].Rate < os[j-1].Rate; j-- {
			os[j], os[j-1] = os[j-1], os[j]
		}
	}
}
