package main

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
)

type diffOutput struct {
	Lesson  string   `json:"lesson"`
	Changed []string `json:"changed"`
	A, B    runOutput
	Metrics []struct {
		Key   string   `json:"key"`
		Label string   `json:"label"`
		Unit  string   `json:"unit"`
		A     *float64 `json:"a"`
		B     *float64 `json:"b"`
		Diff  *float64 `json:"diff"`
		// Better and Verdict are absent for a metric without a direction.
		Better  *string `json:"better"`
		Verdict *string `json:"verdict"`
	} `json:"metrics"`
}

func diffJSON(t *testing.T, args ...string) diffOutput {
	t.Helper()
	code, out, errOut := run(append([]string{"diff"}, append(args, "--format", "json")...)...)
	if code != 0 {
		t.Fatalf("diff %q: exit %d: %s", args, code, errOut)
	}
	var d diffOutput
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &keys); err != nil || len(keys) != 5 {
		t.Errorf("diff JSON has keys %v, want lesson, changed, a, b, metrics", keys)
	}
	return d
}

// diff's figures are those of two `inferlab run` invocations: run A with
// the --set knobs, run B with them changed by --vs, both on the same seed.
func TestDiffEqualsTwoRuns(t *testing.T) {
	for _, tc := range []struct {
		slug      string
		set, vs   []string // key=value
		changed   string
		modelFile string
	}{
		{"garage", []string{"seed=7"}, []string{"block_size=32"}, "block_size", ""},
		{"prefix-cache", nil, []string{"capacity=30"}, "capacity", ""},
		{"kv-budget", []string{"gpu=h200-sxm"}, []string{"kv_cache_dtype=fp8"}, "kv_cache_dtype", ""},
		{"measuring", nil, []string{"model=llama-3.1-8b"}, "model", "llama-3.1-8b.json"},
	} {
		t.Run(tc.slug, func(t *testing.T) {
			var dargs, aargs, bargs []string
			for _, kv := range tc.set {
				dargs = append(dargs, "--set", kv)
				aargs = append(aargs, "--set", kv)
				if !strings.HasPrefix(kv, strings.Split(tc.vs[0], "=")[0]+"=") {
					bargs = append(bargs, "--set", kv)
				}
			}
			for _, kv := range tc.vs {
				dargs = append(dargs, "--vs", kv)
				bargs = append(bargs, "--set", kv)
			}
			if tc.modelFile != "" {
				dargs = append(dargs, "--model-config", configFile(tc.modelFile))
				aargs = append(aargs, "--model-config", configFile(tc.modelFile))
			}
			d := diffJSON(t, append([]string{tc.slug}, dargs...)...)
			a := runJSON(t, append([]string{"run", tc.slug, "--format", "json"}, aargs...)...)
			b := runJSON(t, append([]string{"run", tc.slug, "--format", "json"}, bargs...)...)
			if d.Lesson != tc.slug || len(d.Changed) != 1 || d.Changed[0] != tc.changed {
				t.Errorf("lesson %q changed %v, want %s and [%s]", d.Lesson, d.Changed, tc.slug, tc.changed)
			}
			if d.A.Steps != a.Steps || d.B.Steps != b.Steps || len(d.A.Metrics) != len(a.Metrics) || len(d.B.Metrics) != len(b.Metrics) {
				t.Errorf("steps %d/%d and %d/%d metrics, runs give %d/%d and %d/%d", d.A.Steps, d.B.Steps, len(d.A.Metrics), len(d.B.Metrics), a.Steps, b.Steps, len(a.Metrics), len(b.Metrics))
			}
			for k, v := range a.Metrics {
				if d.A.Metrics[k] != v {
					t.Errorf("A %s = %v, run gives %v", k, d.A.Metrics[k], v)
				}
			}
			for k, v := range b.Metrics {
				if d.B.Metrics[k] != v {
					t.Errorf("B %s = %v, run gives %v", k, d.B.Metrics[k], v)
				}
			}
			if len(d.Metrics) != len(a.Metrics) {
				t.Errorf("%d side-by-side rows, %d metrics", len(d.Metrics), len(a.Metrics))
			}
			differs := false
			for _, m := range d.Metrics {
				if m.A == nil || m.B == nil || m.Diff == nil || m.Label == "" {
					t.Errorf("%s: a %v b %v diff %v label %q", m.Key, m.A, m.B, m.Diff, m.Label)
					continue
				}
				if *m.A != a.Metrics[m.Key] || *m.B != b.Metrics[m.Key] {
					t.Errorf("%s: %v | %v, runs give %v | %v", m.Key, *m.A, *m.B, a.Metrics[m.Key], b.Metrics[m.Key])
				}
				if math.Abs(*m.Diff-(*m.B-*m.A)) > 1e-9*math.Max(1, math.Abs(*m.A)) {
					t.Errorf("%s: diff %v, want %v − %v", m.Key, *m.Diff, *m.B, *m.A)
				}
				differs = differs || *m.Diff != 0
			}
			if !differs {
				t.Errorf("changing %s moved no metric", tc.changed)
			}
		})
	}
}

