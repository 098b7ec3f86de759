//go:build linux

package server

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nobody is the user the static tests below run as when the test process
// is root, for whom no permission bit holds.
const nobody = 65534

// unprivilegedRoot returns a directory to run the test in as a user other
// than root, and whether the caller is that run. A process that is not
// root runs the test itself in a new temporary directory. A root process
// makes a directory owned by nobody, lets prepare fill it (as root), runs
// this test binary again as nobody on it (setpriv) and reports the run's
// failures; it then returns "", false.
func unprivilegedRoot(t *testing.T, prepare func(root string)) (string, bool) {
	t.Helper()
	if root := os.Getenv("INFERLAB_TEST_UNPRIVILEGED_ROOT"); root != "" && os.Geteuid() != 0 {
		return root, true
	}
	if os.Geteuid() != 0 {
		if prepare != nil {
			t.Skip("the test needs root to prepare what its user cannot own")
		}
		return t.TempDir(), true
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skipf("root, and no setpriv to run as another user: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	base := t.TempDir()
	root, tmp, bin := filepath.Join(base, "root"), filepath.Join(base, "tmp"), filepath.Join(base, "server.test")
	for _, d := range []string{root, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyExecutable(self, bin); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(root)
	}
	for _, p := range []string{filepath.Dir(base), base} {
		os.Chmod(p, 0o755)
	}
	for _, p := range []string{root, tmp} {
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--reuid="+strconv.Itoa(nobody), "--regid="+strconv.Itoa(nobody), "--clear-groups",
		bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "INFERLAB_TEST_UNPRIVILEGED_ROOT="+root, "TMPDIR="+tmp, "HOME="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Errorf("as uid %d: %v\n%s", nobody, err, out)
	}
	return "", false
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// beside lists the entries of root other than dist.
func beside(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != "dist" {
			names = append(names, e.Name())
		}
	}
	return names
}

// A previous output with a read-only directory (a user's chmod, a copy
// from a read-only medium) is replaced and removed: the second run once
// installed the new site, exited 1 with only `unlinkat …/.dist.old-N/old/
// lesson/engines.html: permission denied`, and left a 32 MB .dist.old-N
// that later runs never removed or mentioned. It runs as a user other
// than root, for whom the bits hold.
func TestStaticReplacesReadOnlyOutput(t *testing.T) {
	root, ok := unprivilegedRoot(t, nil)
	if !ok {
		return
	}
	web := fakeWeb(t)
	dist := filepath.Join(root, "dist")
	if err := WriteStatic(dist, web, StaticOptions{}); err != nil {
		t.Fatal(err)
	}
	lesson := filepath.Join(dist, "lesson")
	if err := os.Chmod(lesson, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(lesson, 0o755) })
	if f, err := os.Create(filepath.Join(lesson, "probe")); err == nil {
		f.Close()
		t.Fatal("a read-only directory took a new file: this user ignores permission bits")
	}
	if err := WriteStatic(dist, web, StaticOptions{}); err != nil {
		t.Errorf("the second run: %v", err)
	}
	if names := beside(t, root); len(names) != 0 {
		t.Errorf("beside --out: %v; want nothing", names)
	}
	if _, err := os.Stat(filepath.Join(dist, "lesson", "garage.html")); err != nil {
		t.Errorf("the new site: %v", err)
	}
}

// A previous output that cannot be removed (a directory of another user
// in it) is named: the run that replaces it says that the new site is in
// place and where the old one is, and a later run that cannot remove it
// either says so again, once its process is gone.
func TestStaticNamesWhatItCannotRemove(t *testing.T) {
	root, ok := unprivilegedRoot(t, func(root string) {
		dist := filepath.Join(root, "dist")
		theirs := filepath.Join(dist, "lesson")
		os.MkdirAll(theirs, 0o755)
		os.WriteFile(filepath.Join(theirs, "garage.html"), []byte("an older page"), 0o644)
		os.WriteFile(filepath.Join(dist, staticMarker), nil, 0o644)
		for _, p := range []string{dist, filepath.Join(dist, staticMarker)} {
			os.Chown(p, nobody, nobody) // lesson/ stays root's
		}
	})
	if !ok {
		return
	}
	web := fakeWeb(t)
	dist := filepath.Join(root, "dist")
	err := WriteStatic(dist, web, StaticOptions{})
	names := beside(t, root)
	if len(names) != 1 || !strings.HasPrefix(names[0], ".dist.old-") {
		t.Fatalf("beside --out: %v; want the previous output moved aside (%v)", names, err)
	}
	aside := filepath.Join(root, names[0])
	if err == nil || !strings.Contains(err.Error(), "wrote the new site, but the previous output, moved aside to "+filepath.Join(aside, "old")+", cannot be removed") ||
		!strings.Contains(err.Error(), "remove "+aside+" yourself") {
		t.Errorf("err = %v; want it to say where the previous output is", err)
	}
	if _, err := os.Stat(filepath.Join(dist, "lesson", "garage", "index.html")); err != nil {
		t.Errorf("the new site is not in place: %v", err)
	}
	// As if that run had ended: its process is gone.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	os.WriteFile(filepath.Join(aside, workMarker), []byte(strconv.Itoa(gone.Process.Pid)+"\n"), 0o644)
	var log bytes.Buffer
	if err := WriteStatic(dist, web, StaticOptions{Log: &log}); err != nil {
		t.Errorf("the next run: %v", err)
	}
	if !strings.Contains(log.String(), aside+", left by an earlier run, cannot be removed") {
		t.Errorf("the next run logged %q; want it to name %s", log.String(), aside)
	}
	if names := beside(t, root); len(names) != 1 || names[0] != filepath.Base(aside) {
		t.Errorf("beside --out: %v; want only %s", names, filepath.Base(aside))
	}
}
