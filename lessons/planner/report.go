package planner

import (
	"fmt"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// regimeTotals are the three deployments' outcomes over intervals ks.
func (r *plannerRun) regimeTotals(ks []int) (planned, static, mono outcome) {
	for _, k := range ks {
		iv := r.intervals[k]
		for _, p := range []struct {
			sum *outcome
			o   outcome
		}{{&planned, iv.planned}, {&static, iv.static}, {&mono, iv.mono}} {
			p.sum.requests += p.o.requests
			p.sum.met += p.o.met
		}
	}
	for _, o := range []*outcome{&planned, &static, &mono} {
		if o.requests > 0 {
			o.attainment = float64(o.met) / float64(o.requests)
		}
	}
	return planned, static, mono
}

// maxRate is the highest rate among intervals ks.
func (r *plannerRun) maxRate(ks []int) float64 {
	m := 0.0
	for _, k := range ks {
		m = max(m, r.intervals[k].rate)
	}
	return m
}

// regimeSteps are the report's three regimes, as this day met them.
func (r *plannerRun) regimeSteps() []lessons.Step {
	return []lessons.Step{r.lowStep(), r.mediumStep(), r.highStep()}
}

// missingRegime is a regime step when no interval fell in it.
func (r *plannerRun) missingRegime(title, regime, quote, hint string) lessons.Step {
	n := fmt.Sprintf("No interval of this day was %s load by the lesson's test (%s). The report: \"%s\"", regime, hint, quote)
	a := &kit.Annotator{Scene: plAttain}
	a.Mark(pointRef(seriesMono, 0), "", "", n)
	return lessons.Step{Title: title, Narration: n, Scenes: []scene.Scene{kit.MainScene(r.attainmentChart(a.Marks))}}
}

func (r *plannerRun) lowStep() lessons.Step {
	ks := r.regimes.low
	if len(ks) == 0 {
		return r.missingRegime("Low load: one monolithic pool", "low", reportLow, "the monolithic pool met the SLO at least as often as both disaggregated deployments; lower low_rate")
	}
	k := ks[0]
	for _, j := range ks {
		if r.intervals[j].rate > r.intervals[k].rate {
			k = j
		}
	}
	p, s, m := r.regimeTotals(ks)
	iv := r.intervals[k]
	n := fmt.Sprintf("Low load: in intervals %s (up to %s) the monolithic pool met the SLO for %s of requests, as many or more than the static split (%s) and the planner (%s). "+
		"At %s in %s its mean TTFT was %s against %s static: no KV crosses a link, every worker prefills, and with few prompts its decode stalls stay rare. The report: \"%s\"",
		intervalsText(ks), kit.RateText(r.maxRate(ks)), pctText(m.attainment), pctText(s.attainment), pctText(p.attainment),
		kit.RateText(iv.rate), r.intervalName(k), kit.MsText(iv.mono.meanTTFT), kit.MsText(iv.static.meanTTFT), reportLow)
	a := &kit.Annotator{Scene: plAttain}
	a.Mark(pointRef(seriesMono, k), "monolithic "+pctText(iv.mono.attainment), "the monolithic pool met the SLO", n)
	a.Mark(r.guideOf(k), "", "Low load", n)
	return lessons.Step{Title: "Low load: one monolithic pool is as good", Narration: n, Mentions: a.Mentions, Scenes: []scene.Scene{kit.MainScene(r.attainmentChart(a.Marks))}}
}

func (r *plannerRun) mediumStep() lessons.Step {
	ks := r.regimes.medium
	if len(ks) == 0 {
		return r.missingRegime("Medium load: disaggregation", "medium", reportMedium, "a disaggregated deployment met the SLO more often than the monolithic pool within the budget; tighten slo_itl_ms or raise peak_rate")
	}
	k := ks[0]
	gain := func(j int) float64 {
		iv := r.intervals[j]
		return max(iv.planned.attainment, iv.static.attainment) - iv.mono.attainment
	}
	for _, j := range ks {
		if gain(j) > gain(k) {
			k = j
		}
	}
	p, s, m := r.regimeTotals(ks)
	iv := r.intervals[k]
	best, bestName := iv.planned, seriesPlan
	if iv.static.attainment > iv.planned.attainment {
		best, bestName = iv.static, seriesStat
	}
	n := fmt.Sprintf("Medium load: in intervals %s disaggregation won: the planner met the SLO for %s of requests and the static split %s, the monolithic pool %s. "+
		"In %s (%s) the monolithic workers' prompts stalled their decodes: mean ITL %s, p99 TPOT %s against the %s target, while the %s deployment's decode workers kept ITL at %s. The report: \"%s\"",
		intervalsText(ks), pctText(p.attainment), pctText(s.attainment), pctText(m.attainment),
		r.intervalName(k), kit.RateText(iv.rate), kit.MsText(iv.mono.meanITL), kit.MsText(iv.mono.p99TPOT), kit.MsText(r.cfg.ITL), bestName, kit.MsText(best.meanITL), reportMedium)
	a := &kit.Annotator{Scene: plAttain}
	a.Mark(pointRef(bestName, k), bestName+" "+pctText(best.attainment), "disaggregation won", n)
	a.Mark(pointRef(seriesMono, k), "monolithic "+pctText(iv.mono.attainment), "the monolithic workers' prompts stalled", n)
	a.Mark(r.guideOf(k), "", "Medium load", n)
	return lessons.Step{Title: "Medium load: disaggregation wins", Narration: n, Mentions: a.Mentions, Scenes: []scene.Scene{kit.MainScene(r.attainmentChart(a.Marks))}}
}

func (r *plannerRun) highStep() lessons.Step {
	ks := r.regimes.high
	if len(ks) == 0 {
		return r.missingRegime("High load: the budget binds", "high", reportHigh, "the planner's formula asked for more GPUs than the budget; raise peak_rate or lower budget_gpus")
	}
	k := ks[0]
	d := r.intervals[k].decision
	p, s, m := r.regimeTotals(ks)
	n := fmt.Sprintf("High load: in intervals %s (up to %s) the formula asked for more than the budget: %d GPUs at the end of %s, cut to %d prefill and %d decode workers (%d GPUs). "+
		"Scaling the pools to the demand is what matters now: the planner, which moved GPUs to prefill, met the SLO for %s of requests, the static split %s, the monolithic pool %s; beyond the budget only more GPUs help. The report: \"%s\"",
		intervalsText(ks), kit.RateText(r.maxRate(ks)), d.WantGPUs, r.intervalName(k), d.Prefill, d.Decode, (d.Prefill+d.Decode)*r.tp,
		pctText(p.attainment), pctText(s.attainment), pctText(m.attainment), reportHigh)
	a := &kit.Annotator{Scene: plWorkers}
	a.Mark(pointRef(seriesAsk, k), fmt.Sprintf("asked %d GPUs", d.WantGPUs), "the formula asked for more than the budget", n)
	a.Mark("guide:budget", fmt.Sprintf("budget %d GPUs", r.cfg.Budget), "", n)
	return lessons.Step{Title: "High load: the budget binds", Narration: n, Mentions: a.Mentions, Scenes: []scene.Scene{kit.MainScene(r.workersChart(a.Marks)), r.attainmentChart(nil)}}
}

// startupStep shows what the start-up time cost in the first interval
// whose pools changed inside it.
func (r *plannerRun) startupStep() lessons.Step {
	k := r.lagInterval()
	if k < 0 {
		n := fmt.Sprintf("With a start-up time of %g s, every worker the planner asked for served from the start of its interval.", r.startup)
		a := &kit.Annotator{Scene: plWorkers}
		a.Mark("guide:budget", "", "", n)
		return lessons.Step{Title: "Start-up time", Narration: n, Scenes: []scene.Scene{kit.MainScene(r.workersChart(a.Marks))}}
	}
	iv := r.intervals[k]
	first, second := iv.segments[0], iv.segments[1]
	n := fmt.Sprintf("Start-up time: at the start of %s the planner asked for %d prefill and %d decode workers, but a new worker serves only %g s after it is asked for. "+
		"For its first %g s the interval ran on %d + %d workers and met the SLO for %s of its requests; once the new worker served, %s.",
		r.intervalName(k), second.prefill, second.decode, r.startup, second.from, first.prefill, first.decode, pctText(first.attainment), pctText(second.attainment))
	tbl := &scene.Table{Columns: []string{"seconds of the interval", "prefill", "decode", "requests (sampled)", "meeting the SLO"}}
	for _, s := range iv.segments {
		to := "end"
		if s.to < r.intervalS {
			to = fmt.Sprintf("%g", s.to)
		}
		tbl.Rows = append(tbl.Rows, []string{fmt.Sprintf("%g – %s", s.from, to), fmt.Sprint(s.prefill), fmt.Sprint(s.decode), fmt.Sprint(s.requests), pctText(s.attainment)})
	}
	a := &kit.Annotator{Scene: "startup"}
	a.Mark("row:0", "starting", "For its first", n)
	a.Mark("row:1", "new worker serving", "once the new worker served", n)
	return lessons.Step{Title: "Start-up time: new workers serve late", Narration: n, Mentions: a.Mentions,
		Scenes: []scene.Scene{kit.MainScene(scene.Scene{Kind: scene.KindTable, ID: "startup", Title: r.intervalName(k) + ", as the planner's pools changed", Table: tbl, Marks: a.Marks}), r.workersChart(nil)}}
}

// dayStep sums the day up.
func (r *plannerRun) dayStep() lessons.Step {
	d := r.day
	n := fmt.Sprintf("Over the day the planner met the SLO for %s of %d sampled requests on %.1f GPUs on average; the static split %s and the monolithic pool %s, each on all %d GPUs. "+
		"Simplified: each interval is a %g s sample served from an idle cluster, and the profiles come from the lab's step model, not Dynamo's pre-deployment profiler.",
		pctText(d.planned.attainment), d.planned.requests, d.meanGPUs, pctText(d.static.attainment), pctText(d.mono.attainment), r.cfg.Budget, r.sampleS)
	tbl := &scene.Table{Columns: []string{"deployment", "GPUs", "requests meeting the SLO"}, Rows: [][]string{
		{"SLA planner", fmt.Sprintf("%.1f mean of %d", d.meanGPUs, r.cfg.Budget), pctText(d.planned.attainment)},
		{fmt.Sprintf("static: %d prefill + %d decode", r.staticPrefill, r.workers-r.staticPrefill), fmt.Sprint(r.cfg.Budget), pctText(d.static.attainment)},
		{fmt.Sprintf("monolithic: %d workers", r.workers), fmt.Sprint(r.cfg.Budget), pctText(d.mono.attainment)},
	}}
	a := &kit.Annotator{Scene: "day"}
	a.Mark("row:0", "planner", "the planner met the SLO", n)
	a.Mark("row:1", "static", "the static split", n)
	a.Mark("row:2", "monolithic", "the monolithic pool", n)
	return lessons.Step{Title: "Over the day", Narration: n, Mentions: a.Mentions,
		Scenes: []scene.Scene{kit.MainScene(scene.Scene{Kind: scene.KindTable, ID: "day", Title: "The day, all intervals", Table: tbl, Marks: a.Marks}), kit.ClaimsTable(r.claims())}}
}

func (r *plannerRun) metrics() []lessons.Metric {
	d := r.day
	return []lessons.Metric{
		{Key: "attainment_pct_planner", Label: "SLA planner: requests meeting the SLO", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * d.planned.attainment)},
		{Key: "attainment_pct_static", Label: "Static split: requests meeting the SLO", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * d.static.attainment)},
		{Key: "attainment_pct_monolithic", Label: "Monolithic pool: requests meeting the SLO", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round2(100 * d.mono.attainment)},
		{Key: "mean_gpus_planner", Label: "SLA planner: mean GPUs serving", Unit: "GPUs", Value: kit.Round2(d.meanGPUs)},
		{Key: "peak_asked_gpus", Label: "Most GPUs the planner's formula asked for", Unit: "GPUs", Value: float64(d.peakWant)},
		{Key: "budget_cut_decisions", Label: "Decisions the budget cut", Unit: "intervals", Value: float64(d.clampedIntervals)},
		{Key: "low_intervals", Label: "Intervals at low load (monolithic as good or better)", Unit: "intervals", Value: float64(len(r.regimes.low))},
		{Key: "medium_intervals", Label: "Intervals at medium load (disaggregation wins)", Unit: "intervals", Value: float64(len(r.regimes.medium))},
		{Key: "high_intervals", Label: "Intervals at high load (the budget binds)", Unit: "intervals", Value: float64(len(r.regimes.high))},
		{Key: "requests", Label: "Requests sampled over the day", Unit: "requests", Value: float64(d.planned.requests)},
	}
}

