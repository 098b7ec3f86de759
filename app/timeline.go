package app

import (
	"math"
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderTimeline draws a Gantt chart: one lane per row, bars placed on a
// shared time axis, each styled by its class (with a pattern per class)
// and labelled where the label fits whole (fitClass), an optional cursor.
//
// With a Zoom window the lanes show the window and, above them, the whole
// run in miniature with the window outlined. Every bar stays in the DOM in
// the same order whatever the window (bars outside it are hidden), so
// go-app reuses the nodes from one step to the next and CSS transitions
// move and grow them. Groups are labelled brackets above the lanes; marked
// bars are outlined and get a callout in the row above the lanes.
func renderTimeline(sc scene.Scene) app.UI {
	tl := sc.Gantt
	lo, hi := timelineRange(tl)
	vlo, vhi := lo, hi
	if z := tl.Zoom; z != nil && z.End > z.Start {
		vlo, vhi = z.Start, z.End
	}
	view := func(x float64) float64 { return 100 * (x - vlo) / (vhi - vlo) }
	unit := ""
	if tl.Unit != "" {
		unit = " " + tl.Unit
	}
	mk := marksOf(sc.Marks)
	sub := formatNumber(lo) + " to " + formatNumber(hi) + unit
	if z := tl.Zoom; z != nil {
		sub = "zoomed to " + formatNumber(vlo) + "–" + formatNumber(vhi) + unit
		if z.Label != "" {
			sub = "zoomed to " + z.Label + " (" + formatNumber(vlo) + "–" + formatNumber(vhi) + unit + ")"
		}
		sub += " of " + formatNumber(lo) + "–" + formatNumber(hi) + unit
	}
	notes, rows := timelineCallouts(tl, mk, view)
	return app.Figure().Class("scene", "scene-timeline").DataSet("kind", string(scene.KindTimeline)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text(sub),
		),
		// Always present (empty when unused), so that the children keep
		// their positions from one step to the next.
		timelineOverview(tl, lo, hi, vlo, vhi, unit),
		app.Div().Class("timeline").Body(
			timelineGroups(tl.Groups, view, mk),
			app.Div().Class("tl-notes").Aria("hidden", "true").Style("height", strconv.Itoa(22*rows)+"px").Body(notes...),
			app.Range(tl.Lanes).Slice(func(i int) app.UI {
				return timelineLane(tl, i, view, unit, mk)
			}),
			app.Div().Class("tl-row tl-axis").Aria("hidden", "true").Body(
				app.Div(),
				app.Div().Class("tl-ticks").Body(timelineTicks(vlo, vhi, unit, view)...),
			),
		),
		timelineLegend(tl),
	)
}

// timelineRange is the extent of every bar, or [0, 1] for none.
func timelineRange(tl *scene.Timeline) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, l := range tl.Lanes {
		for _, b := range l.Bars {
			lo = math.Min(lo, b.Start)
			hi = math.Max(hi, b.End)
		}
	}
	if math.IsInf(lo, 0) || hi <= lo {
		return 0, 1
	}
	return lo, hi
}

// timelineLane is one lane's label and track.
func timelineLane(tl *scene.Timeline, i int, view func(float64) float64, unit string, mk marks) app.UI {
	l := tl.Lanes[i]
	return app.Div().Class("tl-lane").Body(
		app.Div().Class("tl-label").Title(l.Label).Text(l.Label),
		app.Div().Class("tl-track").Role("list").Aria("label", l.Label).Body(
			app.Range(l.Bars).Slice(func(j int) app.UI {
				b := l.Bars[j]
				ref := spanRef(l, j)
				left, right := view(b.Start), view(math.Max(b.End, b.Start))
				cls := "tl-bar tl-" + safeClass(b.Class)
				if b.Highlight {
					cls += " hl"
				}
				if right <= 0 || left >= 100 {
					cls += " out"
				}
				vis := (math.Min(right, 100) - math.Max(left, 0)) / 100
				cls = mk.class(cls+" "+fitClass(vis, b.Label), ref)
				return app.Div().Class(cls).Role("listitem").DataSet("class", b.Class).DataSet("ref", ref).
					Style("left", pctText(left)).Style("width", pctText(right-left)).
					Title("%s", barTitle(b, unit)).
					Body(app.Span().Class("tl-text").Text(b.Label))
			}),
			app.If(tl.Cursor != nil && i == 0, func() app.UI {
				return app.Div().Class("tl-cursor").Style("left", pctText(view(*tl.Cursor))).Aria("hidden", "true")
			}),
		),
	)
}

