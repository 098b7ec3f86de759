package bench

import (
	"strings"
	"testing"
)

// Every core scenario serves its 10,000 requests against the 1 s budget;
// names are unique, since --only and the JSON key on them.
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
		if r.Work.Steps == 0 || r.MedianMS <= 0 || r.MinMS > r.MedianMS {
			t.Errorf("%s: %+v", s.Name, r)
		}
		if strings.HasPrefix(s.Name, "core-") && (r.Work.Requests != 10000 || r.Work.Tokens == 0 || r.BudgetMS != 1000) {
			t.Errorf("%s: work %+v, budget %v ms; want 10,000 requests against a 1 s budget", s.Name, r.Work, r.BudgetMS)
		}
	}
	if !seen["core-10k-uniform"] || !seen["core-10k-chat"] {
		t.Errorf("scenarios %v lack the budget workloads", seen)
	}
}

func TestUniformRequests(t *testing.T) {
	w, err := Serve(UniformRequests(40, 512, 8))
	if err != nil || w.Requests != 40 || w.Tokens != 40*520 {
		t.Errorf("Serve = %+v, %v; want 40 requests and 20,800 tokens", w, err)
	}
	if _, err := Measure(Scenario{Name: "x", Run: func() (Work, error) { return Work{}, nil }}, 0); err == nil {
		t.Error("Measure with 0 runs did not fail")
	}
}
