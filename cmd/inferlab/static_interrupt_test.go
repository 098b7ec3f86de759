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
)

// inferlab runs this test binary as the inferlab command.
func inferlab(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), "INFERLAB_TEST_DISPATCH=1")
	return cmd
}

// leftovers lists the entries of dir beside out that are not out itself:
// what a static run wrote beside --out.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".dist.") {
			out = append(out, e.Name())
		}
	}
	return out
}

// An interrupted static (SIGINT, SIGTERM) removes what it was writing
// beside --out and leaves --out as it was; five interrupts used to leave
// five .dist.tmp-NNNN directories of 8-12 MB. It waits for the temporary
// directory to appear, so the signal lands mid-run.
func TestStaticInterrupted(t *testing.T) {
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	root := t.TempDir()
	dist := filepath.Join(root, "dist")
	if code, _, errOut := run("static", "--out", dist, "--web", web); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	before, _ := os.ReadFile(filepath.Join(dist, "index.html"))
	os.WriteFile(filepath.Join(dist, "mine.txt"), []byte("still here"), 0o644)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGINT} {
		cmd := inferlab(t, "static", "--out", dist, "--web", web, "--prefix", "/other")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for len(leftovers(t, root)) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // polling for the directory to appear
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) || !strings.Contains(errOut.String(), "interrupted") {
			t.Errorf("%v: %v, stderr %q; want exit %d saying it was interrupted", sig, err, errOut.String(), 128+int(sig))
		}
		if l := leftovers(t, root); len(l) > 0 {
			t.Errorf("%v left %v beside --out", sig, l)
		}
		after, _ := os.ReadFile(filepath.Join(dist, "index.html"))
		mine, _ := os.ReadFile(filepath.Join(dist, "mine.txt"))
		if !bytes.Equal(before, after) || string(mine) != "still here" {
			t.Errorf("%v changed --out", sig)
		}
	}
}

// A directory static did not write is never replaced, --force or not
// (`static --out elsewhere --force` deleted elsewhere/keep/file.txt); the
// refusal exits 2. An empty one is written.
func TestStaticForceKeepsForeignDirectory(t *testing.T) {
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	os.MkdirAll(filepath.Join(elsewhere, "keep"), 0o755)
	os.WriteFile(filepath.Join(elsewhere, "keep", "file.txt"), []byte("mine"), 0o644)
	for _, args := range [][]string{{"--force"}, nil} {
		code, _, errOut := run(append([]string{"static", "--out", elsewhere, "--web", web}, args...)...)
		if code != 2 || !strings.Contains(errOut, "did not write") {
			t.Errorf("%v: exit %d, %q; want 2 and a refusal", args, code, errOut)
		}
		if b, err := os.ReadFile(filepath.Join(elsewhere, "keep", "file.txt")); err != nil || string(b) != "mine" {
			t.Errorf("%v: elsewhere/keep/file.txt: %q, %v", args, b, err)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o755)
	if code, _, errOut := run("static", "--out", empty, "--web", web, "--force"); code != 0 {
		t.Errorf("an empty directory: exit %d, %q", code, errOut)
	}
}
