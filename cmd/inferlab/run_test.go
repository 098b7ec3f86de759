package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

func run(args ...string) (code int, out, errOut string) {
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return code, o.String(), e.String()
}

func TestRunJSON(t *testing.T) {
	code, out, errOut := run("run", "garage", "--format", "json", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Lesson    string             `json:"lesson"`
		Params    map[string]any     `json:"params"`
		Steps     int                `json:"steps"`
		Metrics   map[string]float64 `json:"metrics"`
		Narration []string           `json:"narration"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Lesson != "garage" || got.Params["seed"] != float64(7) || got.Steps != len(got.Narration) || got.Steps < 3 {
		t.Errorf("lesson %q seed %v steps %d narration %d", got.Lesson, got.Params["seed"], got.Steps, len(got.Narration))
	}
	for _, k := range []string{"paged_admitted", "contiguous_admitted", "paged_waste_pct", "contiguous_waste_pct", "paged_utilization_pct", "contiguous_utilization_pct", "paged_waste_bound_pct"} {
		if _, ok := got.Metrics[k]; !ok {
			t.Errorf("no metric %s", k)
		}
	}
	// Same seed, byte-identical output.
	if _, again, _ := run("run", "garage", "--format", "json", "--seed", "7"); again != out {
		t.Error("the same seed printed different JSON")
	}
}

func TestRunBadParameters(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "garage", "--set", "block_size=0"}, []string{"block_size", `"0"`, "1 to 256"}},
		{[]string{"run", "garage", "--set", "block_size=sixteen"}, []string{"block_size", "sixteen", "integer"}},
		{[]string{"run", "garage", "--set", "prompt_min=900", "--set", "prompt_max=800"}, []string{"prompt_min", "900", "prompt_max"}},
		{[]string{"run", "garage", "--set", "requests=99999999"}, []string{"requests", "99999999", "1 to 2000"}},
		{[]string{"run", "garage", "--set", "colour=blue"}, []string{"no parameter", "colour"}},
		{[]string{"run", "block-table", "--set", "token=5000"}, []string{"token", "5000"}},
		{[]string{"run", "nosuch"}, []string{"no lesson", "nosuch"}},
		{[]string{"run", "garage", "--format", "yaml"}, []string{"--format", "yaml"}},
	} {
		code, _, errOut := run(tc.args...)
		if code == 0 {
			t.Errorf("%v: exit 0", tc.args)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not mention %q", tc.args, errOut, w)
			}
		}
	}
}

func TestRunText(t *testing.T) {
	code, out, _ := run("run", "cow-fork")
	if code != 0 || !strings.Contains(out, "Step 1/") || !strings.Contains(out, "Metrics:") || !strings.Contains(out, "Checkpoint before step") {
		t.Errorf("exit %d; text output lacks steps, metrics or checkpoints:\n%.400s", code, out)
	}
}

func TestRunTrace(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(`{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 16}
{"arrival_s": 0.1, "prompt_tokens": 600, "output_tokens": 16, "prefix_group": 1, "prefix_tokens": 256}
`), 0o644)
	code, out, errOut := run("run", "sandbox", "--trace", good, "--format", "json")
	if code != 0 || !strings.Contains(out, `"requests": 2`) || !strings.Contains(out, "from the trace good.jsonl") {
		t.Fatalf("exit %d (%s):\n%.500s", code, errOut, out)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 1}\n{\"arrival_s\": 1, \"prompt_tokens\": -5, \"output_tokens\": 1}\n"), 0o644)
	code, _, errOut = run("run", "sandbox", "--trace", bad)
	if code != 2 || !strings.Contains(errOut, "line 2") || !strings.Contains(errOut, "prompt_tokens") {
		t.Errorf("bad trace: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut = run("run", "garage", "--trace", good); code != 2 || !strings.Contains(errOut, "sandbox") {
		t.Errorf("--trace on garage: exit %d, stderr %q", code, errOut)
	}
}

// Each flag once, never empty, numbers in plain decimal; every refusal
// names the flag or knob (once, a repeated --set took the last value,
// --seed ” was ignored and 1_000 read as 1000).
func TestRunStrictFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "garage", "--set", "block_size=16", "--set", "block_size=32"}, []string{"block_size is given twice", `"16"`, `"32"`}},
		{[]string{"run", "garage", "--seed", "1", "--set", "seed=2"}, []string{"--seed 1 and --set seed=2", "give it once"}},
		{[]string{"run", "garage", "--seed", "1", "--seed", "2"}, []string{"-seed", "given twice"}},
		{[]string{"run", "garage", "--seed", ""}, []string{"-seed", "empty"}},
		{[]string{"run", "garage", "--seed", " "}, []string{"-seed", "empty"}},
		{[]string{"run", "sandbox", "--trace", ""}, []string{"-trace", "empty"}},
		{[]string{"run", "garage", "--format", ""}, []string{"-format", "empty"}},
		{[]string{"run", "garage", "--format", "json", "--format", "text"}, []string{"-format", "given twice"}},
		{[]string{"run", "garage", "--set", "requests=1_000"}, []string{"requests", "1_000", "an integer from"}},
		{[]string{"run", "garage", "--set", "requests=0x10"}, []string{"requests", "0x10"}},
		{[]string{"run", "garage", "--seed", "1_0"}, []string{"seed", "1_0"}},
		{[]string{"run", "garage", "--set", "=3"}, []string{"-set", "want key=value"}},
	} {
		code, out, errOut := run(tc.args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %.80q; want exit 2 and nothing printed", tc.args, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not mention %q", tc.args, errOut, w)
			}
		}
	}
	if code, _, errOut := run("run", "garage", "--set", "requests=1e1", "--format", "json"); code != 0 {
		t.Errorf("requests=1e1 (a decimal exponent): exit %d, %s", code, errOut)
	}
}

// 20 requests of 1 + 131,071 tokens arriving 5,000 s apart (1.2 KB) once
// ran for 32 s and 1.38 GiB; the trace's engine steps are now bounded:
// natively at 8 million in the worst case (Lesson.NativeTraceLimits), which
// 61 such requests fit and the 62nd passes.
func TestRunTraceStepBound(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 70; i++ {
		fmt.Fprintf(&b, `{"arrival_s": %d, "prompt_tokens": 1, "output_tokens": 131071}`+"\n", i*5000)
	}
	f := filepath.Join(t.TempDir(), "long.jsonl")
	os.WriteFile(f, []byte(b.String()), 0o644)
	code, out, errOut := run("run", "sandbox", "--trace", f)
	if code != 2 || out != "" || !strings.Contains(errOut, "line 62:") || !strings.Contains(errOut, "engine steps") || !strings.Contains(errOut, "want at most 8000000") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// The command line holds a trace to what one native invocation may cost,
// not to the page's bounds: a trace of 7.2 million of work and 450,500
// engine steps at most, over the page's 7 million and 250,000, runs natively
// (exit 0) and the page's limits refuse it; one
// past the native 140 million is refused, exit 2, at the line that passes
// it, naming the bound.
func TestRunTraceNativeWorkBound(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 500; i++ { // 500 × (2 × 1 + 16 × 900) = 7,201,000 of work, all running together
		fmt.Fprintf(&b, `{"arrival_s": %g, "prompt_tokens": 1, "output_tokens": 900}`+"\n", float64(i)/100)
	}
	mid := filepath.Join(dir, "mid.jsonl")
	os.WriteFile(mid, []byte(b.String()), 0o644)
	if code, out, errOut := run("run", "sandbox", "--trace", mid, "--format", "json"); code != 0 || !strings.Contains(out, `"requests": 500`) {
		t.Errorf("a trace over the page's bound, natively: exit %d, %q", code, errOut)
	}
	if _, err := workload.ParseTrace(strings.NewReader(b.String()), lessons.Get("sandbox").TraceLimits()); err == nil || !strings.Contains(err.Error(), "want at most") {
		t.Errorf("the page's limits took a trace of 7.2 million of work: %v", err)
	}
	b.Reset()
	for i := 0; i < 9000; i++ { // 2 × 8,000 + 16 = 16,016 of work a line: line 8,742 passes 140 million
		fmt.Fprintf(&b, `{"arrival_s": %d, "prompt_tokens": 8000, "output_tokens": 1}`+"\n", i)
	}
	heavy := filepath.Join(dir, "heavy.jsonl")
	os.WriteFile(heavy, []byte(b.String()), 0o644)
	if code, out, errOut := run("run", "sandbox", "--trace", heavy); code != 2 || out != "" || !strings.Contains(errOut, "line 8742:") || !strings.Contains(errOut, "want at most 140000000") {
		t.Errorf("a trace past the native bound: exit %d, stderr %q", code, errOut)
	}
}
