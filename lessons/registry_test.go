package lessons_test

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Every lesson places itself in the index: a group of Groups, a rank no
// other lesson of the group takes (so the order is the author's, not the
// slugs'), a picture for its card, and glossary terms no other lesson
// declares.
func TestLessonsDeclareTheirPlace(t *testing.T) {
	ranks := map[string]map[int]string{}
	terms := map[string]string{}
	for _, l := range lessons.All() {
		if lessons.GroupIndex(l.Group) == len(lessons.Groups) {
			t.Errorf("%s: group %q is not one of lessons.Groups", l.Slug, l.Group)
		}
		if ranks[l.Group] == nil {
			ranks[l.Group] = map[int]string{}
		}
		if other, dup := ranks[l.Group][l.Rank]; dup {
			t.Errorf("%s and %s both take rank %d in group %s", other, l.Slug, l.Rank, l.Group)
		}
		ranks[l.Group][l.Rank] = l.Slug
		if l.Thumb == "" {
			t.Errorf("%s: no Thumb (the kind of its main figure, for its index card)", l.Slug)
		}
		for _, term := range l.Terms {
			key := lessons.NormalizeTerm(term.Term)
			if other, dup := terms[key]; dup {
				t.Errorf("%s: term %q is also declared by %s", l.Slug, term.Term, other)
			}
			terms[key] = l.Slug
		}
	}
}
