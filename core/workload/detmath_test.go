package workload

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDraws(t *testing.T) {
	const n = 200000
	r := rand.New(rand.NewPCG(3, 4))
	var se, sn, sn2 float64
	for range n {
		e := expDraw(r)
		if !(e >= 0) {
			t.Fatalf("expDraw = %v, want ≥ 0", e)
		}
		se += e
		z := normDraw(r)
		sn += z
		sn2 += z * z
	}
	if m := se / n; math.Abs(m-1) > 0.01 {
		t.Errorf("exponential mean = %.4f, want 1 ± 0.01", m)
	}
	if m := sn / n; math.Abs(m) > 0.01 {
		t.Errorf("normal mean = %.4f, want 0 ± 0.01", m)
	}
	if v := sn2 / n; math.Abs(v-1) > 0.015 {
		t.Errorf("normal variance = %.4f, want 1 ± 0.015", v)
	}
}
