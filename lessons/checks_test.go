package lessons_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Every lesson's own tests hand it to lessontest.Run (a TestLessonChecks
// in its package): the narration check and the rest of lessontest.Checks
// read the lesson's typed run, which only its package sees, so this test
// cannot run them for it, and a lesson whose tests forgot the call would
// go unchecked. The lesson's package is its simulation type's.
func TestEveryLessonRunsTheSharedChecks(t *testing.T) {
	const prefix = "github.com/inferlab/inferlab/lessons/"
	for _, l := range lessons.All() {
		pkg := reflect.TypeOf(l.Sim).PkgPath()
		dir, ok := strings.CutPrefix(pkg, prefix)
		if !ok || strings.Contains(dir, "/") {
			t.Errorf("%s: its simulation is in %s, not a package of its own under lessons/", l.Slug, pkg)
			continue
		}
		if !callsRun(t, dir) {
			t.Errorf("%s: no test in lessons/%s calls lessontest.Run from TestLessonChecks (CONTRIBUTING.md, \"Add a lesson\")", l.Slug, dir)
		}
	}
}

// callsRun reports whether a _test.go file of dir declares TestLessonChecks
// calling lessontest.Run.
func callsRun(t *testing.T, dir string) bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "TestLessonChecks" || fn.Body == nil {
				continue
			}
			found := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "lessontest" {
						found = true
					}
				}
				return !found
			})
			if found {
				return true
			}
		}
	}
	return false
}
