// Package docs_test holds the repository's documents to the code: every
// citation tag the code resolves has an entry in SOURCES.md, every link to
// an anchor of a document names a heading that exists, no comment cites a
// note outside the repository, and the README's lessons table lists every
// registered lesson.
//
// It is a test-only package at the top of the import graph, so it may import
// the core and the lessons without an import pointing up.
package docs_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
)

// root is the repository root, seen from this package's directory.
const root = ".."

// anchors returns the GitHub anchors of a markdown file's headings: the
// heading's text in lower case, with every character other than a letter,
// a digit, a space, a hyphen or an underscore dropped, and spaces turned
// into hyphens; a repeated heading gets -1, -2, … Lines inside code fences
// are not headings.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every citation tag the code resolves (hardware.Cite, cudagraph.Cite,
// cluster.Cite, hardware.KVSource) is an entry of SOURCES.md under its own
// name, so a bracketed tag in a comment can be looked up there.
func TestSourcesHasEveryCitedTag(t *testing.T) {
	have := anchors(t, filepath.Join(root, "docs", "SOURCES.md"))
	var tags []string
	tags = append(tags, hardware.SourceTags()...)
	tags = append(tags, hardware.CostSourceTags()...)
	tags = append(tags, hardware.KVSourceTags()...)
	tags = append(tags, cudagraph.SourceTags()...)
	tags = append(tags, cluster.SourceTags()...)
	if len(tags) < 50 {
		t.Fatalf("only %d citation tags found in the code; the registries moved?", len(tags))
	}
	for _, tag := range tags {
		if !have[strings.ToLower(tag)] {
			t.Errorf("the code cites [%s] but docs/SOURCES.md has no \"### %s\" entry", tag, tag)
		}
	}
}

// docLink is a link to an anchor of one of the repository's documents, as a
// comment or another document writes it: docs/SOURCES.md#vllm-block-pool,
// ARCHITECTURE.md#budgets, (../BENCHMARKS.md#server).
var docLink = regexp.MustCompile(`\b(SOURCES|ARCHITECTURE|VALIDATION|DOM|BENCHMARKS|README|CONTRIBUTING)\.md#([A-Za-z0-9_-]+)`)

// docPaths maps a document's name to its path from the repository root.
var docPaths = map[string]string{
	"SOURCES":      "docs/SOURCES.md",
	"ARCHITECTURE": "docs/ARCHITECTURE.md",
	"VALIDATION":   "docs/VALIDATION.md",
	"DOM":          "docs/DOM.md",
	"BENCHMARKS":   "BENCHMARKS.md",
	"README":       "README.md",
	"CONTRIBUTING": "CONTRIBUTING.md",
}

// textFiles walks the repository's sources and documents, skipping what the
// build and npm write (and the version control directory).
func textFiles(t *testing.T, visit func(rel string, text string)) {
	t.Helper()
	skip := map[string]bool{".git": true, "node_modules": true, "dist": true, "bin": true, "test-output": true}
	exts := map[string]bool{".go": true, ".md": true, ".js": true, ".mjs": true, ".css": true, ".sh": true, ".html": true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !exts[filepath.Ext(name)] && name != "Makefile" && name != "Dockerfile" && name != "run" {
			return nil
		}
		if strings.HasSuffix(name, ".min.js") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		visit(filepath.ToSlash(rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every link to an anchor of a document names a heading of that document,
// and every same-file link (#anchor) of one of those documents names one of
// its own.
func TestDocumentAnchorsResolve(t *testing.T) {
	docs := map[string]map[string]bool{}
	for name, p := range docPaths {
		docs[name] = anchors(t, filepath.Join(root, filepath.FromSlash(p)))
	}
	sameFile := regexp.MustCompile(`\]\(#([A-Za-z0-9_-]+)\)`)
	links := 0
	textFiles(t, func(rel, text string) {
		for _, m := range docLink.FindAllStringSubmatch(text, -1) {
			links++
			if !docs[m[1]][m[2]] {
				t.Errorf("%s links %s.md#%s: %s has no such heading", rel, m[1], m[2], docPaths[m[1]])
			}
		}
		if !strings.HasSuffix(rel, ".md") {
			return
		}
		var own map[string]bool
		for name, p := range docPaths {
			if p == rel {
				own = docs[name]
			}
		}
		if own == nil {
			return
		}
		for _, m := range sameFile.FindAllStringSubmatch(text, -1) {
			links++
			if !own[m[1]] {
				t.Errorf("%s links #%s: no such heading in it", rel, m[1])
			}
		}
	})
	if links == 0 {
		t.Fatal("no links to document anchors found: the walk missed the repository?")
	}
}

// outsideCitation is a citation the repository's reader cannot follow: a
// design note kept outside the repository, named by its file, or a ticket
// named by its number. A comment or a document states the rule itself and
// cites docs/ (ARCHITECTURE.md, SOURCES.md, VALIDATION.md) or the upstream
// source instead.
var outsideCitation = regexp.MustCompile(`\b(DESIGN|PICTURES|engines|profiles|stack)\.md\b|\b[Ii]ssue #?[0-9]+`)

func TestNoCitationsOutsideTheRepository(t *testing.T) {
	files := 0
	textFiles(t, func(rel, text string) {
		files++
		for i, line := range strings.Split(text, "\n") {
			if m := outsideCitation.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, which a reader of this repository cannot open: state the rule and cite docs/ or the upstream source", rel, i+1, m)
			}
		}
	})
	if files < 50 {
		t.Fatalf("only %d files checked: the walk missed the repository?", files)
	}
}

// The README's lessons table is the registry's: every registered lesson
// once, in the index's order (lessons.All: by group, then rank), with the
// article the lesson itself names (Lesson.Part), and no row names a lesson
// that is not registered. Adding or removing a lesson adds or removes its
// row (CONTRIBUTING.md, "Add a lesson").
func TestReadmeListsEveryLesson(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Lessons\n")
	if start < 0 {
		t.Fatal(`README.md has no "## Lessons" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\|")
	rows := map[string]string{}
	var order []string
	// The section's first table is the lessons table (later tables, such as
	// the trace bounds, have rows of their own).
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "|") {
			inTable = true
		} else if inTable {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("README.md's lessons table lists %q twice", m[1])
		}
		rows[m[1]] = strings.TrimSpace(m[2])
		order = append(order, m[1])
	}
	all := lessons.All()
	if len(all) == 0 {
		t.Fatal("no lessons registered")
	}
	for _, l := range all {
		part, ok := rows[l.Slug]
		switch {
		case !ok:
			t.Errorf("README.md's lessons table has no row for %q (%s)", l.Slug, l.Title)
		case part != l.Part:
			t.Errorf("README.md gives %q the article %q; the lesson says %q", l.Slug, part, l.Part)
		}
		delete(rows, l.Slug)
	}
	for slug := range rows {
		t.Errorf("README.md's lessons table has a row for %q, which is no registered lesson", slug)
	}
	var want []string
	for _, l := range all {
		want = append(want, l.Slug)
	}
	if !t.Failed() && !slices.Equal(order, want) {
		t.Errorf("README.md's lessons table is in the order %v; the index's (lessons.All) is %v", order, want)
	}
}
