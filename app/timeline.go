package app

import (
	"math"
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderTimeline draws a Gantt chart: one lane per row, bars placed on a
// shared time axis, each styled by its class (with a pattern per class) and
// carrying its label, and an optional cursor.
func renderTimeline(sc scene.Scene) app.UI {
	tl := sc.Gantt
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range tl.Lanes {
		for _, b := range l.Bars {
			lo = math.Min(lo, b.Start)
			hi = math.Max(hi, b.End)
		}
	}
	if math.IsInf(lo, 0) || hi <= lo {
		lo, hi = 0, 1
	}
	pct := func(x float64) string {
		return strconv.FormatFloat(100*(x-lo)/(hi-lo), 'f', 3, 64) + "%"
	}
	unit := ""
	if tl.Unit != "" {
		unit = " " + tl.Unit
	}
	return app.Figure().Class("scene", "scene-timeline").DataSet("kind", string(scene.KindTimeline)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text(formatNumber(lo)+" to "+formatNumber(hi)+unit),
		),
		app.Div().Class("timeline").Body(
			app.Range(tl.Lanes).Slice(func(i int) app.UI {
				l := tl.Lanes[i]
				return app.Div().Class("tl-lane").Body(
					app.Div().Class("tl-label").Text(l.Label),
					app.Div().Class("tl-track").Role("list").Aria("label", l.Label).Body(
						app.Range(l.Bars).Slice(func(j int) app.UI {
							b := l.Bars[j]
							cls := "tl-bar tl-" + safeClass(b.Class)
							if b.Highlight {
								cls += " hl"
							}
							return app.Div().Class(cls).Role("listitem").DataSet("class", b.Class).
								Style("left", pct(b.Start)).Style("width", pct(lo+math.Max(b.End-b.Start, 0))).
								Title("%s %s: %s–%s%s", b.Class, b.Label, formatNumber(b.Start), formatNumber(b.End), unit).
								Body(app.Span().Text(b.Label))
						}),
						app.If(tl.Cursor != nil && i == 0, func() app.UI {
							return app.Div().Class("tl-cursor").Style("left", pct(*tl.Cursor)).Aria("hidden", "true")
						}),
					),
				)
			}),
		),
		app.Div().Class("strip-axis").Body(
			app.Span().Text(formatNumber(lo)+unit),
			app.Span().Text(formatNumber(hi)+unit),
		),
	)
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
