package hardware

import (
	"strings"
	"testing"
)

// Every profile must cite at least one tag, and every tag it cites must
// resolve, so the UI never shows a dangling citation.
func TestProfilesCiteKnownSources(t *testing.T) {
	check := func(kind, id string, tags []string) {
		if len(tags) == 0 {
			t.Errorf("%s %s has no sources", kind, id)
		}
		for _, tag := range tags {
			if _, ok := SourceByTag(tag); !ok {
				t.Errorf("%s %s cites %q, which is not in the sources map", kind, id, tag)
			}
		}
	}
	for _, g := range GPUs() {
		check("GPU", g.ID, g.Sources)
	}
	for _, m := range Models() {
		check("model", m.ID, m.Sources)
	}
}

// A tag nobody cites is probably a leftover from a removed profile.
func TestEverySourceIsCited(t *testing.T) {
	cited := map[string]bool{}
	for _, g := range GPUs() {
		for _, tag := range g.Sources {
			cited[tag] = true
		}
	}
	for _, m := range Models() {
		for _, tag := range m.Sources {
			cited[tag] = true
		}
	}
	for _, tag := range SourceTags() {
		if !cited[tag] {
			t.Errorf("source %q is in the map but no profile cites it", tag)
		}
	}
}

func TestSourcesWellFormed(t *testing.T) {
	all := Sources()
	if len(all) != len(SourceTags()) {
		t.Fatalf("Sources() has %d entries, SourceTags() %d", len(all), len(SourceTags()))
	}
	for tag, s := range all {
		if s.Tag != tag {
			t.Errorf("Sources()[%q].Tag = %q", tag, s.Tag)
		}
		if s.Ref == "" || s.Note == "" {
			t.Errorf("source %q lacks a reference or a note: %+v", tag, s)
		}
		if strings.Contains(s.Ref, " ") && strings.HasPrefix(s.Ref, "http") {
			t.Errorf("source %q: URL contains a space: %q", tag, s.Ref)
		}
	}
	if _, ok := SourceByTag("NO-SUCH-TAG"); ok {
		t.Error("SourceByTag found a tag that does not exist")
	}
}

func TestSourcesReturnsCopy(t *testing.T) {
	Sources()["HPC-H100"] = Source{}
	if s, _ := SourceByTag("HPC-H100"); s.Ref == "" {
		t.Error("modifying Sources() changed the package's map")
	}
}
