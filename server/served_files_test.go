//go:build !wasm

package server

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// A Range of a unit other than bytes is ignored (RFC 9110 §14.2: an origin
// server ignores a range unit it does not understand): `Range: items=0-5`
// got 416. The unit is read without regard to case (§14.1).
func TestRangeUnits(t *testing.T) {
	web := fakeWeb(t)
	h, err := New(web, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	raw, _ := os.ReadFile(filepath.Join(web, "app.wasm"))
	for _, rg := range []string{"items=0-5", "Items=0-5", "0-5", "=0-5", "pages=1"} {
		for _, path := range []string{"/web/app.wasm", "/lesson/garage"} {
			r, b := fetch(t, srv, "GET", path, "Range", rg, "Accept-Encoding", "identity")
			if r.StatusCode != http.StatusOK || r.Header.Get("Content-Range") != "" || (path == "/web/app.wasm" && len(b) != len(raw)) {
				t.Errorf("%s with Range %q: %d, Content-Range %q, %d bytes; want the whole body, 200", path, rg, r.StatusCode, r.Header.Get("Content-Range"), len(b))
			}
		}
	}
	for _, rg := range []string{"Bytes=10-19", "BYTES=10-19", " bytes=10-19"} {
		r, b := fetch(t, srv, "GET", "/web/app.wasm", "Range", rg, "Accept-Encoding", "identity")
		if r.StatusCode != http.StatusPartialContent || string(b) != string(raw[10:20]) {
			t.Errorf("Range %q: %d, %q; want 206 and bytes 10-19", rg, r.StatusCode, b)
		}
	}
	if r, _ := fetch(t, srv, "GET", "/web/app.wasm", "Range", "Bytes=-0", "Accept-Encoding", "identity"); r.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("Range Bytes=-0: %d, want 416 as for bytes=-0", r.StatusCode)
	}
}

// The server and a static site serve the same files of the web directory:
// every regular file, and no symbolic link (to a file or a directory, in
// or out of the web directory), no precompressed sibling and nothing but a
// regular file. The server followed a link that the static copy left out.
func TestServedFilesAreTheStaticFiles(t *testing.T) {
	web := fakeWeb(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("not the site's"), 0o644)
	os.MkdirAll(filepath.Join(web, "sub", "deep"), 0o755)
	os.WriteFile(filepath.Join(web, "sub", "deep", "notes.txt"), []byte("notes"), 0o644)
	os.WriteFile(filepath.Join(web, "notes.txt.gz"), []byte("not a sibling of anything"), 0o644)
	for link, target := range map[string]string{
		"link.js":      filepath.Join(web, "lab.js"),         // a file inside
		"secret.txt":   filepath.Join(outside, "secret.txt"), // a file outside
		"linkdir":      filepath.Join(web, "sub"),            // a directory inside
		"outdir":       outside,                              // a directory outside
		"sub/up.css":   filepath.Join(web, "lab.css"),        // a link below a directory
		"dangling.txt": filepath.Join(web, "missing"),        // to nothing
	} {
		if err := os.Symlink(target, filepath.Join(web, link)); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(web, "pipe.txt"), 0o600); err != nil {
		t.Logf("no FIFO: %v", err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	if err := WriteStatic(out, web, StaticOptions{}); err != nil {
		t.Fatal(err)
	}
	var static []string
	filepath.WalkDir(filepath.Join(out, "web"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(filepath.Join(out, "web"), p)
			static = append(static, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(static)
	h, err := New(web, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	filepath.WalkDir(web, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(web, p)
		if err != nil || rel == "." {
			return nil
		}
		names := []string{filepath.ToSlash(rel)}
		if d.Type()&fs.ModeSymlink != 0 { // what a link to a directory would reach
			names = append(names, filepath.ToSlash(rel)+"/notes.txt", filepath.ToSlash(rel)+"/secret.txt", filepath.ToSlash(rel)+"/deep/notes.txt")
		}
		for _, n := range names {
			if r := get(t, h, "/web/"+n); r.StatusCode == http.StatusOK {
				served = append(served, n)
			}
		}
		return nil
	})
	sort.Strings(served)
	if strings.Join(served, " ") != strings.Join(static, " ") {
		t.Errorf("served: %v\nstatic: %v\nwant the same files", served, static)
	}
	if !strings.Contains(strings.Join(static, " "), "sub/deep/notes.txt") {
		t.Errorf("static: %v; want the regular files, sub/deep/notes.txt among them", static)
	}
}
