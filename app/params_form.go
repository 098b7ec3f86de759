package app

import (
	"strconv"
	"time"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// paramsPanel is form#params: one labelled control per knob, its unit, help
// text, and the message of a rejected value. Numeric knobs have a number
// field (#param-KEY) and, beside it, a slider (#slider-KEY); choices a
// select. Knobs are live: a slider or the field's stepper arrows re-simulate
// as they move (once they pause for knobDebounce), a select at once, typed
// text on Enter (or when the field is left); the step shown stays. An
// invalid value is reported at its field (aria-invalid and a message naming
// the range) and the figure is left as it is. It is its own component so
// typing re-renders only the form, and a step change does not touch it (its
// fields stay equal).
type paramsPanel struct {
	app.Compo

	P *Player // applies the knobs (a pointer: equal across renders)
	// Side is "" for the page's knobs (run A) and "b" for run B's while
	// comparing (compare.go): form#b-params, every id prefixed with "b-",
	// and no seed (B runs on A's).
	Side string
	// Comparing: A's form is titled "A's parameters" while B runs.
	Comparing bool
	Lesson    *lessons.Lesson
	Values    map[string]string // canonical values of the wanted state
	Bad       map[string]string // rejected text the address carried, shown in its field
	Errs      map[string]string // why (by knob; "" for a relation naming none)
	Keep      string            // query kept beside the knobs (hide=, theme=), with a leading "&"
	BYO       int               // the reader's own model and GPU forms' revision (byo.go)

	form    map[string]string // as typed
	errs    map[string]string // messages shown at the fields
	formFor map[string]string // the Values the form was filled from
	badFor  map[string]string
	slide   map[string]int // slider positions as the learner left them
	moved   string         // the knob the learner changed last ("" after a reset): a relation it breaks is shown at it
}

// CompoID makes a lesson change mount a fresh form: go-app keeps an element's
// first event handler (it compares code pointers), so the fields' handlers,
// which capture their knob's key, must not be reused for another lesson's
// knobs (a search result opens another lesson in place).
func (f *paramsPanel) CompoID() string {
	if f.Lesson == nil {
		return "params:" + f.Side
	}
	return "params:" + f.Side + ":" + f.Lesson.Slug
}

// id is an element id of this form: B's carry the prefix "b-".
func (f *paramsPanel) id(s string) string {
	if f.Side == "" {
		return s
	}
	return f.Side + "-" + s
}

// name is a field's name: the knob's address key (b.KEY for B's).
func (f *paramsPanel) name(key string) string {
	if f.Side == "" {
		return key
	}
	return urlstate.CompareKey(key)
}

// fields are the knobs the form shows: all of them, but B's seed (A's).
func (f *paramsPanel) fields() []lessons.Param {
	if f.Side == "" {
		return f.Lesson.Params
	}
	var out []lessons.Param
	for _, p := range f.Lesson.Params {
		if p.Key != "seed" {
			out = append(out, p)
		}
	}
	return out
}

// sync fills the form from the state's values (and the address's rejected
// text) when they changed since the last fill.
func (f *paramsPanel) sync() {
	if f.form != nil && sameText(f.formFor, f.Values) && sameText(f.badFor, f.Bad) {
		return
	}
	f.form = make(map[string]string, len(f.Values))
	for k, v := range f.Values {
		f.form[k] = v
	}
	for k, v := range f.Bad {
		f.form[k] = v
	}
	f.errs = f.Errs
	f.formFor, f.badFor = f.Values, f.Bad
	f.slide = nil
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

// apply checks the form and hands valid knobs to the player: live (a
// slider or stepper moving) after a pause, else now.
func (f *paramsPanel) apply(ctx app.Context, live bool) {
	if f.Lesson == nil || f.P == nil {
		return
	}
	v, errs := urlstate.KnobErrorsAt(f.Lesson, f.form, f.moved)
	f.errs = errs
	if errs != nil {
		if f.Side != "" && f.P.cmp != nil {
			f.P.cmp.knob++ // a pending valid value must not win over this one
			return
		}
		f.P.st.Cancel(playback.KnobSim) // a pending valid value must not win over this one
		return
	}
	if f.Side != "" {
		f.P.setCompareKnobs(ctx, v, live)
		return
	}
	f.P.setKnobs(ctx, v, live)
}

// focusInvalid moves the focus to the first field with an invalid value
// (after a submit: its message is under it, and the page scrolls it into
// view clear of the toolbar, lab.css scroll-padding).
func (f *paramsPanel) focusInvalid() {
	for _, pr := range f.Lesson.Params {
		if f.errs[pr.Key] != "" {
			labJS("focusSoon", "#"+f.id("param-"+pr.Key))
			return
		}
	}
}

func (f *paramsPanel) reset(ctx app.Context) {
	if f.Lesson == nil {
		return
	}
	f.form = f.Lesson.Defaults().Text()
	if f.Side != "" && f.P != nil {
		f.form = f.P.values.Text() // B starts again from A's knobs
	}
	f.slide, f.moved = nil, ""
	f.apply(ctx, false)
}

func (f *paramsPanel) Render() app.UI {
	if f.Lesson == nil {
		return app.Form().ID(f.id("params")).Class("params panel")
	}
	f.sync()
	ps := f.fields()
	title, help := "Parameters", "Move a slider or a field's arrows and the lesson is simulated again in your browser as you go; type a value and press Enter. The step you are on stays, and the address records every value."
	reset := "Reset to defaults"
	if f.Side != "" {
		title, help = "B's parameters", "Run B: the same lesson on A's seed with these knobs, drawn beside A. The address records them as b.KEY=VALUE."
		reset = "Copy A's knobs"
	} else if f.Comparing {
		title = "A's parameters"
	}
	return app.Form().ID(f.id("params")).Class("params panel").NoValidate(true).AutoComplete(false).
		OnSubmit(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			if inGPUForm() {
				f.P.useGPU(ctx) // Enter in "Your GPU" applies the GPU (byo.go)
				return
			}
			f.apply(ctx, false)
			f.focusInvalid()
		}).Body(
		app.H2().TabIndex(-1).Text(title),
		app.P().Class("help").Text(help),
		app.Div().Class("fields").Body(
			app.Range(ps).Slice(func(i int) app.UI { return f.renderField(ps[i]) }),
		),
		app.P().ID(f.id("params-error")).Class("field-error").Role("alert").Hidden(f.errs[""] == "").Text(f.errs[""]),
		app.Div().Class("form-actions").Body(
			app.Button().ID(f.id("params-apply")).Type("submit").Class("primary").Text("Apply typed values"),
			app.Button().ID(f.id("params-reset")).Type("button").OnClick(func(ctx app.Context, e app.Event) { f.reset(ctx) }).Text(reset),
		),
		// The reader's own model and GPU (byo.go), on lesson pages, in A's
		// form only: B's knobs choose among what A's brought.
		app.If(f.P != nil && !f.P.Embed && f.Side == "" && hasKnob(f.Lesson, "model"), func() app.UI { return f.renderYourModel() }),
		app.If(f.P != nil && !f.P.Embed && f.Side == "" && hasKnob(f.Lesson, "gpu"), func() app.UI { return f.renderYourGPU() }),
	)
}

// typing reports whether an input event came from typing into the field
// (an InputEvent with an inputType), not from its stepper arrows or the
// arrow keys, which fire a plain event.
func typing(e app.Event) bool {
	t := e.Get("inputType")
	return t.Truthy() && t.String() != ""
}

func (f *paramsPanel) renderField(pr lessons.Param) app.UI {
	id := f.id("param-" + pr.Key)
	helpID := f.id("help-" + pr.Key)
	errID := f.id("error-" + pr.Key)
	val := f.form[pr.Key]
	msg := f.errs[pr.Key]
	described := helpID
	if msg != "" {
		described = errID + " " + helpID
	}
	var control app.UI
	var slider app.UI
	if pr.Kind == lessons.Choice {
		control = app.Select().ID(id).Name(f.name(pr.Key)).Aria("describedby", described).Aria("invalid", strconv.FormatBool(msg != "")).
			OnChange(func(ctx app.Context, e app.Event) {
				f.form[pr.Key] = ctx.JSSrc().Get("value").String()
				f.moved = pr.Key
				f.apply(ctx, false)
			}).Body(
			app.Range(pr.Choices).Slice(func(i int) app.UI {
				c := pr.Choices[i]
				return option(c, c == val).Text(c)
			}),
		)
	} else {
		in := app.Input().ID(id).Name(f.name(pr.Key)).Type("number").Value(val).
			Min(trimFloat(pr.Min)).Max(trimFloat(pr.Max)).
			Aria("describedby", described).Aria("invalid", strconv.FormatBool(msg != "")).
			OnInput(func(ctx app.Context, e app.Event) {
				f.form[pr.Key] = ctx.JSSrc().Get("value").String()
				f.moved = pr.Key
				delete(f.slide, pr.Key)
				if !typing(e) {
					f.apply(ctx, true) // the stepper arrows, or ↑/↓
				}
			}).
			OnChange(func(ctx app.Context, e app.Event) {
				f.form[pr.Key] = ctx.JSSrc().Get("value").String()
				f.moved = pr.Key
				f.apply(ctx, false)
			})
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
		if sc, ok := scaleFor(pr); ok {
			slider = f.renderSlider(pr, sc, val)
		}
	}
	help := pr.Help
	if help != "" {
		help += " "
	}
	help += "Allowed: " + pr.Range() + "; default " + pr.DefaultText() + "."
	return app.Div().Class("field").DataSet("invalid", msg != "").Body(
		app.Label().ID(f.id("label-"+pr.Key)).For(id).Body(
			app.Span().Class("field-label").Text(pr.Label),
			app.If(pr.Unit != "", func() app.UI { return app.Span().Class("unit").Text(" (" + pr.Unit + ")") }),
		),
		app.Div().Class("field-controls").Body(slider, control),
		app.P().ID(errID).Class("field-error").Hidden(msg == "").Text(msg),
		app.P().ID(helpID).Class("help").Text(help),
	)
}

// renderSlider is #slider-KEY, a range input over the knob's scale. Its
// position is the learner's while dragging (a value's position can differ
// by rounding, and moving the thumb under the pointer would fight it).
func (f *paramsPanel) renderSlider(pr lessons.Param, sc knobScale, val string) app.UI {
	pos, ok := f.slide[pr.Key]
	if x, err := strconv.ParseFloat(val, 64); !ok || err != nil || sc.text(sc.value(pos)) != val {
		if err != nil {
			x = pr.Default
		}
		pos = sc.pos(x)
	}
	unit := ""
	if pr.Unit != "" {
		unit = " " + pr.Unit
	}
	return rangeAt(app.Input().ID(f.id("slider-"+pr.Key)).Class("knob-slider").Type("range").
		Min(0).Max(sliderPositions).Step(1), pos).
		Aria("labelledby", f.id("label-"+pr.Key)).Aria("valuetext", val+unit).
		Attr("tabindex", "-1"). // the number field is the keyboard's control (↑/↓ step it live)
		OnInput(func(ctx app.Context, e app.Event) {
			p, err := strconv.Atoi(ctx.JSSrc().Get("value").String())
			if err != nil {
				return
			}
			if f.slide == nil {
				f.slide = map[string]int{}
			}
			f.slide[pr.Key] = p
			f.form[pr.Key] = sc.text(sc.value(p))
			f.moved = pr.Key
			f.apply(ctx, true)
		}).
		OnChange(func(ctx app.Context, e app.Event) { f.moved = pr.Key; f.apply(ctx, false) })
}

// rangeAt puts a range input at position pos. In the browser go-app sets
// attributes in no fixed order and the value as a property, so a value set
// before max is clamped to the default max, 100 (the slider of max_context
// showed 10% for 54%): the position goes in data-pos, and web/lab.js
// (inferlab.syncRanges, after each render of the form) moves the thumb
// there. The server writes the value attribute (HTML parsing
// applies min and max first).
func rangeAt(in app.HTMLInput, pos int) app.HTMLInput {
	if app.IsServer {
		return in.Value(pos)
	}
	return in.DataSet("pos", pos)
}

func (f *paramsPanel) OnMount(ctx app.Context) {
	ctx.Defer(func(app.Context) { labJS("syncRanges", "#"+f.id("params")) })
}

func (f *paramsPanel) OnUpdate(ctx app.Context) {
	ctx.Defer(func(app.Context) { labJS("syncRanges", "#"+f.id("params")) })
}

// Live knobs: a moving slider re-simulates once it pauses for knobDebounce
// (each pause is a simulation; the worker drops one still running), and the
// address follows once the knobs settle for knobURLSettle: one history
// entry per setting the learner stops at, not one per pixel.
const (
	knobDebounce  = 120 * time.Millisecond
	knobURLSettle = 600 * time.Millisecond
)

// setKnobs applies valid knob values: live ones after knobDebounce (a newer
// value supersedes a pending one), others now.
func (p *Player) setKnobs(ctx app.Context, v lessons.Values, live bool) {
	if !live {
		p.st.Cancel(playback.KnobSim)
		p.applyKnobs(ctx, v)
		return
	}
	t := p.st.Later(playback.KnobSim)
	p.later(ctx, knobDebounce, func(ctx app.Context) {
		if p.st.Due(t) {
			p.applyKnobs(ctx, v)
		}
	})
}

// applyKnobs asks for the state of new knob values, keeping the step, and
// writes the address once they settle.
func (p *Player) applyKnobs(ctx app.Context, v lessons.Values) {
	if p.lesson == nil {
		return
	}
	p.values, p.key = v, urlstate.Key(p.lesson, v)
	if !sameText(p.text, v.Text()) {
		p.text = v.Text()
	}
	p.notices, p.bad, p.badMsg = nil, nil, nil
	p.followSeed()
	p.want(playback.StepWish{Keep: true}, nil)
	p.flush(ctx)
	t := p.st.Later(playback.KnobURL)
	p.later(ctx, knobURLSettle, func(ctx app.Context) {
		if p.st.Due(t) {
			p.pushURL(ctx)
		}
	})
}

// pushURL writes the knobs and the step into the address as a new history
// entry (back returns to the previous setting).
func (p *Player) pushURL(ctx app.Context) {
	if p.lesson == nil {
		return
	}
	u := *ctx.Page().URL()
	q := EncodeQuery(p.lesson, p.values, p.st.Step+1) + p.custom.Query() + p.compareQuery() + p.extra
	if u.RawQuery == q {
		return
	}
	u.RawQuery = q
	ctx.NavigateTo(&u)
}
