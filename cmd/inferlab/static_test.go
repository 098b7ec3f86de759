package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStaticCmd(t *testing.T) {
	var out, errb bytes.Buffer
	if code := staticCmd(nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--out") {
		t.Errorf("no --out: exit %d, %q", code, errb.String())
	}
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	dist := filepath.Join(t.TempDir(), "dist")
	errb.Reset()
	if code := staticCmd([]string{"--out", dist, "--web", web, "--prefix", "/repo/"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	idx, err := os.ReadFile(filepath.Join(dist, "index.html"))
	if err != nil || !strings.Contains(string(idx), "/repo/") {
		t.Errorf("index under /repo: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dist, "web", "app.wasm")); err != nil {
		t.Error("web/ not copied")
	}
}

// A prefix that is not a clean absolute path is refused before anything is
// written, naming the flag: a quote broke out of an HTML attribute and
// //host loaded app.js from another host.
func TestStaticCmdPrefix(t *testing.T) {
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	for _, p := range []string{`/a b"<x>`, "//evil.example", "repo", "/repo/../x", "/./x", "/a//b", "https://evil.example/x", `/a\b`, "/%2e%2e"} {
		dist := filepath.Join(t.TempDir(), "dist")
		var out, errb bytes.Buffer
		code := staticCmd([]string{"--out", dist, "--web", web, "--prefix", p}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--prefix = ") || !strings.Contains(errb.String(), "clean absolute path") {
			t.Errorf("--prefix %q: exit %d, %q", p, code, errb.String())
		}
		if _, err := os.Stat(dist); err == nil {
			t.Errorf("--prefix %q: wrote %s", p, dist)
		}
	}
	for _, args := range [][]string{{"--out", ""}, {"--out", "a", "--out", "b"}, {"--out", "d", "--web", ""}} {
		var out, errb bytes.Buffer
		if code := staticCmd(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, %q", args, code, errb.String())
		}
	}
}
