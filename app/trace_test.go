package app

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestParseUpload(t *testing.T) {
	sb := lessons.Get("sandbox")
	tr, err := parseUpload(sb, "two.jsonl", `{"arrival_s": 0.5, "prompt_tokens": 40, "output_tokens": 4}
{"arrival_s": 0, "prompt_tokens": 64, "output_tokens": 8, "prefix_group": 2, "prefix_tokens": 32}
`)
	if err != nil || tr.Name != "two.jsonl" || len(tr.Requests) != 2 || tr.Requests[0].Prompt != 64 {
		t.Fatalf("parseUpload = %+v, %v; want two requests sorted by arrival", tr, err)
	}
	over := strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 16, "output_tokens": 1}`+"\n", sb.TraceLimits().MaxRequests+1)
	for _, c := range []struct{ text, want string }{
		{`{"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 1}` + "\n" + `{"arrival_s": 1, "prompt_tokens": "many", "output_tokens": 1}`, "bad.jsonl: line 2: prompt_tokens"},
		{"", "bad.jsonl: trace has no requests"},
		{over, "more than 2000 requests"},
		{`{"arrival_s": 0, "prompt_tokens": 16000, "output_tokens": 385}`, "bad.jsonl: line 1: prompt_tokens + output_tokens = 16385 is not allowed: want at most 16384"},
		{strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 16000, "output_tokens": 1}`+"\n", 126), "bad.jsonl: line 125: the trace passes 2000000 tokens"},
		{strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 10000, "output_tokens": 6000}`+"\n", 126), "bad.jsonl: line 33: the trace can take 203190 engine steps"},
	} {
		if _, err := parseUpload(sb, "bad.jsonl", c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseUpload(%.40q…) error = %v, want it to contain %q", c.text, err, c.want)
		}
	}
	if err := tooLarge(sb, "big.jsonl", 5<<20); err == nil || !strings.Contains(err.Error(), "big.jsonl: the file is 5,242,880 bytes: want at most 4 MiB") {
		t.Errorf("tooLarge = %v", err)
	}
	if err := tooLarge(sb, "ok.jsonl", 4<<20); err != nil {
		t.Errorf("a file at the limit is refused: %v", err)
	}
}

// A build on a trace reproduces with --trace, and a failure names the trace.
func TestBuildScriptTrace(t *testing.T) {
	sb := lessons.Get("sandbox")
	tr, err := parseUpload(sb, "my trace.jsonl", `{"arrival_s": 0, "prompt_tokens": 300, "output_tokens": 4}`)
	if err != nil {
		t.Fatal(err)
	}
	s, f := BuildScript(sb, sb.Defaults(), "", tr)
	if f != nil || s == nil || !strings.Contains(s.Steps[0].Narration, "my trace.jsonl") {
		t.Fatalf("BuildScript on a trace: failure %+v", f)
	}
	if v, _ := s.Metric("requests"); v != 1 {
		t.Errorf("requests = %v, want the trace's 1", v)
	}
	_, f = BuildScript(sb, sb.Defaults(), "panic", tr)
	if f == nil || f.Trace != "my trace.jsonl" {
		t.Fatalf("failure %+v does not name the trace", f)
	}
	if got := cliCommand(sb, map[string]string{"workers": "2"}, f.Trace); got != "inferlab run sandbox --set workers=2 --trace 'my trace.jsonl'" {
		t.Errorf("cliCommand = %q", got)
	}
}
