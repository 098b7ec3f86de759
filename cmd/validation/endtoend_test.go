package main

import (
	"math"
	"testing"
)

// Every row's command runs; a row within ±15% stays within, a named miss
// stays outside on its side; at least 18 of at least 25 rows are within.
func TestEndToEnd(t *testing.T) {
	rs, err := runEndToEnd()
	if err != nil {
		t.Fatal(err)
	}
	within := 0
	for _, r := range rs {
		if math.IsNaN(r.Lab) || math.IsInf(r.Lab, 0) || r.Lab == 0 {
			t.Errorf("%s: no figure (%g)", r.command(), r.Lab)
			continue
		}
		switch {
		case r.Miss == "" && !r.Within:
			t.Errorf("%s: %s = %g, published %g: error %+.1f%% beyond ±%.0f%%", r.command(), r.What, r.Lab, r.Published, 100*r.Error, 100*Tolerance)
		case r.Miss != "" && r.Within:
			t.Errorf("%s: now within ±%.0f%% (%g against %g): drop the named miss", r.command(), 100*Tolerance, r.Lab, r.Published)
		case r.Miss != "" && (r.Lab < r.Published) != r.Below:
			t.Errorf("%s: the miss changed direction (%g against %g; stated below: %v)", r.command(), r.Lab, r.Published, r.Below)
		}
		if r.Within {
			within++
		}
	}
	if len(rs) < 25 || within < 18 {
		t.Errorf("%d rows, %d within: want at least 25 and 18", len(rs), within)
	}
}