func (r *plannerRun) claims() []lessons.Claim {
	lp, ls, lm := r.regimeTotals(r.regimes.low)
	mp, ms, mm := r.regimeTotals(r.regimes.medium)
	hp, hs, hm := r.regimeTotals(r.regimes.high)
	return []lessons.Claim{{
		What:    "The engine count by load (report: \"Dynamic GPU scheduling\")",
		Article: reportLow + " " + reportMedium + " " + reportHigh,
		Model: fmt.Sprintf("low, %d intervals up to %s: monolithic %s vs static %s, planner %s; medium, %d intervals: planner %s, static %s vs monolithic %s; high, %d intervals, the formula asking up to %d of %d GPUs: planner %s, static %s, monolithic %s",
			len(r.regimes.low), kit.RateText(r.maxRate(r.regimes.low)), pctText(lm.attainment), pctText(ls.attainment), pctText(lp.attainment),
			len(r.regimes.medium), pctText(mp.attainment), pctText(ms.attainment), pctText(mm.attainment),
			len(r.regimes.high), r.day.peakWant, r.cfg.Budget, pctText(hp.attainment), pctText(hs.attainment), pctText(hm.attainment)),
		Why: "The report states the regimes without figures; the lab classifies each interval from its own runs (high: the formula asked for more than the budget; medium: a disaggregated deployment met the SLO more often; low: otherwise). Where the boundaries fall depends on the prompts, the SLO and the budget.",
	}, {
		What:    "SLA-driven scaling (Dynamo's planner docs, docs/architecture/sla_planner.md)",
		Article: "the planner scales prefill and decode workers proactively to meet TTFT and ITL targets, from predicted load and profiled performance",
		Model:   fmt.Sprintf("planner %s of requests on %.1f GPUs on average vs static split %s and monolithic %s on %d", pctText(r.day.planned.attainment), r.day.meanGPUs, pctText(r.day.static.attainment), pctText(r.day.mono.attainment), r.cfg.Budget),
		Why:     "With the constant predictor the planner plans for the interval just seen, so it lags a rising load by an interval plus the start-up time; and its prefill formula sizes for throughput (min(1, p) never adds workers for queueing), so a worker near full load misses TTFT. ARIMA and Prophet predictors are not modelled.",
	}}
}
