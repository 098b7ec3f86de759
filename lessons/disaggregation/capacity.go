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

// Capacity per GPU under the SLO, each deployment's (core/slo): the
// highest arrival rate at which the share of requests the SLO asks for meet
// its TTFT and TPOT limits (and its p99 TBT, when set), divided by the
// deployment's GPUs. Dynamo's and DistServe's results are stated this way,
// at a latency target, not at one offered rate.
//
// A probe serves the stream's requests (the same seeded lengths; arrivals
// drawn at the probe's rate, so probes differ only in load) on one
// deployment. The run at the knobs' rate is the first probe (free); the
// search then
// brackets [rate, capacitySpan × rate] when it met the SLO there, else
// [rate / capacitySpan, rate], and bisects it geometrically.
//
// The bound. Each probe counts at most RequestWork(probe stream) of work
// (no preemption), and the searches may use only what the lesson's work
// bound leaves after the run itself: disaggCapacityPlan gives each
// deployment the same number of simulations, at most capacityProbes − 1,
// and none when not even one fits (the capacity step then says why).
const (
	capacityProbes = 8
	capacitySpan   = 8.0
	// capacityResolution stops a bisection once the bracket is
	// within 3%.
	capacityResolution = 0.03
)

// disaggCapacity is one deployment's capacity search.
type disaggCapacity struct {
	cap  slo.Capacity
	lo   float64 // the search range
	hi   float64
	gpus int
}

// perGPU is the capacity per GPU, req/s.
func (c disaggCapacity) perGPU() float64 { return slo.PerGPU(c.cap.Rate, c.gpus) }

// disaggCapacities are both deployments' searches, and the objective.
type disaggCapacities struct {
	objective  slo.Objective
	sims       int // simulations each search may run beyond the free probe
	requests   int // the probe stream's requests
	mono, dis  disaggCapacity
	searched   bool
	work       int64
	freeProbe  bool
	probeWork  int64 // RequestWork of the probe stream
	budgetLeft int64 // the work the bound left for the searches
}

// disaggCapacityPlan is how many simulations each deployment's search may
// run within the work bound: (ServingCheckWork − the run's work) over two
// deployments' probes of RequestWork(probe stream) each, at most
// capacityProbes − 1.
func disaggCapacityPlan(v lessons.Values) (sims, requests int, probeWork, left int64) {
	wl := disaggLengths(v)
	requests = len(wl)
	probeWork = kit.RequestWork(wl[:requests])
	left = kit.ServingCheckWork - 2*kit.RequestWork(wl)
	if probeWork <= 0 || left <= 0 {
		return 0, requests, probeWork, max(left, 0)
	}
	return int(min(int64(capacityProbes-1), left/(2*probeWork))), requests, probeWork, left
}

// searchCapacities runs both deployments' capacity searches for the run r
// on set.
func searchCapacities(v lessons.Values, set *disaggSetup, r *disaggRun) (disaggCapacities, error) {
	out := disaggCapacities{objective: kit.ObjectiveOf(v)}
	out.sims, out.requests, out.probeWork, out.budgetLeft = disaggCapacityPlan(v)
	out.mono.gpus, out.dis.gpus = r.compared.MonoGPUs, r.compared.DisGPUs
	if out.sims < 1 {
		return out, nil
	}
	out.searched = true
	rate := v.Float("rate")
	out.freeProbe = out.requests == len(r.reqs)
	probes := out.sims
	if out.freeProbe {
		probes++ // the run at the knobs' rate
	}
	probes = max(probes, slo.MinProbes)
	search := func(cfg cluster.DisaggConfig, main *cluster.DisaggResult, c *disaggCapacity) error {
		probe := func(at float64) ([]slo.Latency, error) {
			if out.freeProbe && at == rate {
				return kit.Latencies(main.Requests), nil
			}
			wl := workload.Poisson(out.requests, at, workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")},
				workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}, uint64(v.Int("seed")))
			res, err := cluster.RunDisagg(cfg, disaggRequests(wl))
			if err != nil {
				return nil, err
			}
			out.work += res.Counts.Work()
			return kit.Latencies(res.Requests), nil
		}
		c.lo, c.hi = rate/capacitySpan, rate*capacitySpan
		if out.freeProbe {
			if out.objective.Judge(rate, kit.Latencies(main.Requests)).Meets {
				c.lo = rate
			} else {
				c.hi = rate
			}
		}
		var err error
		c.cap, err = slo.Search{Lo: c.lo, Hi: c.hi, Probes: probes, Resolution: capacityResolution}.Run(out.objective, probe)
		return err
	}
	if err := search(set.monoCfg, r.compared.Monolithic, &out.mono); err != nil {
		return out, err
	}
	if err := search(set.disCfg, r.compared.Disagg, &out.dis); err != nil {
		return out, err
	}
	return out, nil
}