// The text form prints each metric as `inferlab run` prints it.
func TestDiffTextFigures(t *testing.T) {
	code, out, errOut := run("diff", "garage", "--seed", "7", "--vs", "block_size=32")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	a := runJSON(t, "run", "garage", "--seed", "7", "--format", "json")
	b := runJSON(t, "run", "garage", "--seed", "7", "--set", "block_size=32", "--format", "json")
	for _, want := range []string{"both: ", "seed=7", "A:    block_size=16", "B:    block_size=32", "B − A", "better names the run"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	for k, av := range a.Metrics {
		row := ""
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 3 && f[0] == k {
				row = line
				if f[1] != figure(av) || f[2] != figure(b.Metrics[k]) {
					t.Errorf("%s: printed %s | %s, runs give %s | %s", k, f[1], f[2], figure(av), figure(b.Metrics[k]))
				}
				if d, err := strconv.ParseFloat(f[3], 64); err != nil || math.Abs(d-(b.Metrics[k]-av)) > 1e-9*math.Max(1, math.Abs(av)) {
					t.Errorf("%s: B − A printed %s, want %v", k, f[3], b.Metrics[k]-av)
				}
			}
		}
		if row == "" {
			t.Errorf("no row for %s", k)
		}
	}
}

// Run against itself, a lesson differs in nothing: the same seed gives the
// same figures.
func TestDiffSameSettings(t *testing.T) {
	d := diffJSON(t, "garage", "--seed", "3", "--vs", "block_size=16") // the default
	if len(d.Changed) != 0 {
		t.Errorf("changed %v, want none", d.Changed)
	}
	for _, m := range d.Metrics {
		if m.Diff == nil || *m.Diff != 0 {
			t.Errorf("%s differs from itself: %v", m.Key, m.Diff)
		}
	}
}

// Where a lesson says which way a metric improves, diff names the better
// run by the sign of B − A, in the JSON and in the text's better column;
// where it does not, neither names one. Garage's block_size=32 against 16
// wastes more of each page: A is better on waste, and a count of steps has
// no verdict.
func TestDiffVerdict(t *testing.T) {
	d := diffJSON(t, "garage", "--seed", "7", "--vs", "block_size=32")
	l := lessons.Get("garage")
	s, _, err := l.Run(map[string]string{"seed": "7"})
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]lessons.Direction{}
	for _, m := range s.Metrics {
		dirs[m.Key] = m.Better
	}
	verdicts := map[string]string{}
	for _, m := range d.Metrics {
		dir := dirs[m.Key]
		if dir == lessons.NoDirection {
			if m.Better != nil || m.Verdict != nil {
				t.Errorf("%s declares no direction but diff gives better %v verdict %v", m.Key, m.Better, m.Verdict)
			}
			continue
		}
		if m.Better == nil || *m.Better != string(dir) || m.Verdict == nil || m.Diff == nil {
			t.Errorf("%s: better %v verdict %v, want %q and one", m.Key, m.Better, m.Verdict, dir)
			continue
		}
		want := "same"
		switch {
		case *m.Diff > 0 && dir == lessons.HigherIsBetter, *m.Diff < 0 && dir == lessons.LowerIsBetter:
			want = "b"
		case *m.Diff != 0:
			want = "a"
		}
		if *m.Verdict != want {
			t.Errorf("%s (%s is better): B − A = %v, verdict %q, want %q", m.Key, dir, *m.Diff, *m.Verdict, want)
		}
		verdicts[m.Key] = want
	}
	if verdicts["paged_waste_pct"] != "a" {
		t.Errorf("paged_waste_pct: verdict %q, want a (16-token pages waste less)", verdicts["paged_waste_pct"])
	}
	code, out, errOut := run("diff", "garage", "--seed", "7", "--vs", "block_size=32")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		v, ok := verdicts[f[0]]
		if !ok {
			continue
		}
		rows++
		col := strings.ToUpper(v)
		if v == "same" {
			col = "same"
		}
		if !slicesContains(f[4:6], col) {
			t.Errorf("text row %q: better column lacks %q", line, col)
		}
	}
	if rows != len(verdicts) || rows == 0 {
		t.Errorf("%d text rows with a verdict, want %d", rows, len(verdicts))
	}
}

