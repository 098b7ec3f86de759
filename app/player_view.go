package app

import (
	"strconv"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

func (p *Player) Render() app.UI {
	slug := ""
	title := "Lesson"
	query := ""
	if p.lesson != nil {
		slug, title = p.lesson.Slug, p.lesson.Title
		if p.st.Script != nil {
			// The state shown (not the one wanted): web/lab.js compares it
			// with the address before the app runs.
			query = EncodeQuery(p.lesson, p.shownValues, p.st.Step+1)
		}
	}
	n := p.st.Count()
	cls := "page lab"
	if p.Embed {
		cls += " embed"
	}
	if p.reduced {
		cls += " reduced-motion"
	}
	if p.hide.Narration {
		cls += " no-narration"
	}
	if p.cmp != nil {
		cls += " comparing"
	}
	var metrics []lessons.Metric
	var claims []lessons.Claim
	if p.st.Script != nil {
		metrics, claims = p.st.Script.Metrics, p.st.Script.Claims
	}
	scenes, dupClaims, dupFinal := mainFirst(p.stepScenes())
	p.annotateSoon()
	stale := p.st.Stale() && p.lesson != nil
	// data-steps, data-step and data-seq are what web/lab.js's player
	// steps by (docs/DOM.md); it sets data-motion and data-url-pending
	// itself, which go-app, not rendering them, leaves alone.
	lab := app.Div().ID("lab").Class(cls).
		DataSet("live", p.live).DataSet("lesson", slug).DataSet("steps", n).DataSet("step", p.st.Step+1).DataSet("seq", p.seq).
		DataSet("hide", p.hide.String()).DataSet("query", query).
		DataSet("stale", stale).DataSet("busy", p.st.Busy()).DataSet("ready", p.full && p.live)
	return lab.Body(
		app.If(!p.Embed, func() app.UI { return siteHeader() }),
		app.Main().ID("main").Class("lab-main").Body(
			p.renderHead(title),
			// Always present: notices and the error panel live in fixed
			// wrappers so nothing is inserted before the scenes (go-app diffs
			// children by position; the charts must survive).
			app.Div().ID("notice").Class("notice").Aria("live", "assertive").Body(
				app.Range(p.notices).Slice(func(i int) app.UI {
					return app.P().Class("notice-msg").Role("alert").Text(p.notices[i])
				}),
			),
			app.Div().Class("error-wrap").Body(
				app.If(p.st.Fail != nil, func() app.UI { return p.renderError() }),
			),
			p.renderControls(n),
			app.Div().Class("stage").Aria("busy", strconv.FormatBool(p.st.Busy())).Body(
				// Always present, first (so go-app never inserts a node
				// before the charts): says when the stage is not the state
				// asked for; lab.css shows it.
				app.P().ID("sim-status").Class("sim-status").Role("status").Aria("live", "polite").Text(p.simStatus()),
				p.renderNarration(n, scenes),
				renderScenesBox(scenes, !p.reduced),
				// A | B: B's figures after A's (go-app diffs children by
				// position: nothing is inserted before the charts).
				app.If(p.cmp != nil && p.lesson != nil, func() app.UI { return p.renderCompare() }),
			),
			p.renderBelow(metrics, claims, dupFinal && p.cmp == nil, dupClaims),
		),
		app.If(!p.Embed, func() app.UI { return siteFooter() }),
		updateBanner(p.update),
		app.If(p.full || app.IsServer, func() app.UI { return keysDialog() }),
		p.renderEmbedded(),
		p.renderSteps(),
	)
}

// renderBelow is #below, what follows the stage: the share toolbar, the
// parameters, the final figures, the claims and the embed panel. The app's
// first render in the browser (before it is live) shows the prerendered
// markup of these (p.pre) instead of building them: they are most of a
// page's elements (300 of 380 on smart-routing), each a WebAssembly→JS call
// or several, and none is needed to step the lesson. They are built a frame
// after the page is live (OnMount), in place of that copy.
//
// A step that shows the final figures or the claims table itself (a
// lesson's last step) hides the panel that repeats it (hideFinal,
// hideClaims), so each appears once.
func (p *Player) renderBelow(metrics []lessons.Metric, claims []lessons.Claim, hideFinal, hideClaims bool) app.UI {
	below := app.Div().ID("below").Class("below")
	if !p.full && !app.IsServer && p.pre != "" {
		return below.Body(app.Raw(p.pre))
	}
	return below.Body(
		app.If(!p.Embed, func() app.UI {
			return &shareBar{P: p, Ready: p.lesson != nil, Built: p.st.Script != nil}
		}),
		app.If(!p.Embed, func() app.UI {
			return app.Div().Class("panels").Body(
				hideIf(app.Div().Class("params-wrap"), p.hide.Params).Body(
					p.paramsPanel(),
					app.If(p.lesson != nil && p.lesson.TakesTrace(), func() app.UI { return p.renderTrace() }),
					app.If(p.lesson != nil, func() app.UI { return p.renderCompareControl() }),
				),
				hideIf(app.Div().Class("metrics-wrap"), hideFinal).Body(p.metricsView(metrics)),
			)
		}),
		app.If(!p.Embed, func() app.UI {
			return hideIf(app.Div().Class("claims-wrap"), hideClaims).Body(&claimsPanel{Claims: claims})
		}),
		app.If(!p.Embed, func() app.UI { return &embedPanel{P: p, Step: p.st.Step, Key: p.key} }),
		// An embed shows the step's main figure; the others fold under one
		// button (web/lab.js, by delegation; lab.css hides it when the step
		// has no other figure), so the embed stays short in its post.
		app.If(p.Embed, func() app.UI {
			return app.Button().ID("btn-more-figures").Type("button").Class("more-figures ghost").
				Aria("controls", "scenes").Aria("expanded", "false").Text("Show this step's other figures")
		}),
		app.If(p.Embed && p.cmp != nil, func() app.UI { return p.metricsView(nil) }),
		app.If(p.Embed, func() app.UI {
			return hideIf(app.Details().ID("embed-params").Class("embed-params"), p.hide.Params).Body(
				app.Summary().Text("Change the parameters"),
				p.paramsPanel(),
			)
		}),
	)
}

// simStatus is #sim-status's text: what the figure waits for.
func (p *Player) simStatus() string {
	if p.lesson == nil || !p.st.Stale() {
		return ""
	}
	return "Computing your settings…"
}

func (p *Player) paramsPanel() app.UI {
	return &paramsPanel{P: p, Lesson: p.lesson, Values: p.text, Bad: p.bad, Errs: p.badMsg, Keep: p.extra, BYO: p.byo.rev, Comparing: p.cmp != nil}
}

func (p *Player) renderHead(title string) app.UI {
	part, summary := "", ""
	if p.lesson != nil {
		part, summary = p.lesson.Part, p.lesson.Summary
	}
	if p.Embed {
		return app.Div().Class("lab-head embed-head").Body(
			app.H1().Class("embed-title").Text(title),
			app.A().Class("open-full").Href(Link(p.fullPath())).Target("_blank").Rel("noopener").Text("Open in the full lab ↗"),
		)
	}
	return app.Div().Class("lab-head").Body(
		app.P().Class("part").Text(part),
		app.H1().Text(title),
		app.P().Class("summary").Text(summary),
	)
}

// fullPath is the lesson page of the current state (for embeds and links).
func (p *Player) fullPath() string {
	if p.lesson == nil {
		return "/"
	}
	return LessonPath(p.lesson.Slug) + "?" + EncodeQuery(p.lesson, p.values, p.st.Step+1) + p.custom.Query() + p.compareQuery()
}

func (p *Player) renderControls(n int) app.UI {
	none := n == 0
	step := p.st.Step
	// Play is the only triangle: stepping buttons are arrows, so Play and
	// Next never look alike.
	playIcon, playLabel := "▶", "Play"
	if p.st.Playing {
		playIcon, playLabel = "⏸", "Pause"
	}
	stepLabel := "No steps"
	if n > 0 {
		stepLabel = "Step " + strconv.Itoa(step+1) + " of " + strconv.Itoa(n)
	}
	max := n
	if max < 1 {
		max = 1
	}
	speed := p.st.Speed
	if speed == "" {
		speed = "1"
	}
	// The buttons, the scrubber and the speed have no handlers here: web/
	// lab.js's player handles them by delegation, before the app runs and
	// after (it asks for a step with stepTo).
	return hideIf(app.Div().ID("controls").Class("controls").Role("toolbar").Aria("label", "Player"), p.hide.Controls).Body(
		app.Div().Class("buttons").Body(
			button("btn-first", none || step == 0).Title("First step (Home)").Aria("keyshortcuts", "Home").
				Body(btnText("⇤", "First", false)...),
			button("btn-prev", none || step == 0).Title("Previous step (←)").Aria("keyshortcuts", "ArrowLeft").
				Body(btnText("←", "Prev", false)...),
			button("btn-play", none).Class("primary").Title("Play or pause (space)").Aria("keyshortcuts", "Space").
				Aria("pressed", strconv.FormatBool(p.st.Playing)).Body(btnText(playIcon, playLabel, false)...),
			button("btn-next", none || step >= n-1).Title("Next step (→)").Aria("keyshortcuts", "ArrowRight").
				Body(btnText("→", "Next", true)...),
			button("btn-last", none || step >= n-1).Title("Last step (End)").Aria("keyshortcuts", "End").
				Body(btnText("⇥", "Last", true)...),
			// On a phone the narration is a sheet over the controls; this
			// folds it to its title and back (web/lab.js, by delegation:
			// it works before the app runs too). Hidden on wider screens.
			button("btn-sheet", p.hide.Narration).Title("Fold or show the narration").
				Aria("controls", "narration-panel").Aria("expanded", "true").
				Body(btnText("☰", "Narration", true)...),
		),
		app.Label().Class("scrub").For("scrubber").Body(
			app.Span().Class("sr-only").Text("Step"),
			disabledInput(app.Input().ID("scrubber").Type("range").Min(1).Max(max).Step(1).Value(step+1), none).
				Aria("valuetext", stepLabel),
		),
		app.Span().ID("step-label").Class("step-label").Text(stepLabel),
		app.Label().Class("speed").For("speed").Body(
			app.Span().Text("Speed "),
			app.Select().ID("speed").Body(
				app.Range(playback.Speeds).Slice(func(i int) app.UI {
					return option(playback.Speeds[i], playback.Speeds[i] == speed).Text(playback.Speeds[i] + "×")
				}),
			),
		),
		// Opens the knobs beside the stage (wide screens; web/lab.js):
		// dragging one then leaves the figure in view.
		app.If(!p.Embed && !p.hide.Params, func() app.UI {
			return app.Button().ID("btn-knobs").Type("button").Class("ghost").Title("Show the knobs beside the figure").
				Aria("controls", "params").Aria("expanded", "false").
				Body(app.Span().Aria("hidden", "true").Text("⚙ "), app.Text("Knobs"))
		}),
		app.Button().ID("btn-keys").Type("button").Class("ghost").Title("Keyboard shortcuts (?)").Aria("keyshortcuts", "?").
			Aria("haspopup", "dialog").OnClick(func(ctx app.Context, e app.Event) { openKeysDialog() }).
			Body(app.Span().Aria("hidden", "true").Text("⌨ "), app.Text("Keys")),
		app.If(!p.Embed, func() app.UI { return p.presentTools() }), // present.go
	)
}

// renderNarration is the narration panel: the step's title, its narration
// with the mentions linked to the figures (player_mentions.go), the
// checkpoint and the keys hint.
func (p *Player) renderNarration(n int, scenes []scene.Scene) app.UI {
	var st lessons.Step
	if n > 0 {
		st = p.st.Script.Steps[p.st.Step]
	}
	panel := app.Section().ID("narration-panel").Class("narration-panel").Aria("label", "Narration")
	if p.Embed {
		// An embed's narration scrolls inside a fixed height (lab.css): a
		// keyboard reaches and scrolls it.
		panel = panel.TabIndex(0)
	}
	return hideIf(panel, p.hide.Narration).Body(
		app.H2().ID("step-title").Text(st.Title),
		app.Div().ID("narration").Aria("live", "polite").Aria("atomic", "true").Body(renderNarrationText(st)),
		renderMentionDescs(st, scenes),
		p.renderCheckpoint(),
		app.P().Class("keys-hint").Text("Keys: ← → step · space play · ? all keys"),
	)
}

// stepScenes are the scenes of the step shown (none without a script).
func (p *Player) stepScenes() []scene.Scene {
	if p.st.Count() == 0 {
		return nil
	}
	scenes, err := p.st.Script.Scenes(p.st.Step)
	if err != nil {
		// A reply that decodes badly is a bug; say so where the figure goes.
		scenes = []scene.Scene{{Kind: scene.KindTable, ID: "decode-error", Title: "This step's figures could not be read",
			Table: &scene.Table{Columns: []string{"error"}, Rows: [][]string{{err.Error()}}}}}
	}
	return scenes
}

// annotateSoon links the mentions of the step about to be shown to its
// figures once they are drawn (web/lab.js inferlab.annotate: tooltips in
// the narration's words), after the grid and chart patches that the render
// queues. Only when the step or the script changed.
func (p *Player) annotateSoon() {
	if !p.hasCtx || !app.IsClient {
		return
	}
	key := annotated{p.st.Script, p.st.Step}
	if key == p.annotated {
		return
	}
	p.annotated = key
	p.ctx.Defer(func(ctx app.Context) {
		ctx.Defer(func(app.Context) { labJS("annotate") })
	})
}

func (p *Player) renderError() app.UI {
	f := p.st.Fail
	var params map[string]string
	repro := "/"
	cli := ""
	if p.lesson != nil {
		params = f.Params
		q := urlstate.EncodeRaw(p.lesson, params, p.st.Step+1) + p.custom.Query() + p.extra
		repro = LessonPath(p.lesson.Slug) + "?" + q
		cli = cliCommand(p.lesson, params, f.Trace)
	}
	kind := "failed"
	if f.Panic {
		kind = "crashed (panic)"
	}
	var keys []string
	if p.lesson != nil {
		for _, pr := range p.lesson.Params {
			if _, ok := params[pr.Key]; ok {
				keys = append(keys, pr.Key)
			}
		}
	}
	return app.Section().ID("error-panel").Class("error-panel").Role("alert").Body(
		app.H2().Text("Building this lesson "+kind),
		app.Dl().Body(
			app.Dt().Text("Lesson"), app.Dd().Body(app.Code().Text(f.Lesson)),
			app.Dt().Text("Parameters"), app.Dd().Body(
				app.Ul().Class("error-params").Body(app.Range(keys).Slice(func(i int) app.UI {
					return app.Li().Body(app.Code().Text(keys[i] + "=" + params[keys[i]]))
				})),
			),
			app.Dt().Text("Message"), app.Dd().Body(app.Pre().Class("error-message").Text(f.Message)),
		),
		app.P().Body(
			app.A().ID("error-repro").Href(Link(repro)).Text("Reproduce this failure"),
			app.Text(" · or run "),
			app.Code().Text(cli),
		),
	)
}

// btnText is a player button's content: an icon and a word, the word
// hidden on a phone (lab.css .btn-word), the icon hidden from screen
// readers (the button's name is the word). after puts the icon last.
func btnText(icon, word string, after bool) []app.UI {
	ic := app.Span().Class("btn-icon").Aria("hidden", "true").Text(icon)
	if after {
		return []app.UI{app.Span().Class("btn-word").Text(word + " "), ic}
	}
	return []app.UI{ic, app.Span().Class("btn-word").Text(" " + word)}
}

// button, option and disabledInput set boolean attributes only when true:
// go-app's server renderer writes disabled="false" (which HTML reads as
// disabled) for a false value.
func button(id string, disabled bool) app.HTMLButton {
	b := app.Button().ID(id).Type("button")
	if disabled {
		b = b.Disabled(true)
	}
	return b
}

func option(value string, selected bool) app.HTMLOption {
	o := app.Option().Value(value)
	if selected {
		o = o.Selected(true)
	}
	return o
}

// hideIf sets the hidden attribute only when hide is true (see button).
func hideIf[T interface{ Hidden(bool) T }](el T, hide bool) T {
	if hide {
		return el.Hidden(true)
	}
	return el
}

func disabledInput(in app.HTMLInput, disabled bool) app.HTMLInput {
	if disabled {
		return in.Disabled(true)
	}
	return in
}
