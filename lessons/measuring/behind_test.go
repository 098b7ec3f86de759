package measuring

import (
	"fmt"
	"strings"
	"testing"
)

// A rate at which the server serves under half of what is offered, while
// most requests still meet the SLO, is one where requests pile into the
// running batch (admitted at once, so TTFT stays short): its step must say
// so with the rate served, which the throughput chart shows later, and
// not that the server keeps up or that requests barely queue (at 64
// req/s the old text said "requests barely queue" beside 28.3 req/s
// served).
func TestMeasuringFallingBehindSaysServedRate(t *testing.T) {
	v, errs := lesson.Resolve(nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Script()
	checked := 0
	for i, p := range r.points {
		if p.sum.RequestsPerS >= p.rate/2 || p.sum.SLOAttainment < 0.5 {
			continue
		}
		checked++
		text := s.Steps[1+i].Narration
		if served := fmt.Sprintf("%.1f req/s", p.sum.RequestsPerS); !strings.Contains(text, served) {
			t.Errorf("at %.3g req/s offered the run serves %s, which the narration does not give: %s", p.rate, served, text)
		}
		for _, wrong := range []string{"keeps up", "barely queue"} {
			if strings.Contains(text, wrong) {
				t.Errorf("at %.3g req/s offered, %.1f served, the narration says %q: %s", p.rate, p.sum.RequestsPerS, wrong, text)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no rate of the default sweep serves under half its offered load with the SLO mostly met: the test checks nothing")
	}
}
