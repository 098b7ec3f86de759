package detmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulps returns how many float64 steps apart a and b are.
func ulps(a, b float64) uint64 {
	ia, ib := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if ia > ib {
		return uint64(ia - ib)
	}
	return uint64(ib - ia)
}

func TestDetLogExpMatchMath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200000 {
		// Log over (0, 1] (where draws use it) and a wide range beyond.
		x := r.Float64()
		if i%2 == 1 {
			x = math.Ldexp(0.5+r.Float64(), r.IntN(200)-100)
		}
		if x == 0 {
			continue
		}
		if got, want := Log(x), math.Log(x); ulps(got, want) > 1 {
			t.Fatalf("Log(%v) = %v, math.Log = %v", x, got, want)
		}
		y := (r.Float64() - 0.5) * 60
		// math.Exp is assembly on amd64 and may sit on the other side
		// of the true value: allow 2 ulps between the two.
		if got, want := Exp(y), math.Exp(y); ulps(got, want) > 2 {
			t.Fatalf("Exp(%v) = %v, math.Exp = %v", y, got, want)
		}
	}
	specials := []struct {
		name     string
		got, wnt float64
	}{
		{"log 1", Log(1), 0},
		{"log 0", Log(0), math.Inf(-1)},
		{"log +inf", Log(math.Inf(1)), math.Inf(1)},
		{"exp 0", Exp(0), 1},
		{"exp -inf", Exp(math.Inf(-1)), 0},
		{"exp 1000", Exp(1000), math.Inf(1)},
		{"exp -1000", Exp(-1000), 0},
	}
	for _, s := range specials {
		if s.got != s.wnt {
			t.Errorf("%s = %v, want %v", s.name, s.got, s.wnt)
		}
	}
	if !math.IsNaN(Log(-1)) || !math.IsNaN(Log(math.NaN())) || !math.IsNaN(Exp(math.NaN())) {
		t.Error("NaN cases: want NaN")
	}
}

func TestPow(t *testing.T) {
	for _, tc := range []struct{ x, y float64 }{{2, 10}, {10, 0.5}, {32, 0.2}, {1.5, -3}, {64, 1.0 / 3}} {
		if got, want := Pow(tc.x, tc.y), math.Pow(tc.x, tc.y); math.Abs(got-want) > 1e-12*want {
			t.Errorf("Pow(%v, %v) = %v, math.Pow = %v", tc.x, tc.y, got, want)
		}
	}
	if !math.IsNaN(Pow(0, 1)) || !math.IsNaN(Pow(-2, 2)) {
		t.Error("Pow of x ≤ 0: want NaN")
	}
}
