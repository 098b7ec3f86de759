package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/scene"
)

// costs are the sweep's runs' costs, by rate.
func (r measuringRun) costs() (rates []float64, costs []runCost) {
	for _, p := range r.points {
		rates, costs = append(rates, p.rate), append(costs, p.cost)
	}
	return rates, costs
}

// costStep charts what a million tokens cost at each rate of the sweep,
// and the energy per output token: idle GPUs are paid for too, so the
// cost falls as load fills them, then stops falling at saturation.
func (r measuringRun) costStep() Step {
	rates, costs := r.costs()
	usd, energy := costCharts(rates, costs)
	lo, hi, best := r.first(), r.last(), r.points[cheapest(costs)]
	c := lo.cost
	bestRef := "point:" + seriesUSDOutput + ":" + strconv.Itoa(cheapest(costs))
	bestText := fmt.Sprintf("cheapest at %s: %s per million output tokens and %s per million input tokens", rateText(best.rate), usdText(best.cost.outputPerM()), usdText(best.cost.inputPerM()))
	narration := fmt.Sprintf("The %s costs %s per GPU-hour and draws at most %s W; %s. "+
		"At %s the %d %s held %s s and busy %s of it, %.1f requests running per step on average, for %s output tokens: %s per million output tokens, %s J per output token, "+
		"as each decode step reads all the weights for the few requests it carries. "+
		"The cost is %s, and %s. At the highest rate, %s, it is %s per million output tokens and %s J per output token. "+
		"The energy counts board power for every second held: an upper bound.",
		r.gpu.Name, usdText(c.usdPerHour), sig3Text(c.watts), costWord,
		rateText(lo.rate), r.gpus, plural(r.gpus, "GPU is", "GPUs are"), sig3Text(c.gpuSeconds/float64(r.gpus)), pct(lo.busy/(c.gpuSeconds/float64(r.gpus))), lo.sum.MeanRunningAtStep, comma64(c.output), usdText(c.outputPerM()), sig3Text(c.joulesPerOutput()),
		bestText, costTrend(costs), rateText(hi.rate), usdText(hi.cost.outputPerM()), sig3Text(hi.cost.joulesPerOutput()))
	return Step{
		Title:     "Price and energy against load",
		Narration: narration,
		Scenes: []scene.Scene{
			mainScene(scene.Scene{Kind: scene.KindChart, ID: "cost", Title: "GPU cost per million tokens against offered load", Chart: usd},
				markRef(bestRef, fmt.Sprintf("cheapest: %s", usdText(best.cost.outputPerM())))),
			{Kind: scene.KindChart, ID: "energy", Title: "Energy per output token against offered load", Chart: energy},
		},
		Mentions: []scene.Mention{mention(bestText, "cost", bestRef)},
	}
}