// barTitle is a bar's tooltip: its label, what it is and when.
func barTitle(b scene.Span, unit string) string {
	t := classWords(b.Class)
	if b.Label != "" {
		t = b.Label + " (" + t + ")"
	}
	return t + ": " + formatNumber(b.Start) + "–" + formatNumber(b.End) + unit + ", " + formatNumber(b.End-b.Start) + unit
}

// timelineCallouts are the labels of the marked bars, placed above the
// lanes at each bar's middle, in as many rows as keep them apart; it
// returns them and the number of rows.
// tlNarrowPx is a timeline's track on a phone, in px (a 375 px screen less
// the lanes' 9rem labels): callouts are placed and kept apart at that
// width, so they stay apart on a wider one.
const tlNarrowPx = 165.0

func timelineCallouts(tl *scene.Timeline, mk marks, view func(float64) float64) ([]app.UI, int) {
	var out []app.UI
	var ends []float64 // per row, where its last callout ends (percent)
	for _, l := range tl.Lanes {
		for j, b := range l.Bars {
			ref := spanRef(l, j)
			if !mk.has(ref) {
				continue
			}
			mid := (math.Max(view(b.Start), 0) + math.Min(view(b.End), 100)) / 2
			text := mk.label(ref, b.Label)
			// Width at a phone's track (tlNarrowPx), in percent: 7 px a
			// character and padding. A chip that centred on its bar would
			// pass an end of the track starts (or ends) at the bar.
			w := 100 * (7*float64(len([]rune(text))) + 16) / tlNarrowPx
			from, side := mid-w/2, ""
			switch {
			case mid-w/2 >= 0 && mid+w/2 <= 100:
			case mid+w <= 100:
				from, side = mid, " at-start"
			default:
				// Ending at its bar, it may run left over the lanes'
				// labels' column (the notes' row has nothing there); it
				// never passes the figure's right edge.
				from, side = mid-w, " at-end"
			}
			row := 0
			for row < len(ends) && ends[row] > from {
				row++
			}
			if row == len(ends) {
				ends = append(ends, 0)
			}
			ends[row] = from + w + 1
			out = append(out, app.Div().Class("callout-row").Style("bottom", strconv.Itoa(22*row)+"px").Body(
				app.Span().Class("callout"+side).DataSet("for", ref).Style("left", pctText(mid)).Text(text)))
		}
	}
	return out, len(ends)
}

// timelineGroups draws the groups as labelled brackets over the lanes.
func timelineGroups(groups []scene.Span, view func(float64) float64, mk marks) app.UI {
	if len(groups) == 0 {
		return app.Div().Class("tl-row", "tl-groups", "none")
	}
	return app.Div().Class("tl-row tl-groups").Body(
		app.Div().Class("tl-label").Text(""),
		app.Div().Class("tl-brackets").Body(
			app.Range(groups).Slice(func(i int) app.UI {
				g := groups[i]
				left, right := view(g.Start), view(g.End)
				cls := "tl-group tl-g-" + safeClass(g.Class)
				if right <= 0 || left >= 100 {
					cls += " out"
				}
				ref := "group:" + strconv.Itoa(i)
				// Brackets are cut at the view's edges (their ends would
				// claim a stretch the view does not show).
				left, right = math.Max(left, 0), math.Min(right, 100)
				vis := (right - left) / 100
				return app.Div().Class(mk.class(cls+" "+fitClass(vis, g.Label), ref)).DataSet("ref", ref).
					Style("left", pctText(left)).Style("width", pctText(right-left)).Title("%s", g.Label).
					Body(app.Span().Class("tl-text").Text(g.Label))
			}),
		),
	)
}

