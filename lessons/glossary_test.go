package lessons_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Every term is the first hit for its own name in any case, and among the
// first five with a letter dropped (a typo); every lesson is found by its
// title; an unrelated query finds nothing.
func TestSearch(t *testing.T) {
	for _, term := range lessons.Glossary() {
		for _, q := range []string{term.Term, strings.ToLower(term.Term), strings.ToUpper(term.Term)} {
			hits := lessons.Search(q, 5)
			if len(hits) == 0 || hits[0].Lesson != term.Lesson || hits[0].Term != term.Term {
				t.Errorf("%q: first hit %+v, want term %q in %s", q, first(hits), term.Term, term.Lesson)
				continue
			}
			if !strings.Contains(hits[0].Query, "find=") {
				t.Errorf("%q: link %q does not locate a step", q, hits[0].Query)
			}
		}
		if name := []rune(term.Term); len(name) >= 5 {
			typo := string(name[:len(name)/2]) + string(name[len(name)/2+1:])
			if !slices.ContainsFunc(lessons.Search(typo, 5), func(h lessons.Hit) bool { return h.Term == term.Term }) {
				t.Errorf("%q (a typo of %q) does not find it: %+v", typo, term.Term, lessons.Search(typo, 5))
			}
		}
	}
	for _, l := range lessons.All() {
		if !slices.ContainsFunc(lessons.Search(l.Title, 5), func(h lessons.Hit) bool { return h.Lesson == l.Slug && h.Term == "" }) {
			t.Errorf("%s: its title %q does not find it", l.Slug, l.Title)
		}
	}
	if hits := lessons.Search("zebra crossing", 5); len(hits) != 0 {
		t.Errorf("an unrelated query found %+v", hits)
	}
}

func first(h []lessons.Hit) lessons.Hit {
	if len(h) == 0 {
		return lessons.Hit{}
	}
	return h[0]
}

// A term's link lands on a step that mentions it.
func TestGlossaryStepsMentionTheirTerm(t *testing.T) {
	for _, l := range lessons.All() {
		if len(l.Terms) > 0 {
			t.Run(l.Slug, func(t *testing.T) {
				for _, term := range l.Terms {
					checkTermStep(t, l, term)
				}
			})
		}
	}
}

// checkTermStep checks that term's link lands on a step of l mentioning it.
func checkTermStep(t *testing.T, l *lessons.Lesson, term lessons.Term) {
	t.Helper()
	set := map[string]string{}
	if term.Set != "" {
		q, _ := url.ParseQuery(term.Set)
		for k := range q {
			set[k] = q.Get(k)
		}
	}
	s, _, err := l.Run(set)
	if err != nil {
		t.Fatalf("%s: %v", term.Term, err)
	}
	if lessons.StepFor(s, lessons.TermFind(term)) == 0 {
		t.Errorf("%s: no step of %s (%s) mentions %q", term.Term, term.Lesson, term.Set, lessons.TermFind(term))
	}
}
