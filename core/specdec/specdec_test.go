package specdec

import (
	"fmt"
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
)

// (1 − α^{γ+1}) / (1 − α) over a grid of α and γ, the limit γ + 1 at
// α = 1, and α just below 1 approaching it.
func TestExpectedTokensGrid(t *testing.T) {
	for _, gamma := range []int{1, 2, 3, 4, 5, 7, 10, 16, 32} {
		for _, alpha := range []float64{0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99} {
			want := (1 - math.Pow(alpha, float64(gamma+1))) / (1 - alpha)
			if got := ExpectedTokens(alpha, gamma); math.Abs(got-want) > 1e-12*want {
				t.Errorf("E(α=%v, γ=%d) = %.15g, want %.15g", alpha, gamma, got, want)
			}
		}
		if got := ExpectedTokens(1, gamma); got != float64(gamma+1) {
			t.Errorf("E(α=1, γ=%d) = %v, want γ+1 = %d", gamma, got, gamma+1)
		}
		// Approaching 1: within γ(γ+1)/2 · (1 − α) of γ + 1, from below.
		for _, eps := range []float64{1e-3, 1e-6, 1e-9, 1e-12} {
			got := ExpectedTokens(1-eps, gamma)
			if got > float64(gamma+1) || float64(gamma+1)-got > float64(gamma*(gamma+1))/2*eps*1.0001 {
				t.Errorf("E(α=1−%g, γ=%d) = %.15g, want just under %d", eps, gamma, got, gamma+1)
			}
		}
	}
	if got := ExpectedTokens(0, 5); got != 1 {
		t.Errorf("E(α=0) = %v, want 1: the target's own token only", got)
	}
}

// Leviathan et al., Table 1 (c = ĉ = 0): the speed column is E, the
// operations column (1 − α)(γ + 1) / (1 − α^{γ+1}).
func TestLeviathanTable1(t *testing.T) {
	for _, row := range []struct {
		alpha      float64
		gamma      int
		ops, speed string
	}{
		{0.6, 2, "1.53", "1.96"}, {0.7, 3, "1.58", "2.53"}, {0.8, 2, "1.23", "2.44"},
		{0.8, 5, "1.63", "3.69"}, {0.9, 2, "1.11", "2.71"}, {0.9, 10, "1.60", "6.86"},
	} {
		speed := fmt.Sprintf("%.2f", Improvement(row.alpha, 0, row.gamma))
		ops := fmt.Sprintf("%.2f", OperationsFactor(row.alpha, 0, row.gamma))
		if speed != row.speed || ops != row.ops {
			t.Errorf("α %v γ %d: speed %s ops %s, Table 1 says %s and %s", row.alpha, row.gamma, speed, ops, row.speed, row.ops)
		}
	}
	// Corollary 3.9: with α > c some γ improves, by at least (1 + α)/(1 + c)
	// (γ = 1 gives exactly that).
	if got, want := Improvement(0.6, 0.1, 1), 1.6/1.1; math.Abs(got-want) > 1e-12 {
		t.Errorf("γ = 1: %v, want (1+α)/(1+c) = %v", got, want)
	}
}

// The seeded process: its mean over many rounds is E, the same seed gives
// the same draws, and α = 0 and 1 are the ends.
func TestAcceptance(t *testing.T) {
	for _, alpha := range []float64{0.3, 0.6, 0.8, 0.95} {
		const n = 200_000
		a := NewAcceptance(alpha, 7)
		sum := 0
		for i := 0; i < n; i++ {
			sum += a.Verify(4) + 1
		}
		if got, want := float64(sum)/n, ExpectedTokens(alpha, 4); math.Abs(got-want) > 0.01*want {
			t.Errorf("α %v: %v tokens per round over %d rounds, E = %v", alpha, got, n, want)
		}
	}
	a, b := NewAcceptance(0.7, 3), NewAcceptance(0.7, 3)
	for i := 0; i < 100; i++ {
		if a.Verify(5) != b.Verify(5) {
			t.Fatal("the same seed drew differently")
		}
	}
	if NewAcceptance(0, 1).Verify(4) != 0 || NewAcceptance(1, 1).Verify(4) != 4 {
		t.Error("α = 0 should accept nothing, α = 1 everything")
	}
}

// roofTimer prices a step as max(a floor, tokens × per-token time): memory-
// bound (the floor) until the batch is large, then compute-bound.
func roofTimer(floor, perToken float64) scheduler.Timer {
	return scheduler.TimerFunc(func(w []scheduler.Work) float64 {
		n := 0
		for _, x := range w {
			n += x.NewTokens
		}
		return math.Max(floor, float64(n)*perToken)
	})
}

