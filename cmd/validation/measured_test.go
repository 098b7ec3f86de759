package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMeasuredRuns replays the nine measured runs, holds the lab to the
// section's targets and ahead of BLIS on every metric, and fails when a
// figure drifts from docs/VALIDATION.md's section.
func TestMeasuredRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("replays nine benchmarks whole (about ten seconds of CPU)")
	}
	rows, err := runMeasured()
	if err != nil {
		t.Fatal(err)
	}
	s := summariseMeasured(rows)
	if s.stages != 14 {
		t.Errorf("%d stages kept up, want 14 (the eight runs that are not overloaded)", s.stages)
	}
	for i, name := range []string{"TTFT mean", "E2E mean", "TPOT"} {
		if !(s.lab[i] <= measuredTargets[i]) {
			t.Errorf("%s: median |error| %.1f%%, target %.0f%%", name, 100*s.lab[i], 100*measuredTargets[i])
		}
		if len(blisRuns) > 0 && !(s.lab[i] < s.blis[i]) {
			t.Errorf("%s: lab %.1f%% is not ahead of BLIS %.1f%%", name, 100*s.lab[i], 100*s.blis[i])
		}
	}
	if s.worstE2E > 0.20 {
		t.Errorf("worst stage's E2E error %.1f%%, want at most 20%%", 100*s.worstE2E)
	}
	for _, r := range rows {
		if r.run.Workload == "reasoning" && (!r.sim.Overloaded || r.lab[0] < -0.5 || r.lab[0] > 0.5) {
			t.Errorf("reasoning run: overloaded %v, TTFT error %+.1f%%: want overloaded within 50%%", r.sim.Overloaded, 100*r.lab[0])
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "VALIDATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(doc), measuredMarkdown(rows)) {
		t.Error("docs/VALIDATION.md's section \"Measured vLLM runs\" is out of date; run `go run ./cmd/validation > docs/VALIDATION.md` from the repository root")
	}
}
