//go:build !js

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/cmd/internal/bench"
)

// The budgets of the WebAssembly build (docs/ARCHITECTURE.md#budgets).
const (
	maxRatio      = 3.0 // WebAssembly time over native time, same scenario
	garageBudgetM = 50.0
	garageName    = "lesson-garage-1000"
)

// side is what one build measured of one scenario over all rounds.
type side struct {
	times  []float64 // every measured run, ms
	rounds []float64 // each round's median, ms
}

func (s *side) add(r bench.Result) {
	s.times = append(s.times, r.TimesMS...)
	s.rounds = append(s.rounds, bench.Median(r.TimesMS))
}

// compare runs each scenario in a WebAssembly and a native child, rounds
// times, alternating which starts first, and prints the pooled medians.
func compare(o options, chosen []bench.Scenario, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "benchrun: cannot find this program to run it natively:", err)
		return 1
	}
	launcher := o.wasmExec
	if launcher == "" {
		root, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			fmt.Fprintln(stderr, "benchrun: no --exec, and `go env GOROOT` failed:", err)
			return 1
		}
		launcher = filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "go_js_wasm_exec")
	}
	env := append(os.Environ(), "GOGC="+o.gogc)
	wasm := make([]side, len(chosen))
	native := make([]side, len(chosen))
	load0 := bench.LoadAverage()
	for round := range o.rounds {
		for i, s := range chosen {
			args := []string{"--only", s.Name, "--runs", strconv.Itoa(o.runs), "--warmup", strconv.Itoa(o.warmup), "--warmup-ms", strconv.Itoa(o.warmupMS)}
			order := []bool{true, false} // WebAssembly first in even rounds
			if round%2 == 1 {
				order = []bool{false, true}
			}
			for _, isWasm := range order {
				var cmd *exec.Cmd
				if isWasm {
					cmd = exec.Command(launcher, append([]string{o.wasm}, args...)...)
				} else {
					cmd = exec.Command(self, args...)
				}
				r, err := child(cmd, env)
				if err != nil {
					fmt.Fprintf(stderr, "benchrun: %s, round %d: %v\n", s.Name, round+1, err)
					return 1
				}
				if isWasm {
					wasm[i].add(r)
				} else {
					native[i].add(r)
				}
			}
			fmt.Fprintf(stderr, "round %d/%d %-20s wasm %s native %s\n", round+1, o.rounds, s.Name,
				ms(wasm[i].rounds[round]), ms(native[i].rounds[round]))
		}
	}
	printComparison(stdout, o, chosen, wasm, native, load0, bench.LoadAverage())
	return 0
}

// child runs one measuring process and reads its single result.
func child(cmd *exec.Cmd, env []string) (bench.Result, error) {
	var out, errOut bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &errOut
	if err := cmd.Run(); err != nil {
		return bench.Result{}, fmt.Errorf("%s: %v: %s", cmd.Path, err, strings.TrimSpace(errOut.String()))
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Results) != 1 {
		return bench.Result{}, fmt.Errorf("%s: unreadable report (%v): %q", cmd.Path, err, out.String())
	}
	return rep.Results[0], nil
}

func printComparison(w io.Writer, o options, chosen []bench.Scenario, wasm, native []side, load0, load1 string) {
	fmt.Fprintf(w, "%d rounds × (≥ %d warm-up runs over ≥ %d ms + %d measured runs) per scenario, WebAssembly (Node.js) and native interleaved; GOGC=%s\n",
		o.rounds, o.warmup, o.warmupMS, o.runs, o.gogc)
	fmt.Fprintf(w, "load average before %s, after %s\n", load0, load1)
	const row = "%-20s %10s %10s %7s %15s %10s %10s  %s\n"
	fmt.Fprintf(w, row, "scenario", "wasm", "native", "ratio", "round ratios", "wasm min", "native min", "budget")
	for i, s := range chosen {
		wm, nm := bench.Median(wasm[i].times), bench.Median(native[i].times)
		var rr []float64
		for k := range wasm[i].rounds {
			rr = append(rr, wasm[i].rounds[k]/native[i].rounds[k])
		}
		ratio := wm / nm
		verdict := fmt.Sprintf("ratio ≤ %.0f×: ", maxRatio) + yes(ratio <= maxRatio)
		if s.Name == garageName {
			verdict += fmt.Sprintf("; wasm ≤ %.0f ms: %s", garageBudgetM, yes(wm <= garageBudgetM))
		}
		fmt.Fprintf(w, row, s.Name, ms(wm), ms(nm), fmt.Sprintf("%.2f×", ratio),
			fmt.Sprintf("%.2f–%.2f", slices.Min(rr), slices.Max(rr)), ms(slices.Min(wasm[i].times)), ms(slices.Min(native[i].times)), verdict)
	}
}

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	if v >= 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
