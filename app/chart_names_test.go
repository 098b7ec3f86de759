package app

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/scene"
)

// A bar chart whose categories are named (Chart.XNames) shows the names
// under its bars, live and prerendered, not the numbers that place them
// (engines' TTFT bars read "1" and "2" for the median and the p99).
func TestBarCategoryNames(t *testing.T) {
	c := &scene.Chart{Type: scene.Bar, XLabel: "time to first token", YLabel: "TTFT", YUnit: "ms", XNames: []string{"median", "p99"},
		Series: []scene.Series{{Name: "vLLM", X: []float64{1, 2}, Y: []float64{20, 90}}, {Name: "SGLang", X: []float64{1, 2}, Y: []float64{25, 80}}}}
	js, err := ChartOptionsMarked(c, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"data":["median","p99"]`) {
		t.Errorf("the live chart's categories are not the names:\n%s", js)
	}
	static := staticChart(c, nil)
	for _, want := range []string{">median<", ">p99<"} {
		if !strings.Contains(static, want) {
			t.Errorf("the prerendered chart lacks %s:\n%s", want, static)
		}
	}
	if strings.Contains(static, `">1</span>`) {
		t.Errorf("the prerendered chart names a category by its number:\n%s", static)
	}
}