func slicesContains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func TestDifference(t *testing.T) {
	for _, tc := range []struct {
		a, b float64
		want string
	}{
		{0.1, 0.3, "+0.2"}, {97.57, 96.87, "-0.70"}, {34, 33, "-1"}, {5, 5, "0"}, {1.5, 1.25, "-0.25"}, {-1, 1, "+2"},
	} {
		if got, _ := export.Difference(tc.a, tc.b); got != tc.want {
			t.Errorf("difference(%v, %v) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDiffRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"diff"}, 2, []string{"name a lesson first"}},
		{[]string{"diff", "--vs", "block_size=32"}, 2, []string{"name a lesson first"}},
		{[]string{"diff", "nosuch", "--vs", "a=b"}, 2, []string{`no lesson "nosuch"`}},
		{[]string{"diff", "garage"}, 2, []string{"at least one --vs"}},
		{[]string{"diff", "garage", "--vs", "seed=3"}, 2, []string{"same seed", "--seed"}},
		{[]string{"diff", "garage", "--vs", "colour=blue"}, 2, []string{"--vs colour", "no parameter"}},
		{[]string{"diff", "garage", "--set", "colour=blue", "--vs", "block_size=32"}, 2, []string{"--set colour", "no parameter"}},
		{[]string{"diff", "garage", "--vs", "block_size=0"}, 2, []string{"run B", `block_size = "0"`, "1 to 256"}},
		{[]string{"diff", "garage", "--set", "block_size=0", "--vs", "block_size=32"}, 2, []string{"run A", `block_size = "0"`}},
		{[]string{"diff", "garage", "--vs", "block_size=32", "--format", "yaml"}, 2, []string{"--format", "yaml"}},
		{[]string{"diff", "garage", "--vs", "block_size=32", "--vs", "block_size=64"}, 2, []string{"given twice"}},
		{[]string{"diff", "garage", "--vs", "block_size=32", "extra"}, 2, []string{"unexpected argument"}},
		{[]string{"diff", "garage", "--seed", "7", "--set", "seed=8", "--vs", "block_size=32"}, 2, []string{"give it once"}},
		{[]string{"diff", "garage", "--vs", "block_size"}, 2, []string{"want key=value"}},
		{[]string{"diff", "garage", "--trace", "x.jsonl", "--vs", "block_size=32"}, 2, []string{"flag provided but not defined"}},
		{[]string{"diff", "garage", "--model-config", "x.json", "--vs", "block_size=32"}, 2, []string{"lessons that pick a model"}},
	} {
		code, out, errOut := run(tc.args...)
		if code != tc.code || out != "" {
			t.Errorf("%q: exit %d, stdout %.80q; want %d and nothing", tc.args, code, out, tc.code)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%q: stderr %q lacks %q", tc.args, errOut, w)
			}
		}
	}
}

// The README's section on diff, --model-config and --gpu-config shows commands and lines
// of their output: each command runs (from the repository root, as the
// README writes it), and each line shown is a line the commands print.
func TestReadmeDiffSection(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const title = "## Compare two settings; bring your own model and GPU\n"
	s := string(b)
	i := strings.Index(s, title)
	if i < 0 {
		t.Fatal("README has no section " + title)
	}
	s = s[i+len(title):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	t.Chdir("../..")
	blocks := strings.Split(s, "```")
	checked := 0
	var printed []string
	for k := 1; k < len(blocks); k += 2 {
		kind, body, _ := strings.Cut(blocks[k], "\n")
		switch kind {
		case "sh":
			printed = nil
			for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
				args, ok := strings.CutPrefix(line, "go run ./cmd/inferlab ")
				if !ok {
					t.Fatalf("README command %q is not go run ./cmd/inferlab …", line)
				}
				code, out, errOut := run(strings.Fields(args)...)
				if code != 0 {
					t.Fatalf("README command %q: exit %d: %s", line, code, errOut)
				}
				printed = append(printed, strings.Split(out, "\n")...)
			}
		case "text":
			for _, want := range strings.Split(strings.TrimSpace(body), "\n") {
				found := false
				for _, got := range printed {
					found = found || strings.TrimRight(got, " ") == strings.TrimRight(want, " ")
				}
				if !found {
					t.Errorf("README shows %q, which the commands above it do not print", want)
				}
				checked++
			}
		}
	}
	if checked < 8 {
		t.Errorf("checked %d lines of README output, want the section's examples", checked)
	}
}
