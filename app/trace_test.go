package app

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestTooLarge(t *testing.T) {
	sb := traceLesson(t)
	if err := tooLarge(sb, "big.jsonl", 5<<20); err == nil || !strings.Contains(err.Error(), "big.jsonl: the file is 5,242,880 bytes: want at most 4 MiB") {
		t.Errorf("tooLarge = %v", err)
	}
	if err := tooLarge(sb, "ok.jsonl", 4<<20); err != nil {
		t.Errorf("a file at the limit is refused: %v", err)
	}
	k := sb.Params[0].Key
	if got, want := cliCommand(sb, map[string]string{k: "2"}, "my trace.jsonl"), "inferlab run "+sb.Slug+" --set "+k+"=2 --trace 'my trace.jsonl'"; got != want {
		t.Errorf("cliCommand = %q, want %q", got, want)
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

func TestIgnoredKnobsText(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want string
	}{
		{nil, ""},
		{[]string{"rate"}, " The rate knob is ignored."},
		{[]string{"requests", "rate"}, " The requests and rate knobs are ignored."},
		{[]string{"workload", "requests", "rate"}, " The workload, requests and rate knobs are ignored."},
	} {
		if got := ignoredKnobsText(c.keys); got != c.want {
			t.Errorf("ignoredKnobsText(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
	// The page names what the command line refuses with a trace.
	sb := traceLesson(t)
	for _, k := range sb.TraceIgnores {
		if !strings.Contains(ignoredKnobsText(sb.TraceIgnores), k) {
			t.Errorf("%s's trace status leaves out %q", sb.Slug, k)
		}
	}
}
