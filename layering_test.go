package inferlab_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// module is the lab's import path.
const module = "github.com/inferlab/inferlab"

// A layer is a set of folders and what their files (tests included) may
// import. Data flows one way, params → lesson → core → scenes → renderer,
// and the folders show it: every import points down.
type layer struct {
	name string
	// dirs are the layer's folders, relative to the repository root; a
	// folder holds its subfolders unless a later layer names them.
	dirs []string
	// below are the layers whose packages it may import (its own always).
	below []string
	// thirdParty: it may import modules outside the standard library and
	// the lab (never UI ones where ui is false).
	thirdParty, ui bool
}

// layers lists the repository's layers from the bottom up:
//
//   - foundations (internal/: deterministic maths, number formatting)
//     import only the standard library;
//   - the core (core/: allocators, schedulers, routers, hardware models)
//     imports the foundations and itself;
//   - scenes (scene/: what a step shows) import only the standard library;
//   - lessons import the core, scenes and foundations, and no UI package:
//     they build and test natively and are the same code in the browser;
//   - the app (app/, export/, server/, wasm/) imports anything below it;
//   - commands (cmd/, with the measuring harness cmd/internal/bench) and
//     the browser tests (e2e/) sit at the top, and nothing imports them.
var layers = []layer{
	{name: "foundations", dirs: []string{"internal"}},
	{name: "core", dirs: []string{"core"}, below: []string{"foundations"}},
	{name: "scene", dirs: []string{"scene"}},
	{name: "lessons", dirs: []string{"lessons"}, below: []string{"foundations", "core", "scene"}, thirdParty: true},
	{name: "app", dirs: []string{"app", "export", "server", "wasm"}, below: []string{"foundations", "core", "scene", "lessons"}, thirdParty: true, ui: true},
	{name: "cmd", dirs: []string{"cmd"}, below: []string{"foundations", "core", "scene", "lessons", "app"}, thirdParty: true, ui: true},
	{name: "e2e", dirs: []string{"e2e"}, below: []string{"foundations", "core", "scene", "lessons", "app"}, thirdParty: true, ui: true},
	{name: "docs", dirs: []string{"docs"}, below: []string{"foundations", "core", "scene", "lessons"}},
}

// uiImports are the UI packages only the app and above may use.
var uiImports = []string{"github.com/maxence-charriere/go-app", "github.com/go-echarts", "syscall/js"}

// layerOf is the layer holding path (a folder or file relative to the
// repository root, or an import path inside the module), or nil: the
// longest folder that is path or above it wins.
func layerOf(path string) *layer {
	var best *layer
	bestLen := -1
	for i := range layers {
		for _, d := range layers[i].dirs {
			if (path == d || strings.HasPrefix(path, d+"/")) && len(d) > bestLen {
				best, bestLen = &layers[i], len(d)
			}
		}
	}
	return best
}

// allowed reports whether a file of layer from may import path, and why
// not.
func (from *layer) allowed(path string) (bool, string) {
	if rel, ok := strings.CutPrefix(path, module+"/"); ok {
		to := layerOf(rel)
		switch {
		case to == nil:
			return false, "a package in no layer"
		case to == from:
			return true, ""
		}
		for _, b := range from.below {
			if b == to.name {
				return true, ""
			}
		}
		return false, "the " + to.name + " layer, which is not below " + from.name
	}
	for _, u := range uiImports {
		if strings.HasPrefix(path, u) && !from.ui {
			return false, "a UI package"
		}
	}
	if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") && !from.thirdParty {
		return false, "a module outside the standard library"
	}
	return true, ""
}

// TestLayering parses every Go file of the repository (tests and nested
// modules included) and fails on any import that points up or sideways
// out of its layer.
func TestLayering(t *testing.T) {
	root := "."
	checked := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || (strings.HasPrefix(name, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		if !strings.Contains(rel, "/") {
			return nil // this test, at the top
		}
		from := layerOf(rel)
		if from == nil {
			t.Errorf("%s is in no layer: add its folder to layers", rel)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked[from.name]++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if ok, why := from.allowed(p); !ok {
				t.Errorf("%s (%s) imports %s: %s", rel, from.name, p, why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		if checked[l.name] == 0 {
			t.Errorf("no Go file found in the %s layer (%v): the walk missed it", l.name, l.dirs)
		}
	}
}

// The rules catch what they are for: each of these imports, were a file of
// that folder to make it, would fail the walk above.
func TestLayeringRules(t *testing.T) {
	for _, c := range []struct {
		file, imp string
		ok        bool
	}{
		{"internal/detmath/x.go", "math", true},
		{"internal/detmath/x.go", module + "/core/workload", false}, // a foundation above the core
		{"core/scheduler/x.go", module + "/internal/detmath", true},
		{"core/scheduler/x.go", module + "/core/allocator", true},
		{"core/scheduler/x.go", module + "/app/sim/gcturn", false}, // the browser's workaround is injected, not imported
		{"core/scheduler/x_test.go", module + "/cmd/internal/bench", false},
		{"core/allocator/x.go", module + "/lessons", false},
		{"core/allocator/x.go", "github.com/agnivade/levenshtein", false},
		{"scene/x.go", module + "/core/allocator", false},
		{"lessons/x.go", module + "/scene", true},
		{"lessons/x.go", "github.com/agnivade/levenshtein", true},
		{"lessons/x.go", "syscall/js", false},
		{"lessons/x.go", module + "/app", false},
		{"app/sim/x.go", module + "/lessons", true},
		{"app/x.go", "github.com/maxence-charriere/go-app/v10/pkg/app", true},
		{"app/x.go", module + "/cmd/internal/bench", false}, // nothing imports the harness
		{"server/x.go", module + "/app", true},
		{"cmd/inferlab/x.go", module + "/cmd/internal/bench", true},
		{"cmd/inferlab/x.go", module + "/server", true},
		{"cmd/benchpeers/ours/x.go", module + "/core/scenario", true},
		{"e2e/x.go", module + "/cmd/inferlab", false},
	} {
		from := layerOf(c.file)
		if from == nil {
			t.Errorf("%s: in no layer", c.file)
			continue
		}
		if ok, why := from.allowed(c.imp); ok != c.ok {
			t.Errorf("%s importing %s: allowed %v (%s), want %v", c.file, c.imp, ok, why, c.ok)
		}
	}
}
