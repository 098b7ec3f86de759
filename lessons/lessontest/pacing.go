package lessontest

import (
	"regexp"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// checkPacing: the pacing and figures of the lessons that ask for it
// (Checks.Paced: the memory and timing lessons): at most 20 narrated steps,
// none titled "Tick N", one main figure per step, and every step before the
// claims names its subject on the figure (a mark that a mention of the
// narration links to; the contract test checks the links).
func checkPacing(t *testing.T, l *lessons.Lesson) {
	tick := regexp.MustCompile(`^Tick \d+`)
	slug := l.Slug
	s, _, err := l.Run(nil)
	if err != nil {
		t.Fatal(slug, err)
	}
	if len(s.Steps) > 20 {
		t.Errorf("%s: %d steps, want at most 20", slug, len(s.Steps))
	}
	for i, st := range s.Steps {
		if tick.MatchString(st.Title) {
			t.Errorf("%s step %d is titled %q", slug, i+1, st.Title)
		}
		if i == len(s.Steps)-1 {
			continue // the claims
		}
		main := 0
		for _, sc := range st.Scenes {
			if sc.Main {
				main++
			}
		}
		if main != 1 {
			t.Errorf("%s step %d (%s): %d main figures, want 1", slug, i+1, st.Title, main)
		}
		if len(st.Mentions) == 0 {
			t.Errorf("%s step %d (%s): the narration names nothing on the figure", slug, i+1, st.Title)
		}
	}
}
