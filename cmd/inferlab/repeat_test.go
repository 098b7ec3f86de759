package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// Every flag of every command is given once: a repeated one is refused with
// exit 2 naming both values, as `run` refuses a repeated --seed, instead of
// silently taking the last (`bench --runs 1 --runs 2` ran twice per
// scenario). A bad first value is still refused for itself.
func TestRepeatedFlagsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--runs", "1", "--runs", "2", "--list"},
		{"bench", "--only", "core", "--only", "lesson", "--list"},
		{"bench", "--format", "json", "--format", "text", "--list"},
		{"bench", "--list", "--list=false"},
		{"bench", "--corners", "--corners", "--only", "nope"},
		{"bench-corner", "kv-budget", "--trace-gen", "1,1,1,0", "--trace-gen", "2,1,1,0"},
		{"compress", "--quality", "1", "--quality", "2", "x"},
		{"health", "--timeout", "1s", "--timeout", "2s"},
		{"static", "--out", "d", "--force", "--force"},
		{"run", "garage", "--format", "json", "--format", "text"},
	} {
		code, _, errOut := run(args...)
		if code != 2 || !strings.Contains(errOut, "given twice") {
			t.Errorf("%q: exit %d, %q; want 2 and \"given twice\"", args, code, errOut)
		}
	}
	// --set stays repeatable for different keys.
	if code, _, errOut := run("run", "garage", "--set", "block_size=32", "--set", "reserve=exact", "--format", "json"); code != 0 {
		t.Errorf("two --set: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run("bench", "--runs", "x", "--runs", "2"); code != 2 || !strings.Contains(errOut, `invalid value "x"`) {
		t.Errorf("bad first value: exit %d, %q", code, errOut)
	}
}

// A trace within every bound of the format but over the sandbox's native
// work bound is refused as input (exit 2) naming the line, the sum and the
// bound, before anything is simulated.
func TestTraceOverWorkBoundExits2(t *testing.T) {
	// Lines as long as one request may be, mostly prompt (the step bound,
	// which output tokens fill first, stays far off): the work bound is
	// crossed at the line whose running sum first passes it.
	lim := lessons.Get("sandbox").NativeTraceLimits()
	prompt, output := lim.MaxTokens-1, 1
	perLine := lim.PromptWork*int64(prompt) + lim.OutputWork*int64(output)
	lines := int(lim.MaxWork/perLine) + 1
	line := fmt.Sprintf(`{"arrival_s":0,"prompt_tokens":%d,"output_tokens":%d}`, prompt, output)
	f := filepath.Join(t.TempDir(), "heavy.jsonl")
	os.WriteFile(f, []byte(strings.Repeat(line+"\n", lines)), 0o644)
	code, out, errOut := run("run", "sandbox", "--trace", f)
	want := fmt.Sprintf("line %d: the trace needs %d of work", lines, int64(lines)*perLine)
	if code != 2 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "at most "+strconv.FormatInt(lim.MaxWork, 10)) {
		t.Errorf("exit %d, stderr %q: want exit 2 and %q", code, errOut, want)
	}
}

// The README's table lists every bound a trace is held to, natively and in
// the page, with the figures the code holds it to.
func TestReadmeListsTraceBounds(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	l := lessons.Get("sandbox")
	native, page := l.NativeTraceLimits(), l.TraceLimits()
	mib := func(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
	for _, row := range []struct{ what, cli, web string }{
		{"| file size |", mib(native.MaxBytes), mib(page.MaxBytes)},
		{"| requests (non-blank lines) |", thousands(native.MaxRequests), thousands(page.MaxRequests)},
		{"| `prompt_tokens` + `output_tokens` of one request |", thousands(native.MaxTokens), thousands(page.MaxTokens)},
		{"| tokens of all requests together |", thousands(native.MaxTotalTokens), thousands(page.MaxTotalTokens)},
		{"| `arrival_s` |", "0 to " + thousands(int(native.MaxArrival)), "0 to " + thousands(int(page.MaxArrival))},
		{"| `prefix_group`; `prefix_tokens` |", "0 to " + thousands(workload.MaxPrefixGroup), "the same"},
		{"| engine steps in the worst case: Σ `output_tokens` + Σ `prompt_tokens` / " + strconv.Itoa(native.StepTokens) + " + one per request |", thousands(native.MaxSteps), thousands(page.MaxSteps)},
		{fmt.Sprintf("| the sandbox's work: %d × Σ `prompt_tokens` + %d × Σ `output_tokens` |", native.PromptWork, native.OutputWork), thousands(int(native.MaxWork)), thousands(int(page.MaxWork))},
	} {
		i := strings.Index(string(b), row.what)
		line := ""
		if i >= 0 {
			line, _, _ = strings.Cut(string(b[i:]), "\n")
		}
		if !strings.HasPrefix(line, row.what+" "+row.cli) || !strings.Contains(line, "| "+row.web) {
			t.Errorf("README: want a row %s %s | %s, got %q", row.what, row.cli, row.web, line)
		}
	}
	if page.StepTokens != native.StepTokens {
		t.Errorf("steps counted with %d tokens in the page, %d natively", page.StepTokens, native.StepTokens)
	}
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
