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
	if code := staticCmd([]string{"--out", dist, "--web", web, "--prefix", "repo"}, &out, &errb); code != 0 {
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
