//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/inferlab/inferlab/server"
)

// compress reads a regular file of at most server.MaxCompressBytes or
// refuses it, naming the file and the bound (exit 2), before reading any:
// `compress /dev/zero` once reached 9.3 GB in 30 s, a named pipe waited
// forever and a 1 GB sparse file needed 2 GB. Each runs as its own process,
// killed if it is still running after 20 s (a hang, not a timing: the
// refusal takes microseconds), so that the old behaviour fails the test
// rather than eating the machine's memory.
func TestCompressRefusesUnboundedFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	big := filepath.Join(dir, "big.wasm")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(server.MaxCompressBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		"/dev/zero":                        "/dev/zero: is a character device: want a regular file",
		fifo:                               fifo + ": is a named pipe (FIFO): want a regular file",
		big:                                big + ": is 67,108,865 bytes: want a regular file of at most 67,108,864 bytes",
		dir:                                dir + ": is a directory",
		filepath.Join(dir, "missing.wasm"): "no such file",
	} {
		cmd := inferlab(t, "compress", "--quality", "0", path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("compress %s: still running after 20 s", path)
			continue
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), want) {
			t.Errorf("compress %s: %v, stderr %q; want exit 2 and %q", path, err, stderr.String(), want)
		}
	}
	for _, ext := range []string{".br", ".gz"} {
		if _, err := os.Stat(big + ext); err == nil {
			t.Errorf("compress wrote %s for a file over the bound", big+ext)
		}
	}
}

// One bad file refuses the whole command before any file is written.
func TestCompressChecksEveryFileFirst(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "lab.js", strings.Repeat("console.log(1);\n", 100))
	code, _, errOut := run("compress", "--quality", "0", good, dir)
	if code != 2 || !strings.Contains(errOut, dir+": is a directory") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(good + ".br"); err == nil {
		t.Error("compress wrote lab.js.br before refusing the directory")
	}
}
