package app

import (
	"strconv"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Quiz checkpoints ("predict the next step").
//
// A lessons.Step may carry a Quiz that is asked *before* that step is shown.
// The player asks it while the step before is on screen:
//
//   - playback (web/lab.js's player) stops there and moves the focus to
//     the question;
//   - stepping forward by hand (Next, →) is always allowed: the question
//     stays unanswered and is asked again when the learner comes back;
//   - answering shows the verdict (lessons.Quiz.Check) in #quiz-verdict, an
//     aria-live region, and reveals the step; "Skip" reveals it without an
//     answer;
//   - a step reached by a jump (scrubber, Home/End, a link) whose question
//     was not answered shows the question with its answer folded away
//     (#quiz-review), never a blocking form.

// verdictKind is #quiz-verdict's data-verdict: correct, close (a typo was
// forgiven) or wrong.
func verdictKind(v lessons.Verdict) string {
	switch {
	case v.Correct && v.Close:
		return "close"
	case v.Correct:
		return "correct"
	}
	return "wrong"
}

// answerQuiz judges an answer to the question of step i and reveals it.
func (p *Player) answerQuiz(ctx app.Context, i int, answer string) {
	if p.st.Answer(i, answer) {
		p.reveal(ctx)
	}
}

// skipQuiz reveals step i without an answer.
func (p *Player) skipQuiz(ctx app.Context, i int) {
	if p.st.Skip(i) {
		p.reveal(ctx)
	}
}

// reveal leaves the keyboard focus on Next once a question's step is shown,
// so → and space carry on from there (the form that had the focus goes
// away), and writes the step into the address (web/lab.js's player takes
// the step from the page drawn).
func (p *Player) reveal(ctx app.Context) {
	p.syncURL(ctx)
	labJS("focusSoon", "#btn-next:not([disabled])", "#btn-play")
}

// renderCheckpoint is #checkpoint, always present inside the narration
// panel: the verdict region first (it must exist before it is filled for
// screen readers to announce it), then the question of the next step or the
// folded question of this one.
func (p *Player) renderCheckpoint() app.UI {
	var res playback.QuizResult
	answered := false
	if r, ok := p.st.Result(p.st.Step); ok && !r.Skipped {
		res, answered = r, true
	}
	ask := p.st.PendingQuiz()
	var review *lessons.Quiz
	if !answered && p.st.Count() > 0 && p.st.QuizzesOn {
		if q := p.st.Script.Steps[p.st.Step].Quiz; q != nil {
			review = q
		}
	}
	kind := ""
	if answered {
		kind = verdictKind(res.Verdict)
	}
	return app.Div().ID("checkpoint").Class("checkpoint").Body(
		app.Div().ID("quiz-verdict").Class("quiz-verdict").Role("status").Aria("live", "polite").
			DataSet("verdict", kind).Body(
			app.If(answered, func() app.UI {
				icon := "✗ Wrong. "
				switch kind {
				case "correct":
					icon = "✓ Correct. "
				case "close":
					icon = "✓ Correct (typo forgiven). "
				}
				return app.Div().Body(
					app.P().Class("verdict-answer").Body(
						app.Span().Class("verdict-icon").Text(icon),
						app.Text("Your answer: “"+res.Answer+"”"),
					),
					app.P().Class("verdict-message").Text(res.Verdict.Message),
				)
			}),
		),
		app.If(ask >= 0, func() app.UI {
			return &quizForm{
				Key:    p.st.Shown() + "|" + strconv.Itoa(ask),
				Step:   ask + 1,
				Quiz:   p.st.Script.Steps[ask].Quiz,
				Hint:   p.st.Hint,
				Submit: func(ctx app.Context, answer string) { p.answerQuiz(ctx, ask, answer) },
				Skip:   func(ctx app.Context) { p.skipQuiz(ctx, ask) },
			}
		}),
		app.If(review != nil, func() app.UI {
			return app.Details().ID("quiz-review").Class("quiz-review").Body(
				app.Summary().Text("Checkpoint question for this step"),
				app.P().Class("quiz-question").Text(review.Question),
				app.P().Class("quiz-answer").Body(
					app.Strong().Text("Answer: "), app.Text(review.Answer+". "), app.Text(review.Explain),
				),
			)
		}),
	)
}

// quizForm is form#quiz: the question of step Step with radio buttons for
// a choice, or a text box for a number or a term. Its CompoID changes with
// the question, so a new question gets fresh (empty) inputs.
type quizForm struct {
	app.Compo

	Key    string
	Step   int // 1-based step the question guards
	Quiz   *lessons.Quiz
	Hint   string
	Submit func(ctx app.Context, answer string)
	Skip   func(ctx app.Context)
}

func (f *quizForm) CompoID() string { return "quiz:" + f.Key }

// answer reads the current answer from the DOM (the inputs are not bound
// to Go state, so typing never re-renders).
func (f *quizForm) answer() string {
	doc := app.Window().Get("document")
	if f.Quiz.Kind == lessons.QuizChoice {
		if el := doc.Call("querySelector", `#quiz input[name="quiz-choice"]:checked`); el.Truthy() {
			return el.Get("value").String()
		}
		return ""
	}
	if el := doc.Call("getElementById", "quiz-answer"); el.Truthy() {
		return el.Get("value").String()
	}
	return ""
}

func (f *quizForm) Render() app.UI {
	q := f.Quiz
	if q == nil {
		return app.Form().ID("quiz")
	}
	kindLabel := map[lessons.QuizKind]string{
		lessons.QuizNumber: "Type a number",
		lessons.QuizTerm:   "Type a term (small typos are fine)",
	}[q.Kind]
	var field app.UI
	if q.Kind == lessons.QuizChoice {
		field = app.Div().Class("quiz-choices").Role("radiogroup").Aria("labelledby", "quiz-question").Body(
			app.Range(q.Choices).Slice(func(i int) app.UI {
				id := "quiz-choice-" + strconv.Itoa(i)
				return app.Label().Class("quiz-choice").For(id).Body(
					app.Input().ID(id).Type("radio").Name("quiz-choice").Value(q.Choices[i]),
					app.Span().Text(" "+q.Choices[i]),
				)
			}),
		)
	} else {
		in := app.Input().ID("quiz-answer").Type("text").Name("quiz-answer").
			AutoComplete(false).Spellcheck(false).Aria("labelledby", "quiz-question").
			Aria("describedby", "quiz-kind").Attr("maxlength", "200")
		if q.Kind == lessons.QuizNumber {
			in = in.Attr("inputmode", "decimal")
		}
		field = app.Div().Class("quiz-field").Body(
			in,
			app.P().ID("quiz-kind").Class("help").Text(kindLabel),
		)
	}
	return app.Form().ID("quiz").Class("quiz").DataSet("quiz-step", f.Step).DataSet("kind", string(q.Kind)).
		NoValidate(true).AutoComplete(false).
		OnSubmit(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			if f.Submit != nil {
				f.Submit(ctx, f.answer())
			}
		}).
		OnKeyDown(func(ctx app.Context, e app.Event) {
			if e.Get("key").String() == "Escape" && f.Skip != nil {
				e.PreventDefault()
				f.Skip(ctx)
			}
		}).Body(
		app.P().Class("quiz-kicker").Body(
			app.Span().Aria("hidden", "true").Text("? "),
			app.Text("Predict step "+strconv.Itoa(f.Step)),
		),
		app.P().ID("quiz-question").Class("quiz-question").Text(q.Question),
		field,
		app.P().ID("quiz-hint").Class("quiz-hint").Role("alert").Text(f.Hint),
		app.Div().Class("quiz-actions").Body(
			app.Button().ID("quiz-submit").Type("submit").Class("primary").Text("Check"),
			app.Button().ID("quiz-skip").Type("button").Title("Skip the question and show the step (Esc)").
				OnClick(func(ctx app.Context, e app.Event) {
					if f.Skip != nil {
						f.Skip(ctx)
					}
				}).Text("Skip"),
		),
	)
}
