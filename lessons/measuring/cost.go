package measuring

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// costs are the sweep's runs' costs, by rate.
func (r measuringRun) costs() (rates []float64, costs []kit.RunCost) {
	for _, p := range r.points {
		rates, costs = append(rates, p.rate), append(costs, p.cost)
	}
	return rates, costs
}

// costStep charts what a million tokens cost at each rate of the sweep,
// and the energy per output token: idle GPUs are paid for too, so the
// cost falls as load fills them, then stops falling at saturation.
func (r measuringRun) costStep() lessons.Step {
	rates, costs := r.costs()
	usd, energy := kit.CostCharts(rates, costs)
	lo, hi, best := r.first(), r.last(), r.points[kit.Cheapest(costs)]
	c := lo.cost
	bestRef := "point:" + kit.SeriesUSDOutput + ":" + strconv.Itoa(kit.Cheapest(costs))
	bestText := fmt.Sprintf("cheapest at %s: %s per million output tokens and %s per million input tokens", kit.RateText(best.rate), kit.USDText(best.cost.OutputPerM()), kit.USDText(best.cost.InputPerM()))
	narration := fmt.Sprintf("The %s costs %s per GPU-hour and draws at most %s W; %s. "+
		"At %s the %d %s held %s s and busy %s of it, %.1f requests running per step on average, for %s output tokens: %s per million output tokens, %s J per output token, "+
		"as each decode step reads all the weights for the few requests it carries. "+
		"The cost is %s, and %s. At the highest rate, %s, it is %s per million output tokens and %s J per output token. "+
		"The energy counts board power for every second held: an upper bound.",
		r.gpu.Name, kit.USDText(c.USDPerHour), kit.Sig3Text(c.Watts), kit.CostWord,
		kit.RateText(lo.rate), r.gpus, kit.Plural(r.gpus, "GPU is", "GPUs are"), kit.Sig3Text(c.GPUSeconds/float64(r.gpus)), kit.Pct(lo.busy/(c.GPUSeconds/float64(r.gpus))), lo.sum.MeanRunningAtStep, kit.Comma64(c.Output), kit.USDText(c.OutputPerM()), kit.Sig3Text(c.JoulesPerOutput()),
		bestText, kit.CostTrend(costs), kit.RateText(hi.rate), kit.USDText(hi.cost.OutputPerM()), kit.Sig3Text(hi.cost.JoulesPerOutput()))
	return lessons.Step{
		Title:     "Price and energy against load",
		Narration: narration,
		Scenes: []scene.Scene{
			kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "cost", Title: "GPU cost per million tokens against offered load", Chart: usd},
				kit.MarkRef(bestRef, fmt.Sprintf("cheapest: %s", kit.USDText(best.cost.OutputPerM())))),
			{Kind: scene.KindChart, ID: "energy", Title: "Energy per output token against offered load", Chart: energy},
		},
		Mentions: []scene.Mention{kit.Mention(bestText, "cost", bestRef)},
	}
}
