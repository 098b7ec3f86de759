package app

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/scene"
)

func TestChartOptions(t *testing.T) {
	cur := 2.0
	for _, typ := range []scene.ChartType{scene.Line, scene.Bar, scene.Scatter} {
		c := &scene.Chart{Type: typ, XLabel: "tick", YLabel: "used", YUnit: "%", Cursor: &cur,
			Series: []scene.Series{
				{Name: "paged", X: []float64{0, 1, 2, 3}, Y: []float64{10, 50, 90, math.NaN()}},
				{Name: "contiguous", X: []float64{0, 1, 2, 3}, Y: []float64{10, 30, 40, 45}},
			}}
		js, err := ChartOptions(c, false)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		s := string(js)
		if strings.Contains(s, "go-echarts.github.io") || strings.Contains(s, "__f__") {
			t.Fatalf("%s: options reference the CDN or JS functions: %s", typ, s)
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		series, _ := m["series"].([]any)
		if len(series) != 2 {
			t.Fatalf("%s: %d series in %s", typ, len(series), s)
		}
		s0 := series[0].(map[string]any)
		if s0["type"] != string(typ) || s0["name"] != "paged" {
			t.Fatalf("%s: first series %v", typ, s0)
		}
		if data, _ := s0["data"].([]any); len(data) != 4 {
			t.Fatalf("%s: data %v", typ, s0["data"])
		}
		if m["animation"] != false {
			t.Errorf("%s: animation = %v, want false", typ, m["animation"])
		}
		aria, _ := m["aria"].(map[string]any)
		if aria["enabled"] != true {
			t.Errorf("%s: aria = %v", typ, m["aria"])
		}
		if decal, _ := aria["decal"].(map[string]any); decal["show"] != true {
			t.Errorf("%s: decal = %v", typ, aria["decal"])
		}
		if !strings.Contains(s, "saveAsImage") {
			t.Errorf("%s: no PNG export", typ)
		}
		if typ == scene.Bar {
			if CursorValue(c) != "2" {
				t.Errorf("bar cursor = %v", CursorValue(c))
			}
		} else if CursorValue(c) != 2.0 {
			t.Errorf("%s cursor = %v", typ, CursorValue(c))
		}
	}
	if _, err := ChartOptions(nil, true); err == nil {
		t.Error("nil chart: no error")
	}
	js, _ := ChartOptions(&scene.Chart{Type: scene.Line, XLog: true}, true)
	if !strings.Contains(string(js), `"log"`) || !strings.Contains(string(js), `"animation":true`) {
		t.Errorf("log axis / animation: %s", js)
	}
}

func TestChartSeriesTypeOverride(t *testing.T) {
	c := &scene.Chart{Type: scene.Line, Series: []scene.Series{
		{Name: "roof", X: []float64{1, 2}, Y: []float64{1, 2}},
		{Name: "point", Type: scene.Scatter, X: []float64{1.5}, Y: []float64{1}},
	}}
	js, err := ChartOptions(c, false)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(js, &m)
	series := m["series"].([]any)
	if series[0].(map[string]any)["type"] != "line" || series[1].(map[string]any)["type"] != "scatter" {
		t.Fatalf("types: %v / %v", series[0], series[1])
	}
}

func TestSameSeries(t *testing.T) {
	a := &scene.Chart{Series: []scene.Series{{Name: "x"}}}
	b := *a
	if !sameSeries(a, &b) {
		t.Error("a per-step copy shares its series")
	}
	// An equal copy (a step decoded from the simulation worker) is the same.
	c := &scene.Chart{Series: []scene.Series{{Name: "x"}}}
	if !sameSeries(a, c) {
		t.Error("equal series in another slice reported different")
	}
	d := &scene.Chart{Series: []scene.Series{{Name: "x", Y: []float64{1}}}}
	e := &scene.Chart{Series: []scene.Series{{Name: "x", Y: []float64{2}}}}
	for _, other := range []*scene.Chart{d, {Series: []scene.Series{{Name: "y"}}}, {Type: scene.Bar, Series: a.Series}} {
		if sameSeries(a, other) {
			t.Errorf("different series reported equal: %+v", other)
		}
	}
	if sameSeries(d, e) {
		t.Error("series with different values reported equal")
	}
}

// seriesJSON returns series i of a chart's options as a map.
func seriesJSON(t *testing.T, js []byte, i int) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	return m["series"].([]any)[i].(map[string]any)
}

