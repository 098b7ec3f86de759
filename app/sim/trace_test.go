package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestParseTrace(t *testing.T) {
	sb := traceLesson(t)
	tr, err := ParseTrace(sb, "two.jsonl", `{"arrival_s": 0.5, "prompt_tokens": 40, "output_tokens": 4}
{"arrival_s": 0, "prompt_tokens": 64, "output_tokens": 8, "prefix_group": 2, "prefix_tokens": 32}
`)
	if err != nil || tr.Name != "two.jsonl" || len(tr.Requests) != 2 || tr.Requests[0].Prompt != 64 {
		t.Fatalf("ParseTrace = %+v, %v; want two requests sorted by arrival", tr, err)
	}
	over := strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 16, "output_tokens": 1}`+"\n", sb.TraceLimits().MaxRequests+1)
	for _, c := range []struct{ text, want string }{
		{`{"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 1}` + "\n" + `{"arrival_s": 1, "prompt_tokens": "many", "output_tokens": 1}`, "bad.jsonl: line 2: prompt_tokens"},
		{"", "bad.jsonl: trace has no requests"},
		{over, fmt.Sprintf("more than %d requests", sb.TraceLimits().MaxRequests)},
		{`{"arrival_s": 0, "prompt_tokens": 16000, "output_tokens": 385}`, "bad.jsonl: line 1: prompt_tokens + output_tokens = 16385 is not allowed: want at most 16384"},
		{strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 16000, "output_tokens": 1}`+"\n", 126), "bad.jsonl: line 125: the trace passes 2000000 tokens"},
		{strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 10000, "output_tokens": 6000}`+"\n", 126), "bad.jsonl: line 41: the trace can take 252448 engine steps"},
	} {
		if _, err := ParseTrace(sb, "bad.jsonl", c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTrace(%.40q…) error = %v, want it to contain %q", c.text, err, c.want)
		}
	}
}

// A build on a trace runs on its requests, and a failure names the trace.
func TestBuildTrace(t *testing.T) {
	sb := traceLesson(t)
	tr, err := ParseTrace(sb, "my trace.jsonl", `{"arrival_s": 0, "prompt_tokens": 300, "output_tokens": 4}`)
	if err != nil {
		t.Fatal(err)
	}
	s, f := Build(sb, sb.Defaults().Text(), "", tr)
	if f != nil || s == nil || !strings.Contains(s.Steps[0].Narration, "my trace.jsonl") {
		t.Fatalf("BuildScript on a trace: failure %+v", f)
	}
	if v, _ := s.Metric("requests"); v != 1 {
		t.Errorf("requests = %v, want the trace's 1", v)
	}
	_, f = Build(sb, sb.Defaults().Text(), "panic", tr)
	if f == nil || f.Trace != "my trace.jsonl" {
		t.Fatalf("failure %+v does not name the trace", f)
	}
}

// traceLesson is the first lesson that runs on a trace.
func traceLesson(t *testing.T) *lessons.Lesson {
	t.Helper()
	for _, l := range lessons.All() {
		if l.TakesTrace() {
			return l
		}
	}
	t.Skip("no lesson takes a trace")
	return nil
}
