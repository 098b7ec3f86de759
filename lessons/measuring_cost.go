package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/scene"
)

// costs are the sweep's runs' costs, by rate.
func (r measuringRun) costs() (rates []float64, costs []RunCost) {
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
	usd, energy := CostCharts(rates, costs)
	lo, hi, best := r.first(), r.last(), r.points[Cheapest(costs)]
	c := lo.cost
	bestRef := "point:" + SeriesUSDOutput + ":" + strconv.Itoa(Cheapest(costs))
	bestText := fmt.Sprintf("cheapest at %s: %s per million output tokens and %s per million input tokens", RateText(best.rate), USDText(best.cost.OutputPerM()), USDText(best.cost.InputPerM()))
	narration := fmt.Sprintf("The %s costs %s per GPU-hour and draws at most %s W; %s. "+
		"At %s the %d %s held %s s and busy %s of it, %.1f requests running per step on average, for %s output tokens: %s per million output tokens, %s J per output token, "+
		"as each decode step reads all the weights for the few requests it carries. "+
		"The cost is %s, and %s. At the highest rate, %s, it is %s per million output tokens and %s J per output token. "+
		"The energy counts board power for every second held: an upper bound.",
		r.gpu.Name, USDText(c.USDPerHour), Sig3Text(c.Watts), CostWord,
		RateText(lo.rate), r.gpus, Plural(r.gpus, "GPU is", "GPUs are"), Sig3Text(c.GPUSeconds/float64(r.gpus)), Pct(lo.busy/(c.GPUSeconds/float64(r.gpus))), lo.sum.MeanRunningAtStep, Comma64(c.Output), USDText(c.OutputPerM()), Sig3Text(c.JoulesPerOutput()),
		bestText, CostTrend(costs), RateText(hi.rate), USDText(hi.cost.OutputPerM()), Sig3Text(hi.cost.JoulesPerOutput()))
	return Step{
		Title:     "Price and energy against load",
		Narration: narration,
		Scenes: []scene.Scene{
			MainScene(scene.Scene{Kind: scene.KindChart, ID: "cost", Title: "GPU cost per million tokens against offered load", Chart: usd},
				MarkRef(bestRef, fmt.Sprintf("cheapest: %s", USDText(best.cost.OutputPerM())))),
			{Kind: scene.KindChart, ID: "energy", Title: "Energy per output token against offered load", Chart: energy},
		},
		Mentions: []scene.Mention{Mention(bestText, "cost", bestRef)},
	}
}
