// Command benchrun measures the lab's scenarios (cmd/internal/bench/suite) in
// the process it runs in, natively or as WebAssembly under Node.js, and
// compares the two: `make bench-wasm` builds it both ways and runs
//
//	bin/benchrun --wasm bin/benchrun.wasm --exec "$(go env GOROOT)/lib/wasm/go_js_wasm_exec"
//
// which, round after round, starts the WebAssembly build and the native
// build of this same program once per scenario (alternating which goes
// first), each making --warmup unmeasured runs (and more until --warmup-ms
// have passed) and then --runs measured ones, and prints per scenario the
// median of all measured runs in each, and their ratio. Both run with the GOGC the browser's entry points set
// (app/sim.GCPercent, 400), unless --gogc says otherwise.
//
// Without --wasm it measures the scenarios in this process and prints them
// as JSON (cmd/internal/bench.Result, with every run's time): what the driver
// reads from each child.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/cmd/internal/bench"
	"github.com/inferlab/inferlab/cmd/internal/bench/suite"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

// DefaultScenarios are the WebAssembly budget's scenarios: the two 10,000-
// request core workloads and the garage lesson at 1,000 requests, plus the
// garage lesson at its defaults (what a page builds first).
const DefaultScenarios = "core-10k-uniform,core-10k-chat,lesson-garage-1000,lesson-garage"

// options are the command line of both the driver and a child.
type options struct {
	only           string
	runs, warmup   int
	warmupMS       int
	wasm, wasmExec string
	rounds         int
	gogc           string
}

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

func cli(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.only, "only", DefaultScenarios, "comma-separated scenario names (exact)")
	fs.IntVar(&o.runs, "runs", 5, "measured runs per scenario in each process, 1 to 100")
	fs.IntVar(&o.warmup, "warmup", 5, "unmeasured runs per scenario before them, 0 to 100")
	fs.IntVar(&o.warmupMS, "warmup-ms", 1000, "and go on with them until this many milliseconds have passed, 0 to 60000 (V8 tiers WebAssembly up as it runs)")
	fs.StringVar(&o.wasm, "wasm", "", "compare with this WebAssembly build of benchrun (GOOS=js GOARCH=wasm) under Node.js")
	fs.StringVar(&o.wasmExec, "exec", "", "go_js_wasm_exec, the Go distribution's Node.js launcher (default: `go env GOROOT`/lib/wasm/go_js_wasm_exec)")
	fs.IntVar(&o.rounds, "rounds", 3, "with --wasm: rounds of one WebAssembly and one native process per scenario, 1 to 20")
	fs.StringVar(&o.gogc, "gogc", strconv.Itoa(sim.GCPercent), "with --wasm: GOGC of both children (the browser's entry points set sim.GCPercent)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "benchrun: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	chosen, err := choose(o.only)
	if err == nil {
		err = o.check()
	}
	if err != nil {
		fmt.Fprintln(stderr, "benchrun:", err)
		return 2
	}
	if o.wasm != "" {
		return compare(o, chosen, stdout, stderr)
	}
	return measure(o, chosen, stdout, stderr)
}

func (o options) check() error {
	switch {
	case o.runs < 1 || o.runs > 100:
		return fmt.Errorf("--runs = %d is not allowed: want 1 to 100", o.runs)
	case o.warmup < 0 || o.warmup > 100:
		return fmt.Errorf("--warmup = %d is not allowed: want 0 to 100", o.warmup)
	case o.warmupMS < 0 || o.warmupMS > 60_000:
		return fmt.Errorf("--warmup-ms = %d is not allowed: want 0 to 60000", o.warmupMS)
	case o.rounds < 1 || o.rounds > 20:
		return fmt.Errorf("--rounds = %d is not allowed: want 1 to 20", o.rounds)
	}
	return nil
}

// choose returns the named scenarios in the order given.
func choose(only string) ([]bench.Scenario, error) {
	all := map[string]bench.Scenario{}
	var names []string
	for _, s := range suite.Scenarios() {
		all[s.Name] = s
		names = append(names, s.Name)
	}
	var out []bench.Scenario
	for _, n := range strings.Split(only, ",") {
		s, ok := all[strings.TrimSpace(n)]
		if !ok {
			return nil, fmt.Errorf("--only: no scenario %q; scenarios: %s", n, strings.Join(names, ", "))
		}
		out = append(out, s)
	}
	return out, nil
}

// report is a child's output.
type report struct {
	GOOS    string         `json:"goos"`
	GOARCH  string         `json:"goarch"`
	Results []bench.Result `json:"results"`
	// The Go heap at the end: what the runtime took from the system
	// (in WebAssembly, the linear memory it grew) and the collections run.
	HeapSysMB float64 `json:"heap_sys_mb"`
	NumGC     uint32  `json:"num_gc"`
}

// measure runs the scenarios here and writes the report as JSON.
func measure(o options, chosen []bench.Scenario, stdout, stderr io.Writer) int {
	rep := report{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	for _, s := range chosen {
		r, err := bench.MeasureWarmFor(s, o.warmup, time.Duration(o.warmupMS)*time.Millisecond, o.runs)
		if err != nil {
			fmt.Fprintln(stderr, "benchrun:", err)
			return 1
		}
		rep.Results = append(rep.Results, r)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.HeapSysMB, rep.NumGC = float64(ms.HeapSys)/1e6, ms.NumGC
	b, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintln(stderr, "benchrun:", err)
		return 1
	}
	stdout.Write(append(b, '\n'))
	return 0
}
