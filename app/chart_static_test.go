package app

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/scene"
)

func TestStaticChartAxes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vs       []float64
		log      bool
		ticks    []float64
		min, max float64
	}{
		{"spans zero, ends on a tick", []float64{3, 12.8}, false, []float64{0, 3, 6, 9, 12, 15}, 0, 15},
		{"negative values", []float64{-7, 4}, false, []float64{-8, -6, -4, -2, 0, 2, 4}, -8, 4},
		{"a step of five", []float64{0, 30}, false, []float64{0, 5, 10, 15, 20, 25, 30}, 0, 30},
		{"large values", []float64{120, 9_300}, false, []float64{0, 2_000, 4_000, 6_000, 8_000, 10_000}, 0, 10_000},
		{"log: whole powers of ten", []float64{0.5, 989}, true, []float64{0.1, 1, 10, 100, 1_000}, -1, 3},
		{"log skips zero and below", []float64{0, -1, 20, 30}, true, []float64{10, 100}, 1, 2},
		{"no data", nil, false, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAxis(tc.vs, tc.log)
			got := slices.Clone(a.ticks)
			for i := range got {
				got[i] = roundTo(got[i], 1e-9)
			}
			if !slices.Equal(got, tc.ticks) || a.min != tc.min || a.max != tc.max {
				t.Errorf("newAxis(%v, log=%v): ticks %v over [%v, %v], want %v over [%v, %v]", tc.vs, tc.log, got, a.min, a.max, tc.ticks, tc.min, tc.max)
			}
		})
	}
}

// The prerendered chart carries what the ECharts one shows: each series in
// the legend, the marked point's callout, the step's "now" line at its x,
// and guides inside the data's range only.
func TestStaticChartContent(t *testing.T) {
	cursor := 20.0
	c := &scene.Chart{
		Type: scene.Line, XLabel: "time", XUnit: "min", YLabel: "load", YUnit: "req/s",
		Series: []scene.Series{
			{Name: "load", X: []float64{0, 10, 20, 30, 40}, Y: []float64{1, 4, 9, 4, 1}},
			{Name: "bound", X: []float64{0, 40}, Y: []float64{10, 10}, Curve: true},
		},
		Cursor: &cursor,
		Guides: []scene.Guide{
			{ID: "slo", Axis: "y", From: 8, To: 8, Label: "SLO 8"},
			{ID: "far", Axis: "x", From: 500, To: 500, Label: "off the chart"},
			{ID: "peak", Axis: "x", From: 15, To: 25, Label: "peak <hours>"},
		},
	}
	got := staticChart(c, []scene.Mark{{Ref: "point:load:2", Label: "peak 9 req/s"}, {Ref: "guide:slo"}})
	for _, want := range []string{
		`<span class="cs-key" data-series="0"><i style="background:#00e5ff"></i>load</span>`,
		`<span class="cs-key" data-series="1"><i style="background:#818cf8"></i>bound</span>`,
		`<polyline data-series="1" fill="none" stroke="#818cf8"`,
		`>load (req/s)<`, `>time (min)<`,
		`class="cs-callout cs-below" style="left:50.000%;bottom:90.000%">peak 9 req/s<`, // in the top eighth: under the point
		`<line class="cs-now" y1="0" y2="1000" x1="500" x2="500"`,
		`class="cs-glabel cs-marked cs-at-y" style="bottom:80.000%">SLO 8<`,
		`peak &lt;hours&gt;`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the static chart lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "off the chart") {
		t.Errorf("a guide outside the axes' range is drawn:\n%s", got)
	}
	// The curve has no dots; the five data points do, one of them marked.
	if n := len(regexp.MustCompile(`<i class="cs-dot`).FindAllString(got, -1)); n != 5 {
		t.Errorf("%d dots, want 5 (the data points, not the curve's)", n)
	}
}
