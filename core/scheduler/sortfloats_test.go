package scheduler

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// sortFloats must give exactly sort.Float64s's order (Summary's percentiles
// and its mean, summed in that order, depend on it).
func TestSortFloatsMatchesSortFloat64s(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(n int) []float64{
		"uniform":        func(n int) []float64 { return gen(n, func() float64 { return rng.Float64() }) },
		"step durations": func(n int) []float64 { return gen(n, func() float64 { return 0.012 + 0.001*float64(rng.IntN(40)) }) },
		"wide range":     func(n int) []float64 { return gen(n, func() float64 { return math.Exp(rng.NormFloat64() * 20) }) },
		"zeros and inf": func(n int) []float64 {
			return gen(n, func() float64 { return []float64{0, math.Inf(1), 1e-300, 5}[rng.IntN(4)] })
		},
		"one value": func(n int) []float64 { return gen(n, func() float64 { return 0.25 }) },
		"negatives": func(n int) []float64 { return gen(n, func() float64 { return rng.Float64() - 0.5 }) },
		"a NaN and a -0": func(n int) []float64 {
			xs := gen(n, rng.Float64)
			xs[n/2], xs[n/3] = math.NaN(), math.Copysign(0, -1)
			return xs
		},
	}
	for name, mk := range cases {
		for _, n := range []int{1, radixMin - 1, radixMin, 3 * radixMin} {
			xs := mk(n)
			want := slices.Clone(xs)
			sort.Float64s(want)
			sortFloats(xs)
			for i := range xs {
				if math.Float64bits(xs[i]) != math.Float64bits(want[i]) && !(xs[i] != xs[i] && want[i] != want[i]) {
					t.Fatalf("%s, n=%d: at %d got %v, want %v", name, n, i, xs[i], want[i])
				}
			}
		}
	}
}

func gen(n int, f func() float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = f()
	}
	return xs
}

func BenchmarkSortFloats(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := gen(2_560_000, func() float64 { return 0.012 + 0.0001*float64(rng.IntN(4000)) })
	s := make([]float64, len(xs))
	for _, impl := range []struct {
		name string
		sort func([]float64)
	}{{"radix", sortFloats}, {"sort.Float64s", sort.Float64s}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				copy(s, xs)
				impl.sort(s)
			}
		})
	}
}
