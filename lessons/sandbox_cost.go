package lessons

import (
	"fmt"
	"maps"
	"slices"

	"github.com/inferlab/inferlab/scene"
)

// poolRef names the cluster picture's pool of workers (a mark's ref).
func (r *sandboxRun) poolRef() string {
	return fmt.Sprintf("pool:%d workers (%s, %s)", r.workers, r.e.gpu.Name, r.e.model.Name)
}

// costs are the capacity search's runs' costs (the run at the rate knob's
// value among them), by rate in req/s.
func (c *sandboxCapacity) costs() (rates []float64, costs []runCost) {
	for _, rate := range slices.Sorted(maps.Keys(c.runs)) {
		rates, costs = append(rates, c.reqRate(rate)), append(costs, c.runs[rate].cost)
	}
	return rates, costs
}

// costStep says what the run at the knobs' rate cost on the cluster, and
// charts what a million tokens cost in each run of the capacity search
// against its rate: the same requests on the same cluster, so the runs
// differ only in load. None without a search (one run is no curve).
func (c *sandboxCapacity) costStep(r *sandboxRun) (Step, bool) {
	rates, costs := c.costs()
	if c.skipped != "" || len(costs) < 2 {
		return Step{}, false
	}
	usd, energy := costCharts(rates, costs)
	i := cheapest(costs)
	own, lo, hi, best := r.cost, costs[0], costs[len(costs)-1], costs[i]
	ownText := fmt.Sprintf("a million output tokens cost %s", usdText(own.outputPerM()))
	narration := fmt.Sprintf("At %s, %s and a million input tokens %s (%s J per output token), on %s at %s per GPU-hour and at most %s W each: %s. "+
		"Over the %d rates the capacity search served these %d requests at, the cost is %s at %s req/s (%s J per output token), "+
		"cheapest at %s req/s (%s per million output tokens, %s per million input tokens), and %s; at %s req/s it is %s. "+
		"A light load pays for idle GPUs and for decode steps that read all the weights for few requests; the energy counts board power for every second held, an upper bound.",
		c.rateText(c.rate), ownText, usdText(own.inputPerM()), sig3Text(own.joulesPerOutput()), c.gpusText, usdText(own.usdPerHour), sig3Text(own.watts), costWord,
		len(costs), c.requests, usdText(lo.outputPerM()), figureText(rates[0]), sig3Text(lo.joulesPerOutput()),
		figureText(rates[i]), usdText(best.outputPerM()), usdText(best.inputPerM()), costTrend(costs), figureText(rates[len(rates)-1]), usdText(hi.outputPerM()))
	a := &annotate{scene: "cluster"}
	a.mark(r.poolRef(), usdText(own.outputPerM())+"/M output", ownText, narration)
	stats := []scene.Stat{
		{Label: "$ per million output tokens", Value: usdText(own.outputPerM())},
		{Label: "$ per million input tokens", Value: usdText(own.inputPerM())},
		{Label: "J per output token", Value: sig3Text(own.joulesPerOutput())},
	}
	return Step{
		Title:     "Price and energy against load",
		Narration: narration,
		Scenes: []scene.Scene{
			r.clusterScene("The cluster, with what its run cost", true, stats, nil, a.marks),
			{Kind: scene.KindChart, ID: "cost", Title: "GPU cost per million tokens against the arrival rate", Chart: usd},
			{Kind: scene.KindChart, ID: "energy", Title: "Energy per output token against the arrival rate", Chart: energy},
		},
		Mentions: a.mentions,
	}, true
}
