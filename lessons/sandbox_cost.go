package lessons

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/inferlab/inferlab/scene"
)

// costs are the capacity search's runs' costs (the run at the rate knob's
// value among them), by rate in req/s.
func (c *sandboxCapacity) costs() (rates []float64, costs []runCost) {
	for _, rate := range slices.Sorted(maps.Keys(c.runs)) {
		rates, costs = append(rates, c.reqRate(rate)), append(costs, c.runs[rate].cost)
	}
	return rates, costs
}

// costStep charts what a million tokens cost in each run of the capacity
// search, against its rate: the same requests on the same cluster, so the
// runs differ only in load. None without a search (one run is no curve).
func (c *sandboxCapacity) costStep() (Step, bool) {
	rates, costs := c.costs()
	if c.skipped != "" || len(costs) < 2 {
		return Step{}, false
	}
	usd, energy := costCharts(rates, costs)
	i := cheapest(costs)
	lo, hi, best := costs[0], costs[len(costs)-1], costs[i]
	ref := "point:" + seriesUSDOutput + ":" + strconv.Itoa(i)
	bestText := fmt.Sprintf("cheapest at %s req/s: %s per million output tokens and %s per million input tokens", figureText(rates[i]), usdText(best.outputPerM()), usdText(best.inputPerM()))
	narration := fmt.Sprintf("The capacity search served the same %d requests at %d rates; here is what each run cost on %s at %s per GPU-hour and at most %s W each (%s). "+
		"At %s req/s a million output tokens cost %s (%s J per output token); the cost is %s, and %s. At %s req/s: %s per million output tokens, %s J per output token. "+
		"A light load pays for idle GPUs and for decode steps that read all the weights for few requests; the energy counts board power for every second held, an upper bound.",
		c.requests, len(costs), c.gpusText, usdText(lo.usdPerHour), sig3Text(lo.watts), costWord,
		figureText(rates[0]), usdText(lo.outputPerM()), sig3Text(lo.joulesPerOutput()), bestText, costTrend(costs),
		figureText(rates[len(rates)-1]), usdText(hi.outputPerM()), sig3Text(hi.joulesPerOutput()))
	return Step{
		Title:     "Price and energy against load",
		Narration: narration,
		Scenes: []scene.Scene{
			mainScene(scene.Scene{Kind: scene.KindChart, ID: "cost", Title: "GPU cost per million tokens against the arrival rate", Chart: usd},
				markRef(ref, "cheapest: "+usdText(best.outputPerM()))),
			{Kind: scene.KindChart, ID: "energy", Title: "Energy per output token against the arrival rate", Chart: energy},
		},
		Mentions: []scene.Mention{mention(bestText, "cost", ref)},
	}, true
}