// capacityText is a capacity as narrated: "3.1 req/s", or a bound when the
// search range did not contain it.
func (c disaggCapacity) capacityText() string {
	switch {
	case c.cap.BelowRange():
		return fmt.Sprintf("below %s (even %s missed the SLO)", kit.RateText(c.lo), kit.RateText(c.lo))
	case c.cap.AboveRange():
		return fmt.Sprintf("at least %s (the top of the search met the SLO)", kit.RateText(c.hi))
	}
	return fmt.Sprintf("%s (%s missed)", kit.RateText(c.cap.Rate), kit.RateText(c.cap.Above))
}

// capacityMetrics are the capacity_* metrics, with the SLO in their
// labels; none when the work bound left no room for the searches.
func (r *disaggRun) capacityMetrics() []lessons.Metric {
	c := r.capacity
	if !c.searched {
		return nil
	}
	under := kit.SLOText(c.objective)
	return []lessons.Metric{
		{Key: "capacity_req_s_monolithic", Label: "Monolithic: capacity (highest rate meeting " + under + ")", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.mono.cap.Rate)},
		{Key: "capacity_req_s_disagg", Label: "Disaggregated: capacity (highest rate meeting " + under + ")", Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.dis.cap.Rate)},
		{Key: "capacity_per_gpu_req_s_monolithic", Label: fmt.Sprintf("Monolithic: capacity per GPU (%d GPUs) under %s", c.mono.gpus, under), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.mono.perGPU())},
		{Key: "capacity_per_gpu_req_s_disagg", Label: fmt.Sprintf("Disaggregated: capacity per GPU (%d GPUs) under %s", c.dis.gpus, under), Unit: "req/s", Better: lessons.HigherIsBetter, Value: kit.Round4(c.dis.perGPU())},
	}
}

// failText says what failed at the probe just above a capacity: the p99
// gap between tokens or the share of requests meeting TTFT and TPOT.
func (c disaggCapacity) failText(o slo.Objective) string {
	for _, run := range c.cap.Runs {
		if run.Rate != c.cap.Above || run.Meets {
			continue
		}
		if o.P99TBT > 0 && run.P99TBT > o.P99TBT {
			return fmt.Sprintf("at %s its p99 gap between tokens reached %.0f ms", kit.RateText(run.Rate), 1000*run.P99TBT)
		}
		return fmt.Sprintf("at %s only %.0f%% of requests met TTFT and TPOT", kit.RateText(run.Rate), 100*run.Attainment)
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
		return "Neither deployment meets the SLO within the search range: loosen the SLO or lower the rate."
	case (c.mono.cap.AboveRange() && m <= d) || (c.dis.cap.AboveRange() && d <= m) || (c.mono.cap.AboveRange() && c.dis.cap.AboveRange()):
		return "The search range does not settle which serves more per GPU: raise the rate, which centres the search, to widen it."
	case d > m:
		return fmt.Sprintf("Disaggregated serves %.2f× as much per GPU. The monolithic workers prefill beside their decodes, so each long prompt stalls every running request's next token: %s. "+
			"The decode pool never computes a prompt, so its gaps stay one decode step; it fails later (%s).", d/m, c.mono.failText(o), c.dis.failText(o))
	case m > d:
		atLeast := ""
		if c.mono.cap.AboveRange() {
			atLeast = "at least "
		}
		return fmt.Sprintf("Monolithic serves %s%.2f× as much per GPU. The disaggregated prefill pool has %d of its %d GPUs and each TTFT carries a KV transfer: %s. "+
			"Monolithic workers prefill on every GPU; their stalls cost less here (%s).", atLeast, m/d, r.prefill*r.ptp, c.dis.gpus, c.dis.failText(o), c.mono.failText(o))
	}
	return "Both serve the same per GPU."
}

