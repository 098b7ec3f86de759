package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
)

// diffUsage is the diff command's synopsis.
const diffUsage = "inferlab diff SLUG [--set key=value ...] --vs key=value [--vs ...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]"

// diffCmd runs a lesson twice on the same seed: run A with the --set
// knobs, run B with the same knobs changed by --vs, and prints both runs'
// final metrics side by side with B − A. Each run is exactly `inferlab run
// SLUG` with its knobs, so the figures are the ones run prints. Where the
// lesson declares which way a metric improves (lessons.Metric.Better), the
// better run is named; elsewhere none is (a count, a setting).
func diffCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "inferlab diff: name a lesson first:", diffUsage)
		fmt.Fprintln(stderr, "lessons:", slugs())
		return 2
	}
	slug := args[0]
	l := lessons.Get(slug)
	if l == nil {
		fmt.Fprintf(stderr, "inferlab diff: no lesson %q; lessons: %s\n", printable(slug), slugs())
		return 2
	}
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sets, vs := setFlags{}, setFlags{}
	fs.Var(sets, "set", "set a parameter of both runs: key=value (repeatable)")
	fs.Var(vs, "vs", "change a parameter in run B: key=value (repeatable)")
	var seed, formatFlag, modelFlag, gpuFlag textFlag
	fs.Var(&seed, "seed", "random seed of both runs (same as --set seed=N)")
	fs.Var(&formatFlag, "format", "output format: text or json (default text)")
	fs.Var(&modelFlag, "model-config", modelConfigUsage)
	fs.Var(&gpuFlag, "gpu-config", gpuConfigUsage)
	giveOnce(fs, "set", "vs")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab diff: unexpected argument %q\n", printable(fs.Arg(0)))
		return 2
	}
	if seed.set {
		if v, dup := sets["seed"]; dup {
			fmt.Fprintf(stderr, "inferlab diff: --seed %s and --set seed=%s both give the seed: give it once\n", printable(seed.value), printable(v))
			return 2
		}
		sets["seed"] = seed.value
	}
	if len(vs) == 0 {
		fmt.Fprintf(stderr, "inferlab diff %s: give at least one --vs key=value, the knob run B changes: %s\n", slug, diffUsage)
		return 2
	}
	if _, ok := vs["seed"]; ok {
		fmt.Fprintf(stderr, "inferlab diff %s: --vs seed: both runs use the same seed; give it with --seed\n", slug)
		return 2
	}
	format := formatFlag.or("text")
	if format != "text" && format != "json" {
		fmt.Fprintf(stderr, "inferlab diff: --format = %q is not allowed: want text or json\n", printable(format))
		return 2
	}
	custom, ok := applyModelConfig("inferlab diff", &l, modelFlag, sets, stderr)
	if !ok {
		return 2
	}
	defer custom.release()
	gpu, ok := applyGPUConfig("inferlab diff", &l, gpuFlag, sets, stderr)
	if !ok {
		return 2
	}
	defer gpu.release()
	for _, kv := range []struct {
		flag string
		set  setFlags
	}{{"--set", sets}, {"--vs", vs}} {
		for _, k := range slices.Sorted(maps.Keys(kv.set)) {
			if _, ok := l.Param(k); !ok {
				fmt.Fprintf(stderr, "inferlab diff: %s %s: %s has no parameter %q; parameters: %s\n", kv.flag, printable(k), slug, printable(k), paramKeys(l))
				return 2
			}
		}
	}
	setsB := setFlags{}
	for k, v := range sets {
		setsB[k] = v
	}
	for k, v := range vs {
		setsB[k] = v
	}
	a, errA := runSide(l, sets)
	b, errB := runSide(l, setsB)
	for _, side := range []struct {
		name string
		err  error
	}{{"A", errA}, {"B", errB}} {
		if side.err != nil {
			fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab diff %s: run %s: %v", slug, side.name, side.err)))
			var pe *lessons.ParamError
			if errors.As(side.err, &pe) {
				return 2
			}
			return 1
		}
	}
	d := newDiff(slug, a, b)
	if format == "json" {
		out, err := d.json()
		if err != nil {
			fmt.Fprintln(stderr, "inferlab diff:", err)
			return 1
		}
		stdout.Write(out)
		return 0
	}
	if custom != nil {
		writeModelSummary(stdout, custom)
	}
	if gpu != nil {
		writeGPUSummary(stdout, gpu)
	}
	d.writeText(stdout, l)
	return 0
}

