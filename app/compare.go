package app

import (
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Comparing two settings (A | B). An address with b.KEY keys (package
// urlstate, compare.go), or #btn-compare, which copies A's knobs to B, puts
// the player in compare mode: run B is the same lesson on the same seed with
// its own knobs, simulated by the same worker as A, after A (the worker
// client keeps one request at a time: a newer one supersedes the older, so
// B waits for A's answer and is sent again when A's request superseded it).
// The stage shows A's figures and B's side by side from 1000 px wide and
// stacked below, each labelled with the knobs that differ, stepping
// together (B clamped to its last step when it has fewer); the final
// figures become one table of A, B, B − A and the better side
// (export.DiffMetrics: the figures of `inferlab diff`). The narration is
// A's. B's parameters are a second form (#b-params) without the seed.

// compareState is run B: its knobs and the script shown for them.
type compareState struct {
	values      lessons.Values
	key         string            // urlstate.Key of values
	text        map[string]string // values as text (shared while equal)
	bad, badMsg map[string]string // rejected b. text of the address, and why

	script *sim.Script  // B's script shown (nil until one arrives)
	fail   *sim.Failure // why B's last build failed
	shown  string       // the state key of script (or fail)
	sent   string       // the state key of the request in flight ("" none)
	gen    int          // the latest request's number: older answers are dropped
	knob   int          // the latest live knob change of B's form (debounce)
}

// comparePrefixID prefixes the ids of B's figures (b-ID), so that no
// element id of B's figures repeats one of A's.
const comparePrefixID = "b-"

// compareQuery is B's part of the address ("" when not comparing).
func (p *Player) compareQuery() string {
	if p.cmp == nil || p.lesson == nil {
		return ""
	}
	return urlstate.EncodeCompare(p.lesson, p.cmp.values)
}

// setCompareValues makes v run B's knobs (a new comparison when none runs).
func (p *Player) setCompareValues(v lessons.Values) {
	if p.cmp == nil {
		p.cmp = &compareState{}
	}
	c := p.cmp
	c.values, c.key = v, urlstate.Key(p.lesson, v)
	if c.text == nil || !sameText(c.text, v.Text()) {
		c.text = v.Text()
	}
}

// loadCompare reads run B from the address's b. keys (rawB nil: no
// comparison) for A's values a, and returns the notices of its bad values.
func (p *Player) loadCompare(l *lessons.Lesson, a lessons.Values, rawB map[string]string) []string {
	if rawB == nil {
		p.cmp = nil
		return nil
	}
	v, notices := urlstate.ResolveCompare(l, a, rawB)
	p.setCompareValues(v)
	_, msgs := urlstate.KnobErrors(l, urlstate.CompareRaw(a, rawB))
	p.cmp.bad, p.cmp.badMsg = nil, nil
	for k, m := range msgs {
		if s, ok := rawB[k]; ok {
			if p.cmp.bad == nil {
				p.cmp.bad, p.cmp.badMsg = map[string]string{}, map[string]string{}
			}
			p.cmp.bad[k], p.cmp.badMsg[k] = s, m
		}
	}
	return notices
}

// followSeed keeps B on A's seed when A's changes.
func (p *Player) followSeed() {
	if p.cmp == nil || !p.values.Has("seed") || p.cmp.values.TextOf("seed") == p.values.TextOf("seed") {
		return
	}
	raw := p.cmp.values.Text()
	raw["seed"] = p.values.TextOf("seed")
	if v, errs := p.lesson.Resolve(raw); len(errs) == 0 && p.lesson.CheckValues(v) == nil {
		p.setCompareValues(v)
	}
}

// compareKey names B's wanted state: its knobs and the trace A runs on.
func (p *Player) compareKey() string {
	k := p.cmp.key + p.custom.Query()
	if p.trace != nil {
		k += "|trace#" + strconv.Itoa(p.trace.ID)
	}
	return k
}

// flushCompare sends B's simulation when B's shown state is not the wanted
// one, none is in flight for it, and A's is answered (the worker runs one
// request at a time; A, which the narration follows, goes first).
func (p *Player) flushCompare(ctx app.Context) {
	c := p.cmp
	if c == nil || p.lesson == nil {
		return
	}
	key := p.compareKey()
	if c.shown == key || c.sent == key || p.sim.unsent || p.st.Busy() {
		return
	}
	// The reader's own model and GPU go with B too: B's knobs may pick them.
	req := sim.NewRequest(p.lesson.Slug, c.values, "").WithCustom(p.custom)
	if p.trace != nil {
		req.Trace = &sim.TraceFile{Name: p.trace.Name, Text: p.trace.Text}
	}
	c.gen++
	gen := c.gen
	c.sent = key
	if app.IsServer {
		// A constant: the browser's build leaves this call out, and with it
		// every lesson's simulation (see Player.want).
		p.runCompareHere(c, req, key)
		return
	}
	client := app.Window().Get("inferlab")
	if !client.Truthy() || !client.Get("sim").Truthy() {
		c.sent, c.shown, c.script = "", key, nil
		c.fail = &Failure{Lesson: req.Slug, Params: req.Params, Message: simUnavailable + ": the page's script (web/lab.js) did not load"}
		return
	}
	body, err := req.Body()
	if err != nil {
		c.sent, c.shown, c.script = "", key, nil
		c.fail = &Failure{Lesson: req.Slug, Params: req.Params, Message: "encoding the request: " + err.Error()}
		return
	}
	client.Get("sim").Call("run", string(body), p.simReply(ctx, func(ctx app.Context, data []byte, msg string) { p.answerCompare(ctx, c, gen, key, req, data, msg) }))
}

// answerCompare shows B's answer when it is still the latest request of
// the comparison shown.
func (p *Player) answerCompare(ctx app.Context, c *compareState, gen int, key string, req sim.Request, data []byte, msg string) {
	if p.cmp != c || c.gen != gen {
		return
	}
	c.sent = ""
	if msg == simSuperseded {
		// A's newer request took the worker; B goes again once A is answered.
		p.flushCompare(ctx)
		return
	}
	var s *sim.Script
	var fail *Failure
	switch {
	case msg != "":
		fail = &Failure{Lesson: req.Slug, Params: req.Params, Message: "the simulation stopped: " + msg}
	default:
		rep, sc, err := sim.Decode(data)
		switch {
		case err != nil:
			fail = &Failure{Lesson: req.Slug, Params: req.Params, Message: err.Error()}
		case rep.Failure != nil:
			fail = rep.Failure
		case rep.TraceError != "":
			fail = &Failure{Lesson: req.Slug, Params: req.Params, Message: rep.TraceError}
		}
		s = sc
	}
	c.shown, c.script, c.fail = key, s, fail
	if fail != nil {
		c.script = nil
	}
}

// runCompareHere builds B in this thread (the server only).
func (p *Player) runCompareHere(c *compareState, req sim.Request, key string) {
	c.sent = ""
	l := lessons.Get(req.Slug)
	if l == nil {
		return
	}
	var tr *sim.Trace
	if req.Trace != nil {
		var err error
		if tr, err = sim.ParseTrace(l, req.Trace.Name, req.Trace.Text); err != nil {
			c.shown, c.script, c.fail = key, nil, &Failure{Lesson: req.Slug, Params: req.Params, Message: err.Error()}
			return
		}
	}
	s, fail := sim.Build(l, req.Params, "", tr)
	c.shown, c.script, c.fail = key, sim.Local(s), fail
}

// toggleCompare starts a comparison (B a copy of A's knobs, to change in
// #b-params) or ends it, as a new history entry.
func (p *Player) toggleCompare(ctx app.Context) {
	if p.lesson == nil {
		return
	}
	if p.cmp != nil {
		p.cmp.gen++ // an answer still coming is not wanted
		p.cmp = nil
	} else {
		p.setCompareValues(p.values)
		p.flushCompare(ctx)
		labJS("focusSoon", "#b-params h2")
	}
	p.pushURL(ctx)
}

// setCompareKnobs applies B's valid knob values from #b-params: live ones
// after knobDebounce, others now; the address follows once they settle.
func (p *Player) setCompareKnobs(ctx app.Context, v lessons.Values, live bool) {
	c := p.cmp
	if c == nil {
		return
	}
	c.knob++
	n := c.knob
	apply := func(ctx app.Context) {
		if p.cmp != c || c.knob != n {
			return
		}
		p.setCompareValues(v)
		p.followSeed()
		c.bad, c.badMsg = nil, nil
		p.flushCompare(ctx)
		p.later(ctx, knobURLSettle, func(ctx app.Context) {
			if p.cmp == c && c.knob == n {
				p.pushURL(ctx)
			}
		})
	}
	if !live {
		apply(ctx)
		return
	}
	p.later(ctx, knobDebounce, apply)
}

// step is B's step shown (0-based): A's, clamped to B's steps.
func (c *compareState) step(a int) int {
	n := c.script.Count()
	if n == 0 {
		return 0
	}
	return max(0, min(a, n-1))
}

// compareLabels are the two figures' labels: "A" and "B" with the knobs
// where they differ.
func (p *Player) compareLabels() (string, string) {
	as, bs := urlstate.Differing(p.lesson, p.values, p.cmp.values)
	if len(as) == 0 {
		return "A", "B · the same knobs as A: change B's in “B's parameters”"
	}
	return "A · " + strings.Join(as, " "), "B · " + strings.Join(bs, " ")
}

// renderCompare is #compare-b, after A's #scenes in the stage: the two
// labels, the note on step counts and B's figures of the step (#scenes-b).
// It is display: contents (web/lab.css), so each part takes its place in
// the stage's grid: the labels over their figures, B beside A from 1000 px
// wide, under it below.
func (p *Player) renderCompare() app.UI {
	c := p.cmp
	la, lb := p.compareLabels()
	key := p.compareKey()
	stale := c.shown != key
	n, na := c.script.Count(), p.st.Count()
	bi := c.step(p.st.Step)
	note := ""
	switch {
	case c.script == nil || na == 0:
	case n != na && p.st.Step > bi:
		note = "B has " + strconv.Itoa(n) + " steps, A " + strconv.Itoa(na) + ": B stays at its last step, " + strconv.Itoa(n) + "."
	case n != na:
		note = "B has " + strconv.Itoa(n) + " steps, A " + strconv.Itoa(na) + ": past step " + strconv.Itoa(n) + " B stays at its last."
	}
	var scenes []scene.Scene
	body := []app.UI{}
	switch {
	case c.fail != nil && !stale:
		body = append(body, app.P().Class("compare-fail").Role("alert").Text("Run B could not be built: "+c.fail.Message))
	case c.script == nil:
		body = append(body, app.P().Class("compare-wait").Text("Computing B's settings…"))
	default:
		sc, err := c.script.Scenes(bi)
		if err != nil {
			body = append(body, app.P().Class("compare-fail").Role("alert").Text("B's figures could not be read: "+err.Error()))
			break
		}
		sc, _, _ = mainFirst(sc)
		scenes = make([]scene.Scene, len(sc))
		for i, s := range sc {
			s.ID = comparePrefixID + s.ID
			scenes[i] = s
		}
		body = append(body, renderScenes(scenes, !p.reduced)...)
	}
	stepText := ""
	if n > 0 {
		stepText = " · step " + strconv.Itoa(bi+1) + " of " + strconv.Itoa(n)
	}
	return app.Div().ID("compare-b").Class("compare-b").DataSet("step", bi+1).DataSet("steps", n).DataSet("stale", stale).Body(
		app.P().ID("compare-label-a").Class("compare-label compare-a").Body(
			app.Span().Class("compare-side").Text("A"), app.Text(strings.TrimPrefix(la, "A")),
		),
		app.Div().ID("compare-label-b").Class("compare-label compare-b-label").Body(
			app.P().Body(
				app.Span().Class("compare-side").Text("B"), app.Text(strings.TrimPrefix(lb, "B")),
				app.Span().Class("compare-step").Text(stepText),
				app.If(stale && c.script != nil, func() app.UI { return app.Span().Class("compare-busy").Text(" · computing B…") }),
			),
			app.If(note != "", func() app.UI { return app.P().ID("compare-note").Class("compare-note").Role("note").Text(note) }),
		),
		app.Div().ID("scenes-b").Class("scenes scenes-b").Aria("label", "Run B's figures").Role("group").Body(body...),
	)
}

// renderCompareControl is #btn-compare under A's parameters, and while
// comparing B's parameters (#b-params).
func (p *Player) renderCompareControl() app.UI {
	on := p.cmp != nil
	label := "Compare with a second setting (A | B)"
	if on {
		label = "Stop comparing"
	}
	return app.Div().ID("compare-ctl").Class("compare-ctl panel").Body(
		app.Button().ID("btn-compare").Type("button").Aria("pressed", strconv.FormatBool(on)).
			OnClick(func(ctx app.Context, e app.Event) { p.toggleCompare(ctx) }).
			Body(app.Span().Aria("hidden", "true").Text("⇆ "), app.Text(label)),
		app.If(!on, func() app.UI {
			return app.P().Class("help").Text("Runs the lesson a second time on the same seed, B, with knobs of its own (a copy of these to start with): both figures step together, and the final figures show A, B, the difference and which is better.")
		}),
		app.If(on, func() app.UI {
			return &paramsPanel{P: p, Side: "b", Lesson: p.lesson, Values: p.cmp.text, Bad: p.cmp.bad, Errs: p.cmp.badMsg, Keep: p.extra}
		}),
	)
}

// compareMetrics is #compare-metrics: every final figure of A and B, B − A
// and the better side where the lesson defines which way the figure
// improves, in words and a symbol (never colour alone). The figures are
// export.DiffMetrics', as `inferlab diff` prints them.
type compareMetrics struct {
	app.Compo
	A, B []lessons.Metric
	Wait bool // B's script is not there yet
}

func (m *compareMetrics) Render() app.UI {
	rows := export.DiffMetrics(m.A, m.B)
	return app.Section().ID("compare-metrics-panel").Class("metrics-panel compare-panel panel").Aria("labelledby", "compare-metrics-title").Body(
		app.H2().ID("compare-metrics-title").Text("Final figures: A | B"),
		app.If(m.Wait, func() app.UI { return app.P().Class("help").Text("Computing B's settings…") }),
		app.P().Class("help").Text("B − A is B's figure less A's (in percent of A beside it). “Better” names the run whose figure is better where the lesson says which way the figure improves; “—” where it does not (a count, a setting)."),
		app.Div().Class("table-wrap").TabIndex(0).Body(
			// The roles are the elements' own, stated: a phone lays the
			// rows out as cards (CSS display), which some browsers take as
			// leaving the table.
			app.Table().ID("compare-metrics").Class("compare-table").Role("table").Body(
				app.THead().Role("rowgroup").Body(app.Tr().Role("row").Body(
					app.Range(compareColumns).Slice(func(i int) app.UI {
						return app.Th().Scope("col").Role("columnheader").Text(compareColumns[i])
					}),
				)),
				app.TBody().Role("rowgroup").Body(app.Range(rows).Slice(func(i int) app.UI { return compareRow(rows[i], m.Wait) })),
			),
		),
	)
}

// compareColumns are #compare-metrics' column headers; each figure's cell
// carries its column's as data-label (a phone shows it beside the figure).
var compareColumns = []string{"Figure", "A", "B", "B − A", "Better"}

// compareRow is one figure of #compare-metrics: tr[data-metric=KEY]
// [data-verdict=a|b|same|""], its cells td[data-side=a|b|diff|better]; the
// figures' data-value are A, B and B − A as plain numbers (export.Figure).
func compareRow(d export.MetricDiff, wait bool) app.UI {
	fig := func(x *float64) string {
		if x == nil || wait {
			return "—"
		}
		return metricText(*x)
	}
	unit := ""
	if d.Unit != "" {
		unit = " " + d.Unit
	}
	diff, diffVal, rel := "—", "", ""
	if d.Diff != nil && !wait {
		diff, diffVal, rel = d.DiffText+unit, export.Figure(*d.Diff), d.Relative
	}
	verdict, icon, cls := "—", "", "verdict-none"
	switch {
	case wait:
	case d.Verdict == export.VerdictA:
		verdict, icon, cls = "A is better", "◀ ", "verdict-a"
	case d.Verdict == export.VerdictB:
		verdict, icon, cls = "B is better", "▶ ", "verdict-b"
	case d.Verdict == export.VerdictSame:
		verdict, icon, cls = "the same", "= ", "verdict-same"
	}
	better := ""
	switch d.Better {
	case lessons.HigherIsBetter:
		better = "higher is better"
	case lessons.LowerIsBetter:
		better = "lower is better"
	}
	v := d.Verdict
	if wait {
		v = ""
	}
	return app.Tr().Role("row").DataSet("metric", d.Key).DataSet("verdict", v).DataSet("better", string(d.Better)).Body(
		app.Th().Scope("row").Role("rowheader").Body(
			app.Span().Text(d.Label),
			app.If(better != "", func() app.UI { return app.Span().Class("compare-dir").Text(" (" + better + ")") }),
		),
		app.Td().Role("cell").Class("num").DataSet("side", "a").DataSet("label", compareColumns[1]).DataSet("value", value(d.A, wait)).Text(fig(d.A)+unitIf(d.A, unit, wait)),
		app.Td().Role("cell").Class("num").DataSet("side", "b").DataSet("label", compareColumns[2]).DataSet("value", value(d.B, wait)).Text(fig(d.B)+unitIf(d.B, unit, wait)),
		app.Td().Role("cell").Class("num").DataSet("side", "diff").DataSet("label", compareColumns[3]).DataSet("value", diffVal).Body(
			app.Text(diff),
			app.If(rel != "", func() app.UI { return app.Span().Class("compare-rel").Text(" (" + rel + ")") }),
		),
		app.Td().Role("cell").Class("verdict "+cls).DataSet("side", "better").DataSet("label", compareColumns[4]).Body(
			app.If(icon != "", func() app.UI { return app.Span().Aria("hidden", "true").Text(icon) }),
			app.Text(verdict),
		),
	)
}

// value is a figure as a plain number for data-value ("" without one).
func value(x *float64, wait bool) string {
	if x == nil || wait {
		return ""
	}
	return export.Figure(*x)
}

func unitIf(x *float64, unit string, wait bool) string {
	if x == nil || wait {
		return ""
	}
	return unit
}

// metricsView is the final figures' panel: A's (#metrics), or while
// comparing A | B (#compare-metrics). metrics are A's (nil: the script's).
func (p *Player) metricsView(metrics []lessons.Metric) app.UI {
	if metrics == nil && p.st.Script != nil {
		metrics = p.st.Script.Metrics
	}
	if p.cmp == nil {
		return &metricsPanel{Metrics: metrics}
	}
	var b []lessons.Metric
	wait := p.cmp.script == nil || p.cmp.shown != p.compareKey()
	if p.cmp.script != nil {
		b = p.cmp.script.Metrics
	}
	return &compareMetrics{A: metrics, B: b, Wait: wait}
}
