package app

import (
	"strconv"

	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// paramsPanel is form#params: one labelled control per knob (number inputs
// with min/max/step, selects for choices), its unit and help text. It is its
// own component so typing re-renders only the form, and a step change does
// not touch it (its fields stay equal).
//
// Applying (the button or Enter) navigates to the URL of the typed values,
// keeping the step; the player then validates them like any URL, so a bad
// value shows a notice naming the knob and its range and falls back.
type paramsPanel struct {
	app.Compo

	Lesson *lessons.Lesson
	Values map[string]string // canonical values of the script shown
	Keep   string            // query kept beside the knobs (hide=, theme=), with a leading "&"
	// Step is the player's 0-based step, read when applying: the address
	// bar follows steps late (Player.syncURLSoon). A pointer, so a step
	// change leaves the form's fields equal and does not re-render it.
	Step *int

	form    map[string]string // as typed
	formFor map[string]string // the Values the form was filled from
}

// CompoID makes a lesson change mount a fresh form: go-app keeps an element's
// first event handler (it compares code pointers), so the fields' handlers,
// which capture their knob's key, must not be reused for another lesson's
// knobs (a search result opens another lesson in place).
func (f *paramsPanel) CompoID() string {
	if f.Lesson == nil {
		return "params:"
	}
	return "params:" + f.Lesson.Slug
}

func (f *paramsPanel) sync() {
	if f.form == nil || !sameText(f.formFor, f.Values) {
		f.form = make(map[string]string, len(f.Values))
		for k, v := range f.Values {
			f.form[k] = v
		}
		f.formFor = f.Values
	}
}

func sameText(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func (f *paramsPanel) apply(ctx app.Context) {
	if f.Lesson == nil {
		return
	}
	u := *ctx.Page().URL()
	step := 1
	if f.Step != nil {
		step = *f.Step + 1
	} else if n, err := strconv.Atoi(u.Query().Get("step")); err == nil && n > 0 {
		step = n
	}
	u.RawQuery = EncodeRaw(f.Lesson, f.form, step) + f.Keep
	ctx.NavigateTo(&u)
}

func (f *paramsPanel) reset(ctx app.Context) {
	if f.Lesson == nil {
		return
	}
	f.form = f.Lesson.Defaults().Text()
	f.apply(ctx)
}

func (f *paramsPanel) Render() app.UI {
	if f.Lesson == nil {
		return app.Form().ID("params").Class("params panel")
	}
	f.sync()
	ps := f.Lesson.Params
	return app.Form().ID("params").Class("params panel").NoValidate(true).AutoComplete(false).
		OnSubmit(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			f.apply(ctx)
		}).Body(
		app.H2().Text("Parameters"),
		app.P().Class("help").Text("Change a knob and apply: the lesson is simulated again in your browser and the address records every value."),
		app.Div().Class("fields").Body(
			app.Range(ps).Slice(func(i int) app.UI { return f.renderField(ps[i]) }),
		),
		app.Div().Class("form-actions").Body(
			app.Button().ID("params-apply").Type("submit").Class("primary").Text("Apply"),
			app.Button().ID("params-reset").Type("button").OnClick(func(ctx app.Context, e app.Event) { f.reset(ctx) }).Text("Reset to defaults"),
		),
	)
}

func (f *paramsPanel) renderField(pr lessons.Param) app.UI {
	id := "param-" + pr.Key
	helpID := "help-" + pr.Key
	val := f.form[pr.Key]
	onEdit := func(ctx app.Context, e app.Event) {
		f.form[pr.Key] = ctx.JSSrc().Get("value").String()
	}
	var control app.UI
	if pr.Kind == lessons.Choice {
		control = app.Select().ID(id).Name(pr.Key).Aria("describedby", helpID).OnChange(onEdit).Body(
			app.Range(pr.Choices).Slice(func(i int) app.UI {
				c := pr.Choices[i]
				return option(c, c == val).Text(c)
			}),
		)
	} else {
		in := app.Input().ID(id).Name(pr.Key).Type("number").Value(val).
			Min(trimFloat(pr.Min)).Max(trimFloat(pr.Max)).
			Aria("describedby", helpID).
			OnInput(onEdit).OnChange(onEdit)
		switch {
		case pr.Step > 0:
			in = in.Attr("step", trimFloat(pr.Step))
		case pr.Kind == lessons.Int:
			in = in.Attr("step", "1")
		default:
			in = in.Attr("step", "any")
		}
		if pr.Kind == lessons.Int {
			in = in.Attr("inputmode", "numeric")
		} else {
			in = in.Attr("inputmode", "decimal")
		}
		control = in
	}
	help := pr.Help
	if help != "" {
		help += " "
	}
	help += "Allowed: " + pr.Range() + "; default " + pr.DefaultText() + "."
	return app.Div().Class("field").Body(
		app.Label().For(id).Body(
			app.Span().Class("field-label").Text(pr.Label),
			app.If(pr.Unit != "", func() app.UI { return app.Span().Class("unit").Text(" (" + pr.Unit + ")") }),
		),
		control,
		app.P().ID(helpID).Class("help").Text(help),
	)
}