// A round's price, and the speedup falling once the verify pass's γ + 1
// tokens per sequence stop being free.
func TestPricing(t *testing.T) {
	p := &Pricing{Target: roofTimer(0.020, 0.0001), Draft: roofTimer(0.002, 0.00001)}
	r := p.PriceRound(1, 1000, 4, 0.8)
	e := ExpectedTokens(0.8, 4)
	if r.Decode != 0.020 || r.Verify != 0.020 || math.Abs(r.Draft-4*0.002) > 1e-15 {
		t.Errorf("batch 1: decode %v, verify %v, draft %v", r.Decode, r.Verify, r.Draft)
	}
	if want := e * 0.020 / (0.008 + 0.020); math.Abs(r.Speedup-want) > 1e-12 {
		t.Errorf("speedup %v, want %v", r.Speedup, want)
	}
	// Equivalent to Theorem 3.8 with c = 0.1 while verify costs a decode.
	if want := Improvement(0.8, 0.1, 4); math.Abs(r.Speedup-want) > 1e-12 {
		t.Errorf("speedup %v, Theorem 3.8 gives %v", r.Speedup, want)
	}
	prev := math.Inf(1)
	for _, b := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024} {
		s := p.PriceRound(b, 1000, 4, 0.8).Speedup
		if s > prev+1e-12 {
			t.Errorf("batch %d: speedup %v rose from %v", b, s, prev)
		}
		prev = s
	}
	if prev >= 1 {
		t.Errorf("batch 1024: speedup %v; once compute-bound the γ+1-token pass costs γ+1 decodes and speculation slows decoding", prev)
	}
	g, best := p.BestGamma(1, 1000, 0.8, 16)
	for k := 1; k <= 16; k++ {
		if p.PriceRound(1, 1000, k, 0.8).Speedup > best.Speedup {
			t.Errorf("γ = %d beats the best γ %d", k, g)
		}
	}
	if p.Steps == 0 {
		t.Error("steps not counted")
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		gamma int
		ok    bool
	}{{0.5, 3, true}, {0, 1, true}, {1, 8, true}, {-0.1, 3, false}, {1.1, 3, false}, {math.NaN(), 3, false}, {0.5, 0, false}} {
		if err := Check(c.alpha, c.gamma); (err == nil) != c.ok {
			t.Errorf("Check(%v, %d) = %v", c.alpha, c.gamma, err)
		}
	}
}

// Theorem 3.8 at each row's α, γ and c gives the paper's own Expected
// column (Table 4) to within 0.1: the inputs are printed rounded (α to two
// decimals, c to one significant figure), which moves the result by up to
// 0.07 (EnDe T5-base at temperature 1: 2.35 against 2.4).
func TestLeviathanTable4Expected(t *testing.T) {
	if len(LeviathanTable4) != 12 {
		t.Fatalf("%d rows, the table has 12", len(LeviathanTable4))
	}
	for _, r := range LeviathanTable4 {
		if got := Improvement(r.Alpha, r.C, r.Gamma); math.Abs(got-r.Expected) > 0.1 {
			t.Errorf("%s %s temp %d: Theorem 3.8 gives %.3f, the paper's Exp is %.1f", r.Task, r.Draft, r.Temp, got, r.Expected)
		}
	}
}

// A set cost coefficient prices each draft step at c plain decode steps:
// with a verify pass as cheap as a decode step the round's speedup is
// Theorem 3.8's.
func TestFixedC(t *testing.T) {
	p := &Pricing{Target: flat{0.01}, Draft: flat{0.5}, FixedC: true, C: 0.02}
	r := p.PriceRound(1, 100, 7, 0.75)
	if want := Improvement(0.75, 0.02, 7); math.Abs(r.Speedup-want) > 1e-12 {
		t.Errorf("speedup %v, want Theorem 3.8's %v", r.Speedup, want)
	}
}

// A speculating engine's timers price the verify pass and the drafts; the
// baseline decode step keeps the plain engine's.
func TestSpecTimers(t *testing.T) {
	p := &Pricing{Target: flat{0.01}, Draft: flat{0.002}, Spec: func(gamma int) (scheduler.Timer, scheduler.Timer) {
		return flat{0.008}, flat{0.001}
	}}
	r := p.PriceRound(1, 100, 4, 0.5)
	if r.Decode != 0.01 || r.Verify != 0.008 || math.Abs(r.Draft-0.004) > 1e-15 {
		t.Errorf("round %+v: want decode 0.01 (plain), verify 0.008 and drafts 4 × 0.001 (speculating engine)", r)
	}
}

// flat prices every step at the same seconds.
type flat struct{ s float64 }

func (f flat) StepSeconds([]scheduler.Work) float64 { return f.s }
