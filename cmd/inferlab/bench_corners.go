package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/inferlab/inferlab/cmd/internal/bench"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// The bound on any accepted setting, natively: time and memory
// (docs/ARCHITECTURE.md#budgets).
const (
	cornerMaxSeconds = 2.0
	cornerMaxMB      = 500.0
)

// cornerCase is one heavy setting: a lesson's declared heavy corner
// (Lesson.HeavyCorners) or a generated trace at the CLI's trace limits.
type cornerCase struct {
	Lesson string
	Label  string            // "corner 3", "trace 1"
	Set    map[string]string // knobs
	Trace  string            // REQUESTS,PROMPT,OUTPUT,GAP_S of a generated trace, or ""
}

// heavyTraces are the heaviest traces within the lesson's own bound, in
// the shapes that cost most: requests far apart, so that each runs alone and
// makes one token per engine step (BENCHMARKS.md, "Trace work bound"), and
// long prompts all at once. Two bounds apply: workload.DefaultLimits'
// 500,000 engine steps (workload.TraceSteps) and the sandbox's 7,000,000 of
// work (2 × prompt + 16 × output tokens summed), which binds first here.
// `inferlab run --trace` takes up to Lesson.NativeTraceLimits, which
// BENCHMARKS.md times on its own.
// The setting column shows a trace as REQUESTS,PROMPT,OUTPUT,GAP_S.
var heavyTraces = []struct{ gen, label string }{
	{"4,1,109000,5000", "trace 1"}, // 6,976,008 of work, 436,008 steps at most
	{"19000,1,22,30", "trace 2"},   // 6,726,000 of work, 456,297 steps at most
	{"1000,3400,1,0", "trace 3"},   // 6,816,000 of work, 55,125 steps at most
}

// cornerCases lists every lesson's heavy corners in index order, then the
// heavy traces for each lesson that takes one.
func cornerCases() []cornerCase {
	var out []cornerCase
	for _, l := range lessons.All() {
		for i, set := range l.HeavyCorners {
			out = append(out, cornerCase{Lesson: l.Slug, Label: fmt.Sprintf("corner %d", i+1), Set: set})
		}
	}
	for _, l := range lessons.All() {
		if !l.TakesTrace() {
			continue
		}
		for _, t := range heavyTraces {
			out = append(out, cornerCase{Lesson: l.Slug, Label: t.label, Trace: t.gen})
		}
	}
	return out
}

// setting is the knobs as key=value, or the trace in words.
func (c cornerCase) setting() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(c.Set)) {
		kv = append(kv, k+"="+c.Set[k])
	}
	if c.Trace != "" {
		kv = append([]string{c.Trace}, kv...)
	}
	return strings.Join(kv, " ")
}

// args is the hidden bench-corner command line that builds c.
func (c cornerCase) args() []string {
	a := []string{"bench-corner", c.Lesson}
	if c.Trace != "" {
		a = append(a, "--trace-gen", c.Trace)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Set)) {
		a = append(a, k+"="+c.Set[k])
	}
	return a
}

// cornerReport is what a bench-corner child prints.
type cornerReport struct {
	BuildMS float64 `json:"build_ms"` // the build alone, wall-clock
	Work    int64   `json:"work"`     // Script.Work
	Steps   int     `json:"steps"`
}

// cornerResult is one case measured over runs fresh processes.
type cornerResult struct {
	cornerCase
	Runs    int     `json:"runs"`
	WallS   float64 `json:"wall_s"`      // the whole child process, median
	BuildS  float64 `json:"build_s"`     // the build alone, median
	CPUS    float64 `json:"cpu_s"`       // user + system, median
	PeakMB  float64 `json:"peak_rss_mb"` // the largest peak RSS of the runs
	Work    int64   `json:"work"`
	MaxWork int64   `json:"max_work,omitempty"`
}

func (r cornerResult) over() bool { return r.WallS > cornerMaxSeconds || r.PeakMB > cornerMaxMB }

