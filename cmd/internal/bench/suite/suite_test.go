package suite

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Every scenario, core and lesson, has a unique name (--only and the JSON
// key on them), and every lesson has one.
func TestBenchScenarioNames(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		if seen[s.Name] {
			t.Errorf("duplicate scenario %q", s.Name)
		}
		seen[s.Name] = true
	}
	for _, l := range lessons.All() {
		if !seen["lesson-"+l.Slug] {
			t.Errorf("no scenario for lesson %s", l.Slug)
		}
	}
	if !seen["lesson-garage-1000"] || !seen["core-10k-uniform"] {
		t.Errorf("scenarios %v lack the budget workloads", seen)
	}
}
