package workload

import (
	"math"
	"math/rand/v2"

	"github.com/inferlab/inferlab/internal/detmath"
)

// expDraw returns an exponential draw with mean 1, by inversion:
// −ln U for U uniform in (0, 1].
func expDraw(r *rand.Rand) float64 {
	return -detmath.Log(1 - r.Float64())
}

// normDraw returns a standard normal draw (Marsaglia's polar method; the
// second value of each pair is discarded, so a draw depends only on r).
func normDraw(r *rand.Rand) float64 {
	for {
		u := float64(2*r.Float64()) - 1
		v := float64(2*r.Float64()) - 1
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			return u * math.Sqrt(-2*detmath.Log(s)/s) // Sqrt is exact (IEEE 754)
		}
	}
}
