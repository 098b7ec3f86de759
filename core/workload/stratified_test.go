package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNormalQuantile(t *testing.T) {
	for _, c := range []struct{ p, z float64 }{{0.5, 0}, {0.975, 1.959964}, {0.01, -2.326348}, {0.9999, 3.719016}, {0.0001, -3.719016}, {0.8413447, 1}} {
		if got := normalQuantile(c.p); math.Abs(got-c.z) > 1e-6 {
			t.Errorf("normalQuantile(%g) = %.7f, want %.6f", c.p, got, c.z)
		}
	}
}

// Stratified lengths are the distribution's quantiles at the strata's
// middles, shuffled: sorted, they are the quantiles; the quantile agrees
// with Draw's own distribution; one seed and stream shuffle alike, another
// stream otherwise; past n draws they draw independently.
func TestStratify(t *testing.T) {
	for _, l := range []Quantiler{ChatPrompts(), ChatOutputs(), Uniform{Min: 256, Max: 1024}, Uniform{Min: 3000, Max: 3000}, Fixed{N: 7}} {
		const n = 1000
		s := Stratify(l, n, 3, 1)
		var got []int
		for range n {
			got = append(got, s.Draw(nil)) // no randomness consumed
		}
		sorted := slices.Sorted(slices.Values(got))
		for i, x := range sorted {
			if want := l.Quantile((float64(i) + 0.5) / n); x != want {
				t.Fatalf("%v: the %d-th smallest is %d, want the quantile %d", l, i, x, want)
			}
		}
		if sorted[0] != sorted[n-1] && slices.Equal(got, sorted) {
			t.Errorf("%v: not shuffled", l)
		}
		r := rand.New(rand.NewPCG(1, 2))
		draws := make([]int, 100000)
		for i := range draws {
			draws[i] = l.Draw(r)
		}
		slices.Sort(draws)
		for _, p := range []float64{0.1, 0.5, 0.9, 0.99} {
			emp, q := float64(draws[int(p*float64(len(draws)))]), float64(l.Quantile(p))
			if math.Abs(emp-q) > 0.03*q+1 {
				t.Errorf("%v: the %g-quantile is %g, Draw's %g", l, p, q, emp)
			}
		}
		again := Stratify(l, n, 3, 1).(*stratified)
		if !slices.Equal(again.values, got) {
			t.Errorf("%v: two stratifications of one seed differ", l)
		}
		if other := Stratify(l, n, 3, 2).(*stratified); sorted[0] != sorted[n-1] && slices.Equal(other.values, got) {
			t.Errorf("%v: another stream shuffles alike", l)
		}
		if x := s.Draw(rand.New(rand.NewPCG(1, 2))); x != l.Draw(rand.New(rand.NewPCG(1, 2))) {
			t.Errorf("%v: draw %d past the strata is %d, want an independent draw", l, n+1, x)
		}
	}
	// A Lengths without quantiles is drawn as it is.
	var plain Lengths = noQuantile{}
	if s := Stratify(plain, 10, 1, 1); s != plain {
		t.Errorf("Stratify(%v) = %v, want it unchanged", plain, s)
	}
}

// noQuantile is a Lengths that states no quantiles.
type noQuantile struct{}

func (noQuantile) Draw(r *rand.Rand) int { return 1 + r.IntN(8) }
func (noQuantile) Mean() float64         { return 4.5 }
func (noQuantile) String() string        { return "uniform(1..8), no quantiles" }

// A stratified Poisson stream holds one gap in each of n equally likely
// strata of the exponential distribution and its lengths stratified; over
// many seeds each gap on its own is exponential at the rate (its share
// under the distribution's quantiles matches theirs); it is a valid
// stream (IDs in order, arrivals rising, no prefix groups) and one seed
// gives it bit for bit.
func TestStratifiedPoisson(t *testing.T) {
	const n, rate = 500, 4.0
	prompts, outputs := Uniform{Min: 2048, Max: 4096}, ChatOutputs()
	cdf := func(gap float64) float64 { return 1 - math.Exp(-rate*gap) }
	quantiles := []float64{0.01, 0.1, 0.5, 0.9, 0.99}
	under := make([]int, len(quantiles))
	const seeds = 200
	for seed := range uint64(seeds) {
		w := StratifiedPoisson(n, rate, prompts, outputs, seed)
		if len(w) != n {
			t.Fatalf("seed %d: %d requests, want %d", seed, len(w), n)
		}
		gaps := make([]float64, n)
		for i, r := range w {
			prev := 0.0
			if i > 0 {
				prev = w[i-1].Arrival
			}
			gaps[i] = r.Arrival - prev
			if r.ID != i || gaps[i] < 0 || r.PrefixGroup != -1 || r.Conversation != -1 || r.Prev != -1 {
				t.Fatalf("seed %d: request %d = %+v after %v s", seed, i, r, prev)
			}
			for k, q := range quantiles {
				if cdf(gaps[i]) < q {
					under[k]++
				}
			}
		}
		slices.Sort(gaps)
		for i, g := range gaps {
			if p := cdf(g); p < float64(i)/n-1e-9 || p > float64(i+1)/n+1e-9 {
				t.Fatalf("seed %d: the %d-th shortest gap %v s lies at the %v quantile, outside its stratum", seed, i, g, p)
			}
		}
		sorted := make([]int, n)
		for i, r := range w {
			sorted[i] = r.Prompt
		}
		slices.Sort(sorted)
		for i, x := range sorted {
			if want := prompts.Quantile((float64(i) + 0.5) / n); x != want {
				t.Fatalf("seed %d: the %d-th shortest prompt is %d, want %d", seed, i, x, want)
			}
		}
	}
	for k, q := range quantiles {
		if got := float64(under[k]) / (n * seeds); math.Abs(got-q) > 0.002 {
			t.Errorf("%.4f of the gaps lie under the exponential's %g quantile, want %g", got, q, q)
		}
	}
	// One gap on its own, the 7th of streams of 20, over 20,000 seeds: its
	// share under each quantile within four standard errors of the
	// exponential's.
	const many = 20000
	under = make([]int, len(quantiles))
	for seed := range uint64(many) {
		w := StratifiedPoisson(20, rate, Fixed{N: 1}, Fixed{N: 1}, seed)
		for k, q := range quantiles {
			if cdf(w[7].Arrival-w[6].Arrival) < q {
				under[k]++
			}
		}
	}
	for k, q := range quantiles {
		if got := float64(under[k]) / many; math.Abs(got-q) > 4*math.Sqrt(q*(1-q)/many) {
			t.Errorf("the 7th gap lies under the exponential's %g quantile in %.4f of the streams, want %g", q, got, q)
		}
	}
	a, b := StratifiedPoisson(n, rate, prompts, outputs, 9), StratifiedPoisson(n, rate, prompts, outputs, 9)
	if digest(a) != digest(b) {
		t.Error("two streams of one seed differ")
	}
	if c := StratifiedPoisson(n, rate, prompts, outputs, 10); digest(c) == digest(a) {
		t.Error("seeds 9 and 10 give the same stream")
	}
	for _, w := range [][]Request{StratifiedPoisson(3, 0, prompts, outputs, 1), StratifiedPoisson(3, math.Inf(1), prompts, outputs, 1)} {
		for _, r := range w {
			if r.Arrival != 0 {
				t.Errorf("rate 0 or +Inf: a request arrives at %v s, want 0 (as Poisson's)", r.Arrival)
			}
		}
	}
	if w := StratifiedPoisson(0, rate, prompts, outputs, 1); len(w) != 0 {
		t.Errorf("no requests asked for, %d made", len(w))
	}
}
