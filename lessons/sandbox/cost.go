package sandbox

import (
	"fmt"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// poolRef names the cluster picture's pool of workers (a mark's ref).
func (r *sandboxRun) poolRef() string {
	return fmt.Sprintf("pool:%d workers (%s, %s)", r.workers, r.e.GPU.Name, r.e.Model.Name)
}

// costs are the median seed's probes' costs, by rate in req/s.
func (c *sandboxCapacity) costs() (rates []float64, costs []kit.RunCost) {
	rs, runs, _ := c.medianRuns()
	for i := range rs {
		rates, costs = append(rates, rs[i]), append(costs, runs[i].cost)
	}
	return rates, costs
}

// costStep says what the run at the knobs' rate cost on the cluster, and
// charts what a million tokens cost in each run of the capacity search
// against its rate: the same requests on the same cluster, so the runs
// differ only in load. None without a search (one run is no curve).
func (c *sandboxCapacity) costStep(r *sandboxRun) (lessons.Step, bool) {
	if c.skipped != "" {
		return lessons.Step{}, false
	}
	rates, costs := c.costs()
	if len(costs) < 2 {
		return lessons.Step{}, false
	}
	usd, energy := kit.CostCharts(rates, costs)
	i := kit.Cheapest(costs)
	own, lo, hi, best := r.cost, costs[0], costs[len(costs)-1], costs[i]
	ownText := fmt.Sprintf("a million output tokens cost %s", kit.USDText(own.OutputPerM()))
	narration := fmt.Sprintf("At %s, %s and a million input tokens %s (%s J per output token), on %s at %s per GPU-hour and at most %s W each: %s. "+
		"Over the %d rates the capacity search's median seed probed (each its own stream of %s requests or so), the cost is %s at %s req/s (%s J per output token), "+
		"cheapest at %s req/s (%s per million output tokens, %s per million input tokens), and %s; at %s req/s it is %s. "+
		"A light load pays for idle GPUs and for decode steps that read all the weights for few requests; the energy counts board power for every second held, an upper bound.",
		c.rateText(c.rate), ownText, kit.USDText(own.InputPerM()), kit.Sig3Text(own.JoulesPerOutput()), c.gpusText, kit.USDText(own.USDPerHour), kit.Sig3Text(own.Watts), kit.CostWord,
		len(costs), kit.Comma(c.search.Requests(c.objective, c.capacity())), kit.USDText(lo.OutputPerM()), figureText(rates[0]), kit.Sig3Text(lo.JoulesPerOutput()),
		figureText(rates[i]), kit.USDText(best.OutputPerM()), kit.USDText(best.InputPerM()), kit.CostTrend(costs), figureText(rates[len(rates)-1]), kit.USDText(hi.OutputPerM()))
	a := &kit.Annotator{Scene: "cluster"}
	a.Mark(r.poolRef(), kit.USDText(own.OutputPerM())+"/M output", ownText, narration)
	stats := []scene.Stat{
		{Label: "$ per million output tokens", Value: kit.USDText(own.OutputPerM())},
		{Label: "$ per million input tokens", Value: kit.USDText(own.InputPerM())},
		{Label: "J per output token", Value: kit.Sig3Text(own.JoulesPerOutput())},
	}
	return lessons.Step{
		Title:     "Price and energy against load",
		Narration: narration,
		Scenes: []scene.Scene{
			r.clusterScene("The cluster, with what its run cost", true, stats, nil, a.Marks),
			{Kind: scene.KindChart, ID: "cost", Title: "GPU cost per million tokens against the arrival rate", Chart: usd},
			{Kind: scene.KindChart, ID: "energy", Title: "Energy per output token against the arrival rate", Chart: energy},
		},
		Mentions: a.Mentions,
	}, true
}
