package bench

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/inferlab/inferlab/core/scenario"
)

// Every core scenario serves all its requests, the 10,000-request ones
// against the 1 s budget; names are unique, since --only and the JSON key
// on them.
func TestCoreScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range CoreScenarios() {
		if seen[s.Name] {
			t.Errorf("duplicate scenario %q", s.Name)
		}
		seen[s.Name] = true
		if strings.HasPrefix(s.Name, "core-") && testing.Short() {
			continue
		}
		r, err := Measure(s, 1)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		// The serving runs take tens of milliseconds of CPU: Linux reports it.
		if r.Work.Steps == 0 || r.MedianMS <= 0 || r.MinMS > r.MedianMS || (runtime.GOOS == "linux" && r.CPUMedianMS <= 0) {
			t.Errorf("%s: %+v", s.Name, r)
		}
		want, budget := 10000, 1000.0
		if strings.HasPrefix(s.Name, "core-100k-") {
			want, budget = 100000, 0
		}
		if r.Work.Requests != want || r.Work.Tokens == 0 || r.BudgetMS != budget {
			t.Errorf("%s: work %+v, budget %v ms; want %d requests, budget %v ms", s.Name, r.Work, r.BudgetMS, want, budget)
		}
	}
	for _, name := range []string{"core-10k-uniform", "core-10k-chat", "core-100k-uniform", "core-100k-chat"} {
		if !seen[name] {
			t.Errorf("scenarios %v lack %s", seen, name)
		}
	}
}

func TestUniformRequests(t *testing.T) {
	w, err := Serve(scenario.UniformRequests(40, 512, 8))
	if err != nil || w.Requests != 40 || w.Tokens != 40*520 {
		t.Errorf("Serve = %+v, %v; want 40 requests and 20,800 tokens", w, err)
	}
	if _, err := Measure(Scenario{Name: "x", Run: func() (Work, error) { return Work{}, nil }}, 0); err == nil {
		t.Error("Measure with 0 runs did not fail")
	}
}

// BenchmarkCore times each core scenario with its allocations (-benchmem):
// the budgets (docs/ARCHITECTURE.md#budgets) are ≤ 60 ms (uniform) and ≤ 100 ms (chat) and ≤ 40 MB
// allocated per 10,000-request run, and a 100k/10k time ratio ≤ 11.
func BenchmarkCore(b *testing.B) {
	for _, s := range CoreScenarios() {
		b.Run(s.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Warm-up runs happen first and are not measured; every measured run's time
// is reported in order.
func TestMeasureWarm(t *testing.T) {
	calls := 0
	s := Scenario{Name: "count", Run: func() (Work, error) { calls++; return Work{Steps: calls}, nil }}
	r, err := MeasureWarm(s, 3, 4)
	if err != nil || calls != 7 || r.Warmup != 3 || r.Runs != 4 || len(r.TimesMS) != 4 || r.Work.Steps != 7 {
		t.Errorf("MeasureWarm = %+v, %v after %d calls; want 3 warm-up and 4 measured runs", r, err, calls)
	}
	if _, err := MeasureWarm(s, -1, 1); err == nil {
		t.Error("MeasureWarm with -1 warm-up runs did not fail")
	}
}

// With a warm-up time, the unmeasured runs go on past the warm-up count
// until that time has passed.
func TestMeasureWarmFor(t *testing.T) {
	calls := 0
	s := Scenario{Name: "sleep", Run: func() (Work, error) { calls++; time.Sleep(time.Millisecond); return Work{}, nil }}
	start := time.Now()
	r, err := MeasureWarmFor(s, 2, 30*time.Millisecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	warm := time.Since(start) - time.Duration(r.TimesMS[0]*float64(time.Millisecond))
	if warm < 30*time.Millisecond || r.Warmup < 2 || calls != r.Warmup+1 {
		t.Errorf("%d warm-up runs in %v (%d calls), want at least 2 over at least 30ms", r.Warmup, warm, calls)
	}
	// The bound on added warm-up runs does not cut the runs asked for.
	calls = 0
	if r, err := MeasureWarmFor(Scenario{Name: "count", Run: func() (Work, error) { calls++; return Work{}, nil }}, maxWarmup+5, 0, 1); err != nil || r.Warmup != maxWarmup+5 || calls != maxWarmup+6 {
		t.Errorf("%d warm-up runs asked: %d made (%d calls), %v", maxWarmup+5, r.Warmup, calls, err)
	}
	if _, err := MeasureWarmFor(s, 0, -time.Second, 1); err == nil {
		t.Error("a negative warm-up time did not fail")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{5}, 5}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 3}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
