//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A trace path that is not a regular file is refused before it is opened
// for reading: a FIFO with no writer used to block open() forever.
func TestRunTraceNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	var code int
	var errOut string
	go func() {
		defer close(done)
		code, _, errOut = run("run", "sandbox", "--trace", fifo)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a hang, not a timing: the refusal takes microseconds
		t.Fatal("--trace on a FIFO with no writer is still blocked after 20 s")
	}
	if code != 2 || !strings.Contains(errOut, "named pipe") || !strings.Contains(errOut, "--trace "+fifo) {
		t.Errorf("FIFO: exit %d, stderr %q", code, errOut)
	}
	for path, what := range map[string]string{dir: "a directory", "/dev/zero": "character device", filepath.Join(dir, "missing.jsonl"): "no such file"} {
		if code, _, errOut := run("run", "sandbox", "--trace", path); code != 2 || !strings.Contains(errOut, what) {
			t.Errorf("--trace %s: exit %d, stderr %q; want 2 and %q", path, code, errOut, what)
		}
	}
}
