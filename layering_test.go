// Package inferlab_test holds the layering rule of the whole tree: the table
// of docs/ARCHITECTURE.md's "Layers and imports", read from that file, is
// what every Go file of the repository (tests and nested modules included)
// may import. The test sits at the root because the rule is the tree's, not
// one package's.
package inferlab_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// module is the lab's import path.
const module = "github.com/inferlab/inferlab"

// The words of the table's "may import" column that are not layers.
const (
	otherModules = "other modules"
	uiPackages   = "UI packages"
	nothingMore  = "nothing more"
)

// uiImports are the UI packages: only the layers whose row names them may
// import them.
var uiImports = []string{"github.com/maxence-charriere/go-app", "github.com/go-echarts", "syscall/js"}

// testOnly are the layers a test of any layer from the lesson contract up
// may import besides its row (the sentences under the table; a core
// package's test may also import any core package).
var testOnly = []string{"lesson list", "lesson checks"}

// A layer is a row of the table.
type layer struct {
	name string
	// folders are the row's folders, relative to the repository root:
	// "x" holds x and its subfolders, "x/*" only x's subfolders.
	folders []string
	// may are the layers named in "may import", and otherModules or
	// uiPackages.
	may map[string]bool
	// row is the row's place in the table, from 0 at the top (the bottom
	// layer).
	row int
}

// rowRE is a table row: | layer | folders | may import |.
var rowRE = regexp.MustCompile(`^\|([^|]+)\|([^|]+)\|([^|]+)\|$`)

// readLayers parses the table of docs/ARCHITECTURE.md's "Layers and
// imports"; "core" in a "may import" cell names every layer whose name
// starts with "core ".
func readLayers(t *testing.T) []layer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Layers and imports\n")
	if start < 0 {
		t.Fatal(`docs/ARCHITECTURE.md has no "## Layers and imports" section`)
	}
	var layers []layer
	var mays [][]string
	inTable := false
	sc := bufio.NewScanner(strings.NewReader(text[start+1:]))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("ARCHITECTURE.md's layer table: %q is not a row of three cells", line)
		}
		name := strings.TrimSpace(m[1])
		if name == "layer" || strings.HasPrefix(name, "---") {
			continue // the header
		}
		l := layer{name: name, may: map[string]bool{}, row: len(layers)}
		for _, f := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
			l.folders = append(l.folders, strings.TrimSuffix(f[1], "/"))
		}
		if len(l.folders) == 0 {
			t.Fatalf("ARCHITECTURE.md's layer table: the row %q names no folder", name)
		}
		layers = append(layers, l)
		var may []string
		if cell := strings.TrimSpace(m[3]); cell != nothingMore {
			for _, w := range strings.Split(cell, ",") {
				may = append(may, strings.TrimSpace(w))
			}
		}
		mays = append(mays, may)
	}
	if len(layers) < 5 {
		t.Fatalf("ARCHITECTURE.md's layer table has %d rows: not found?", len(layers))
	}
	for i, may := range mays {
		for _, w := range may {
			found := w == otherModules || w == uiPackages
			for _, l := range layers {
				if l.name == w || w == "core" && strings.HasPrefix(l.name, "core ") {
					layers[i].may[l.name] = true
					found = true
				}
			}
			if w == otherModules || w == uiPackages {
				layers[i].may[w] = true
			}
			if !found {
				t.Fatalf("ARCHITECTURE.md's layer table: the row %q may import %q, which is no layer", layers[i].name, w)
			}
		}
	}
	return layers
}

// layerOf is the layer holding dir (a folder relative to the repository
// root, or an import path inside the module), or nil: the row naming the
// longest part of it.
func layerOf(layers []layer, dir string) *layer {
	l, _ := place(layers, dir)
	return l
}

// place is layerOf with the unit of its row that holds dir: the folder the
// row names (core/scheduler), or for "x/*" x's subfolder (lessons/garage).
func place(layers []layer, dir string) (best *layer, unit string) {
	bestLen := -1
	for i := range layers {
		for _, f := range layers[i].folders {
			n, u := -1, f
			if base, ok := strings.CutSuffix(f, "/*"); ok {
				if rest, ok := strings.CutPrefix(dir, base+"/"); ok {
					n = len(base) + 1
					first, _, _ := strings.Cut(rest, "/")
					u = base + "/" + first
				}
			} else if dir == f || strings.HasPrefix(dir, f+"/") {
				n = len(f)
			}
			if n > bestLen {
				best, unit, bestLen = &layers[i], u, n
			}
		}
	}
	return best, unit
}

// apart reports whether the packages of l's row may not import each other:
// the core's tiers and the lessons (a "x/*" row).
func (l *layer) apart() bool {
	return strings.HasPrefix(l.name, "core ") || slices.ContainsFunc(l.folders, func(f string) bool { return strings.HasSuffix(f, "/*") })
}

// allowed reports whether a file in folder dir (a test file when test) may
// import path, and why not.
func allowed(layers []layer, dir string, test bool, path string) (bool, string) {
	from, fromUnit := place(layers, dir)
	if rel, ok := strings.CutPrefix(path, module+"/"); ok {
		to, toUnit := place(layers, rel)
		switch {
		case to == nil:
			return false, "a package in no layer of the table"
		case to == from && (!from.apart() || fromUnit == toUnit):
			return true, ""
		case test && strings.HasPrefix(from.name, "core ") && strings.HasPrefix(to.name, "core "):
			return true, ""
		case to == from:
			return false, "another package of the " + from.name + " row, whose packages import none of each other"
		case from.may[to.name]:
			return true, ""
		case test && slices.Contains(testOnly, to.name) && from.row >= rowOf(layers, "lesson contract"):
			return true, ""
		}
		return false, "the " + to.name + " layer, which the " + from.name + " row does not name"
	}
	for _, u := range uiImports {
		if strings.HasPrefix(path, u) {
			if from.may[uiPackages] {
				return true, ""
			}
			return false, "a UI package"
		}
	}
	if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") && !from.may[otherModules] {
		return false, "a module outside the standard library"
	}
	return true, ""
}

