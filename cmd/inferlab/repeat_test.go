package main

import (
	"strings"
	"testing"
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
