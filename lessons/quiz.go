package lessons

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/agnivade/levenshtein"
)

// QuizKind says how a checkpoint is answered.
type QuizKind string

// The kinds of checkpoint.
const (
	QuizChoice QuizKind = "choice" // pick one of Choices
	QuizNumber QuizKind = "number" // type a number
	QuizTerm   QuizKind = "term"   // type a short term; small typos count
)

// Quiz is a predict-the-next-step checkpoint: the player pauses before the
// step that carries it and asks. The answer is computed by the lesson's
// simulation, never typed in.
type Quiz struct {
	Question string   `json:"question"`
	Kind     QuizKind `json:"kind"`
	Choices  []string `json:"choices,omitempty"`
	// Answer is the right choice or term (canonical spelling), or the
	// number formatted as text.
	Answer string `json:"answer"`
	// Accept lists other spellings of a term answer (e.g. "cow" for
	// copy-on-write).
	Accept []string `json:"accept,omitempty"`
	// Tolerance is the relative error a number answer may have (0: exact).
	Tolerance float64 `json:"tolerance,omitempty"`
	// Explain is shown after the answer: why it is what it is.
	Explain string `json:"explain"`
}

// NumberQuiz builds a number checkpoint.
func NumberQuiz(question string, answer float64, tolerance float64, explain string) *Quiz {
	return &Quiz{Question: question, Kind: QuizNumber, Answer: strconv.FormatFloat(answer, 'f', -1, 64), Tolerance: tolerance, Explain: explain}
}

// ChoiceQuiz builds a choice checkpoint; answer must be one of choices.
func ChoiceQuiz(question string, choices []string, answer, explain string) *Quiz {
	return &Quiz{Question: question, Kind: QuizChoice, Choices: choices, Answer: answer, Explain: explain}
}

// Verdict is the player's feedback on an answer.
type Verdict struct {
	Correct bool
	// Close is true when a term was accepted despite a typo.
	Close   bool
	Message string
}

// Check judges an answer.
func (q *Quiz) Check(answer string) Verdict {
	a := strings.TrimSpace(answer)
	if a == "" {
		return Verdict{Message: "Type or pick an answer first."}
	}
	switch q.Kind {
	case QuizNumber:
		x, err := strconv.ParseFloat(strings.ReplaceAll(a, ",", ""), 64)
		want, _ := strconv.ParseFloat(q.Answer, 64)
		if err != nil || math.IsNaN(x) {
			return Verdict{Message: fmt.Sprintf("%q is not a number.", a)}
		}
		if x == want || (q.Tolerance > 0 && math.Abs(x-want) <= q.Tolerance*math.Abs(want)) {
			return Verdict{Correct: true, Message: "Right: " + q.Answer + ". " + q.Explain}
		}
		return Verdict{Message: "Not quite: the model says " + q.Answer + ". " + q.Explain}
	case QuizChoice:
		if normalizeTerm(a) == normalizeTerm(q.Answer) {
			return Verdict{Correct: true, Message: "Right. " + q.Explain}
		}
		return Verdict{Message: "Not this time: " + q.Answer + ". " + q.Explain}
	default:
		ok, close := matchTerm(a, append([]string{q.Answer}, q.Accept...))
		switch {
		case ok && close:
			return Verdict{Correct: true, Close: true, Message: "Right (we read it as \"" + q.Answer + "\"). " + q.Explain}
		case ok:
			return Verdict{Correct: true, Message: "Right. " + q.Explain}
		}
		return Verdict{Message: "Not quite: " + q.Answer + ". " + q.Explain}
	}
}

// normalizeTerm lower-cases a term and turns punctuation and runs of spaces
// into single spaces, so "Copy-on-Write" and "copy on write" are equal.
func normalizeTerm(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		} else {
			space = true
		}
	}
	return b.String()
}

// typoBudget is how many edits a term of n letters may carry and still
// count: none for short words (a typo there is another word), one up to
// seven letters, two beyond.
func typoBudget(n int) int {
	switch {
	case n <= 3:
		return 0
	case n <= 7:
		return 1
	}
	return 2
}

// matchTerm reports whether answer matches one of the accepted terms
// exactly (after normalising) or within the typo budget (close).
func matchTerm(answer string, accepted []string) (ok, close bool) {
	a := normalizeTerm(answer)
	best := -1
	for _, t := range accepted {
		n := normalizeTerm(t)
		if a == n {
			return true, false
		}
		d := levenshtein.ComputeDistance(a, n)
		if d <= typoBudget(len([]rune(n))) && (best < 0 || d < best) {
			best = d
		}
	}
	return best >= 0, best >= 0
}
