package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/cmd/internal/expdir"
	"github.com/inferlab/inferlab/core/replay"
)

// shortRun is a measured run cut to a minute per stage, so a test replays
// it in a fraction of a second (the figures then are not comparable).
func shortRun(t *testing.T, name string) string {
	t.Helper()
	run, ok := replay.MeasuredByName(name)
	if !ok {
		t.Fatal("no run", name)
	}
	run.Stages = append([]replay.MeasuredStage(nil), run.Stages...)
	for i := range run.Stages {
		run.Stages[i].Duration = 60
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := expdir.Write(dir, run); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReplayText(t *testing.T) {
	dir := shortRun(t, "20260218-120914-mixtral-8x7b-v0-1-tp2-codegen")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"replay", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"mixture of experts, 2 of 8 per token", "stage 0: 5 req/s for 60 s: 300 sent", "stage 1: 10 req/s",
		"TTFT", "E2E", "TPOT", "median |error|", "fitted constants"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReplayJSON(t *testing.T) {
	dir := shortRun(t, "20260217-231439-llama-2-7b-tp1-general")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"replay", dir, "--format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Stages []struct {
			Index, Sent, Finished, Failed int
			Rate                          float64
			TTFT                          map[string]float64 `json:"ttft_ms"`
			E2E                           map[string]float64 `json:"e2e_ms"`
			TPOT                          map[string]float64 `json:"tpot_ms"`
			Output                        float64            `json:"output_tokens_mean"`
			Measured                      *struct {
				TTFT map[string]float64 `json:"ttft_ms"`
				TPOT map[string]float64 `json:"tpot_ms"`
			}
		}
		Summary map[string]any
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Stages) != 2 || rep.Stages[1].Rate != 20 || rep.Stages[1].Sent != 1200 || rep.Stages[1].Output != 248 {
		t.Fatalf("stages %+v", rep.Stages)
	}
	for _, s := range rep.Stages {
		for _, k := range []string{"mean", "p50", "p90", "p99"} {
			if s.TTFT[k] <= 0 || s.E2E[k] <= s.TTFT[k] || s.TPOT[k] <= 0 {
				t.Errorf("stage %d %s: ttft %v e2e %v tpot %v", s.Index, k, s.TTFT[k], s.E2E[k], s.TPOT[k])
			}
		}
		if s.Measured == nil || s.Measured.TTFT["p90"] <= 0 || s.Measured.TPOT["mean"] <= 0 {
			t.Errorf("stage %d: measured %+v", s.Index, s.Measured)
		}
	}
	if rep.Summary["experiment"] != "20260217-231439-llama-2-7b-tp1-general" || rep.Summary["median_abs_error"] == nil {
		t.Errorf("summary %v", rep.Summary)
	}
}

// TestReplayRefuses: exit 2 with the file and field named.
func TestReplayRefuses(t *testing.T) {
	dir := shortRun(t, "20260217-203421-llama-2-70b-hf-tp4-codegen")
	noModel := shortRun(t, "20260217-231439-llama-2-7b-tp1-general")
	os.Remove(filepath.Join(noModel, "config.json"))
	huge := shortRun(t, "20260218-084319-llama-2-70b-tp4-roleplay")
	cfg := filepath.Join(huge, "results", "config.yaml")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, bytes.Replace(b, []byte("rate: 6"), []byte("rate: 9000"), 1), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "name an experiment directory"},
		{[]string{"replay", filepath.Join(dir, "nope")}, "is not a directory"},
		{[]string{"replay", noModel}, "config.json: missing"},
		{[]string{"replay", dir, "--format", "xml"}, `--format = "xml"`},
		{[]string{"replay", dir, "--gpu", "tpu"}, "--gpu"},
		{[]string{"replay", dir, "extra"}, `unexpected argument "extra"`},
		{[]string{"replay", huge}, "at most 150,000,000 replay natively"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}