// cornersCmd runs every heavy case in its own child process (this binary,
// bench-corner), so that each peak RSS is the case's own, and prints wall
// time, CPU time and peak memory, flagging any over 2 s or 500 MB.
func cornersCmd(runs int, only, format string, stdout, stderr io.Writer) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "inferlab bench --corners: cannot find this program to run it again:", err)
		return 1
	}
	var chosen []cornerCase
	for _, c := range cornerCases() {
		if strings.Contains(c.Lesson, only) {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		fmt.Fprintf(stderr, "inferlab bench --corners: --only = %q matches no lesson with heavy corners\n", only)
		return 2
	}
	const row = "%-20s %-9s %8s %8s %8s %9s %10s %-5s %s\n"
	if format == "text" {
		fmt.Fprintf(stdout, "%d fresh process(es) per setting (median time, largest peak RSS); load average %s\n", runs, bench.LoadAverage())
		fmt.Fprintf(stdout, row, "lesson", "case", "wall", "build", "cpu", "peak RSS", "work", "", "setting")
	}
	var results []cornerResult
	overs := 0
	for _, c := range chosen {
		r, err := measureCorner(self, c, runs)
		if err != nil {
			fmt.Fprintf(stderr, "inferlab bench --corners: %s %s: %v\n", c.Lesson, c.Label, err)
			return 1
		}
		results = append(results, r)
		flag := "ok"
		if r.over() {
			flag, overs = "OVER", overs+1
		}
		if format == "text" {
			fmt.Fprintf(stdout, row, c.Lesson, c.Label, fmt.Sprintf("%.2f s", r.WallS), fmt.Sprintf("%.2f s", r.BuildS),
				fmt.Sprintf("%.2f s", r.CPUS), fmt.Sprintf("%.0f MB", r.PeakMB), strconv.FormatInt(r.Work, 10), flag, c.setting())
		}
	}
	if format == "json" {
		b, err := json.MarshalIndent(map[string]any{"runs": runs, "load_average": bench.LoadAverage(), "results": results}, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "inferlab bench --corners:", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
	} else {
		fmt.Fprintf(stdout, "%d of %d settings over %.0f s or %.0f MB; load average now %s\n", overs, len(results), cornerMaxSeconds, cornerMaxMB, bench.LoadAverage())
	}
	return 0
}

// measureCorner runs c in runs fresh child processes.
func measureCorner(self string, c cornerCase, runs int) (cornerResult, error) {
	r := cornerResult{cornerCase: c, Runs: runs, MaxWork: lessons.Get(c.Lesson).MaxWork}
	var walls, builds, cpus []float64
	for range runs {
		var out, errOut bytes.Buffer
		cmd := exec.Command(self, c.args()...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return r, fmt.Errorf("%v: %s", err, strings.TrimSpace(errOut.String()))
		}
		walls = append(walls, time.Since(start).Seconds())
		var rep cornerReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			return r, fmt.Errorf("unreadable report %q: %v", out.String(), err)
		}
		builds = append(builds, rep.BuildMS/1000)
		r.Work = rep.Work
		cpu, peak, ok := childUsage(cmd.ProcessState)
		if ok {
			cpus = append(cpus, cpu)
			r.PeakMB = max(r.PeakMB, peak)
		}
	}
	r.WallS, r.BuildS = median(walls), median(builds)
	r.CPUS = median(cpus)
	return r, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// benchCornerCmd is the hidden child: it builds one lesson with the given
// knobs (key=value arguments), on a generated trace with --trace-gen, and
// prints a cornerReport.
func benchCornerCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "inferlab bench-corner: want a lesson")
		return 2
	}
	l := lessons.Get(args[0])
	if l == nil {
		fmt.Fprintf(stderr, "inferlab bench-corner: no lesson %q\n", args[0])
		return 2
	}
	fs := flag.NewFlagSet("bench-corner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gen := fs.String("trace-gen", "", "REQUESTS,PROMPT,OUTPUT,GAP_S")
	giveOnce(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	set := map[string]string{}
	for _, kv := range fs.Args() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Fprintf(stderr, "inferlab bench-corner: %q is not key=value\n", kv)
			return 2
		}
		set[k] = v
	}
	var trace []workload.Request
	if *gen != "" {
		text, err := generatedTrace(*gen)
		if err == nil {
			trace, err = workload.ParseTrace(strings.NewReader(text), cornerTraceLimits(l))
		}
		if err != nil {
			fmt.Fprintln(stderr, "inferlab bench-corner:", err)
			return 1
		}
	}
	start := time.Now()
	var s *lessons.Script
	var err error
	if trace != nil {
		s, _, err = l.RunTrace(set, trace, "generated")
	} else {
		s, _, err = l.Run(set)
	}
	if err != nil {
		fmt.Fprintln(stderr, "inferlab bench-corner:", err)
		return 1
	}
	b, _ := json.Marshal(cornerReport{BuildMS: float64(time.Since(start).Microseconds()) / 1000, Work: s.Work, Steps: len(s.Steps)})
	stdout.Write(append(b, '\n'))
	return 0
}

// generatedTrace is REQUESTS requests of PROMPT + OUTPUT tokens, GAP_S
// seconds apart, as JSONL.
func generatedTrace(gen string) (string, error) {
	f := strings.Split(gen, ",")
	if len(f) != 4 {
		return "", fmt.Errorf("--trace-gen %q: want REQUESTS,PROMPT,OUTPUT,GAP_S", gen)
	}
	var n [3]int
	for i := range n {
		v, err := strconv.Atoi(f[i])
		if err != nil || v < 0 {
			return "", fmt.Errorf("--trace-gen %q: field %d is not a count", gen, i+1)
		}
		n[i] = v
	}
	gap, err := strconv.ParseFloat(f[3], 64)
	if err != nil || gap < 0 {
		return "", fmt.Errorf("--trace-gen %q: the gap is not a number of seconds", gen)
	}
	var b strings.Builder
	for i := range n[0] {
		fmt.Fprintf(&b, `{"arrival_s": %g, "prompt_tokens": %d, "output_tokens": %d}`+"\n", float64(i)*gap, n[1], n[2])
	}
	return b.String(), nil
}
