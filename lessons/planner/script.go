package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// Scene ids and series names of the planner's pictures.
const (
	plLoad     = "load"
	plWorkers  = "workers"
	plAttain   = "attainment"
	seriesLoad = "load"
	seriesPre  = "prefill"
	seriesDec  = "decode"
	seriesAsk  = "asked"
	seriesPlan = "planner"
	seriesStat = "static"
	seriesMono = "monolithic"
)

func (r *plannerRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
	s.Steps = []lessons.Step{r.loadStep(), r.profileStep(), r.formulaStep(), r.replicasStep()}
	s.Steps = append(s.Steps, r.regimeSteps()...)
	s.Steps = append(s.Steps, r.startupStep(), r.dayStep())
	return s
}

// minute is interval k's start, in minutes.
func (r *plannerRun) minute(k int) float64 { return kit.Round2(float64(k) * r.intervalS / 60) }

// intervalName names interval k for the narration: "interval 6 (minute
// 15)".
func (r *plannerRun) intervalName(k int) string {
	return fmt.Sprintf("interval %d (minute %s)", k+1, strconv.FormatFloat(r.minute(k), 'f', -1, 64))
}

// peak is the interval whose decision asked for the most GPUs (the first
// such), the one the formula step follows.
func (r *plannerRun) peak() int {
	best := 0
	for k, iv := range r.intervals {
		if iv.decision.WantGPUs > r.intervals[best].decision.WantGPUs {
			best = k
		}
	}
	return best
}

// regimeGuides are the regimes as bands along the time axis, one per run
// of intervals with the same regime.
func (r *plannerRun) regimeGuides() []scene.Guide {
	var out []scene.Guide
	for k := 0; k < len(r.intervals); {
		j := k
		for j+1 < len(r.intervals) && r.regimes.of[j+1] == r.regimes.of[k] {
			j++
		}
		out = append(out, scene.Guide{ID: fmt.Sprintf("%s-%d", r.regimes.of[k], k+1), Axis: "x", From: r.minute(k), To: r.minute(j + 1), Label: r.regimes.of[k]})
		k = j + 1
	}
	return out
}

// guideOf is the reference of the regime band holding interval k.
func (r *plannerRun) guideOf(k int) string {
	start := k
	for start > 0 && r.regimes.of[start-1] == r.regimes.of[k] {
		start--
	}
	return fmt.Sprintf("guide:%s-%d", r.regimes.of[k], start+1)
}

// loadChart is the offered load of each interval, with the regimes.
func (r *plannerRun) loadChart(marks []scene.Mark) scene.Scene {
	s := scene.Series{Name: seriesLoad, Step: true}
	for k, iv := range r.intervals {
		s.X, s.Y = append(s.X, r.minute(k)), append(s.Y, kit.Round2(iv.rate))
	}
	c := &scene.Chart{Type: scene.Line, XLabel: "time", XUnit: "min", YLabel: "offered load", YUnit: "req/s", Series: []scene.Series{s}, Guides: r.regimeGuides()}
	return scene.Scene{Kind: scene.KindChart, ID: plLoad, Title: fmt.Sprintf("The day's load: %d intervals of %g s (%s curve)", len(r.intervals), r.intervalS, r.curve), Chart: c, Marks: marks}
}

// workersChart is the planner's serving workers over time (each change
// where it happened), the workers the formula asked for, and the budget.
func (r *plannerRun) workersChart(marks []scene.Mark) scene.Scene {
	pre, dec := scene.Series{Name: seriesPre, Step: true}, scene.Series{Name: seriesDec, Step: true}
	ask := scene.Series{Name: seriesAsk, Step: true}
	for k, iv := range r.intervals {
		for _, seg := range iv.segments {
			x := kit.Round2((float64(k)*r.intervalS + seg.from) / 60)
			pre.X, pre.Y = append(pre.X, x), append(pre.Y, float64(seg.prefill))
			dec.X, dec.Y = append(dec.X, x), append(dec.Y, float64(seg.decode))
		}
		// The decision at the end of interval k answers its load.
		ask.X, ask.Y = append(ask.X, r.minute(k)), append(ask.Y, float64(iv.decision.WantGPUs/r.tp))
	}
	c := &scene.Chart{Type: scene.Line, XLabel: "time", XUnit: "min", YLabel: "workers", Series: []scene.Series{pre, dec, ask},
		Guides: []scene.Guide{{ID: "budget", Axis: "y", From: float64(r.workers), To: float64(r.workers), Label: fmt.Sprintf("budget: %d GPUs = %d workers", r.cfg.Budget, r.workers)}}}
	return scene.Scene{Kind: scene.KindChart, ID: plWorkers, Title: fmt.Sprintf("The planner's workers (TP %d each) and what its formula asked for", r.tp), Chart: c, Marks: marks}
}

// attainmentChart is each deployment's share of requests meeting the SLO
// in each interval, with the regimes.
func (r *plannerRun) attainmentChart(marks []scene.Mark) scene.Scene {
	c := &scene.Chart{Type: scene.Line, XLabel: "time", XUnit: "min", YLabel: "requests meeting the SLO", YUnit: "%", Guides: r.regimeGuides()}
	for _, d := range []struct {
		name string
		of   func(plannerInterval) outcome
	}{{seriesPlan, func(iv plannerInterval) outcome { return iv.planned }}, {seriesStat, func(iv plannerInterval) outcome { return iv.static }}, {seriesMono, func(iv plannerInterval) outcome { return iv.mono }}} {
		s := scene.Series{Name: d.name}
		for k, iv := range r.intervals {
			s.X, s.Y = append(s.X, r.minute(k)), append(s.Y, kit.Round1(100*d.of(iv).attainment))
		}
		c.Series = append(c.Series, s)
	}
	return scene.Scene{Kind: scene.KindChart, ID: plAttain, Title: "Requests meeting " + kit.SLOText(r.objective) + ", per interval", Chart: c, Marks: marks}
}

// pointRef is the reference of interval k's point on series name.
func pointRef(name string, k int) string { return "point:" + name + ":" + strconv.Itoa(k) }

// pctText is a share as "87%".
func pctText(x float64) string { return strconv.FormatFloat(100*x, 'f', 0, 64) + "%" }

// intervalsText lists intervals as "3, 4 and 5" (1-based).
func intervalsText(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = strconv.Itoa(k + 1)
	}
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
