package app

import (
	"net/url"
	"strconv"
	"time"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Player is the lesson page (/lesson/SLUG) and, with Embed set, the
// embeddable page (/embed/SLUG). It reads the lesson, its parameters and the
// step from the URL in OnNav (server and browser) and renders a
// playback.State: the script shown, the step, playback and quizzes. In the
// browser a lesson is simulated off the page's thread (player_sim.go); on the
// server it is built at once. The DOM it renders is the contract in
// docs/DOM.md.
type Player struct {
	app.Compo
	Embed bool

	st playback.State

	lesson *lessons.Lesson
	values lessons.Values    // the knobs of the wanted state
	key    string            // their canonical text (paramsKey)
	text   map[string]string // the same as a map (shared while equal, so the form is not re-rendered)
	// shownValues are the knobs of the script shown (the export writes them).
	shownValues lessons.Values
	notices     []string
	// bad holds knob text the address or the form got wrong, and badMsg why
	// (shown at the field).
	bad, badMsg map[string]string
	debug       string
	hide        Hide   // parts hidden by ?hide=
	extra       string // kept query beside knobs and step (urlstate.State.Extra)

	// trace is the uploaded trace the wanted state runs on (nil: the knobs'
	// workload); traceErr is why the last upload was refused.
	trace    *traceFile
	traceSeq int
	traceErr string

	// custom is the reader's own model and GPU the lesson offers (the
	// address's mc= and gc=), byo the forms that bring them (byo.go).
	custom urlstate.Custom
	byo    byoForm

	sim simRun // the simulation asked for and not answered yet
	// cmp is run B while the page compares two settings (nil: it does not;
	// compare.go).
	cmp      *compareState
	embedded bool // the prerendered page's script was looked for

	live    bool // mounted, and the wanted state was shown once
	mounted bool
	// pre is the prerendered markup of #below, which the first client
	// render shows until full (see renderBelow).
	pre     string
	full    bool
	reduced bool
	update  bool // a new version is installed: show the reload banner

	embed embedOptions // the "embed this lesson" panel's choices

	annotated annotated // the step whose mentions web/lab.js linked last

	ctx      app.Context // the player's own, from OnMount (browser only)
	hasCtx   bool
	stepFn   app.Func // what web/lab.js's player calls to show a step (inferlab.attach)
	seq      int      // the last of its requests shown (#lab[data-seq])
	motionFn app.Func
	motionMQ app.Value
}

// annotated names a step of a script.
type annotated struct {
	script *sim.Script
	step   int
}

// OnInit runs before the first render. In the browser it reads the address
// already, and shows the script the prerendered page carries when it is the
// wanted one (or, marked stale, while the wanted one is computed), so the
// first client render does not blank the page (go-app mounts, then calls
// OnNav).
func (p *Player) OnInit() {
	if !app.IsClient {
		return
	}
	// On a client-side navigation the address bar still shows the previous
	// page here (go-app updates history after mounting); OnNav loads then.
	p.seq = -1 // drawn before web/lab.js's player asked for anything here
	u := app.Window().URL()
	if slug, _ := urlstate.SlugFromPath(u.Path); lessons.Get(slug) != nil {
		p.keepPrerendered(slug)
		p.load(u)
		p.useEmbedded()
	}
}

// keepPrerendered keeps the prerendered #below of this lesson's page (see
// renderBelow), on the page's first load only.
func (p *Player) keepPrerendered(slug string) {
	if p.embedded || p.full {
		return
	}
	doc := app.Window().Get("document")
	lab, below := doc.Call("getElementById", "lab"), doc.Call("getElementById", "below")
	if !lab.Truthy() || !below.Truthy() || lab.Get("dataset").Get("lesson").String() != slug ||
		lab.Get("classList").Call("contains", "embed").Bool() != p.Embed {
		p.full = true
		return
	}
	p.pre = `<div class="below-pre">` + below.Get("innerHTML").String() + `</div>`
}

func (p *Player) OnNav(ctx app.Context) {
	p.load(ctx.Page().URL())
	if p.lesson != nil {
		ctx.Page().SetTitle("%s · Inference Lab", p.lesson.Title)
		ctx.Page().SetDescription("%s", p.lesson.Summary)
	}
	p.flush(ctx)
	if !p.st.Busy() {
		p.syncURL(ctx)
	}
}

// load reads the lesson, its knobs and the step from an address, and asks
// for the state they name (nothing happens when it is the state shown).
func (p *Player) load(u *url.URL) {
	slug, _ := urlstate.SlugFromPath(u.Path)
	l := lessons.Get(slug)
	if l == nil {
		p.lesson = nil
		p.st.Show("", nil, &Failure{Lesson: slug, Message: "no lesson named " + strconv.Quote(slug)}, playback.StepWish{})
		return
	}
	q := urlstate.ParseRawQuery(l, u.RawQuery)
	l, custom, refused := q.Custom.For(l) // the lesson offering the reader's own model and GPU (byo.go)
	v, notices := urlstate.ResolveParams(l, q.Raw)
	_, badMsg := urlstate.KnobErrors(l, q.Raw)
	if p.lesson == nil || p.lesson.Slug != l.Slug {
		// A trace belongs to the lesson it was loaded into; an upload still
		// being simulated is abandoned with the state it was for. Another
		// lesson's figures must not stand in while this one is computed.
		p.trace, p.traceErr = nil, ""
		if p.lesson != nil {
			p.st.Clear()
		}
		p.cmp = nil
	}
	p.lesson, p.values, p.key, p.debug = l, v, urlstate.Key(l, v), q.Debug
	p.loadCustom(custom)
	p.hide, p.extra = q.Hide, q.Extra()
	p.st.QuizzesOn = !p.hide.Controls && !p.hide.Narration
	if p.text == nil || !sameText(p.text, v.Text()) {
		p.text = v.Text()
	}
	p.notices = append(append(q.Notices, refused...), notices...)
	p.notices = append(p.notices, p.loadCompare(l, v, q.RawB)...)
	p.setBad(q.Raw, badMsg)
	if !p.want(playback.StepWish{Step: q.Step, Find: q.Find}, nil) {
		// The state asked for is shown already (the prerendered script,
		// placed by OnInit's load): its step's notices still stand.
		p.notices = append(p.notices, p.st.Placed()...)
	}
}

// setBad keeps the rejected knob text and its messages for the form.
func (p *Player) setBad(raw, msgs map[string]string) {
	p.bad, p.badMsg = nil, nil
	for k, m := range msgs {
		if p.badMsg == nil {
			p.bad, p.badMsg = map[string]string{}, map[string]string{}
		}
		p.badMsg[k] = m
		if s, ok := raw[k]; ok {
			p.bad[k] = s
		}
	}
}

// later runs fn after d on the player's own context. go-app drops a delayed
// call whose element has left the page, and the control that asked (a quiz
// form, a file input) may be gone by then; the player stays while it shows.
func (p *Player) later(ctx app.Context, d time.Duration, fn func(app.Context)) {
	if p.hasCtx {
		ctx = p.ctx
	}
	ctx.After(d, fn)
}

// dispatch runs fn on the UI goroutine, on the player's own context.
func (p *Player) dispatch(ctx app.Context, fn func(app.Context)) {
	if p.hasCtx {
		ctx = p.ctx
	}
	ctx.Dispatch(fn)
}

// syncURL writes the canonical state (every knob and the 1-based step) into
// the address bar without a history entry, now.
func (p *Player) syncURL(ctx app.Context) {
	if app.IsServer || p.lesson == nil {
		return
	}
	u := *ctx.Page().URL()
	q := EncodeQuery(p.lesson, p.values, p.st.Step+1) + p.custom.Query() + p.compareQuery() + p.extra
	if u.RawQuery == q {
		return
	}
	u.RawQuery = q
	ctx.Page().ReplaceURL(&u)
}

func (p *Player) OnMount(ctx app.Context) {
	p.ctx, p.hasCtx = ctx, true
	p.mounted = true
	p.setLive()
	p.update = ctx.AppUpdateAvailable()
	mark("mount")
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
	// Stepping is web/lab.js's (the one player, before the app and after):
	// it asks for a step with (step, playing, speed, seq), and the page
	// shows it.
	p.stepFn = app.FuncOf(func(this app.Value, args []app.Value) any {
		if len(args) < 4 {
			return nil
		}
		step, playing, speed, seq := args[0].Int(), args[1].Truthy(), args[2].String(), args[3].Int()
		ctx.Dispatch(func(ctx app.Context) { p.stepTo(ctx, step, playing, speed, seq) })
		return nil
	})
	labJS("attach", p.stepFn)
	p.flush(ctx)
	if !p.full {
		// A frame after the page is live: the real panels for the copy.
		p.later(ctx, belowDelay, func(app.Context) { p.full, p.pre = true, "" })
	}
}

// belowDelay lets the live page paint before the panels under the stage
// are built.
const belowDelay = 50 * time.Millisecond

// OnAppUpdate runs when the service worker has installed a new version: the
// page shows a banner offering to reload (#update-banner).
func (p *Player) OnAppUpdate(ctx app.Context) { p.update = true }

func (p *Player) OnDismount() {
	p.st.Stop()
	p.st.Cancel(playback.KnobSim)
	p.st.Cancel(playback.KnobURL)
	p.hasCtx, p.mounted = false, false
	if p.cmp != nil {
		p.cmp.gen++ // B's answer belongs to this page
		p.cmp.sent = ""
	}
	p.cancelSim()
	if p.stepFn != nil {
		labJS("detach", p.stepFn)
		p.stepFn.Release()
		p.stepFn = nil
	}
	if p.motionFn != nil {
		if p.motionMQ != nil && p.motionMQ.Truthy() {
			p.motionMQ.Call("removeEventListener", "change", p.motionFn)
		}
		p.motionFn.Release()
		p.motionFn = nil
	}
}

// stepTo shows the step web/lab.js's player asks for (0-based, clamped),
// with its playback and speed for the toolbar, and records how long the
// browser took to apply a step change (window.inferlabStepMs, read by
// benchmarks and tests). seq numbers the player's requests: the page
// reports the last one it drew (#lab[data-seq]).
func (p *Player) stepTo(ctx app.Context, step int, playing bool, speed string, seq int) {
	var t0 float64
	perf := app.Window().Get("performance")
	if perf.Truthy() {
		t0 = perf.Call("now").Float()
	}
	p.seq, p.st.Playing, p.st.Speed = seq, playing, speed
	if !p.st.Seek(step) {
		return
	}
	p.prefetch(ctx)
	if perf.Truthy() {
		// The grid and the chart patch themselves in deferred calls queued
		// during the render; a defer queued from a defer runs after them.
		ctx.Defer(func(ctx app.Context) {
			ctx.Defer(func(app.Context) {
				app.Window().Set("inferlabStepMs", perf.Call("now").Float()-t0)
			})
		})
	}
}

// prefetch decodes the next step's scenes (a script from the worker decodes
// each step when first shown) once this step has rendered, so stepping on
// finds them ready.
func (p *Player) prefetch(ctx app.Context) {
	sc, next := p.st.Script, p.st.Step+1
	if sc == nil || next >= sc.Count() {
		return
	}
	p.later(ctx, prefetchDelay, func(app.Context) {
		if p.st.Script == sc {
			_, _ = sc.Scenes(next) // an error shows when the step does
		}
	})
}

// prefetchDelay leaves the step's own render and patches the frame first.
const prefetchDelay = 30 * time.Millisecond

// setLive marks the page live (#lab[data-live=true]) once it is mounted and
// shows the wanted state; it stays live through later simulations.
func (p *Player) setLive() {
	if p.live || !p.mounted || p.st.Stale() {
		return
	}
	p.live = true
	mark("live")
	// The charts' library, for this step or a later one, now that the
	// page has started.
	labJS("loadCharts")
}

// mark sets a performance mark ("inferlab:NAME") for the interactive-time
// measurement (e2e TestInteractiveTime), browser only.
func mark(name string) {
	if !app.IsClient {
		return
	}
	if perf := app.Window().Get("performance"); perf.Truthy() && perf.Get("mark").Truthy() {
		perf.Call("mark", "inferlab:"+name)
	}
}
