package cudagraphs

import (
	"math"
	"testing"
)

// Every line of the batch sweep can be seen: no series lies within 2.5%
// of a later one at every batch (on the step-time axis PIECEWISE, FULL,
// the GPU alone and C++ eager did, so five legend names drew two lines).
func TestSweepLinesApart(t *testing.T) {
	v, errs := lesson.Resolve(nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runCUDAGraphs(v)
	if err != nil {
		t.Fatal(err)
	}
	c := r.sweepChart()
	for i, a := range c.Series {
		for _, b := range c.Series[i+1:] {
			apart := false
			for k := range a.Y {
				if k < len(b.Y) && math.Abs(a.Y[k]-b.Y[k]) > 0.025*math.Max(math.Abs(a.Y[k]), math.Abs(b.Y[k])) {
					apart = true
					break
				}
			}
			if !apart {
				t.Errorf("%q lies within 2.5%% of %q at every batch: one hides the other", a.Name, b.Name)
			}
		}
	}
}
