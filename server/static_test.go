//go:build !wasm

package server

import (
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
		idx, _ := os.ReadFile(filepath.Join(out, "index.html"))
		if prefix != "" && !strings.Contains(string(idx), prefix+"/web/lab.css") {
			t.Errorf("prefixed index does not load %s/web/lab.css", prefix)
		}
		worker, _ := os.ReadFile(filepath.Join(out, "app-worker.js"))
		if !strings.Contains(string(worker), `cache: "reload"`) {
			t.Error("static worker is not patched")
		}
	}
	if err := GenerateStatic(t.TempDir(), t.TempDir(), ""); err == nil {
		t.Error("a web dir without app.wasm must fail")
	}
}
