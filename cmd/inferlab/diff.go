package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
)

// diffUsage is the diff command's synopsis.
const diffUsage = "inferlab diff SLUG [--set key=value ...] --vs key=value [--vs ...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]"

// diffCmd runs a lesson twice on the same seed: run A with the --set
// knobs, run B with the same knobs changed by --vs, and prints both runs'
// final metrics side by side with B − A. Each run is exactly `inferlab run
// SLUG` with its knobs, so the figures are the ones run prints. No verdict
// is printed: a lesson's metrics declare a key, a label, a unit and a
// value, not whether more is better.
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

// diffMetric is one metric of both runs. A or B is null for a metric only
// one run reports, and Diff then too; Diff is B − A rounded to the decimals
// the two values are written with, so it is the difference of the printed
// figures, without binary rounding noise (0.1 + 0.2).
type diffMetric struct {
	Key   string   `json:"key"`
	Label string   `json:"label"`
	Unit  string   `json:"unit"`
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	Diff  *float64 `json:"diff"`
}

// diffResult is what diff prints: the lesson, the knobs that differ, both
// runs and the metrics side by side, in the order run A lists them (then
// any only B has).
type diffResult struct {
	Lesson  string       `json:"lesson"`
	Changed []string     `json:"changed"`
	A       diffRun      `json:"a"`
	B       diffRun      `json:"b"`
	Metrics []diffMetric `json:"metrics"`

	text      map[string]string // every knob of A as text
	textB     map[string]string
	diffShown map[string]string // Diff as printed, by key
}

func newDiff(slug string, a, b side) *diffResult {
	ra, rb := export.NewRun(slug, a.values, a.script), export.NewRun(slug, b.values, b.script)
	d := &diffResult{
		Lesson:    slug,
		Changed:   []string{},
		A:         diffRun{Params: ra.Params, Steps: ra.Steps, Metrics: ra.Metrics},
		B:         diffRun{Params: rb.Params, Steps: rb.Steps, Metrics: rb.Metrics},
		text:      a.values.Text(),
		textB:     b.values.Text(),
		diffShown: map[string]string{},
	}
	for _, k := range slices.Sorted(maps.Keys(d.text)) {
		if d.text[k] != d.textB[k] {
			d.Changed = append(d.Changed, k)
		}
	}
	seen := map[string]bool{}
	add := func(m lessons.Metric) {
		if seen[m.Key] {
			return
		}
		seen[m.Key] = true
		dm := diffMetric{Key: m.Key, Label: m.Label, Unit: m.Unit}
		if v, ok := a.script.Metric(m.Key); ok {
			dm.A = &v
		}
		if v, ok := b.script.Metric(m.Key); ok {
			dm.B = &v
		}
		if dm.A != nil && dm.B != nil {
			shown, x := difference(*dm.A, *dm.B)
			dm.Diff = &x
			d.diffShown[m.Key] = shown
		}
		d.Metrics = append(d.Metrics, dm)
	}
	for _, m := range a.script.Metrics {
		add(m)
	}
	for _, m := range b.script.Metrics {
		add(m)
	}
	return d
}

// figure writes a metric as `inferlab run` does.
func figure(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// difference is b − a written with as many decimals as the longer of the
// two figures (at most 12), and its value: the difference of the figures
// as printed. A zero difference is "0", never "-0".
func difference(a, b float64) (string, float64) {
	dec := max(decimals(figure(a)), decimals(figure(b)))
	s := strconv.FormatFloat(b-a, 'f', min(dec, 12), 64)
	x, _ := strconv.ParseFloat(s, 64)
	if x == 0 {
		return "0", 0
	}
	if x > 0 {
		s = "+" + s
	}
	return s, x
}

func decimals(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// relative is (b − a) / |a| in percent, "" when a is 0 or missing.
func relative(a, b *float64) string {
	if a == nil || b == nil || *a == 0 {
		return ""
	}
	r := 100 * (*b - *a) / math.Abs(*a)
	s := strconv.FormatFloat(r, 'f', 1, 64)
	if s == "0.0" || s == "-0.0" {
		return "0%"
	}
	if r > 0 {
		s = "+" + s
	}
	return s + "%"
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
	fmt.Fprintf(w, "  %-32s %14s %14s %14s %8s %-10s %s\n", "metric", "A", "B", "B − A", "", "unit", "label")
	for _, m := range d.Metrics {
		a, b, diff := "—", "—", "—"
		if m.A != nil {
			a = figure(*m.A)
		}
		if m.B != nil {
			b = figure(*m.B)
		}
		if s, ok := d.diffShown[m.Key]; ok {
			diff = s
		}
		fmt.Fprintf(w, "  %-32s %14s %14s %14s %8s %-10s %s\n", m.Key, a, b, diff, relative(m.A, m.B), m.Unit, m.Label)
	}
	fmt.Fprintln(w, "\nB − A is run B's figure less run A's; the lesson's metrics say nothing of which direction is better, so no verdict is given.")
}