// side is one run of a diff.
type side struct {
	values lessons.Values
	script *lessons.Script
}

func runSide(l *lessons.Lesson, sets setFlags) (side, error) {
	s, v, err := l.Run(sets)
	return side{values: v, script: s}, err
}

// diffRun is one side in the JSON: `inferlab run --format json`'s run
// (export.Run) without the narration.
type diffRun struct {
	Params  map[string]any     `json:"params"`
	Steps   int                `json:"steps"`
	Metrics map[string]float64 `json:"metrics"`
}

// diffResult is what diff prints: the lesson, the knobs that differ, both
// runs and the metrics side by side, in the order run A lists them (then
// any only B has).
type diffResult struct {
	Lesson  string              `json:"lesson"`
	Changed []string            `json:"changed"`
	A       diffRun             `json:"a"`
	B       diffRun             `json:"b"`
	Metrics []export.MetricDiff `json:"metrics"`

	text  map[string]string // every knob of A as text
	textB map[string]string
}

func newDiff(slug string, a, b side) *diffResult {
	ra, rb := export.NewRun(slug, a.values, a.script), export.NewRun(slug, b.values, b.script)
	d := &diffResult{
		Lesson:  slug,
		Changed: []string{},
		A:       diffRun{Params: ra.Params, Steps: ra.Steps, Metrics: ra.Metrics},
		B:       diffRun{Params: rb.Params, Steps: rb.Steps, Metrics: rb.Metrics},
		text:    a.values.Text(),
		textB:   b.values.Text(),
	}
	for _, k := range slices.Sorted(maps.Keys(d.text)) {
		if d.text[k] != d.textB[k] {
			d.Changed = append(d.Changed, k)
		}
	}
	d.Metrics = export.DiffMetrics(a.script.Metrics, b.script.Metrics)
	return d
}

// figure writes a metric as `inferlab run` does.
func figure(x float64) string { return export.Figure(x) }

// verdictText is a metric's verdict in the text form: the better run, or
// "same", or nothing without a direction.
func verdictText(m export.MetricDiff) string {
	switch m.Verdict {
	case export.VerdictA:
		return "A"
	case export.VerdictB:
		return "B"
	}
	return m.Verdict
}

func (d *diffResult) json() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (d *diffResult) writeText(w io.Writer, l *lessons.Lesson) {
	fmt.Fprintf(w, "%s — %s (%s)\n", l.Slug, l.Title, l.Part)
	var same, ka, kb []string
	for _, k := range slices.Sorted(maps.Keys(d.text)) {
		if slices.Contains(d.Changed, k) {
			ka = append(ka, k+"="+d.text[k])
			kb = append(kb, k+"="+d.textB[k])
		} else {
			same = append(same, k+"="+d.text[k])
		}
	}
	fmt.Fprintf(w, "both: %s\n", strings.Join(same, " "))
	fmt.Fprintf(w, "A:    %s (%d steps)\n", strings.Join(ka, " "), d.A.Steps)
	fmt.Fprintf(w, "B:    %s (%d steps)\n\n", strings.Join(kb, " "), d.B.Steps)
	fmt.Fprintf(w, "  %-32s %14s %14s %14s %8s %-6s %-10s %s\n", "metric", "A", "B", "B − A", "", "better", "unit", "label")
	for _, m := range d.Metrics {
		a, b, diff := "—", "—", "—"
		if m.A != nil {
			a = figure(*m.A)
		}
		if m.B != nil {
			b = figure(*m.B)
		}
		if m.Diff != nil {
			diff = m.DiffText
		}
		fmt.Fprintf(w, "  %-32s %14s %14s %14s %8s %-6s %-10s %s\n", m.Key, a, b, diff, m.Relative, verdictText(m), m.Unit, m.Label)
	}
	fmt.Fprintln(w, "\nB − A is run B's figure less run A's; better names the run whose figure is better where the lesson says which way the metric improves (higher or lower), and is blank where it does not (a count, a setting).")
}
