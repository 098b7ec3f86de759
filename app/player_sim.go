package app

import (
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Simulations in the browser run in a Web Worker with its own WebAssembly
// instance (wasm/sim, web/sim-worker.js, driven by inferlab.sim in
// web/lab.js), so the page's thread never waits for one: it sends a
// sim.Request, keeps showing (and stepping) the script it has, marked stale
// while the answer is computed, and decodes the answer's head and then each
// step's scenes when shown. The worker client keeps only the latest request:
// a newer one terminates a worker still busy with an older one. Where no
// worker can start (a browser without workers, a blocked file), the client
// runs sim.wasm on the page's thread instead (web/lab.js). The page's own
// WebAssembly never simulates: the lessons' simulations are not linked into
// it (lessons.Lesson.Build), which keeps app.wasm within its size budget.
// The server builds at once (runHere), and carries the script of the
// state it prerenders in the page (sim.EmbedText).

// simRun is the simulation asked for and not answered yet.
type simRun struct {
	ticket playback.Ticket
	req    sim.Request
	values lessons.Values
	upload *traceFile // an uploaded trace this run tries (it replaces p.trace if it builds)
	unsent bool
}

// traceFile is an uploaded trace: its name and text (sent with each
// request: links to the page do not carry it), and the number of requests
// the last build read from it.
type traceFile struct {
	Name     string
	Text     string
	ID       int
	Requests int
}

// stateKey names a state: the knobs, debug= and the trace in use.
func (p *Player) stateKey(tr *traceFile) string {
	k := p.key + "|" + p.debug + p.custom.Query()
	if tr != nil {
		k += "|trace#" + strconv.Itoa(tr.ID)
	}
	return k
}

// want asks for the state of the current knobs (on the trace in use, or on
// upload when one is tried). The server builds it at once; the browser
// sends it at the next flush. It reports whether it asked for a simulation
// (false: the state is shown, or its simulation runs already).
func (p *Player) want(wish playback.StepWish, upload *traceFile) (started bool) {
	tr := p.trace
	if upload != nil {
		tr = upload
	}
	t, need := p.st.Want(p.stateKey(tr), wish)
	if !need {
		if !p.st.Busy() && p.sim.ticket != (playback.Ticket{}) {
			// Back to the state shown: its run is not wanted. (With no run
			// of A's asked for, the worker's request is B's, still wanted.)
			p.cancelSim()
		}
		return false
	}
	if upload == nil {
		p.traceErr = "" // about an earlier upload, not this state
	}
	req := sim.NewRequest(p.lesson.Slug, p.values, p.debug).WithCustom(p.custom)
	if tr != nil {
		req.Trace = &sim.TraceFile{Name: tr.Name, Text: tr.Text}
	}
	p.sim = simRun{ticket: t, req: req, values: p.values, upload: upload, unsent: true}
	if app.IsServer {
		// A constant: the browser's build leaves this call out, and with it
		// every lesson's simulation.
		p.runHere()
	}
	return true
}

// flush sends the simulation asked for, if it was not sent yet.
func (p *Player) flush(ctx app.Context) {
	defer p.flushCompare(ctx) // B follows A's answer, or goes now when A is shown
	if !p.sim.unsent || app.IsServer {
		return
	}
	p.sim.unsent = false
	run := p.sim
	client := app.Window().Get("inferlab")
	if !client.Truthy() || !client.Get("sim").Truthy() {
		p.answer(ctx, run, nil, simUnavailable+": the page's script (web/lab.js) did not load")
		return
	}
	body, err := run.req.Body()
	if err != nil {
		p.answer(ctx, run, nil, "encoding the request: "+err.Error())
		return
	}
	client.Get("sim").Call("run", string(body), p.simReply(ctx, func(ctx app.Context, data []byte, msg string) { p.answer(ctx, run, data, msg) }))
}

// simReply is the callback web/lab.js's worker client calls with an
// answer (the script's bytes, or an error message): it releases itself
// and hands the answer to done on the app's goroutine.
func (p *Player) simReply(ctx app.Context, done func(ctx app.Context, data []byte, msg string)) app.Func {
	var fn app.Func
	fn = app.FuncOf(func(this app.Value, args []app.Value) any {
		var data []byte
		msg := ""
		if len(args) > 0 && args[0].Truthy() {
			data = make([]byte, args[0].Get("length").Int())
			app.CopyBytesToGo(data, args[0])
		} else if len(args) > 1 {
			msg = args[1].String()
		}
		fn.Release()
		p.dispatch(ctx, func(ctx app.Context) { done(ctx, data, msg) })
		return nil
	})
	return fn
}

// cancelSim tells the worker client the running request is no longer
// wanted (it stops the worker busy with it).
func (p *Player) cancelSim() {
	p.sim = simRun{}
	if app.IsClient {
		if c := app.Window().Get("inferlab"); c.Truthy() && c.Get("sim").Truthy() {
			c.Get("sim").Call("cancel")
		}
	}
}

// Errors the worker client reports instead of an answer (web/lab.js).
const (
	simSuperseded  = "superseded"  // a newer request replaced this one
	simUnavailable = "unavailable" // no simulation could start, not even on the page's thread
)

// answer handles the worker's answer to run: the reply's bytes, or why
// there are none.
func (p *Player) answer(ctx app.Context, run simRun, data []byte, msg string) {
	if !p.st.Due(run.ticket) {
		return // superseded: a newer run is pending or the state changed
	}
	if msg == simSuperseded {
		return
	}
	var rep sim.Reply
	var s *sim.Script
	switch {
	case strings.HasPrefix(msg, simUnavailable):
		rep.Failure = &Failure{Lesson: run.req.Slug, Params: run.req.Params, Message: "the simulation could not start in this browser (" + msg + "); the command below runs it"}
	case msg != "":
		rep.Failure = &Failure{Lesson: run.req.Slug, Params: run.req.Params, Message: "the simulation stopped: " + msg}
	default:
		var err error
		if rep, s, err = sim.Decode(data); err != nil {
			rep = sim.Reply{Failure: &Failure{Lesson: run.req.Slug, Params: run.req.Params, Message: err.Error()}}
		}
	}
	if p.deliver(run, rep, s) {
		p.syncURL(ctx)
		p.flushCompare(ctx)
	}
}

// runHere builds the pending run in this thread (the server only).
func (p *Player) runHere() {
	run := p.sim
	l, err := run.req.Lesson()
	if err != nil {
		return
	}
	rep := sim.Reply{}
	var s *lessons.Script
	var tr *sim.Trace
	if run.req.Trace != nil {
		var err error
		if tr, err = sim.ParseTrace(l, run.req.Trace.Name, run.req.Trace.Text); err != nil {
			rep.TraceError = err.Error()
		} else {
			rep.TraceRequests = len(tr.Requests)
		}
	}
	if rep.TraceError == "" {
		s, rep.Failure = sim.Build(l, run.req.Params, run.req.Debug, tr)
	}
	p.deliver(run, rep, sim.Local(s))
}

// deliver shows a reply if its run is still the latest, and reports whether
// it did. An uploaded trace that does not parse or build leaves the page as
// it was and says why at the file input.
func (p *Player) deliver(run simRun, rep sim.Reply, s *sim.Script) bool {
	if run.upload != nil && (rep.TraceError != "" || rep.Failure != nil) {
		if p.st.Drop(run.ticket) {
			p.sim = simRun{}
			p.traceErr = rep.TraceError
			if p.traceErr == "" {
				p.traceErr = lessons.PrintableName(run.upload.Name) + ": " + rep.Failure.Message
			}
		}
		return false
	}
	if rep.TraceError != "" && rep.Failure == nil {
		rep.Failure = &Failure{Lesson: run.req.Slug, Params: run.req.Params, Message: rep.TraceError}
	}
	if rep.Failure != nil && run.req.Trace != nil {
		rep.Failure.Trace = run.req.Trace.Name
	}
	notices, ok := p.st.Deliver(run.ticket, s, rep.Failure)
	if !ok {
		return false
	}
	p.sim = simRun{}
	p.shownValues = run.values
	p.notices = append(p.notices, notices...)
	if run.upload != nil {
		p.trace, p.traceErr = run.upload, ""
	}
	if p.trace != nil && run.req.Trace != nil && rep.TraceRequests > 0 {
		p.trace.Requests = rep.TraceRequests
	}
	p.setLive()
	return true
}

// useEmbedded shows the script the prerendered page carries
// (#script-data, written by the server; sim.EmbedText): as the wanted
// state when it is the one (no simulation then), else marked stale while
// the wanted one is computed. It is read once per page load.
func (p *Player) useEmbedded() {
	if p.embedded || !app.IsClient {
		return
	}
	p.embedded = true
	el := app.Window().GetElementByID("script-data")
	if el.IsNull() || el.IsUndefined() {
		return
	}
	key, params, s, err := sim.ReadEmbedded(el.Get("textContent").String())
	if err != nil {
		app.Log("inferlab: the page's script:", err)
		return
	}
	mark("embedded")
	if key == p.st.Wanted() && p.st.Busy() {
		run := p.sim
		run.unsent = false
		p.deliver(run, sim.Reply{}, s)
		return
	}
	p.st.ShowStale(key, s)
	p.shownValues, _ = p.lesson.Resolve(params)
}

// renderEmbedded is the script of the state shown, for the page to carry
// (server only; a <script type="application/json">, which never runs).
func (p *Player) renderEmbedded() app.UI {
	if !app.IsServer || p.st.Stale() || p.st.Script == nil {
		return nil
	}
	text, ok := sim.EmbedText(p.st.Shown(), p.shownValues.Text(), p.st.Script.Script)
	if !ok {
		return nil
	}
	return app.Raw(`<script type="application/json" id="script-data">` + text + `</script>`)
}
