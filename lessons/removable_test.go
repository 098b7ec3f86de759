package lessons

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A lesson's files are the files of this package whose name, without
// ".go" and "_test", is the stem of the file that registers it or starts
// with that stem and "_": garage.go, garage_test.go, garage_checks_test.go,
// garage_bench_test.go are the garage's (CONTRIBUTING.md, "Add a lesson").
// Every other file (the kit files, the registry, the shared tests) names no
// lesson, so that deleting any lesson's files leaves the lab building and
// its tests passing.

// lessonFiles is one lesson: its slug, the stem of its registering file,
// and every file that is its (base names).
type lessonFiles struct {
	slug, stem string
	files      []string
}

// lessonFileSets reads the package's directory: each non-test file whose
// init calls register is a lesson's stem.
func lessonFileSets(t *testing.T) []lessonFiles {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	paths = slices.DeleteFunc(paths, removedHere)
	fset := token.NewFileSet()
	var out []lessonFiles
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if slug, ok := registeredSlug(f); ok {
			out = append(out, lessonFiles{slug: slug, stem: strings.TrimSuffix(p, ".go")})
		}
	}
	owner := map[string]string{}
	for i := range out {
		for _, p := range paths {
			if fileStemOf(p, out[i].stem) {
				if other, dup := owner[p]; dup {
					t.Fatalf("%s belongs to two lessons' files: %s and %s", p, other, out[i].slug)
				}
				owner[p] = out[i].slug
				out[i].files = append(out[i].files, p)
			}
		}
	}
	if len(out) != len(All()) {
		t.Fatalf("found %d files that register a lesson, want one per lesson (%d)", len(out), len(All()))
	}
	return out
}

// removedEnv lists, in the go commands TestEachLessonIsRemovable runs, the
// files of this package its -overlay deletes: they are still on disk, where
// the tests that read the package's sources look.
const removedEnv = "INFERLAB_REMOVED_FILES"

// removedHere reports whether the file p of this package is deleted from
// the build by the overlay of the running check (removedEnv).
func removedHere(p string) bool {
	return filepath.Dir(p) == "." && slices.Contains(strings.Split(os.Getenv(removedEnv), ","), filepath.Base(p))
}

// fileStemOf reports whether the file name p is one of the files of the
// lesson whose registering file is stem.go.
func fileStemOf(p, stem string) bool {
	base := strings.TrimSuffix(strings.TrimSuffix(p, ".go"), "_test")
	return base == stem || strings.HasPrefix(base, stem+"_")
}

// registeredSlug is the slug of the lesson f registers from its init: the
// Slug of the *Lesson literal bound to the variable register is called
// with.
func registeredSlug(f *ast.File) (string, bool) {
	var arg string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "init" || fn.Recv != nil {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "Register" && len(c.Args) == 1 {
					if a, ok := c.Args[0].(*ast.Ident); ok {
						arg = a.Name
					}
				}
			}
			return true
		})
	}
	if arg == "" {
		return "", false
	}
	slug := ""
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if name.Name != arg || i >= len(vs.Values) {
				continue
			}
			ast.Inspect(vs.Values[i], func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Slug" {
						if lit, ok := kv.Value.(*ast.BasicLit); ok && slug == "" {
							slug, _ = strconv.Unquote(lit.Value)
						}
					}
				}
				return true
			})
		}
		return false
	})
	return slug, slug != ""
}

// No file of lessons/ or app/ outside a lesson's files names it by its slug:
// a string literal that is the slug, or a path to its page. (A name of Go
// code — its lesson variable, its typed run — is caught by compiling
// without the lesson: TestEachLessonIsRemovable.)
func TestNoOtherFileNamesALesson(t *testing.T) {
	sets := lessonFileSets(t)
	var files []string
	for _, dir := range []string{".", "../app"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != dir && dir == "." {
				return filepath.SkipDir // this package only; app/ with its sub-packages
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !removedHere(p) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range sets {
			if filepath.Dir(p) == "." && fileStemOf(p, l.stem) {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(lit.Value)
				if s == l.slug || strings.Contains(s, "/lesson/"+l.slug) || strings.Contains(s, "/embed/"+l.slug) {
					t.Errorf("%s names the %s lesson (%q): only %s.go and its %s_* files may", fset.Position(lit.Pos()), l.slug, s, l.stem, l.stem)
				}
				return true
			})
		}
	}
}

