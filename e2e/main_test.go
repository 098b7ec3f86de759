//go:build !wasm

package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const chromiumPath = "/usr/bin/chromium"

var (
	repoRoot string // absolute path of the repository root
	webDir   string // repoRoot/web
	outDir   string // e2e/test-output: screenshots (git-ignored)

	// skipReason, when not empty, makes every browser test skip.
	skipReason string
)

func TestMain(m *testing.M) {
	flag.Parse()
	// `go test -list` (used by `make fuzz`) must not build anything.
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	os.Exit(setupAndRun(m))
}

func setupAndRun(m *testing.M) int {
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot, webDir = root, filepath.Join(root, "web")
	outDir = filepath.Join(root, "e2e", "test-output")

	// `make test` sets INFERLAB_E2E_RUN to a new value each run. go test keys its result
	// cache on the environment variables a test reads, so reading it here makes the
	// browser tests run every time while the other packages stay cached.
	_ = os.Getenv("INFERLAB_E2E_RUN")
	ci := os.Getenv("CI") == "true" || os.Getenv("CI") == "1"
	switch {
	case testing.Short():
		skipReason = "browser tests skipped under -short"
	case !isExecutable(chromiumPath):
		if ci {
			fmt.Fprintf(os.Stderr, "e2e: FAIL: %s not found and CI=true: run `make deps` as root (apt-get install chromium)\n", chromiumPath)
			return 1
		}
		skipReason = chromiumPath + " not found (run `make deps` as root); set CI=true to make this a failure"
	}
	if skipReason != "" {
		return m.Run()
	}

	start := time.Now()
	if err := buildWasm(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: building web/app.wasm: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: web/app.wasm up to date in %v\n", time.Since(start).Round(time.Millisecond))

	if _, err := os.Stat(filepath.Join(webDir, "echarts.min.js")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: FAIL: web/echarts.min.js is missing: run `make deps build` "+
			"(npm ci, then copy node_modules/echarts/dist/echarts.common.min.js to web/echarts.min.js)")
		return 1
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	_ = os.Remove(filepath.Join(outDir, timingFile))
	return m.Run()
}

// timingFile collects the E2E_TIMING lines of a run (`make test` prints it, since
// go test hides the logs of passing tests).
const timingFile = "timing.log"

// recordTiming logs line and appends it to e2e/test-output/timing.log.
func recordTiming(t *testing.T, line string) {
	t.Helper()
	t.Log(line)
	f, err := os.OpenFile(filepath.Join(outDir, timingFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("recording the timing: %v", err)
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

// buildWasm builds the browser entry with the same flags as `make wasm`, so that an
// up-to-date web/app.wasm is left untouched and the build cache is shared.
// It builds the simulation worker's web/sim.wasm (./wasm/sim) too.
func buildWasm() error {
	for out, pkg := range map[string]string{"app.wasm": "./wasm", "sim.wasm": "./wasm/sim"} {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join("web", out), pkg)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", pkg, err, b)
		}
	}
	return nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
