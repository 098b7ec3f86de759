package lessons

import "testing"

func TestTermTolerance(t *testing.T) {
	q := &Quiz{Kind: QuizTerm, Answer: "copy-on-write", Accept: []string{"cow", "copy on write"}}
	for _, tc := range []struct {
		in           string
		right, close bool
	}{
		{"copy-on-write", true, false},
		{"Copy on Write", true, false},
		{"COW", true, false},
		{"copy on wrte", true, true},  // one letter dropped
		{"copy-on-wirte", true, true}, // two letters swapped: two edits
		{"coy", false, false},         // short terms must be exact
		{"prefix caching", false, false},
		{"copy", false, false},
		{"", false, false},
	} {
		v := q.Check(tc.in)
		if v.Correct != tc.right || v.Close != tc.close {
			t.Errorf("%q: correct %v close %v, want %v %v (%s)", tc.in, v.Correct, v.Close, tc.right, tc.close, v.Message)
		}
	}
}

func TestNumberAndChoiceQuiz(t *testing.T) {
	n := NumberQuiz("?", 16, 0, "")
	if !n.Check("16").Correct || n.Check("17").Correct || n.Check("sixteen").Correct || !n.Check(" 16 ").Correct {
		t.Error("exact number quiz")
	}
	loose := NumberQuiz("?", 80, 0.1, "")
	if !loose.Check("85").Correct || loose.Check("95").Correct || loose.Check("1,000").Correct || !loose.Check("72").Correct {
		t.Error("number quiz with 10% tolerance")
	}
	c := ChoiceQuiz("?", []string{"memory-bound", "compute-bound"}, "memory-bound", "")
	if !c.Check("memory-bound").Correct || c.Check("compute-bound").Correct {
		t.Error("choice quiz")
	}
}