// Deleting any lesson's files leaves the lab compiling and the tests that
// can notice passing: go test -short of lessons/ and app/ (which compiles
// them with their tests), restricted to the tests outside every lesson's
// files, without their per-lesson subtests (named by slug); go vet of every
// other package, which type-checks it with its tests: all go build would
// compile. A lesson's own tests
// cannot notice another's deletion, having passed the static check above
// and compiled; a per-lesson subtest of a shared test depends on its own
// lesson and shared code only. Each lesson's files are deleted through an
// -overlay, without copying the tree; two lessons are checked at a time.
//
// INFERLAB_REMOVABLE=full runs instead the whole literal check for each
// lesson: go build ./..., go vet ./... and every go test -short of
// ./lessons/... ./app/....
func TestEachLessonIsRemovable(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the lab and runs the shared tests once without each lesson")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod above lessons/: %v", err)
	}
	sets := lessonFileSets(t)
	full := os.Getenv("INFERLAB_REMOVABLE") == "full"
	var commands [][]string
	if full {
		commands = [][]string{
			{"build", "./..."},
			{"vet", "./..."},
			{"test", "-short", "./lessons/...", "./app/..."},
		}
	} else {
		run, skip := sharedTests(t, sets)
		// Most of the cost is compiling the lessons package twice (for its
		// dependents, and with its tests); the packages above it are
		// recompiled only when its export data changes, which deleting a
		// lesson (unexported code) does not.
		commands = [][]string{
			append([]string{"vet"}, packagesBeyond(t, goTool, root, "lessons", "app")...),
			{"test", "-short", "-vet=off", "-run", run, "-skip", skip, "./lessons/...", "./app/..."},
		}
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	work := make(chan lessonFiles)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				overlay := filepath.Join(dir, l.stem+".json")
				if err := writeDeletionOverlay(overlay, root, l.files); err != nil {
					t.Error(err)
					continue
				}
				for _, args := range commands {
					start := time.Now()
					cmd := exec.Command(goTool, append([]string{args[0], "-overlay", overlay}, args[1:]...)...)
					cmd.Dir = root
					cmd.Env = append(os.Environ(), removedEnv+"="+strings.Join(l.files, ","))
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Errorf("without %s (%s): go %s: %v\n%s", l.slug, strings.Join(l.files, ", "), args[0], err, tail(out, 4000))
					}
					t.Logf("without %s: go %s %.1fs", l.slug, args[0], time.Since(start).Seconds())
				}
			}
		}()
	}
	for _, l := range sets {
		work <- l
	}
	close(work)
	wg.Wait()
}

// packagesBeyond lists the module's packages outside the given top-level
// folders (go list ./...): go test compiles those with their tests, which
// type-checks them as go vet would.
func packagesBeyond(t *testing.T, goTool, root string, folders ...string) []string {
	t.Helper()
	cmd := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if !slices.Contains(folders, top) {
			pkgs = append(pkgs, path)
		}
	}
	return pkgs
}

// writeDeletionOverlay writes the go command's -overlay file that deletes
// files (of lessons/) from the build.
func writeDeletionOverlay(path, root string, files []string) error {
	replace := map[string]string{}
	for _, f := range files {
		replace[filepath.Join(root, "lessons", f)] = ""
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// sharedTests is the -run pattern of the tests outside every lesson's files
// (of this package, and every test of app/ and its sub-packages) and the
// -skip pattern of the per-lesson subtests.
func sharedTests(t *testing.T, sets []lessonFiles) (run, skip string) {
	t.Helper()
	mine := func(p string) bool {
		for _, l := range sets {
			if filepath.Dir(p) == "." && fileStemOf(p, l.stem) {
				return true
			}
		}
		return false
	}
	names := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{".", "../app"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && p != dir && dir == ".":
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(p, "_test.go") || mine(p) || removedHere(p):
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestEachLessonIsRemovable" {
					names[fn.Name.Name] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var tests, slugs []string
	for n := range names {
		tests = append(tests, n)
	}
	for _, l := range sets {
		slugs = append(slugs, regexp.QuoteMeta(l.slug))
	}
	sort.Strings(tests)
	sort.Strings(slugs)
	return "^(" + strings.Join(tests, "|") + ")$", "/^(" + strings.Join(slugs, "|") + ")$"
}

// tail is the last n bytes of b.
func tail(b []byte, n int) string {
	if len(b) > n {
		return fmt.Sprintf("…%s", b[len(b)-n:])
	}
	return string(b)
}
