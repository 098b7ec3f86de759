// Command tracecost times one lesson run on a trace, natively or in
// WebAssembly under Node.js, for the trace work bound's figures in
// BENCHMARKS.md:
//
//	go run ./cmd/tracecost --gen 2,1,74998,5000          # 2 requests of 1 + 74,998 tokens, 5,000 s apart
//	GOOS=js GOARCH=wasm go build -o /tmp/tracecost.wasm ./cmd/tracecost &&
//	  "$(go env GOROOT)/lib/wasm/go_js_wasm_exec" /tmp/tracecost.wasm --gen 6,1,16383,5000 --page
//
// It prints the trace's worst-case engine steps (workload.TraceSteps), the
// limits it was checked against (--page: the browser's), the wall time of
// the run and the memory the Go runtime took from the system.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

func main() {
	slug := flag.String("lesson", "sandbox", "lesson that takes a trace")
	gen := flag.String("gen", "", "generate the trace: REQUESTS,PROMPT,OUTPUT,GAP_S (each request alone when the gap is long)")
	file := flag.String("trace", "", "read the trace from this JSONL file instead")
	page := flag.Bool("page", false, "check against the browser's limits (Lesson.TraceLimits) instead of the CLI's")
	maxSteps := flag.Int("max-steps", 0, "override the limits' MaxSteps (to measure past the bound)")
	var sets []string
	flag.Func("set", "knob key=value (repeatable)", func(s string) error { sets = append(sets, s); return nil })
	flag.Parse()
	if err := run(*slug, *gen, *file, *page, *maxSteps, sets); err != nil {
		fmt.Fprintln(os.Stderr, "tracecost:", err)
		os.Exit(1)
	}
}

func run(slug, gen, file string, page bool, maxSteps int, sets []string) error {
	l := lessons.Get(slug)
	if l == nil || !l.TakesTrace() {
		return fmt.Errorf("no lesson %q that takes a trace", slug)
	}
	lim := workload.DefaultLimits()
	if page {
		lim = l.TraceLimits()
	}
	if maxSteps > 0 {
		lim.MaxSteps = maxSteps
	}
	text, err := traceText(gen, file)
	if err != nil {
		return err
	}
	reqs, err := workload.ParseTrace(strings.NewReader(text), lim)
	if err != nil {
		return err
	}
	raw := map[string]string{}
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		raw[k] = v
	}
	start := time.Now()
	if _, _, err := l.RunTrace(raw, reqs, "trace"); err != nil {
		return err
	}
	wall := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("%s %s: %d requests, TraceSteps %d (limit %d), %s: %.2f s, %d MB from the system (%s/%s)\n",
		slug, strings.Join(sets, " "), len(reqs), workload.TraceSteps(reqs, lim.StepTokens), lim.MaxSteps,
		map[bool]string{true: "page limits", false: "CLI limits"}[page], wall.Seconds(), ms.Sys>>20, runtime.GOOS, runtime.GOARCH)
	return nil
}

func traceText(gen, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		return string(b), err
	}
	f := strings.Split(gen, ",")
	if len(f) != 4 {
		return "", fmt.Errorf("--gen %q: want REQUESTS,PROMPT,OUTPUT,GAP_S", gen)
	}
	var n [3]int
	for i := range n {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			return "", fmt.Errorf("--gen %q: %v", gen, err)
		}
		n[i] = v
	}
	gap, err := strconv.ParseFloat(f[3], 64)
	if err != nil {
		return "", fmt.Errorf("--gen %q: %v", gen, err)
	}
	var b strings.Builder
	for i := 0; i < n[0]; i++ {
		fmt.Fprintf(&b, `{"arrival_s": %g, "prompt_tokens": %d, "output_tokens": %d}`+"\n", float64(i)*gap, n[1], n[2])
	}
	return b.String(), nil
}
