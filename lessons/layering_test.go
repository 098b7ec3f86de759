package lessons

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// core/ and lessons/ never import UI packages (DESIGN.md): they build and
// test natively and are the same code in the browser. And data flows one
// way: core never imports lessons, scene or app.
func TestLayering(t *testing.T) {
	forbidden := map[string][]string{
		"../core":  {"github.com/maxence-charriere/go-app", "github.com/go-echarts", "syscall/js", "github.com/inferlab/inferlab/lessons", "github.com/inferlab/inferlab/scene", "github.com/inferlab/inferlab/app"},
		".":        {"github.com/maxence-charriere/go-app", "github.com/go-echarts", "syscall/js", "github.com/inferlab/inferlab/app"},
		"../scene": {"github.com/maxence-charriere/go-app", "github.com/go-echarts", "syscall/js", "github.com/inferlab/inferlab/"},
	}
	for dir, bad := range forbidden {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				for _, b := range bad {
					if strings.HasPrefix(p, b) {
						t.Errorf("%s imports %s", path, p)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
