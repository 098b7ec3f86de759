package planner

import (
	"fmt"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// loadStep shows the day's load and the budget.
func (r *plannerRun) loadStep() lessons.Step {
	lo, hi := 0, 0
	for k, iv := range r.intervals {
		if iv.rate < r.intervals[lo].rate {
			lo = k
		}
		if iv.rate > r.intervals[hi].rate {
			hi = k
		}
	}
	n := fmt.Sprintf("%s, the load rises from %s to a peak of %s in %s and falls back. "+
		"Three deployments share one budget of %d GPUs (%d workers of %d× %s, %s, %s): Dynamo's SLA planner, a static split of %d prefill and %d decode workers, and one monolithic pool of %d workers. "+
		"Each interval is served as a sample of its first %g s of arrivals, the same requests for all three.",
		r.dayText(), kit.RateText(r.intervals[lo].rate), kit.RateText(r.intervals[hi].rate), r.intervalName(hi),
		r.cfg.Budget, r.workers, r.tp, r.e.GPU.Name, r.e.Model.Name, kit.WeightName(r.e.Weights), r.staticPrefill, r.workers-r.staticPrefill, r.workers, r.sampleS)
	a := &kit.Annotator{Scene: plLoad}
	a.Mark(pointRef(seriesLoad, hi), "peak "+kit.RateText(r.intervals[hi].rate), "a peak of", n)
	return lessons.Step{Title: "A day of load, a fixed budget", Narration: n, Mentions: a.Mentions, Scenes: []scene.Scene{kit.MainScene(r.loadChart(a.Marks))}}
}

// dayText says what "the day" is: a day's shape of load compressed into
// the intervals (12 of 180 s are 36 minutes), or the trace's window.
func (r *plannerRun) dayText() string {
	total := float64(len(r.intervals)) * r.intervalS
	span := fmt.Sprintf("%g minutes", total/60)
	if total < 120 {
		span = fmt.Sprintf("%g s", total)
	}
	what := "a day's rise and fall of load compressed into"
	if r.curve == "azure-conv" {
		what = "the arrival rate of Azure's conversation trace over its first 300 s, stretched over"
	}
	return fmt.Sprintf("The lesson's \"day\" is %s %d adjustment intervals of %g s, %s in all: over it", what, len(r.intervals), r.intervalS, span)
}

// profileStep shows what the planner knows of one worker: the profiles.
func (r *plannerRun) profileStep() lessons.Step {
	iv := r.intervals[r.peak()]
	ctx := iv.isl + iv.osl/2
	pre := r.profile.PrefillThroughputPerGPU(iv.isl)
	ttft := r.profile.PrefillTTFT(iv.isl)
	best := r.profile.bestConcurrency(r.cfg.ITL, ctx)
	dec := r.profile.BestDecodeThroughputPerGPU(r.cfg.ITL, ctx)
	n := fmt.Sprintf("The planner decides from profiles of one worker. Dynamo measures them before deployment; here the lab's step model prices them. "+
		"Prefill: a %.0f-token prompt alone takes %s, %.0f tokens/s per GPU. "+
		"Decode: at a context of %.0f tokens (ISL + OSL/2), a worker can run %d requests within the %s ITL target, %.0f output tokens/s per GPU.",
		iv.isl, kit.MsText(ttft), pre, ctx, best, kit.MsText(r.cfg.ITL), dec)
	tbl := &scene.Table{Columns: []string{"profile", "at", "figure"}, Rows: [][]string{
		{"prefill TTFT", fmt.Sprintf("ISL %.0f", iv.isl), kit.MsText(ttft)},
		{"prefill throughput per GPU", fmt.Sprintf("ISL %.0f", iv.isl), fmt.Sprintf("%.0f tok/s", pre)},
		{"decode requests within ITL", fmt.Sprintf("context %.0f, ITL ≤ %s", ctx, kit.MsText(r.cfg.ITL)), fmt.Sprintf("%d", best)},
		{"decode throughput per GPU", fmt.Sprintf("context %.0f", ctx), fmt.Sprintf("%.0f tok/s", dec)},
	}}
	a := &kit.Annotator{Scene: "profiles"}
	a.Mark("row:1", fmt.Sprintf("%.0f tok/s", pre), "tokens/s per GPU", n)
	a.Mark("row:2", fmt.Sprintf("%d requests", best), "a worker can run", n)
	return lessons.Step{Title: "What the planner knows: profiles", Narration: n, Mentions: a.Mentions,
		Scenes: []scene.Scene{kit.MainScene(scene.Scene{Kind: scene.KindTable, ID: "profiles", Title: fmt.Sprintf("Profiles of one %d-GPU worker", r.tp), Table: tbl, Marks: a.Marks})}}
}

// formulaStep is the planner's formula at the decision that asked for
// the most GPUs.
func (r *plannerRun) formulaStep() lessons.Step {
	k := r.peak()
	iv := r.intervals[k]
	d := iv.decision
	n := fmt.Sprintf("At the end of %s the planner observed %.0f requests in %g s (ISL %.0f, OSL %.0f), mean TTFT %s and ITL %s. "+
		"Its correction factors: TTFT %.2f× the profile's (queueing; the formula takes min(1, %.2f)), ITL %.2f×. The constant predictor expects the same load next. "+
		"Prefill: ⌈%.0f tok/s ÷ %.0f per worker⌉ = %d; decode: ⌈%.0f tok/s ÷ %.0f per worker⌉ = %d. ",
		r.intervalName(k), d.Predicted.Requests, r.intervalS, d.Predicted.ISL, d.Predicted.OSL, kit.MsText(iv.obs.TTFT), kit.MsText(iv.obs.ITL),
		d.PCorrection, d.PCorrection, d.DCorrection, d.PrefillLoad, d.PrefillPerGPU*float64(r.tp), d.WantPrefill, d.DecodeLoad, d.DecodePerGPU*float64(r.tp), d.WantDecode)
	if d.Clamped {
		n += fmt.Sprintf("That is %d GPUs, over the budget of %d: scaled down to %d prefill and %d decode workers.", d.WantGPUs, r.cfg.Budget, d.Prefill, d.Decode)
	} else {
		n += fmt.Sprintf("That is %d GPUs, within the budget of %d.", d.WantGPUs, r.cfg.Budget)
	}
	f := &scene.Formula{Expr: "prefill = ⌈requests × ISL / interval × min(1, p) / (throughput per GPU × GPUs per worker)⌉; decode = ⌈requests × OSL / interval / (best throughput per GPU within ITL / d × GPUs per worker)⌉",
		Terms: []scene.Term{
			{Symbol: "requests", Meaning: "predicted for the next interval", Value: fmt.Sprintf("%.0f", d.Predicted.Requests)},
			{Symbol: "ISL, OSL", Meaning: "predicted mean lengths", Value: fmt.Sprintf("%.0f, %.0f", d.Predicted.ISL, d.Predicted.OSL)},
			{Symbol: "interval", Meaning: "adjustment_interval", Value: fmt.Sprintf("%g s", r.intervalS)},
			{Symbol: "p, d", Meaning: "correction factors: observed ÷ profiled TTFT, ITL", Value: fmt.Sprintf("%.2f, %.2f", d.PCorrection, d.DCorrection)},
			{Symbol: "GPUs per worker", Meaning: "prefill_engine_num_gpu = decode_engine_num_gpu", Value: fmt.Sprintf("%d", r.tp)},
		},
		Result: fmt.Sprintf("prefill %d, decode %d → %d + %d within %d GPUs", d.WantPrefill, d.WantDecode, d.Prefill, d.Decode, r.cfg.Budget)}
	a := &kit.Annotator{Scene: plWorkers}
	a.Mark(pointRef(seriesAsk, k), fmt.Sprintf("asked %d workers", d.WantGPUs/r.tp), "That is", n)
	return lessons.Step{Title: "One adjustment: the formula", Narration: n, Mentions: a.Mentions,
		Quiz: lessons.NumberQuiz(fmt.Sprintf("At the end of %s, how many prefill workers does the formula ask for, before the budget?", r.intervalName(k)), float64(d.WantPrefill), 0,
			"Prompt tokens per second to serve, over one prefill worker's profiled throughput, rounded up."),
		Scenes: []scene.Scene{{Kind: scene.KindFormula, ID: "formula", Title: "Dynamo's SLA planner, one adjustment", Formula: f, Main: true}, r.workersChart(a.Marks)}}
}

// replicasStep shows the planner's workers over the day.
func (r *plannerRun) replicasStep() lessons.Step {
	lag := r.lagInterval()
	n := fmt.Sprintf("The planner's workers follow the load: %.1f GPUs on average over the day, of a budget of %d; its formula asked for up to %d GPUs, and the budget cut %d of its %d decisions. "+
		"It lags the load: the constant predictor plans for the interval just seen, and a new worker serves only %g s after it is asked for.",
		r.day.meanGPUs, r.cfg.Budget, r.day.peakWant, r.day.clampedIntervals, len(r.intervals), r.startup)
	a := &kit.Annotator{Scene: plWorkers}
	a.Mark("guide:budget", fmt.Sprintf("budget %d GPUs", r.cfg.Budget), "a budget of", n)
	if lag >= 0 {
		a.Mark(pointRef(seriesPre, r.pointIndex(lag)), "new worker serving", "a new worker serves only", n)
	}
	return lessons.Step{Title: "Replicas over time", Narration: n, Mentions: a.Mentions, Scenes: []scene.Scene{kit.MainScene(r.workersChart(a.Marks)), r.loadChart(nil)}}
}

// lagInterval is the first interval with a start-up segment (its workers
// changed inside it), or −1.
func (r *plannerRun) lagInterval() int {
	for k, iv := range r.intervals {
		if len(iv.segments) > 1 {
			return k
		}
	}
	return -1
}

// pointIndex is the index in the workers chart's prefill series of the
// second segment of interval k (its change).
func (r *plannerRun) pointIndex(k int) int {
	i := 0
	for j := 0; j < k; j++ {
		i += len(r.intervals[j].segments)
	}
	return i + 1
}
