package gcturn

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWorkYieldsInWebAssembly builds testdata/turn for js/wasm and runs it
// under Node.js: a goroutine waiting to run must get its turn after Period
// units of work, not before (a yield per call would cost the simulations)
// and not never (the collector's worker would wait as long).
func TestWorkYieldsInWebAssembly(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found: the WebAssembly half of this package is not exercised")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	bin := filepath.Join(t.TempDir(), "turn.wasm")
	build := exec.Command("go", "build", "-o", bin, "./testdata/turn")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/turn for js/wasm: %v\n%s", err, out)
	}
	out, err = exec.Command(filepath.Join(goroot, "lib", "wasm", "go_js_wasm_exec"), bin).CombinedOutput()
	if err != nil {
		t.Fatalf("running it under Node.js: %v\n%s", err, out)
	}
	want := "ran after " + strconv.Itoa(Period)
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("turn printed %q, want %q: Work should yield once Period (%d) units are done", got, want, Period)
	}
}
