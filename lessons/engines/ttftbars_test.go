package engines

import (
	"testing"

	"github.com/inferlab/inferlab/scene"
)

// Every bar chart of the lesson names its categories (the TTFT bars are a
// median and a p99, which the axis read as "1" and "2").
func TestBarChartsNameTheirCategories(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	bars := 0
	for _, st := range s.Steps {
		for _, sc := range st.Scenes {
			if sc.Chart == nil || sc.Chart.Type != scene.Bar || len(sc.Chart.Series) == 0 {
				continue
			}
			bars++
			for i, x := range sc.Chart.Series[0].X {
				if name := sc.Chart.CategoryName(i, x); name == "1" || name == "2" {
					t.Errorf("step %q, chart %q: category %d is named %q", st.Title, sc.Title, i, name)
				}
			}
		}
	}
	if bars == 0 {
		t.Fatal("no bar chart: the test checks nothing")
	}
}
