package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

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

// runOutput is the JSON shape documented in DESIGN.md.
type runOutput struct {
	Lesson    string             `json:"lesson"`
	Params    map[string]any     `json:"params"`
	Steps     int                `json:"steps"`
	Metrics   map[string]float64 `json:"metrics"`
	Narration []string           `json:"narration"`
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
	script, values, err := l.Run(sets)
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
		out := runOutput{Lesson: slug, Params: values.JSON(), Steps: len(script.Steps), Metrics: map[string]float64{}}
		for _, m := range script.Metrics {
			out.Metrics[m.Key] = m.Value
		}
		for _, s := range script.Steps {
			out.Narration = append(out.Narration, s.Narration)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(stderr, "inferlab run:", err)
			return 1
		}
		return 0
	}
	writeText(stdout, l, values, script)
	return 0
}

func listCmd(stdout io.Writer) int {
	for _, l := range lessons.All() {
		fmt.Fprintf(stdout, "%-16s %s (%s)\n", l.Slug, l.Title, l.Part)
	}
	return 0
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
