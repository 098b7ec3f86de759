package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/internal/textfmt"
	"github.com/inferlab/inferlab/lessons"
)

func runCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "inferlab run: name a lesson first: inferlab run SLUG [--set key=value ...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]")
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
	var seed, formatFlag, traceFlag, modelFlag, gpuFlag textFlag
	fs.Var(&seed, "seed", "random seed (same as --set seed=N)")
	fs.Var(&formatFlag, "format", "output format: text or json (default text)")
	fs.Var(&traceFlag, "trace", "lessons that take a trace ("+traceSlugs()+"): serve the requests of this JSONL trace (arrival_s, prompt_tokens, output_tokens, optional prefix_group and prefix_tokens)")
	fs.Var(&modelFlag, "model-config", modelConfigUsage)
	fs.Var(&gpuFlag, "gpu-config", gpuConfigUsage)
	giveOnce(fs, "set")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if seed.set {
		if v, dup := sets["seed"]; dup {
			fmt.Fprintf(stderr, "inferlab run: --seed %s and --set seed=%s both give the seed: give it once\n", seed.value, v)
			return 2
		}
		sets["seed"] = seed.value
	}
	format, trace := formatFlag.or("text"), traceFlag.value
	custom, ok := applyModelConfig("inferlab run", &l, modelFlag, sets, stderr)
	if !ok {
		return 2
	}
	defer custom.release()
	gpu, ok := applyGPUConfig("inferlab run", &l, gpuFlag, sets, stderr)
	if !ok {
		return 2
	}
	defer gpu.release()
	for k := range sets {
		if _, ok := l.Param(k); !ok {
			fmt.Fprintf(stderr, "inferlab run: %s has no parameter %q; parameters: %s\n", slug, k, paramKeys(l))
			return 2
		}
	}
	if format != "text" && format != "json" {
		fmt.Fprintf(stderr, "inferlab run: --format = %q is not allowed: want text or json\n", format)
		return 2
	}
	var script *lessons.Script
	var values lessons.Values
	var err error
	if trace != "" {
		if !l.TakesTrace() {
			fmt.Fprintf(stderr, "inferlab run: --trace works with lessons that take a trace (%s), not %s\n", traceSlugs(), slug)
			return 2
		}
		if err := l.CheckTraceKnobs(sets); err != nil {
			fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab run %s: %v", slug, err)))
			return 2
		}
		reqs, terr := readTrace(trace, l.NativeTraceLimits())
		if terr != nil {
			fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab run %s: --trace %s: %v", slug, trace, terr)))
			return 2
		}
		script, values, err = l.RunTraceNative(sets, reqs, filepath.Base(trace))
	} else {
		script, values, err = l.Run(sets)
	}
	if err != nil {
		var pe *lessons.ParamError
		var te *workload.TraceError
		if errors.As(err, &pe) || errors.As(err, &te) {
			fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab run %s: %v", slug, err)))
			return 2
		}
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab run %s: %v", slug, err)))
		return 1
	}
	if format == "json" {
		b, err := export.RunJSON(slug, values, script)
		if err != nil {
			fmt.Fprintln(stderr, "inferlab run:", err)
			return 1
		}
		stdout.Write(b)
		return 0
	}
	if custom != nil {
		writeModelSummary(stdout, custom)
	}
	if gpu != nil {
		writeGPUSummary(stdout, gpu)
	}
	writeText(stdout, l, values, script)
	return 0
}

// cornerTraceLimits are core/workload's default limits, with engine steps
// counted at the smallest token budget the lesson's knob allows, and the
// lesson's own work bound (Lesson.TraceWork, the page's): the bounds the
// heavy traces of bench --corners are the heaviest within. run --trace
// takes more (Lesson.NativeTraceLimits).
func cornerTraceLimits(l *lessons.Lesson) workload.Limits {
	lim := workload.DefaultLimits()
	if p, ok := l.Param("max_num_batched_tokens"); ok && p.Min >= 1 {
		lim.StepTokens = min(lim.StepTokens, int(p.Min))
	}
	lim.PromptWork, lim.OutputWork, lim.MaxWork = l.TraceWork()
	return lim
}