func rowOf(layers []layer, name string) int {
	for _, l := range layers {
		if l.name == name {
			return l.row
		}
	}
	return len(layers)
}

// TestLayering parses every Go file of the repository and fails on an
// import its layer's row does not allow, on a file in no row, and on a
// folder a row names that holds no Go file (the table is stale).
func TestLayering(t *testing.T) {
	layers := readLayers(t)
	files := map[string]int{} // folder of the table -> Go files under it
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || (strings.HasPrefix(name, ".") && path != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if !strings.HasSuffix(path, ".go") || dir == "." {
			return nil // this file, at the top
		}
		from := layerOf(layers, dir)
		if from == nil {
			t.Errorf("%s is in no layer: add its folder to the table of docs/ARCHITECTURE.md", path)
			return nil
		}
		for _, f := range from.folders {
			base := strings.TrimSuffix(f, "/*")
			if dir == base || strings.HasPrefix(dir, base+"/") {
				files[f]++
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		test := strings.HasSuffix(path, "_test.go")
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if ok, why := allowed(layers, dir, test, p); !ok {
				t.Errorf("%s (%s) imports %s: %s", path, from.name, p, why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		for _, f := range l.folders {
			if files[f] == 0 {
				t.Errorf("the %s row names %s, which holds no Go file of its own: the table is stale", l.name, f)
			}
		}
	}
}

// The table catches what it is for: each of these imports, were a file of
// that folder to make it, passes or fails the walk above as stated.
func TestLayeringRules(t *testing.T) {
	layers := readLayers(t)
	for _, c := range []struct {
		file, imp string
		ok        bool
	}{
		{"internal/detmath/x.go", "math", true},
		{"internal/detmath/x.go", module + "/core/workload", false}, // a foundation above the core
		{"core/scheduler/x.go", module + "/internal/detmath", true},
		{"core/scheduler/x.go", module + "/core/allocator", true},
		{"core/allocator/x.go", module + "/core/scheduler", false}, // a lower tier above a higher one
		{"core/router/x.go", module + "/core/allocator", false},    // two packages of one tier
		{"core/scheduler/x.go", module + "/app/sim/gcturn", false}, // the browser's workaround is injected, not imported
		{"core/scheduler/x_test.go", module + "/cmd/internal/bench", false},
		{"core/scheduler/x_test.go", module + "/lessons/all", false},  // tests below the lessons see no lesson
		{"core/workload/x_test.go", module + "/core/scheduler", true}, // a core test may use the core above it
		{"core/allocator/x.go", module + "/lessons", false},
		{"core/allocator/x.go", "github.com/agnivade/levenshtein", false},
		{"scene/x.go", module + "/core/allocator", false},
		{"lessons/x.go", module + "/scene", true},
		{"lessons/x.go", "github.com/agnivade/levenshtein", true},
		{"lessons/x.go", "syscall/js", false},
		{"lessons/x.go", module + "/app", false},
		{"lessons/x.go", module + "/lessons/kit", false}, // the contract is below the kit
		{"lessons/x_test.go", module + "/lessons/all", true},
		{"lessons/kit/x.go", module + "/lessons", true},
		{"lessons/garage/x.go", module + "/lessons/kit", true},
		{"lessons/garage/x.go", module + "/lessons/sandbox", false}, // no lesson imports another
		{"lessons/garage/x.go", module + "/lessons/all", false},
		{"lessons/garage/x.go", module + "/lessons/lessontest", false},
		{"lessons/garage/x_test.go", module + "/lessons/lessontest", true},
		{"lessons/all/x.go", module + "/lessons/garage", true},
		{"app/sim/x.go", module + "/lessons", true},
		{"app/playback/x.go", module + "/app/sim", true}, // one row's packages, not the core's nor the lessons
		{"app/sim/x.go", module + "/lessons/kit", false},
		{"app/sim/x.go", "github.com/maxence-charriere/go-app/v10/pkg/app", false},
		{"app/x.go", "github.com/maxence-charriere/go-app/v10/pkg/app", true},
		{"app/x.go", module + "/lessons/all", false}, // only programs and tests list the lessons
		{"app/x_test.go", module + "/lessons/all", true},
		{"app/x.go", module + "/cmd/internal/bench", false}, // nothing imports the harness
		{"server/x.go", module + "/app", true},
		{"wasm/x.go", module + "/server", false}, // the server never compiles into a wasm
		{"wasm/x.go", module + "/lessons/all", true},
		{"cmd/inferlab/x.go", module + "/cmd/internal/bench", true},
		{"cmd/inferlab/x.go", module + "/server", true},
		{"cmd/benchpeers/ours/x.go", module + "/core/scenario", true},
	} {
		dir := filepath.ToSlash(filepath.Dir(c.file))
		from := layerOf(layers, dir)
		if from == nil {
			t.Errorf("%s: in no layer", c.file)
			continue
		}
		if ok, why := allowed(layers, dir, strings.HasSuffix(c.file, "_test.go"), c.imp); ok != c.ok {
			t.Errorf("%s (%s) importing %s: allowed %v (%s), want %v", c.file, from.name, c.imp, ok, why, c.ok)
		}
	}
}
