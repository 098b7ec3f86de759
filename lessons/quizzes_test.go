package lessons_test

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Every lesson has at least one checkpoint, and its answer is one the quiz
// itself accepts (so a computed answer can always be given).
func TestEveryLessonHasAQuiz(t *testing.T) {
	for _, l := range lessons.All() {
		t.Run(l.Slug, func(t *testing.T) {
			s, _, err := l.Run(nil)
			if err != nil {
				t.Fatalf("%s: %v", l.Slug, err)
			}
			found := 0
			for i, st := range s.Steps {
				if st.Quiz == nil {
					continue
				}
				found++
				if !st.Quiz.Check(st.Quiz.Answer).Correct {
					t.Errorf("%s step %d: its own answer %q is rejected", l.Slug, i+1, st.Quiz.Answer)
				}
				if st.Quiz.Kind == lessons.QuizChoice {
					ok := false
					for _, c := range st.Quiz.Choices {
						ok = ok || c == st.Quiz.Answer
					}
					if !ok {
						t.Errorf("%s step %d: answer %q is not among the choices %v", l.Slug, i+1, st.Quiz.Answer, st.Quiz.Choices)
					}
				}
			}
			if found == 0 {
				t.Errorf("%s has no quiz checkpoint", l.Slug)
			}
		})
	}
}
