package workload

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func drawN(l Lengths, n int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, 99))
	out := make([]int, n)
	for i := range out {
		out[i] = l.Draw(r)
	}
	return out
}

func TestFixed(t *testing.T) {
	for _, n := range []int{0, 1, 512, 131072} {
		f := Fixed{n}
		for _, v := range drawN(f, 100, 1) {
			if v != n {
				t.Fatalf("%v drew %d", f, v)
			}
		}
		if f.Mean() != float64(n) {
			t.Errorf("%v.Mean() = %v", f, f.Mean())
		}
	}
	if got := (Fixed{512}).String(); got != "fixed(512)" {
		t.Errorf("String = %q", got)
	}
}

func TestUniform(t *testing.T) {
	tests := []struct {
		u    Uniform
		mean float64
	}{
		{Uniform{1, 1}, 1},
		{Uniform{3, 7}, 5},
		{Uniform{100, 110}, 105},
		{Uniform{0, 1}, 0.5},
		{Uniform{9, 2}, 9}, // Max < Min: always Min
	}
	for _, tt := range tests {
		t.Run(tt.u.String(), func(t *testing.T) {
			seen := map[int]int{}
			for _, v := range drawN(tt.u, 20000, 7) {
				seen[v]++
			}
			lo, hi := tt.u.Min, max(tt.u.Max, tt.u.Min)
			for v := range seen {
				if v < lo || v > hi {
					t.Fatalf("drew %d outside [%d, %d]", v, lo, hi)
				}
			}
			// Bounds are inclusive: every value, ends included, appears.
			for v := lo; v <= hi; v++ {
				if seen[v] == 0 {
					t.Errorf("never drew %d", v)
				}
			}
			if tt.u.Mean() != tt.mean {
				t.Errorf("Mean() = %v, want %v", tt.u.Mean(), tt.mean)
			}
		})
	}
}

func median(v []int) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

func TestLongTail(t *testing.T) {
	tests := []struct {
		name string
		l    LongTail
	}{
		{"chat prompts", ChatPrompts()},
		{"chat outputs", ChatOutputs()},
		{"narrow", LongTail{Median: 1000, Sigma: 0.2, Min: 1, Max: 100000}},
		{"wide", LongTail{Median: 50, Sigma: 2, Min: 1, Max: 1 << 20}},
		{"clamped", LongTail{Median: 200, Sigma: 3, Min: 50, Max: 400}},
		{"sigma 0", LongTail{Median: 300, Sigma: 0, Min: 1, Max: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := drawN(tt.l, 20000, 11)
			if m := median(v); math.Abs(m-tt.l.Median) > 0.05*tt.l.Median {
				t.Errorf("median = %v, want %v ± 5%%", m, tt.l.Median)
			}
			sum := 0.0
			for _, x := range v {
				if x < tt.l.Min || x > tt.l.Max {
					t.Fatalf("drew %d outside [%d, %d]", x, tt.l.Min, tt.l.Max)
				}
				sum += float64(x)
			}
			if m := sum / float64(len(v)); math.Abs(m-tt.l.Mean()) > 0.05*tt.l.Mean() {
				t.Errorf("sample mean = %.1f, Mean() = %.1f: want within 5%%", m, tt.l.Mean())
			}
		})
	}

	// Clamping: with sigma 3 a third of the mass lies past each bound.
	c := LongTail{Median: 200, Sigma: 3, Min: 50, Max: 400}
	atMin, atMax := 0, 0
	for _, x := range drawN(c, 20000, 5) {
		switch x {
		case c.Min:
			atMin++
		case c.Max:
			atMax++
		}
	}
	// P(X < 50) = Φ(ln(1/4)/3) = Φ(−0.462) ≈ 0.322; P(X > 400) = Φ(−0.231) ≈ 0.409.
	if f := float64(atMin) / 20000; math.Abs(f-0.322) > 0.02 {
		t.Errorf("fraction clamped to Min = %.3f, want 0.322 ± 0.02", f)
	}
	if f := float64(atMax) / 20000; math.Abs(f-0.409) > 0.02 {
		t.Errorf("fraction clamped to Max = %.3f, want 0.409 ± 0.02", f)
	}

	// Degenerate parameters stay in bounds.
	for _, l := range []LongTail{
		{Median: 0, Sigma: 1, Min: 3, Max: 9},
		{Median: math.NaN(), Sigma: 1, Min: 3, Max: 9},
		{Median: 100, Sigma: math.Inf(1), Min: 3, Max: 9},
		{Median: 100, Sigma: -1, Min: 3, Max: 900},
		{Median: math.Inf(1), Sigma: 1, Min: 3, Max: 9},
	} {
		for _, x := range drawN(l, 1000, 2) {
			if x < 3 || x > l.Max {
				t.Fatalf("%v drew %d", l, x)
			}
		}
	}
}

func TestLongTailMeanAnalytic(t *testing.T) {
	// Unclamped in effect: mean = median · e^(σ²/2).
	l := LongTail{Median: 200, Sigma: 1, Min: 0, Max: math.MaxInt32}
	if want := 200 * math.Exp(0.5); math.Abs(l.Mean()-want) > 1e-6*want {
		t.Errorf("Mean() = %v, want %v", l.Mean(), want)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"fixed ok", Fixed{1}.Validate(1), ""},
		{"fixed 0", Fixed{0}.Validate(1), "fixed length 0 is not allowed: want at least 1"},
		{"uniform ok", Uniform{1, 5}.Validate(1), ""},
		{"uniform min", Uniform{0, 5}.Validate(1), "uniform min = 0 is not allowed: want at least 1"},
		{"uniform max", Uniform{6, 5}.Validate(1), "uniform max = 5 is not allowed: want at least min (6)"},
		{"longtail ok", ChatPrompts().Validate(1), ""},
		{"longtail median", LongTail{0, 1, 1, 5}.Validate(1), "longtail median = 0 is not allowed: want a finite number above 0"},
		{"longtail sigma", LongTail{5, -1, 1, 5}.Validate(1), "longtail sigma = -1 is not allowed: want 0 to 5"},
		{"longtail min", LongTail{5, 1, 0, 5}.Validate(1), "longtail min = 0 is not allowed: want at least 1"},
		{"longtail max", LongTail{5, 1, 6, 5}.Validate(1), "longtail max = 5 is not allowed: want at least min (6)"},
	}
	for _, tt := range tests {
		got := ""
		if tt.err != nil {
			got = tt.err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
