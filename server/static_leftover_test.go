//go:build !wasm

package server

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A run killed before it could clean up (SIGKILL) leaves its directories
// beside --out; the next run removes those whose process is gone, and
// nothing else: not one of a run still going, not one it did not make.
func TestStaticRemovesLeftovers(t *testing.T) {
	web := fakeWeb(t)
	root := t.TempDir()
	dist := filepath.Join(root, "dist")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	dead := strconv.Itoa(gone.Process.Pid)
	for name, pid := range map[string]string{
		".dist.tmp-1001": dead,                       // killed while writing
		".dist.old-1002": dead,                       // killed after renaming
		".dist.tmp-1003": strconv.Itoa(os.Getppid()), // a run still going
		".dist.tmp-1004": "",                         // not written by static
	} {
		d := filepath.Join(root, name)
		os.MkdirAll(filepath.Join(d, "web"), 0o755)
		os.WriteFile(filepath.Join(d, "web", "app.wasm"), []byte("half"), 0o644)
		if pid != "" {
			os.WriteFile(filepath.Join(d, ".inferlab-static-work"), []byte(pid+"\n"), 0o644)
		}
	}
	os.Mkdir(dist, 0o755)
	os.WriteFile(filepath.Join(dist, staticMarker), nil, 0o644)
	if err := WriteStatic(dist, web, StaticOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{".dist.tmp-1001": false, ".dist.old-1002": false, ".dist.tmp-1003": true, ".dist.tmp-1004": true} {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("beside --out: %v; want dist and the two directories that are not leftovers", names)
	}
}
