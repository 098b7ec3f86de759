package main

import (
	"encoding/json"
	"github.com/inferlab/inferlab/lessons"
	"strings"
	"testing"
)

func TestBench(t *testing.T) {
	code, out, errOut := run("bench", "--only", "lesson-c", "--runs", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Runs    int `json:"runs"`
		Results []struct {
			Name     string  `json:"name"`
			Runs     int     `json:"runs"`
			MinMS    float64 `json:"min_ms"`
			MedianMS float64 `json:"median_ms"`
			Work     struct {
				Steps int `json:"steps"`
			} `json:"work"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("bench JSON: %v\n%s", err, out)
	}
	var names []string
	for _, r := range got.Results {
		names = append(names, r.Name)
		if r.Runs != 2 || r.MedianMS <= 0 || r.MinMS > r.MedianMS || r.Work.Steps == 0 {
			t.Errorf("result %+v", r)
		}
	}
	// Every lesson whose slug starts with c, in the registry's order.
	var want []string
	for _, l := range lessons.All() {
		if strings.HasPrefix(l.Slug, "c") {
			want = append(want, "lesson-"+l.Slug)
		}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("--only lesson-c ran %v, want %v", names, want)
	}

	code, out, _ = run("bench", "--only", "lesson-cow", "--runs", "1")
	if code != 0 || !strings.Contains(out, "lesson-cow-fork") || !strings.Contains(out, "median") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--runs", "0"}, "--runs = 0 is not allowed: want 1 to 100"},
		{[]string{"--runs", "many"}, "invalid value \"many\" for flag -runs"},
		{[]string{"--format", "xml"}, `--format = "xml" is not allowed: want text or json`},
		{[]string{"--only", "nope"}, `--only = "nope" matches no scenario; scenarios: core-10k-uniform`},
	} {
		if code, _, errOut := run(append([]string{"bench"}, c.args...)...); code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
