package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
)

// setFlags collects repeated --set key=value pairs.
type setFlags map[string]string

func (s setFlags) String() string { return "" }
func (s setFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("--set %q: want key=value", kv)
	}
	s[k] = v
	return nil
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "inferlab run: name a lesson first: inferlab run SLUG [--set key=value ...] [--seed N] [--format text|json]")
		fmt.Fprintln(stderr, "lessons:", slugs())
		return 2
	}
	slug := args[0]
	l := lessons.Get(slug)
	if l == nil {
		fmt.Fprintf(stderr, "inferlab run: no lesson %q; lessons: %s\n", slug, slugs())
		return 2
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sets := setFlags{}
	fs.Var(sets, "set", "set a parameter: key=value (repeatable)")
	seed := fs.String("seed", "", "random seed (same as --set seed=N)")
	format := fs.String("format", "text", "output format: text or json")
	trace := fs.String("trace", "", "lessons that take a trace ("+traceSlugs()+"): serve the requests of this JSONL trace (arrival_s, prompt_tokens, output_tokens, optional prefix_group and prefix_tokens)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *seed != "" {
		sets["seed"] = *seed
	}
	for k := range sets {
		if _, ok := l.Param(k); !ok {
			fmt.Fprintf(stderr, "inferlab run: %s has no parameter %q; parameters: %s\n", slug, k, paramKeys(l))
			return 2
		}
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "inferlab run: --format = %q is not allowed: want text or json\n", *format)
		return 2
	}
	var script *lessons.Script
	var values lessons.Values
	var err error
	if *trace != "" {
		if l.BuildTrace == nil {
			fmt.Fprintf(stderr, "inferlab run: --trace works with lessons that take a trace (%s), not %s\n", traceSlugs(), slug)
			return 2
		}
		reqs, terr := readTrace(*trace)
		if terr != nil {
			fmt.Fprintf(stderr, "inferlab run %s: --trace %s: %v\n", slug, *trace, terr)
			return 2
		}
		script, values, err = l.RunTrace(sets, reqs, filepath.Base(*trace))
	} else {
		script, values, err = l.Run(sets)
	}
	if err != nil {
		var pe *lessons.ParamError
		if errors.As(err, &pe) {
			fmt.Fprintf(stderr, "inferlab run %s: %v\n", slug, err)
			return 2
		}
		fmt.Fprintf(stderr, "inferlab run %s: %v\n", slug, err)
		return 1
	}
	if *format == "json" {
		b, err := export.RunJSON(slug, values, script)
		if err != nil {
			fmt.Fprintln(stderr, "inferlab run:", err)
			return 1
		}
		stdout.Write(b)
		return 0
	}
	writeText(stdout, l, values, script)
	return 0
}

// readTrace parses a JSONL trace within core/workload's default limits.
func readTrace(path string) ([]workload.Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return workload.ParseTrace(f, workload.DefaultLimits())
}

func listCmd(stdout io.Writer) int {
	for _, l := range lessons.All() {
		fmt.Fprintf(stdout, "%-16s %s (%s)\n", l.Slug, l.Title, l.Part)
	}
	return 0
}

// traceSlugs lists the lessons that take --trace.
func traceSlugs() string {
	var s []string
	for _, l := range lessons.All() {
		if l.BuildTrace != nil {
			s = append(s, l.Slug)
		}
	}
	return strings.Join(s, ", ")
}

func slugs() string {
	var s []string
	for _, l := range lessons.All() {
		s = append(s, l.Slug)
	}
	return strings.Join(s, ", ")
}

func paramKeys(l *lessons.Lesson) string {
	var s []string
	for _, p := range l.Params {
		s = append(s, p.Key)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
