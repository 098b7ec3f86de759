package main

import (
	"encoding/json"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// TestMain lets bench --corners re-run this test binary as its child, and
// tests run it as the inferlab command (INFERLAB_TEST_DISPATCH=1).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "bench-corner" || os.Getenv("INFERLAB_TEST_DISPATCH") == "1") {
		os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Every declared heavy corner of the chosen lessons runs in a child process
// that reports the lesson's counted work; the parent reads its CPU time and
// peak memory.
func TestBenchCorners(t *testing.T) {
	code, out, errOut := run("bench", "--corners", "--only", "kv-", "--runs", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Runs    int            `json:"runs"`
		Results []cornerResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	want := len(lessons.Get("kv-budget").HeavyCorners) + len(lessons.Get("kv-tiers").HeavyCorners)
	if got.Runs != 2 || len(got.Results) != want {
		t.Fatalf("%d results of %d runs; want %d of 2", len(got.Results), got.Runs, want)
	}
	for _, r := range got.Results {
		l := lessons.Get(r.Lesson)
		if r.Work <= 0 || r.Work > l.MaxWork || r.WallS <= 0 || r.Runs != 2 || (runtime.GOOS == "linux" && (r.PeakMB < 1 || r.CPUS <= 0)) {
			t.Errorf("%s %s: %+v", r.Lesson, r.Label, r)
		}
	}
	code, out, _ = run("bench", "--corners", "--only", "prefix-cache", "--runs", "1")
	if code != 0 || !strings.Contains(out, "corner 2") || !strings.Contains(out, "0 of 2 settings over 2 s or 500 MB") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	if code, _, errOut := run("bench", "--corners", "--only", "nope"); code != 2 || !strings.Contains(errOut, `--only = "nope" matches no lesson`) {
		t.Errorf("--only nope: exit %d, %q", code, errOut)
	}
}

// Every lesson's heavy corners are listed, and the traces for each lesson
// that takes one; the generated traces are within the CLI's limits, near
// the bounds their comments state.
func TestCornerCases(t *testing.T) {
	n := 0
	for _, l := range lessons.All() {
		n += len(l.HeavyCorners)
		if l.TakesTrace() {
			n += len(heavyTraces)
		}
	}
	if cs := cornerCases(); len(cs) != n {
		t.Errorf("%d cases, want %d", len(cs), n)
	}
	sandbox := lessons.Get("sandbox")
	for _, tr := range heavyTraces {
		text, err := generatedTrace(tr.gen)
		if err != nil {
			t.Fatal(err)
		}
		reqs, err := workload.ParseTrace(strings.NewReader(text), cornerTraceLimits(sandbox))
		if err != nil {
			t.Errorf("%s: %v", tr.gen, err)
			continue
		}
		// The heaviest accepted: the sandbox serves it, and refuses it as
		// too heavy with a tenth more of its requests.
		if _, _, err := sandbox.RunTrace(nil, reqs, tr.label); err != nil {
			t.Errorf("%s: %v", tr.gen, err)
		}
		more := append(slices.Clone(reqs), reqs[:len(reqs)/10+1]...)
		if _, _, err := sandbox.RunTrace(nil, more, tr.label); err == nil || !strings.Contains(err.Error(), "too heavy") {
			t.Errorf("%s with %d more requests: %v, want refused as too heavy", tr.gen, len(reqs)/10+1, err)
		}
	}
	for _, bad := range []string{"1,2,3", "a,1,1,0", "1,1,1,-2"} {
		if _, err := generatedTrace(bad); err == nil {
			t.Errorf("generatedTrace(%q) did not fail", bad)
		}
	}
}

func TestBenchCornerChild(t *testing.T) {
	code, out, errOut := run("bench-corner", "kv-budget", "tp=2")
	var rep cornerReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Work <= 0 || rep.Steps == 0 {
		t.Errorf("exit %d, %q, %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "want a lesson"},
		{[]string{"nope"}, `no lesson "nope"`},
		{[]string{"kv-budget", "tp"}, `"tp" is not key=value`},
		{[]string{"kv-budget", "tp=3"}, "tp"},
		{[]string{"sandbox", "--trace-gen", "1,1"}, "want REQUESTS,PROMPT,OUTPUT,GAP_S"},
	} {
		if code, _, errOut := run(append([]string{"bench-corner"}, c.args...)...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("bench-corner %v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

func TestCornerOver(t *testing.T) {
	for _, c := range []struct {
		wall, mb float64
		over     bool
	}{{1.9, 499, false}, {2.1, 10, true}, {0.1, 501, true}} {
		if got := (cornerResult{WallS: c.wall, PeakMB: c.mb}).over(); got != c.over {
			t.Errorf("%v s, %v MB: over = %v", c.wall, c.mb, got)
		}
	}
}

// The seeded search climbs from the defaults and the declared corners, each
// build in a child process, and reports the worst allowed setting it found
// with its CPU time and peak memory; the same seed makes the same
// proposals. Only cheap lessons here: the benchmark itself runs all.
func TestBenchSearch(t *testing.T) {
	code, out, errOut := run("bench", "--search", "4", "--only", "prefix-cache", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Seed    uint64         `json:"seed"`
		Results []searchResult `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Results) != 1 {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	r := got.Results[0]
	l := lessons.Get("prefix-cache")
	v, errs := l.Resolve(r.Worst)
	if r.Lesson != "prefix-cache" || r.Evals < 3 || r.Work <= 0 || r.Work > l.MaxWork || len(errs) > 0 || l.CheckValues(v) != nil ||
		(runtime.GOOS == "linux" && (r.PeakMB < 1 || r.CPUS <= 0)) {
		t.Errorf("result %+v", r)
	}
	code, out, _ = run("bench", "--search", "3", "--only", "kv-tiers")
	if code != 0 || !strings.Contains(out, "worst setting found") || !strings.Contains(out, "0 of 1 lessons with a setting found over 1 s of CPU, scaled") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
	for _, args := range [][]string{{"--search", "0"}, {"--search", "1001"}, {"--search", "2", "--corners"}, {"--search", "2", "--only", "nope"}} {
		if code, _, errOut := run(append([]string{"bench"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	// The proposals are the seed's: two climbers with one seed propose the
	// same settings.
	a, b := newClimber(l, 7), newClimber(l, 7)
	cur := map[string]string{}
	for i := 0; i < 20; i++ {
		x, _ := a.propose(cur)
		y, _ := b.propose(cur)
		if !maps.Equal(x, y) {
			t.Fatalf("proposal %d: %v and %v from one seed", i, x, y)
		}
	}
}
