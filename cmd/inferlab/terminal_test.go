package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// controlBytes reports the first control character (other than newline and
// tab) of s, or -1: what would reach a terminal as an escape sequence, a
// bell or a cursor move.
func controlByte(s string) int {
	for i, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return i
		}
	}
	return -1
}

// A trace's file name reaches the text output (the narration names the
// trace) and the error messages; its control characters (ESC, BEL, a C1
// CSI) are written as escapes, never sent to the terminal as they are.
func TestTraceNameControlCharacters(t *testing.T) {
	dir := t.TempDir()
	name := "evil\x1b[31mred\x07\u009b2J.jsonl"
	good := filepath.Join(dir, name)
	if err := os.WriteFile(good, []byte(`{"arrival_s": 0, "prompt_tokens": 64, "output_tokens": 8}`+"\n"), 0o644); err != nil {
		t.Skip("this file system refuses the name:", err)
	}
	code, out, errOut := run("run", "sandbox", "--trace", good)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if i := controlByte(out); i >= 0 {
		t.Errorf("text output carries a control character at %d: %q", i, out[max(0, i-20):min(len(out), i+20)])
	}
	if !strings.Contains(out, `evil\x1b[31mred\x07\x9b2J.jsonl`) {
		t.Errorf("the narration does not name the trace with its controls escaped:\n%.600s", out)
	}
	bad := filepath.Join(dir, "bad\x1b]0;title\x07.jsonl")
	os.WriteFile(bad, []byte(`{"arrival_s": 0, "prompt_tokens": -5, "output_tokens": 8}`+"\n"), 0o644)
	for _, path := range []string{bad, filepath.Join(dir, "missing\x1b[2J.jsonl")} {
		code, out, errOut = run("run", "sandbox", "--trace", path)
		if code != 2 || controlByte(errOut) >= 0 || controlByte(out) >= 0 || !strings.Contains(errOut, `\x1b`) {
			t.Errorf("%q: exit %d, stderr %q", path, code, errOut)
		}
	}
}
