//go:build !wasm

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/app"
)

func TestGenerateStatic(t *testing.T) {
	web := fakeWeb(t)
	for _, prefix := range []string{"", "/repo"} {
		out := t.TempDir()
		if err := GenerateStatic(out, web, prefix); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"index.html", "404.html", "app.js", "app-worker.js", "wasm_exec.js", "manifest.webmanifest", "web/app.wasm", "web/lab.css"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("prefix %q: %s missing", prefix, f)
			}
		}
		for _, p := range app.Paths() {
			if p == "/" {
				continue
			}
			for _, f := range []string{p + ".html", p + "/index.html"} {
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
					t.Errorf("prefix %q: %s missing", prefix, f)
				}
			}
		}
		if nf, _ := os.ReadFile(filepath.Join(out, "404.html")); !strings.Contains(string(nf), `id="not-found-home"`) {
			t.Errorf("prefix %q: 404.html is not the not-found page", prefix)
		}
		idx, _ := os.ReadFile(filepath.Join(out, "index.html"))
		if prefix != "" && !strings.Contains(string(idx), prefix+"/web/lab.css") {
			t.Errorf("prefixed index does not load %s/web/lab.css", prefix)
		}
		if !strings.Contains(string(idx), `<meta name="inferlab:sim-worker" content="`+prefix+`/web/sim-worker.js?v=`) {
			t.Errorf("prefix %q: the index does not name the simulation worker under the prefix", prefix)
		}
		worker, _ := os.ReadFile(filepath.Join(out, "app-worker.js"))
		if !strings.Contains(string(worker), workerInstallTo) {
			t.Error("static worker is not patched")
		}
	}
	if err := GenerateStatic(t.TempDir(), t.TempDir(), ""); err == nil {
		t.Error("a web dir without app.wasm must fail")
	}
}

// snapshot records every file and directory under root except skip (and
// what lies inside it): mode, size, modification time and contents.
func snapshot(t *testing.T, root, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if skip != "" && (p == skip || strings.HasPrefix(p, skip+string(filepath.Separator))) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		sig := fmt.Sprintf("%v %d %d", st.Mode(), st.Size(), st.ModTime().UnixNano())
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			sig += " " + string(b)
		}
		out[p] = sig
		return nil
	})
	return out
}

// sameTree compares two snapshots; the parents of --out (whose modification
// time changes when --out is created or renamed in them) are left out.
func sameTree(t *testing.T, what string, before, after map[string]string, parents ...string) {
	t.Helper()
	for _, p := range parents {
		delete(before, p)
		delete(after, p)
	}
	for p, s := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s: %s was removed", what, p)
		} else if a != s {
			t.Errorf("%s: %s changed", what, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared outside --out", what, p)
		}
	}
}

// staticRepo lays out root/repo/web (a stand-in web directory) and
// root/other (a directory of someone else's files).
func staticRepo(t *testing.T) (root, repo, web string) {
	t.Helper()
	root = t.TempDir()
	repo = filepath.Join(root, "repo")
	web = filepath.Join(repo, "web")
	if err := os.MkdirAll(web, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(web, os.DirFS(fakeWeb(t))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "other", "deep"), 0o755)
	os.WriteFile(filepath.Join(root, "other", "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(root, "other", "deep", "x"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(root, "afile"), []byte("a file"), 0o644)
	os.Symlink(web, filepath.Join(root, "weblink"))
	return root, repo, web
}

// `static --out . --web web` from the repository root once truncated
// every file of web/, `--out web` recursed into itself (14 GB). Every
// --out that overlaps what static reads, or is not a directory of its own,
// is refused before anything is written.
func TestStaticRefusals(t *testing.T) {
	root, repo, web := staticRepo(t)
	t.Chdir(repo)
	for _, c := range []struct {
		out  string
		want string
	}{
		{".", "contains the web directory"},
		{"web", "is the web directory"},
		{"web/", "is the web directory"},
		{"./web/../web", "is the web directory"},
		{"web/dist", "lies inside the web directory"},
		{"web/new/dist", "parent directory"},
		{"..", "contains the web directory"},
		{"/", "root directory"},
		{filepath.Join(root, "weblink"), "is the web directory"},
		{filepath.Join(root, "weblink", "dist"), "lies inside the web directory"},
		{filepath.Join(root, "afile"), "is a file"},
		{filepath.Join(root, "other"), "did not write"},
		{filepath.Join(root, "missing", "dist"), "parent directory"},
	} {
		before := snapshot(t, root, "")
		err := WriteStatic(c.out, web, StaticOptions{})
		var refused *StaticRefusal
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--out "+c.out) {
			t.Errorf("--out %s: %v; want a refusal naming --out and %q", c.out, err, c.want)
		}
		sameTree(t, "--out "+c.out, before, snapshot(t, root, ""))
	}
	// The working directory itself, when it is not the repository.
	t.Chdir(filepath.Join(root, "other"))
	if err := WriteStatic(".", web, StaticOptions{}); err == nil || !strings.Contains(err.Error(), "working directory") {
		t.Errorf("--out . (the working directory): %v", err)
	}
}

// The output is replaced whole: a second run into its own output removes
// stale files, an empty directory is written, a failure
// leaves the previous output as it was, and nothing outside --out is
// touched, even when the parent directory is read-only.
func TestStaticReplaces(t *testing.T) {
	root, _, web := staticRepo(t)
	dist := filepath.Join(root, "dist")
	outside := snapshot(t, root, dist)
	if err := WriteStatic(dist, web, StaticOptions{Prefix: "/repo"}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "first run", outside, snapshot(t, root, dist), root)
	if st, err := os.Stat(dist); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("dist: %v, mode %v; want 0755 (hosts read it)", err, st.Mode())
	}
	os.WriteFile(filepath.Join(dist, "stale.html"), []byte("old"), 0o644)
	if err := WriteStatic(dist, web, StaticOptions{}); err != nil {
		t.Fatalf("second run into its own output: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dist, "stale.html")); err == nil {
		t.Error("a stale file survived the second run")
	}
	sameTree(t, "second run", outside, snapshot(t, root, dist), root)

	// A failure after the pages: the previous output stays, byte for byte.
	prev := snapshot(t, dist, "")
	testFailWrite = func() error { return errors.New("disk full (test)") }
	err := WriteStatic(dist, web, StaticOptions{Prefix: "/other"})
	testFailWrite = nil
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("injected failure: %v", err)
	}
	sameTree(t, "failed run", prev, snapshot(t, dist, ""))
	sameTree(t, "failed run", outside, snapshot(t, root, dist), root)

	// An empty directory is written.
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	if err := WriteStatic(empty, web, StaticOptions{}); err != nil {
		t.Fatalf("an empty --out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, "lesson", "garage.html")); err != nil {
		t.Error("the site was not written into the empty directory")
	}

	// A read-only parent: refused (or, as root, written) without touching
	// anything outside --out.
	ro := filepath.Join(root, "ro")
	os.Mkdir(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "keep.txt"), []byte("keep"), 0o644)
	os.Chmod(ro, 0o555)
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	out := filepath.Join(ro, "dist")
	before := snapshot(t, root, out)
	err = WriteStatic(out, web, StaticOptions{})
	if err != nil && !strings.Contains(err.Error(), "--out "+out) {
		t.Errorf("read-only parent: %v", err)
	}
	after := snapshot(t, root, out)
	sameTree(t, "read-only parent", before, after, ro)
	entries, _ := os.ReadDir(ro)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".dist.") {
			t.Errorf("left %s beside --out", e.Name())
		}
	}
}
