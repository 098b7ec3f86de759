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

// A UTF-16LE trace with its byte-order mark (what Windows PowerShell's `>`
// writes) runs as its UTF-8 text does: the page decodes a chosen file the
// same way (workload.TraceText), so "Export JSON" equals this run.
func TestRunTraceUTF16(t *testing.T) {
	dir := t.TempDir()
	text := "{\"arrival_s\": 0, \"prompt_tokens\": 300, \"output_tokens\": 20}\r\n{\"arrival_s\": 0.2, \"prompt_tokens\": 500, \"output_tokens\": 9}\r\n"
	u16 := []byte{0xff, 0xfe}
	for _, r := range text {
		u16 = append(u16, byte(r), 0)
	}
	os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "t16.jsonl"), u16, 0o644)
	code, want, errOut := run("run", "sandbox", "--trace", filepath.Join(dir, "t.jsonl"), "--format", "json")
	if code != 0 {
		t.Fatalf("UTF-8: exit %d: %s", code, errOut)
	}
	code, got, errOut := run("run", "sandbox", "--trace", filepath.Join(dir, "t16.jsonl"), "--format", "json")
	if code != 0 || strings.ReplaceAll(got, "t16.jsonl", "t.jsonl") != want {
		t.Errorf("UTF-16LE: exit %d, %s; want the UTF-8 file's run", code, errOut)
	}
}