// Point labels, marks, model curves, steps and guides reach ECharts.
func TestChartOptionsMarked(t *testing.T) {
	c := &scene.Chart{Type: scene.Line, XLog: true, YLog: true,
		Guides: []scene.Guide{{ID: "ridge", Axis: "x", From: 295, To: 295, Label: "ridge 295"}, {ID: "slo", Axis: "y", From: 1, To: 2, Label: "SLO band"}},
		Series: []scene.Series{
			{Name: "roof", Curve: true, X: []float64{1, 10, 100}, Y: []float64{3, 30, 300}},
			{Name: "decode", Type: scene.Scatter, X: []float64{1, 2}, Y: []float64{1, 2}, Labels: []string{"1", "2"}},
			{Name: "gaps", Step: true, X: []float64{1, 2}, Y: []float64{7, 94}},
		}}
	js, err := ChartOptionsMarked(c, []scene.Mark{{Ref: "point:decode:1", Label: "batch 2"}, {Ref: "guide:ridge"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	roof := seriesJSON(t, js, 0)
	if roof["showSymbol"] != false || roof["symbol"] != "none" || roof["id"] != "roof" {
		t.Errorf("the roof is drawn with markers or no id: %v", roof)
	}
	lines := roof["markLine"].(map[string]any)["data"].([]any)
	if len(lines) != 1 || lines[0].(map[string]any)["xAxis"] != 295.0 {
		t.Errorf("ridge line: %v", roof["markLine"])
	}
	if w := lines[0].(map[string]any)["lineStyle"].(map[string]any)["width"]; w != 3.0 {
		t.Errorf("the marked ridge is drawn %v px wide, want 3", w)
	}
	if areas := roof["markArea"].(map[string]any)["data"].([]any); len(areas) != 1 {
		t.Errorf("SLO band: %v", roof["markArea"])
	}
	data := seriesJSON(t, js, 1)["data"].([]any)
	p0, p1 := data[0].(map[string]any), data[1].(map[string]any)
	if p0["label"].(map[string]any)["formatter"] != "1" {
		t.Errorf("point 0's label: %v", p0)
	}
	if p1["label"].(map[string]any)["formatter"] != "batch 2" || p1["symbolSize"] != 18.0 {
		t.Errorf("the marked point is not enlarged and labelled with its mark: %v", p1)
	}
	if step := seriesJSON(t, js, 2)["step"]; step != "start" {
		t.Errorf("gaps drawn with step %v, want start (each gap held since the token before)", step)
	}
}

// chartDescription says the chart's note in plain words, never "ends at".
func TestChartDescription(t *testing.T) {
	c := &scene.Chart{XLabel: "budget", YLabel: "latency", YUnit: "ms", Series: []scene.Series{{Name: "x", Y: []float64{1, 7}}}}
	if d := chartDescription(c); d != "latency (ms) against budget" {
		t.Errorf("description %q", d)
	}
	c.Note = "Smaller budgets: shorter steps."
	if d := chartDescription(c); d != c.Note {
		t.Errorf("description %q, want the note", d)
	}
	if a := chartAria(c); strings.Contains(a, "ends at") || !strings.Contains(a, "from 1 to 7") {
		t.Errorf("aria %q", a)
	}
}

func TestSameSeriesNames(t *testing.T) {
	a := &scene.Chart{Series: []scene.Series{{Name: "decode", Y: []float64{1}}}}
	b := &scene.Chart{Series: []scene.Series{{Name: "decode", Y: []float64{2}}}}
	if !sameSeriesNames(a, b) {
		t.Error("the same series with other data: not merged")
	}
	for _, c := range []*scene.Chart{{Series: []scene.Series{{Name: "prefill"}}}, {YLog: true, Series: a.Series}, {Type: scene.Bar, Series: a.Series}} {
		if sameSeriesNames(a, c) {
			t.Errorf("%+v merged into %+v", c, a)
		}
	}
}