// capacityStep narrates both searches.
func (r *disaggRun) capacityStep() lessons.Step {
	c := r.capacity
	if !c.searched {
		n := fmt.Sprintf("Capacity is the highest arrival rate at which %s. Searching it serves the first %d requests again at several rates on each deployment, %s units of work per run; "+
			"the lesson's work bound leaves %s after this run, not enough for one run of each: lower requests or the prompt and output lengths to see it.",
			kit.SLOText(c.objective), c.requests, kit.Comma64(c.probeWork), kit.Comma64(c.budgetLeft))
		a := &kit.Annotator{Scene: "cluster"}
		a.Mark("pool:"+r.poolLabel("decode"), "no capacity search", "the lesson's work bound", n)
		return lessons.Step{Title: "Capacity per GPU under the SLO", Narration: n, Mentions: a.Mentions,
			Scenes: []scene.Scene{r.disaggCluster("cluster", "The disaggregated deployment", -1, false, a.Marks)}}
	}
	stream := fmt.Sprintf("the same %d requests", c.requests)
	if !c.freeProbe {
		stream = fmt.Sprintf("the first %d of these requests", c.requests)
	}
	n := fmt.Sprintf("Capacity is the highest arrival rate at which %s. Each deployment served %s at %d rates, bisecting a bracket around %s (%d new runs each, as the work bound allows). "+
		"Monolithic: %s, %s per GPU over %d GPUs. Disaggregated: %s, %s per GPU over %d GPUs. %s",
		kit.SLOText(c.objective), stream, len(c.mono.cap.Runs), kit.RateText(r.rate), c.sims,
		c.mono.capacityText(), kit.RateText(c.mono.perGPU()), c.mono.gpus, c.dis.capacityText(), kit.RateText(c.dis.perGPU()), c.dis.gpus, r.capacityVerdict())
	if !r.fp8PerPool() {
		n += " Dynamo's recipes use FP8, a smaller prefill TP and a p99 TBT bound: try weight_dtype=fp8 prefill_tp=2 decode_tp=4 prefill_workers=2 slo_p99_tbt_ms=50."
	}
	a := &kit.Annotator{Scene: "capacity-race"}
	a.Mark("race:monolithic", "monolithic "+kit.RateText(c.mono.perGPU())+"/GPU", "Monolithic:", n)
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

// capacityScene is each deployment's probes: attainment against the rate.
func (r *disaggRun) capacityScene() scene.Scene {
	chart := &scene.Chart{Type: scene.Line, XLabel: "arrival rate", XUnit: "req/s", XLog: true, YLabel: "requests meeting the SLO", YUnit: "%"}
	for _, d := range []struct {
		name string
		c    disaggCapacity
	}{{"monolithic", r.capacity.mono}, {"disaggregated", r.capacity.dis}} {
		s := scene.Series{Name: d.name}
		runs := append([]slo.Outcome(nil), d.c.cap.Runs...)
		sortOutcomes(runs)
		for _, o := range runs {
			s.X, s.Y = append(s.X, kit.Round4(o.Rate)), append(s.Y, kit.Round2(100*o.Attainment))
		}
		chart.Series = append(chart.Series, s)
	}
	chart.Guides = append(chart.Guides, scene.Guide{ID: "target", Axis: "y", From: kit.Round2(100 * r.capacity.objective.Target), To: kit.Round2(100 * r.capacity.objective.Target), Label: fmt.Sprintf("target %g%%", 100*r.capacity.objective.Target)})
	return scene.Scene{Kind: scene.KindChart, ID: "capacity", Title: "Each deployment's capacity search: attainment at each probed rate", Chart: chart}
}

// sortOutcomes orders probes by rate.
func sortOutcomes(os []slo.Outcome) {
	for i := 1; i < len(os); i++ {
		for j := i; j > 0 && os[j].Rate < os[j-1].Rate; j-- {
			os[j], os[j-1] = os[j-1], os[j]
		}
	}
}
