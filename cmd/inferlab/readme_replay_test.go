package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestReadmeReplay runs the README's section "Replaying a measured
// benchmark": its two commands, in a temporary directory for /tmp/runs,
// must print every line the README shows.
func TestReadmeReplay(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(b)
	i := strings.Index(sec, "## Replaying a measured benchmark")
	if i < 0 {
		t.Fatal(`README.md has no "## Replaying a measured benchmark" section`)
	}
	sec = sec[i:]
	block := func(lang string) string {
		j := strings.Index(sec, "```"+lang+"\n")
		if j < 0 {
			t.Fatalf("the section has no %s block", lang)
		}
		rest := sec[j+len(lang)+4:]
		return rest[:strings.Index(rest, "```")]
	}
	cmds, shown := block("sh"), block("text")
	root := t.TempDir()
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(cmds), "\n") {
		args := strings.Fields(strings.ReplaceAll(line, "/tmp/runs", root))
		if len(args) < 2 || args[0] != "inferlab" {
			t.Fatalf("README command %q is not an inferlab command", line)
		}
		var errb bytes.Buffer
		out.Reset()
		if code := dispatch(args[1:], &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", line, code, errb.String())
		}
	}
	for _, want := range strings.Split(strings.TrimSpace(shown), "\n") {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the replay does not print the README's line\n%s\nit printed:\n%s", want, out.String())
		}
	}
}
