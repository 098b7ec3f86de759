package lessons

import (
	"net/url"
	"strings"
	"testing"
)

func TestSearch(t *testing.T) {
	for _, tc := range []struct {
		query, lesson, term string
	}{
		{"ttft", "measuring", "TTFT"},
		{"TTFT", "measuring", "TTFT"},
		{"paged atention", "garage", "PagedAttention"},
		{"copy on wrte", "cow-fork", "copy-on-write"},
		{"roofline", "roofline", "roofline"},
		{"chunked", "chunked-prefill", "chunked prefill"},
		{"goodpt", "measuring", "goodput"},
	} {
		hits := Search(tc.query, 5)
		if len(hits) == 0 || hits[0].Lesson != tc.lesson || hits[0].Term != tc.term {
			t.Errorf("%q: first hit %+v, want term %q in %s", tc.query, first(hits), tc.term, tc.lesson)
			continue
		}
		if !strings.Contains(hits[0].Query, "find=") {
			t.Errorf("%q: link %q does not locate a step", tc.query, hits[0].Query)
		}
	}
	if hits := Search("zebra crossing", 5); len(hits) != 0 {
		t.Errorf("an unrelated query found %+v", hits)
	}
}

func first(h []Hit) Hit {
	if len(h) == 0 {
		return Hit{}
	}
	return h[0]
}

// A term's link lands on a step that mentions it.
func TestGlossaryStepsMentionTheirTerm(t *testing.T) {
	for _, term := range Glossary {
		l := Get(term.Lesson)
		if l == nil {
			continue // lesson not written yet
		}
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
		if StepFor(s, term.find()) == 0 {
			t.Errorf("%s: no step of %s (%s) mentions %q", term.Term, term.Lesson, term.Set, term.find())
		}
	}
}
