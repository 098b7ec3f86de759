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
