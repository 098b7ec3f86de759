package app

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// Every lesson's index picture is the kind of its main figure on its first
// step, read from the lesson's own script at its defaults.
func TestThumbKinds(t *testing.T) {
	for _, l := range lessons.All() {
		t.Run(l.Slug, func(t *testing.T) {
			k := l.Thumb
			if k == "" {
				t.Fatalf("%s: no index picture (Lesson.Thumb)", l.Slug)
			}
			s, _, err := l.Run(nil)
			if err != nil {
				t.Fatalf("%s: %v", l.Slug, err)
			}
			if len(s.Steps) == 0 || len(s.Steps[0].Scenes) == 0 {
				t.Fatalf("%s: no figure on its first step", l.Slug)
			}
			main, _, _ := mainFirst(s.Steps[0].Scenes)
			if got := main[0].Kind; got != k && !(got == scene.KindBlockGrid && k == scene.KindPools) {
				t.Errorf("%s: the index draws a %s, its first step's main figure is a %s", l.Slug, k, got)
			}
		})
	}
}

// The index places every lesson once, in lessons.All's order, numbered
// 1…n across its groups.
func TestGroupLessons(t *testing.T) {
	all := lessons.All()
	groups := groupLessons(all)
	var order []string
	n := 1
	for _, g := range groups {
		if g.First != n {
			t.Errorf("group %s starts at %d, want %d", g.ID, g.First, n)
		}
		for _, l := range g.Lessons {
			order = append(order, l.Slug)
		}
		n += len(g.Lessons)
	}
	if len(order) != len(all) {
		t.Fatalf("%d lessons on the index, %d registered", len(order), len(all))
	}
	for i, l := range all {
		if order[i] != l.Slug {
			t.Errorf("position %d: %s, want %s (lessons.All order)", i+1, order[i], l.Slug)
		}
	}
	// A lesson whose group is not listed still appears, in a last group.
	extra := append(append([]*lessons.Lesson(nil), all...), &lessons.Lesson{Slug: "zz-new", Group: "no-such-group"})
	gs := groupLessons(extra)
	if last := gs[len(gs)-1]; last.ID != "more" || last.Lessons[0].Slug != "zz-new" {
		t.Errorf("an ungrouped lesson is not in the last group: %+v", last.Group)
	}
}
