package lessons

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// A lesson file holds only its own lesson: shared helpers live in the kit
// files (kit_text.go, kit_engine.go), so deleting any one lesson file leaves
// the rest of the package compiling. A large lesson may span sibling files
// named after it (garage.go and garage_text.go): they go together. The test
// type-checks the package once without each lesson's files.
func TestEachLessonFileIsRemovable(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package once per lesson file")
	}
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var lessonFiles []string
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		if registersLesson(f) {
			lessonFiles = append(lessonFiles, p)
		}
	}
	if len(lessonFiles) < len(All()) {
		t.Fatalf("found %d files that register a lesson, want one per lesson (%d)", len(lessonFiles), len(All()))
	}
	// The "source" importer type-checks imports from their source and keeps
	// them between calls, so each check below costs only this package.
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("lessons", fset, files, nil); err != nil {
		t.Fatalf("the whole package: %v", err)
	}
	for _, drop := range lessonFiles {
		var rest []*ast.File
		sibling := strings.TrimSuffix(drop, ".go") + "_"
		for _, f := range files {
			if name := fset.File(f.Pos()).Name(); name != drop && !strings.HasPrefix(name, sibling) {
				rest = append(rest, f)
			}
		}
		var errs []string
		conf := types.Config{Importer: conf.Importer, Error: func(err error) { errs = append(errs, err.Error()) }}
		conf.Check("lessons", fset, rest, nil)
		if len(errs) > 0 {
			t.Errorf("without %s the package does not compile:\n  %s", drop, strings.Join(errs, "\n  "))
		}
	}
}

// registersLesson reports whether f has an init function that calls register.
func registersLesson(f *ast.File) bool {
	found := false
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "init" || fn.Recv != nil {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "register" {
					found = true
				}
			}
			return true
		})
	}
	return found
}
