package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestPageLinksNoSimulation builds app.wasm as `make wasm` does and checks
// that no lesson's simulation is linked into it. The page never simulates
// (the worker's sim.wasm does, app/player_sim.go), and the simulations are
// 2.9 MB of the page's 13.7 MB when linked (2.58 MiB gzip without them,
// 3.24 MiB with: over the 3 MiB budget, docs/ARCHITECTURE.md#budgets). One
// call from the page to Lesson.Build, BuildTrace or Run brings them all
// back; this test names it.
// Go keeps function names in the binary even when stripped (the runtime's
// tables), so the methods are searched by name.
func TestPageLinksNoSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds app.wasm")
	}
	out := filepath.Join(t.TempDir(), "app.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building app.wasm: %v\n%s", err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// The names are there to be found: the page resolves knobs.
	if !regexp.MustCompile(`lessons\.\(\*Lesson\)\.Resolve`).Match(bin) {
		t.Fatal("app.wasm names no lessons function at all: the search below would prove nothing")
	}
	// A lesson's simulation is the Simulate (or SimulateTrace) method of
	// its package's sim type: lessons/garage.sim.Simulate.
	simulation := regexp.MustCompile(`lessons/[a-z]+\.\(?\*?[A-Za-z]+\)?\.Simulate[A-Za-z]*`)
	if found := simulation.FindAll(bin, 5); len(found) > 0 {
		t.Errorf("app.wasm links lesson simulations (%q…): something the page runs calls Lesson.Build, BuildTrace or Run", found)
	}
}
