package app

import (
	"net/url"
	"strconv"
	"time"

	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Player is the lesson page (/lesson/SLUG) and, with Embed set, the
// embeddable page (/embed/SLUG). It reads the lesson, its parameters and the
// step from the URL in OnNav (server and browser), builds the Script with
// lesson.Run, and plays it. The DOM it renders is the contract in docs/DOM.md.
type Player struct {
	app.Compo
	Embed bool

	lesson  *lessons.Lesson
	values  lessons.Values
	key     string // canonical params of the script shown
	script  *lessons.Script
	step    int // 0-based index into script.Steps
	notices []string
	fail    *Failure
	debug   string
	text    map[string]string // canonical text of values (shared map: equal across steps)
	hide    Hide              // parts hidden by ?hide=
	extra   string            // kept query beside knobs and step (URLState.Extra)

	live    bool
	playing bool
	speed   string
	playGen int
	urlGen  int // the latest address write asked for (syncURLSoon)
	reduced bool
	update  bool // a new version is installed: show the reload banner

	// quizzes holds the learner's answers by 0-based step index (reset when
	// the script is rebuilt); quizHint is the form's own message (empty answer).
	quizzes  map[int]quizResult
	quizHint string
	pausedAt int // the checkpoint playback last stopped at (0-based step; 0 = none, as step 0 never asks)
	passQuiz int // the checkpoint the current playback plays past (0 or -1: none)

	embed embedOptions // the "embed this lesson" panel's choices

	// trace is the uploaded trace the script runs on (nil: the knobs'
	// workload); traceErr is why the last upload was refused.
	trace     *traceUpload
	traceErr  string
	traceBusy string // the file being simulated, while it is
	traceGen  int    // the latest upload; an older one finishing late is dropped

	ctx      app.Context // the player's own, from OnMount (browser only)
	hasCtx   bool
	keyFn    app.Func
	motionFn app.Func
	motionMQ app.Value
}

// playback speeds offered by #speed, and the base time per step.
var speeds = []string{"0.5", "1", "2", "4"}

const baseStepDelay = 1600 * time.Millisecond

// OnInit runs before the first render. In the browser it builds the lesson
// from the address already, so the first client render shows the same step
// as the prerendered page instead of an empty player (go-app mounts, then
// calls OnNav).
func (p *Player) OnInit() {
	if !app.IsClient {
		return
	}
	// On a client-side navigation the address bar still shows the previous
	// page here (go-app updates history after mounting); OnNav loads then.
	u := app.Window().URL()
	if slug, _ := slugFromPath(u.Path); lessons.Get(slug) != nil {
		p.load(u)
	}
}

func (p *Player) OnNav(ctx app.Context) {
	p.load(ctx.Page().URL())
	if p.lesson != nil {
		ctx.Page().SetTitle("%s · Inference Lab", p.lesson.Title)
		ctx.Page().SetDescription("%s", p.lesson.Summary)
	}
	p.syncURL(ctx)
}

// load reads the lesson, its knobs and the step from an address, rebuilding
// the script only when the lesson or a knob changed.
func (p *Player) load(u *url.URL) {
	slug, _ := slugFromPath(u.Path)
	l := lessons.Get(slug)
	if l == nil {
		p.lesson, p.script, p.fail = nil, nil, &Failure{Lesson: slug, Message: "no lesson named " + strconv.Quote(slug)}
		return
	}
	st := ParseQuery(l, u.Query())
	v, notices := ResolveParams(l, st.Raw)
	notices = append(st.Notices, notices...)
	key := paramsKey(l, v)
	if l != p.lesson || key != p.key || p.fail != nil || st.Debug != p.debug {
		if l != p.lesson {
			// A trace belongs to the lesson it was loaded into; an upload
			// still being read or simulated is abandoned.
			p.trace, p.traceBusy = nil, ""
			p.traceGen++
		}
		p.traceErr = "" // about an earlier upload, not this build
		p.lesson, p.values, p.key, p.debug = l, v, key, st.Debug
		p.adopt(BuildScript(l, v, st.Debug, p.trace))
	}
	p.hide, p.extra = st.Hide, st.Extra()
	if p.text == nil || !sameText(p.text, v.Text()) {
		p.text = v.Text()
	}
	if p.script != nil {
		if st.Step == 0 && st.Find != "" {
			n, msg := FindStep(p.script, st.Find)
			st.Step = n
			if msg != "" {
				notices = append(notices, msg)
			}
		}
		idx, msg := ClampStep(st.Step, len(p.script.Steps))
		p.step = idx
		if msg != "" {
			notices = append(notices, msg)
		}
	} else {
		p.step = 0
	}
	p.notices = notices
	if p.speed == "" {
		p.speed = "1"
	}
}

// adopt shows a newly built script (or its failure) from its start: playback
// stops and the quiz answers, which belong to the old script, are cleared.
func (p *Player) adopt(s *lessons.Script, f *Failure) {
	p.script, p.fail = s, f
	p.playing = false
	p.playGen++
	p.quizzes, p.quizHint, p.pausedAt, p.passQuiz = nil, "", 0, 0
}

// urlSettle is how long stepping must pause before the address bar follows
// the step. Writing it on every step cost about 3 ms a step in Chromium
// (history.replaceState), and Safari refuses more than 100 history writes in
// 30 s, which a held arrow key or a dragged scrubber would reach.
const urlSettle = 250 * time.Millisecond

// later runs fn after d on the player's own context. go-app drops a delayed
// call whose element has left the page, and the control that asked (a quiz
// form, a file input) may be gone by then; the player stays while it shows.
func (p *Player) later(ctx app.Context, d time.Duration, fn func(app.Context)) {
	if p.hasCtx {
		ctx = p.ctx
	}
	ctx.After(d, fn)
}

// syncURLSoon writes the address once stepping has paused for urlSettle.
func (p *Player) syncURLSoon(ctx app.Context) {
	p.urlGen++
	gen := p.urlGen
	p.later(ctx, urlSettle, func(ctx app.Context) {
		if gen == p.urlGen {
			p.syncURL(ctx)
		}
	})
}

// syncURL writes the canonical state (every knob and the 1-based step) into
// the address bar without a history entry, now.
func (p *Player) syncURL(ctx app.Context) {
	if app.IsServer || p.lesson == nil {
		return
	}
	p.urlGen++ // supersedes a pending syncURLSoon
	u := *ctx.Page().URL()
	q := EncodeQuery(p.lesson, p.values, p.step+1) + p.extra
	if u.RawQuery == q {
		return
	}
	u.RawQuery = q
	ctx.Page().ReplaceURL(&u)
}

func (p *Player) OnMount(ctx app.Context) {
	p.ctx, p.hasCtx = ctx, true
	p.live = true
	p.update = ctx.AppUpdateAvailable()
	win := app.Window()
	// Reduced motion: read now and follow changes (ECharts animation and the
	// .reduced-motion class; CSS handles the rest with its media query).
	if mq := win.Call("matchMedia", "(prefers-reduced-motion: reduce)"); mq.Truthy() {
		p.reduced = mq.Get("matches").Bool()
		p.motionMQ = mq
		p.motionFn = app.FuncOf(func(this app.Value, args []app.Value) any {
			on := mq.Get("matches").Bool()
			ctx.Dispatch(func(app.Context) { p.reduced = on })
			return nil
		})
		mq.Call("addEventListener", "change", p.motionFn)
	}
	p.keyFn = app.FuncOf(func(this app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		p.onKey(ctx, args[0])
		return nil
	})
	win.Call("addEventListener", "keydown", p.keyFn)
}

// OnAppUpdate runs when the service worker has installed a new version: the
// page shows a banner offering to reload (#update-banner).
func (p *Player) OnAppUpdate(ctx app.Context) { p.update = true }

func (p *Player) OnDismount() {
	p.playing = false
	p.playGen++
	p.urlGen++ // a pending address write belongs to this page, not the next
	p.hasCtx = false
	if p.keyFn != nil {
		app.Window().Call("removeEventListener", "keydown", p.keyFn)
		p.keyFn.Release()
		p.keyFn = nil
	}
	if p.motionFn != nil {
		if p.motionMQ != nil && p.motionMQ.Truthy() {
			p.motionMQ.Call("removeEventListener", "change", p.motionFn)
		}
		p.motionFn.Release()
		p.motionFn = nil
	}
}

// onKey handles the player's shortcuts, except while a form field has focus.
func (p *Player) onKey(ctx app.Context, e app.Value) {
	if e.Get("altKey").Bool() || e.Get("ctrlKey").Bool() || e.Get("metaKey").Bool() {
		return
	}
	key := e.Get("key").String()
	tag := ""
	if ae := app.Window().Get("document").Get("activeElement"); ae.Truthy() {
		tag = ae.Get("tagName").String()
		if ae.Get("isContentEditable").Bool() {
			return
		}
	}
	switch tag {
	case "INPUT", "SELECT", "TEXTAREA":
		return
	}
	if p.hide.Controls {
		return // a fixed figure: the embed hides the player
	}
	var act func(app.Context)
	switch key {
	case "ArrowLeft":
		act = func(ctx app.Context) { p.goTo(ctx, p.step-1) }
	case "ArrowRight":
		act = func(ctx app.Context) { p.goTo(ctx, p.step+1) }
	case "Home":
		act = func(ctx app.Context) { p.goTo(ctx, 0) }
	case "End":
		act = func(ctx app.Context) { p.goTo(ctx, p.count()-1) }
	case " ", "Spacebar":
		if tag == "BUTTON" || tag == "A" || tag == "SUMMARY" {
			return // the focused control handles space itself
		}
		act = func(ctx app.Context) { p.togglePlay(ctx) }
	default:
		return
	}
	e.Call("preventDefault")
	ctx.Dispatch(act)
}

func (p *Player) count() int {
	if p.script == nil {
		return 0
	}
	return len(p.script.Steps)
}

// goTo shows step i (0-based, clamped) and records how long the browser took
// to apply it (window.inferlabStepMs, read by benchmarks and tests).
func (p *Player) goTo(ctx app.Context, i int) {
	n := p.count()
	if n == 0 {
		return
	}
	if i < 0 {
		i = 0
	}
	if i >= n {
		i = n - 1
	}
	if i == p.step {
		return
	}
	var t0 float64
	perf := app.Window().Get("performance")
	if app.IsClient && perf.Truthy() {
		t0 = perf.Call("now").Float()
	}
	p.step = i
	p.syncURLSoon(ctx)
	if app.IsClient && perf.Truthy() {
		// The grid and the chart patch themselves in deferred calls queued
		// during the render; a defer queued from a defer runs after them.
		ctx.Defer(func(ctx app.Context) {
			ctx.Defer(func(app.Context) {
				app.Window().Set("inferlabStepMs", perf.Call("now").Float()-t0)
			})
		})
	}
}

func (p *Player) togglePlay(ctx app.Context) {
	if p.count() == 0 {
		return
	}
	p.playing = !p.playing
	p.playGen++
	if !p.playing {
		return
	}
	p.passQuiz = -1
	if q := p.pendingQuiz(); q >= 0 && q == p.pausedAt {
		p.passQuiz = q // the learner chose to play on without answering
	}
	if p.step >= p.count()-1 {
		p.goTo(ctx, 0)
	}
	p.scheduleTick(ctx, p.playGen)
}

func (p *Player) delay() time.Duration {
	f, err := strconv.ParseFloat(p.speed, 64)
	if err != nil || f <= 0 {
		f = 1
	}
	return time.Duration(float64(baseStepDelay) / f)
}

// scheduleTick advances one step after the current delay while playing. It is
// only ever started from a user action in the browser, never from OnNav, so
// server rendering never waits on it.
func (p *Player) scheduleTick(ctx app.Context, gen int) {
	p.later(ctx, p.delay(), func(ctx app.Context) {
		if !p.playing || gen != p.playGen {
			return
		}
		if p.step >= p.count()-1 {
			p.playing = false
			return
		}
		if q := p.pendingQuiz(); q >= 0 && q != p.passQuiz {
			// Predict before seeing: playback stops before a checkpoint.
			// Pressing play again there plays on past it (passQuiz).
			p.playing = false
			p.playGen++
			p.pausedAt = q
			p.focusQuiz(ctx)
			return
		}
		p.goTo(ctx, p.step+1)
		p.scheduleTick(ctx, gen)
	})
}

func (p *Player) Render() app.UI {
	slug := ""
	title := "Lesson"
	if p.lesson != nil {
		slug, title = p.lesson.Slug, p.lesson.Title
	}
	n := p.count()
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
	return app.Div().ID("lab").Class(cls).
		DataSet("live", p.live).DataSet("lesson", slug).DataSet("step", p.step+1).
		DataSet("hide", p.hide.String()).Body(
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
				app.If(p.fail != nil, func() app.UI { return p.renderError() }),
			),
			p.renderControls(n),
			app.Div().Class("stage").Body(
				p.renderNarration(n),
				app.Div().Class("scenes").Body(p.renderSceneList()...),
			),
			app.If(!p.Embed, func() app.UI { return &shareBar{P: p, Ready: p.lesson != nil, Built: p.script != nil} }),
			app.If(!p.Embed, func() app.UI {
				return app.Div().Class("panels").Body(
					hideIf(app.Div().Class("params-wrap"), p.hide.Params).Body(
						&paramsPanel{Lesson: p.lesson, Values: p.text, Keep: p.extra, Step: &p.step},
						app.If(p.lesson != nil && p.lesson.BuildTrace != nil, func() app.UI { return p.renderTrace() }),
					),
					&metricsPanel{Script: p.script},
				)
			}),
			app.If(!p.Embed, func() app.UI { return &claimsPanel{Script: p.script} }),
			app.If(!p.Embed, func() app.UI { return &embedPanel{P: p, Step: p.step, Key: p.key} }),
			app.If(p.Embed, func() app.UI {
				return hideIf(app.Details().ID("embed-params").Class("embed-params"), p.hide.Params).Body(
					app.Summary().Text("Change the parameters"),
					&paramsPanel{Lesson: p.lesson, Values: p.text, Keep: p.extra, Step: &p.step},
				)
			}),
		),
		app.If(!p.Embed, func() app.UI { return siteFooter() }),
		updateBanner(p.update),
		keysDialog(),
	)
}

