package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/cmd/internal/bench"
)

// A child measures the scenarios it is given, in that order, after the
// warm-up runs, and reports every measured run's time.
func TestChildReport(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := cli([]string{"--only", "lesson-prefix-cache,lesson-cow-fork", "--runs", "3", "--warmup", "1", "--warmup-ms", "0"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out.String())
	}
	if len(rep.Results) != 2 || rep.Results[0].Name != "lesson-prefix-cache" || rep.Results[1].Name != "lesson-cow-fork" {
		t.Fatalf("results %+v", rep.Results)
	}
	for _, r := range rep.Results {
		if r.Runs != 3 || r.Warmup != 1 || len(r.TimesMS) != 3 || r.MedianMS != bench.Median(r.TimesMS) || r.Work.Steps == 0 {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "core-10k"}, `--only: no scenario "core-10k"; scenarios: core-10k-uniform`},
		{[]string{"--runs", "0"}, "--runs = 0 is not allowed: want 1 to 100"},
		{[]string{"--warmup", "-1"}, "--warmup = -1 is not allowed: want 0 to 100"},
		{[]string{"--rounds", "21"}, "--rounds = 21 is not allowed: want 1 to 20"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		if code := cli(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
}

// The comparison pools every measured run of each side and judges the
// pooled medians against the budgets: 3× native, and 50 ms for the
// 1,000-request garage in WebAssembly.
func TestPrintComparison(t *testing.T) {
	chosen := []bench.Scenario{{Name: "core-10k-uniform"}, {Name: garageName}}
	wasm := []side{{times: []float64{200, 210, 190, 400}, rounds: []float64{210, 400}}, {times: []float64{49, 60, 45}, rounds: []float64{49, 45}}}
	native := []side{{times: []float64{60, 70, 65, 80}, rounds: []float64{70, 80}}, {times: []float64{20, 18, 30}, rounds: []float64{20, 15}}}
	var out bytes.Buffer
	printComparison(&out, options{rounds: 2, runs: 2, warmup: 5, warmupMS: 1000, gogc: "400"}, chosen, wasm, native, "1 2 3", "4 5 6")
	got := out.String()
	for _, want := range []string{
		"2 rounds × (≥ 5 warm-up runs over ≥ 1000 ms + 2 measured runs)", "GOGC=400", "load average before 1 2 3, after 4 5 6",
		// medians 210 / 70 = 3.00×; round ratios 3.00 and 5.00
		"core-10k-uniform       210.0 ms    70.0 ms   3.00×       3.00–5.00", "ratio ≤ 3×: met",
		// 49 / 20 = 2.45×, 49 ms ≤ 50 ms
		"lesson-garage-1000      49.0 ms    20.0 ms   2.45×       2.45–3.00", "wasm ≤ 50 ms: met",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	wasm[1].times = []float64{51, 52, 53}
	out.Reset()
	printComparison(&out, options{rounds: 2, runs: 2, warmup: 5, gogc: "400"}, chosen, wasm, native, "", "")
	if !strings.Contains(out.String(), "ratio ≤ 3×: met; wasm ≤ 50 ms: MISSED") {
		t.Errorf("52 ms in WebAssembly passed the 50 ms budget:\n%s", out.String())
	}
}
