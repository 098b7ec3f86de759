package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
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
	if strings.Join(names, ",") != "lesson-cow-fork,lesson-chunked-prefill,lesson-cuda-graphs" {
		t.Errorf("--only lesson-c ran %v", names)
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

// Every scenario, core and lesson, has a unique name (--only and the JSON
// key on them), and every lesson has one.
func TestBenchScenarioNames(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenarios() {
		if seen[s.Name] {
			t.Errorf("duplicate scenario %q", s.Name)
		}
		seen[s.Name] = true
	}
	for _, l := range lessons.All() {
		if !seen["lesson-"+l.Slug] {
			t.Errorf("no scenario for lesson %s", l.Slug)
		}
	}
	if !seen["lesson-garage-1000"] || !seen["core-10k-uniform"] {
		t.Errorf("scenarios %v lack the budget workloads", seen)
	}
}