// readTrace parses a JSONL trace within lim. It
// reads regular files only: a named pipe with no writer would block open()
// forever, and a device (/dev/zero) or a directory is no trace. The file is
// checked before it is opened, and the opened file again (opened without
// blocking, so a file swapped for a pipe in between cannot hang it).
func readTrace(path string, lim workload.Limits) ([]workload.Request, error) {
	maxBytes := int64(-1)
	if lim.MaxBytes > 0 {
		maxBytes = lim.MaxBytes
	}
	f, err := openBounded(path, "a JSONL trace", maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return workload.ParseTrace(f, lim)
}

// openBounded opens path for reading when it is a regular file (kind names
// what it should hold) of at most maxBytes (no bound when negative),
// checked before it is opened and again once open, without blocking, so a
// file swapped for a pipe in between cannot hang it; a larger file is
// refused by its size before any of it is read.
func openBounded(path, kind string, maxBytes int64) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := boundedFile(st, kind, maxBytes); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = boundedFile(st, kind, maxBytes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readBounded reads a regular file of at most maxBytes (openBounded),
// refusing one that grew past it while it was read.
func readBounded(path, kind string, maxBytes int64) ([]byte, error) {
	f, err := openBounded(path, kind, maxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("is over %s bytes: want a regular file of at most %s bytes holding %s", textfmt.Comma(int(maxBytes)), textfmt.Comma(int(maxBytes)), kind)
	}
	return data, nil
}

// boundedFile refuses anything but a regular file of at most maxBytes (no
// bound when negative): `inferlab compress /dev/zero` once read 9.3 GB in
// 30 s, and a named pipe with no writer blocks its reader forever.
func boundedFile(st os.FileInfo, holding string, maxBytes int64) error {
	if err := regularFile(st, holding); err != nil {
		return err
	}
	if maxBytes >= 0 && st.Size() > maxBytes {
		return fmt.Errorf("is %s bytes: want a regular file of at most %s bytes holding %s", textfmt.Comma(int(st.Size())), textfmt.Comma(int(maxBytes)), holding)
	}
	return nil
}

// regularFile refuses anything but a regular file, naming what it is and
// what the file should hold.
func regularFile(st os.FileInfo, holding string) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("is %s: want a regular file holding %s", what, holding)
}

// listCmd lists the lessons: one a line, or with --format json an array
// of their slugs, titles, parts and summaries. Like every subcommand it
// refuses an unknown flag, a bad value and an argument it does not take
// (exit 2): `list --format json` once printed text, and `list --bogus`
// listed the lessons.
func listCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var formatFlag textFlag
	fs.Var(&formatFlag, "format", "output format: text or json (default text)")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab list: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	switch format := formatFlag.or("text"); format {
	case "json":
		type entry struct {
			Slug    string `json:"slug"`
			Title   string `json:"title"`
			Part    string `json:"part"`
			Summary string `json:"summary"`
		}
		out := []entry{}
		for _, l := range lessons.All() {
			out = append(out, entry{l.Slug, l.Title, l.Part, l.Summary})
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "inferlab list:", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
	case "text":
		width := 0 // the longest slug, so titles line up (speculative-decoding is 20)
		for _, l := range lessons.All() {
			width = max(width, len(l.Slug))
		}
		for _, l := range lessons.All() {
			fmt.Fprintf(stdout, "%-*s %s (%s)\n", width, l.Slug, l.Title, l.Part)
		}
	default:
		fmt.Fprintf(stderr, "inferlab list: --format = %q is not allowed: want text or json\n", format)
		return 2
	}
	return 0
}

// traceSlugs lists the lessons that take --trace.
func traceSlugs() string {
	var s []string
	for _, l := range lessons.All() {
		if l.TakesTrace() {
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