func (p *Player) renderHead(title string) app.UI {
	part, summary := "", ""
	if p.lesson != nil {
		part, summary = p.lesson.Part, p.lesson.Summary
	}
	if p.Embed {
		return app.Div().Class("lab-head embed-head").Body(
			app.P().Class("embed-title").Text(title),
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
	return LessonPath(p.lesson.Slug) + "?" + EncodeQuery(p.lesson, p.values, p.step+1)
}

func (p *Player) renderControls(n int) app.UI {
	none := n == 0
	playLabel := "▶ Play"
	if p.playing {
		playLabel = "⏸ Pause"
	}
	stepLabel := "No steps"
	if n > 0 {
		stepLabel = "Step " + strconv.Itoa(p.step+1) + " of " + strconv.Itoa(n)
	}
	max := n
	if max < 1 {
		max = 1
	}
	return hideIf(app.Div().ID("controls").Class("controls").Role("toolbar").Aria("label", "Player"), p.hide.Controls).Body(
		app.Div().Class("buttons").Body(
			button("btn-first", none || p.step == 0).Title("First step (Home)").Aria("keyshortcuts", "Home").
				OnClick(func(ctx app.Context, e app.Event) { p.goTo(ctx, 0) }).Text("« First"),
			button("btn-prev", none || p.step == 0).Title("Previous step (←)").Aria("keyshortcuts", "ArrowLeft").
				OnClick(func(ctx app.Context, e app.Event) { p.goTo(ctx, p.step-1) }).Text("◀ Prev"),
			button("btn-play", none).Class("primary").Title("Play or pause (space)").Aria("keyshortcuts", "Space").
				Aria("pressed", strconv.FormatBool(p.playing)).OnClick(func(ctx app.Context, e app.Event) { p.togglePlay(ctx) }).Text(playLabel),
			button("btn-next", none || p.step >= n-1).Title("Next step (→)").Aria("keyshortcuts", "ArrowRight").
				OnClick(func(ctx app.Context, e app.Event) { p.goTo(ctx, p.step+1) }).Text("Next ▶"),
			button("btn-last", none || p.step >= n-1).Title("Last step (End)").Aria("keyshortcuts", "End").
				OnClick(func(ctx app.Context, e app.Event) { p.goTo(ctx, p.count()-1) }).Text("Last »"),
		),
		app.Label().Class("scrub").For("scrubber").Body(
			app.Span().Class("sr-only").Text("Step"),
			disabledInput(app.Input().ID("scrubber").Type("range").Min(1).Max(max).Step(1).Value(p.step+1), none).
				Aria("valuetext", stepLabel).
				OnInput(func(ctx app.Context, e app.Event) {
					if v, err := strconv.Atoi(ctx.JSSrc().Get("value").String()); err == nil {
						p.goTo(ctx, v-1)
					}
				}),
		),
		app.Span().ID("step-label").Class("step-label").Text(stepLabel),
		app.Label().Class("speed").For("speed").Body(
			app.Span().Text("Speed "),
			app.Select().ID("speed").OnChange(func(ctx app.Context, e app.Event) {
				p.speed = ctx.JSSrc().Get("value").String()
			}).Body(
				app.Range(speeds).Slice(func(i int) app.UI {
					return option(speeds[i], speeds[i] == p.speed).Text(speeds[i] + "×")
				}),
			),
		),
		app.Button().ID("btn-keys").Type("button").Class("ghost").Title("Keyboard shortcuts (?)").Aria("keyshortcuts", "?").
			Aria("haspopup", "dialog").OnClick(func(ctx app.Context, e app.Event) { openKeysDialog() }).
			Body(app.Span().Aria("hidden", true).Text("⌨ "), app.Text("Keys")),
	)
}

func (p *Player) renderNarration(n int) app.UI {
	title, text := "", ""
	if n > 0 {
		st := p.script.Steps[p.step]
		title, text = st.Title, st.Narration
	}
	return hideIf(app.Section().ID("narration-panel").Class("narration-panel").Aria("label", "Narration"), p.hide.Narration).Body(
		app.H2().ID("step-title").Text(title),
		app.Div().ID("narration").Aria("live", "polite").Aria("atomic", true).Body(app.P().Text(text)),
		p.renderCheckpoint(),
		app.P().Class("keys-hint").Text("Keys: ← → step · space play/pause · Home/End first/last · ? all keys"),
	)
}

func (p *Player) renderSceneList() []app.UI {
	if p.count() == 0 {
		return nil
	}
	return renderScenes(p.script.Steps[p.step].Scenes, !p.reduced)
}

func (p *Player) renderError() app.UI {
	f := p.fail
	var params map[string]string
	repro := "/"
	cli := ""
	if p.lesson != nil {
		params = f.Params
		q := EncodeRaw(p.lesson, params, p.step+1) + p.extra
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
