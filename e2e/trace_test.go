//go:build !wasm

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/inferlab/inferlab/app"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
)

// TestSandboxTrace: the sandbox runs on a trace file chosen in the page; the
// run equals `inferlab run sandbox --trace FILE` byte for byte; a bad file is
// refused with its line and field and loses nothing; a knob change keeps the
// trace; the learner can go back to the generated workload.
func TestSandboxTrace(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	waitFile := downloads(t, b)
	dir := t.TempDir()

	good := filepath.Join(dir, "my-trace.jsonl")
	f, err := os.Create(good)
	if err != nil {
		t.Fatal(err)
	}
	reqs := workload.SharedPrefix(workload.Poisson(40, 20, workload.Uniform{Min: 256, Max: 1024}, workload.Uniform{Min: 8, Max: 32}, 5), 2, 128, 5)
	if err := workload.WriteTrace(f, reqs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"arrival_s\": 0, \"prompt_tokens\": 10, \"output_tokens\": 1}\n{\"arrival_s\": 1, \"prompt_tokens\": -5, \"output_tokens\": 1}\n"), 0o644)

	l := lessons.Get("sandbox")
	raw := map[string]string{"workers": "2", "requests": "20", "policy": "round_robin"}
	v, errs := l.Resolve(raw)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	status := `(document.querySelector("#trace-status")?.dataset.trace ?? "")`
	narration := `document.querySelector("#narration").textContent`

	subtest(t, b, "upload, and the JSON equals the CLI's", func(t *testing.T) {
		b.navigate(site + "/lesson/sandbox?" + app.EncodeQuery(l, v, 3))
		b.do("choose my-trace.jsonl", changeTimeout, chromedp.SetUploadFiles(chromedp.CSS("#trace-file"), []string{good}))
		b.waitFor("the trace in use", status+` === "my-trace.jsonl" && `+narration+`.includes("my-trace.jsonl")`)
		b.waitStep("the trace's run from its start", 1)
		if m := b.mustState().Metrics["requests"]; m != "40" {
			t.Errorf("requests metric %q, want the trace's 40", m)
		}
		evalJS[bool](b, `(document.querySelector("#trace-panel").scrollIntoView(), true)`)
		b.screenshot("sandbox-trace")
		b.do("click #btn-export-json", changeTimeout, chromedp.Click(chromedp.CSS("#btn-export-json")))
		got := waitFile("inferlab-sandbox.json")
		s, _, err := l.RunTrace(raw, reqs, "my-trace.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		want, err := export.RunJSON("sandbox", l.TraceValues(v), s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("downloaded JSON differs from the native run on the trace:\n got %.300s\nwant %.300s", got, want)
		}
		if cli := goCmd(t, traceRunArgs(l, v, good)...); string(cli) != string(got) {
			t.Errorf("downloaded JSON differs from `inferlab run sandbox --trace`:\n got %.300s\n cli %.300s", got, cli)
		}
	})

	subtest(t, b, "a bad file is refused and loses nothing", func(t *testing.T) {
		before := b.mustState()
		b.do("choose bad.jsonl", changeTimeout, chromedp.SetUploadFiles(chromedp.CSS("#trace-file"), []string{bad}))
		b.waitFor("#trace-error", `!document.querySelector("#trace-error").hidden`)
		if e := evalJS[string](b, `document.querySelector("#trace-error").textContent`); e != fmt.Sprintf("bad.jsonl: line 2: prompt_tokens = -5 is not allowed: want 1 to %d", l.TraceLimits().MaxTokens) {
			t.Errorf("#trace-error = %q", e)
		}
		after := b.mustState()
		if got := evalJS[string](b, status); got != "my-trace.jsonl" || after.Narration != before.Narration || after.Step != before.Step {
			t.Errorf("a refused file changed the page: trace %q, step %s → %s", got, before.Step, after.Step)
		}
	})

	subtest(t, b, "a knob change keeps the trace", func(t *testing.T) {
		before := b.mustState()
		evalJS[bool](b, `(() => { const el = document.querySelector("#param-workers"); el.value = "3";
  el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
		b.do("click #params-apply", changeTimeout, chromedp.Click(chromedp.CSS("#params-apply")))
		b.waitFor("workers=3 in the URL", `new URLSearchParams(location.search).get("workers") === "3"`)
		b.waitFor("rebuilt, still on the trace", status+` === "my-trace.jsonl" && `+narration+`.includes("my-trace.jsonl") && `+
			narration+` !== `+jsString(before.Narration))
		if m := b.mustState().Metrics["requests"]; m != "40" {
			t.Errorf("requests metric %q after a knob change, want the trace's 40", m)
		}
		if e := evalJS[bool](b, `document.querySelector("#trace-error").hidden`); !e {
			t.Error("#trace-error still shown after the knob change")
		}
	})

	subtest(t, b, "back to the generated workload", func(t *testing.T) {
		b.do("click #trace-clear", changeTimeout, chromedp.Click(chromedp.CSS("#trace-clear")))
		b.waitFor("no trace", status+` === "" && !`+narration+`.includes("my-trace.jsonl")`)
		if m := b.mustState().Metrics["requests"]; m != "20" {
			t.Errorf("requests metric %q, want the requests knob's 20", m)
		}
	})
}

// traceRunArgs are the go command's arguments for `inferlab run` of
// lesson l on the trace file with the page's knobs v: every knob with
// --set but those a trace replaces, which --trace refuses.
func traceRunArgs(l *lessons.Lesson, v lessons.Values, file string) []string {
	args := []string{"run", "./cmd/inferlab", "run", l.Slug, "--trace", file, "--format", "json"}
	for _, p := range l.Params {
		if !slices.Contains(l.TraceIgnores, p.Key) {
			args = append(args, "--set", p.Key+"="+v.TextOf(p.Key))
		}
	}
	return args
}
