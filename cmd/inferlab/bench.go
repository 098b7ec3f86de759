package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/cmd/internal/bench"
	"github.com/inferlab/inferlab/cmd/internal/bench/suite"
)

// maxBenchRuns bounds --runs: the core scenarios take about half a second each.
const maxBenchRuns = 100

// maxSearchEvals bounds --search: a build takes up to about a second.
const maxSearchEvals = 1000

// benchCmd times the lab's scenarios (cmd/internal/bench) on this machine: the
// core workloads behind the speed budgets (docs/ARCHITECTURE.md#budgets) and
// one build of every lesson.
func benchCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 3, fmt.Sprintf("runs per scenario, 1 to %d (the median and the fastest are reported)", maxBenchRuns))
	only := fs.String("only", "", "run only the scenarios whose name contains this text")
	format := fs.String("format", "text", "output format: text or json")
	list := fs.Bool("list", false, "list the scenarios without running them")
	corners := fs.Bool("corners", false, "instead, build every lesson's heaviest allowed settings (Lesson.HeavyCorners) and the heaviest accepted traces, each in a fresh process, and print wall time, CPU time and peak RSS (--only matches the lesson)")
	search := fs.Int("search", 0, fmt.Sprintf("instead, search each lesson's knobs for its heaviest allowed setting: a seeded hill-climb of this many builds per lesson (1 to %d), each in a fresh process; prints the worst found with its CPU time and peak RSS (--only matches the lesson)", maxSearchEvals))
	searchSeed := fs.Uint64("seed", 1, "the search's seed (with --search)")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *runs < 1 || *runs > maxBenchRuns {
		fmt.Fprintf(stderr, "inferlab bench: --runs = %d is not allowed: want 1 to %d\n", *runs, maxBenchRuns)
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "inferlab bench: --format = %q is not allowed: want text or json\n", *format)
		return 2
	}
	searching := false
	fs.Visit(func(f *flag.Flag) { searching = searching || f.Name == "search" })
	if searching && (*search < 1 || *search > maxSearchEvals || *corners) {
		fmt.Fprintf(stderr, "inferlab bench: --search = %d is not allowed: want 1 to %d builds per lesson, without --corners\n", *search, maxSearchEvals)
		return 2
	}
	if searching {
		return searchCmd(*search, *searchSeed, *only, *format, stdout, stderr)
	}
	if *corners {
		return cornersCmd(*runs, *only, *format, stdout, stderr)
	}
	var chosen []bench.Scenario
	var names []string
	for _, s := range suite.Scenarios() {
		names = append(names, s.Name)
		if strings.Contains(s.Name, *only) {
			chosen = append(chosen, s)
		}
	}
	if len(chosen) == 0 {
		fmt.Fprintf(stderr, "inferlab bench: --only = %q matches no scenario; scenarios: %s\n", *only, strings.Join(names, ", "))
		return 2
	}
	if *list {
		for _, s := range chosen {
			fmt.Fprintf(stdout, "%-26s %s\n", s.Name, s.What)
		}
		return 0
	}
	const row = "%-24s %9s %9s %9s %7s %9s %6s\n"
	if *format == "text" {
		fmt.Fprintf(stdout, "%d run(s) per scenario; wall-clock times on this machine, and the process's CPU time (median).\n", *runs)
		fmt.Fprintf(stdout, row, "scenario", "median", "fastest", "cpu", "budget", "requests", "steps")
	}
	var results []bench.Result
	for _, s := range chosen {
		r, err := bench.Measure(s, *runs)
		if err != nil {
			fmt.Fprintln(stderr, "inferlab bench:", err)
			return 1
		}
		results = append(results, r)
		if *format == "text" {
			budget := "—"
			if r.BudgetMS > 0 {
				budget = msText(r.BudgetMS)
			}
			reqs := "—"
			if r.Work.Requests > 0 {
				reqs = strconv.Itoa(r.Work.Requests)
			}
			cpu := "—"
			if r.CPUMedianMS > 0 {
				cpu = msText(r.CPUMedianMS)
			}
			fmt.Fprintf(stdout, row, r.Name, msText(r.MedianMS), msText(r.MinMS), cpu, budget, reqs, strconv.Itoa(r.Work.Steps))
		}
	}
	if *format == "json" {
		b, err := json.MarshalIndent(map[string]any{"runs": *runs, "results": results}, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "inferlab bench:", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
		return 0
	}
	return 0
}

// msText shows a duration in milliseconds, or seconds from one second up.
func msText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	if ms >= 10 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}