// timelineOverview is the whole run in miniature, one thin row per lane,
// with the zoom window outlined.
func timelineOverview(tl *scene.Timeline, lo, hi, vlo, vhi float64, unit string) app.UI {
	at := func(x float64) float64 { return 100 * (x - lo) / (hi - lo) }
	if tl.Zoom == nil {
		return app.Div().Class("tl-overview", "none").Aria("hidden", "true")
	}
	return app.Div().Class("tl-overview").Aria("hidden", "true").Body(
		app.Div().Class("tl-label").Text("whole run"),
		app.Div().Class("tl-mini").Body(
			app.Range(tl.Lanes).Slice(func(i int) app.UI {
				bars := miniBars(tl.Lanes[i].Bars, (hi-lo)/500)
				return app.Div().Class("tl-mini-lane").Body(
					app.Range(bars).Slice(func(j int) app.UI {
						b := bars[j]
						return app.Div().Class("tl-mini-bar tl-"+safeClass(b.Class)).
							Style("left", pctText(at(b.Start))).Style("width", pctText(at(math.Max(b.End, b.Start))-at(b.Start)))
					}),
				)
			}),
			app.Div().Class("tl-window").Style("left", pctText(at(vlo))).Style("width", pctText(at(vhi)-at(vlo))),
			app.Span().Class("tl-mini-axis at-start").Text(formatNumber(lo)+unit),
			app.Span().Class("tl-mini-axis at-end").Text(formatNumber(hi)+unit),
		),
	)
}

// miniBars merges neighbouring bars of one class (closer than gap) for the
// overview, where they would be drawn a pixel apart: a few elements
// instead of hundreds.
func miniBars(bars []scene.Span, gap float64) []scene.Span {
	var out []scene.Span
	for _, b := range bars {
		if n := len(out); n > 0 && out[n-1].Class == b.Class && b.Start-out[n-1].End <= gap {
			out[n-1].End = math.Max(out[n-1].End, b.End)
			continue
		}
		out = append(out, scene.Span{Start: b.Start, End: b.End, Class: b.Class})
	}
	return out
}

// timelineTicks are about five round values across the view.
func timelineTicks(lo, hi float64, unit string, view func(float64) float64) []app.UI {
	step := tickStep((hi - lo) / 5)
	var out []app.UI
	for x := math.Ceil(lo/step) * step; x <= hi+step*1e-9; x += step {
		v := view(x)
		cls := "tl-tick"
		switch {
		case v < 6:
			cls += " at-start"
		case v > 94:
			cls += " at-end"
		}
		out = append(out, app.Span().Class(cls).Style("left", pctText(v)).Text(formatNumber(roundTo(x, step))))
		if len(out) > 8 {
			break
		}
	}
	// The unit once, on the last tick.
	if n := len(out); n > 0 {
		if last, ok := out[n-1].(app.HTMLSpan); ok {
			x := math.Ceil(lo/step)*step + float64(n-1)*step
			out[n-1] = last.Text(formatNumber(roundTo(x, step)) + unit)
		}
	}
	return out
}

// tickStep rounds a tick spacing up to 1, 2 or 5 times a power of ten.
func tickStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// roundTo removes the float noise of a multiple of step.
func roundTo(x, step float64) float64 {
	d := math.Max(0, -math.Floor(math.Log10(step)))
	k := math.Pow(10, d)
	return math.Round(x*k) / k
}

// timelineLegend names the classes of bar the lanes show, with their
// pattern, in the order they first appear.
func timelineLegend(tl *scene.Timeline) app.UI {
	var classes []string
	seen := map[string]bool{}
	for _, l := range tl.Lanes {
		for _, b := range l.Bars {
			if !seen[b.Class] {
				seen[b.Class] = true
				classes = append(classes, b.Class)
			}
		}
	}
	return app.P().Class("legend tl-legend").Body(
		app.Range(classes).Slice(func(i int) app.UI {
			return app.Span().Class("tl-key").Body(
				app.Span().Class("key tl-"+safeClass(classes[i])),
				app.Text(" "+classWords(classes[i])),
			)
		}),
	)
}

// classWords says what a bar class is, for legends and tooltips.
func classWords(c string) string {
	if w, ok := spanClassWords[c]; ok {
		return w
	}
	return c
}

var spanClassWords = map[string]string{
	"decode":        "decode tokens",
	"prefill":       "prefill chunk",
	"prefill-other": "prefill of the decodes' own prompts",
	"cpu":           "CPU launch",
	"replay":        "graph replay",
	"gpu":           "GPU kernel",
	"gemm":          "matrix multiply",
	"attn":          "attention",
	"elem":          "elementwise kernel",
	"comm":          "all-reduce",
	"idle":          "GPU idle, waiting for a launch",
	"wait":          "waiting",
	"stall":         "stall",
	"transfer":      "transfer",
	"gap":           "gap before a token",
	"gap-long":      "a long gap before a token",
}

// safeClass keeps a span class usable as a CSS class name.
func safeClass(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}
