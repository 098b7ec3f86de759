package app

import (
	"math"
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// A journey is a timeline drawn twice: thin, over the whole interval, as
// context, with the zoom window outlined; then tall, over the window only,
// with each bar's label and an axis in the scene's unit, so a 9 ms transfer
// inside a 3-second run is as wide as the prefill beside it. A cursor
// (the first token) is a dashed line in both. Without a zoom window the
// tall view covers the whole interval.

// Journey layout, in viewBox units.
const (
	// jrW fits a laptop's figure column (about 800 px) at the 0.92 scale
	// that keeps 11-unit labels at 10 px (web/lab.css), so it does not pan.
	jrW      = 860.0
	jrLabelW = 150.0
	jrCtxH   = 12.0
	jrLaneH  = 34.0
	jrPx     = 12.0
	jrSmall  = 11.0
)

// jrContextLanes are the lanes the thin view draws.
func jrContextLanes(j *scene.Journey) []scene.Lane {
	if len(j.Context) > 0 {
		return j.Context
	}
	return j.Lanes
}

// jrSpan is the interval of the context's bars.
func jrSpan(j *scene.Journey) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, l := range jrContextLanes(j) {
		for _, b := range l.Bars {
			lo, hi = math.Min(lo, b.Start), math.Max(hi, b.End)
		}
	}
	if math.IsInf(lo, 0) || hi <= lo {
		return 0, 1
	}
	return lo, hi
}

// jrGeom is a journey drawing's width and label column, in viewBox units.
type jrGeom struct{ w, labelW float64 }

// The laptop's drawing, and the phone's (300 units, drawn at about 1.07 on a
// 375 px screen so that 11-unit labels stay at 11 px or more; web/lab.css shows
// it on a narrow screen), whose narrower label column still fits
// "monolithic W1" and whose track keeps a transfer's bar wide enough to see.
var (
	jrWide   = jrGeom{jrW, jrLabelW}
	jrNarrow = jrGeom{300, 104}
)

// renderJourney draws a scene.Journey, for a laptop and for a phone.
func renderJourney(sc scene.Scene) app.UI {
	wide, sub := journeyPic(sc, jrWide)
	narrow, _ := journeyPic(sc, jrNarrow)
	return sysFigureFor(sc, "scene-journey", sub, wide, &narrow, journeyLegend())
}

// journeyPic draws j at the geometry g; sub is the figure's subtitle.
func journeyPic(sc scene.Scene, g jrGeom) (sysPic, string) {
	j := sc.Journey
	marks := newMarkSet(sc.Marks)
	lo, hi := jrSpan(j)
	track := g.w - g.labelW - 10
	var body []app.UI
	y := 4.0
	zlo, zhi := lo, hi
	if z := j.Zoom; z != nil && z.End > z.Start {
		zlo, zhi = math.Max(z.Start, lo), math.Min(z.End, hi)
		if zhi <= zlo {
			zlo, zhi = z.Start, z.End
		}
		var ctx []app.UI
		ctx, y = jrContext(g, j, lo, hi, zlo, zhi, y, track)
		body = append(body, svgEl("g").Class("jr-context").Body(ctx...))
	}
	if j.Zoom == nil {
		y += 26 // room for the callouts above the first lane
	}
	var zoom []app.UI
	zoom, y = jrZoom(g, j, zlo, zhi, y, track, marks)
	body = append(body, svgEl("g").Class("jr-zoom").Body(zoom...), marks.layer(g.w))
	sub := formatNumber(lo) + "–" + formatNumber(hi) + " " + j.Unit
	if j.Zoom != nil {
		sub += " · zoom " + formatNumber(zlo) + "–" + formatNumber(zhi) + " " + j.Unit
	}
	return sysPic{g.w, y + 4, body}, sub
}

// jrContext is the thin whole-interval view with the window outlined and
// joined to the zoomed view below.
func jrContext(g jrGeom, j *scene.Journey, lo, hi, zlo, zhi, y, track float64) ([]app.UI, float64) {
	x := func(t float64) float64 { return g.labelW + track*(t-lo)/(hi-lo) }
	label := j.ContextLabel
	if label == "" {
		label = "whole run: " + formatNumber(lo) + "–" + formatNumber(hi) + " " + j.Unit
	}
	out := []app.UI{svgText(g.labelW, y+10, "sys-label", fitText(label, track, jrPx))}
	y += 16
	top := y
	for _, l := range jrContextLanes(j) {
		out = append(out, svgRect(g.labelW, y, track, jrCtxH, "jr-track"))
		for _, b := range l.Bars {
			out = append(out, svgRect(x(b.Start), y, math.Max(x(b.End)-x(b.Start), 0.8), jrCtxH, "jr-bar jr-"+safeClass(b.Class)))
		}
		out = append(out, svgText(g.labelW-8, y+10, "jr-ctx-label", fitText(l.Label, g.labelW-10, jrSmall)))
		y += jrCtxH + 3
	}
	wx0, wx1 := x(zlo), math.Max(x(zhi), x(zlo)+3)
	out = append(out, svgRect(wx0-1, top-3, wx1-wx0+2, y-top+3, "jr-window").Attr("rx", "2"))
	if j.Cursor != nil {
		out = append(out, svgEl("line").Class("jr-cursor").Attr("x1", num(x(*j.Cursor))).Attr("x2", num(x(*j.Cursor))).Attr("y1", num(top-3)).Attr("y2", num(y)))
	}
	// The funnel from the window to the zoomed view.
	y2 := y + 26
	out = append(out, svgEl("path").Class("jr-funnel").Attr("d",
		"M"+num(wx0)+" "+num(y)+" L"+num(g.labelW)+" "+num(y2)+" L"+num(g.labelW+track)+" "+num(y2)+" L"+num(wx1)+" "+num(y)+" Z"))
	zl := "zoom: " + formatNumber(zlo) + "–" + formatNumber(zhi) + " " + j.Unit
	if j.Zoom.Label != "" {
		zl = j.Zoom.Label + " · " + zl
	}
	out = append(out, svgText(g.labelW+track/2, y+18, "jr-zoom-label", fitText(zl, track, jrPx)))
	return out, y2 + 30 // room for the callouts above the first lane
}

// jrZoom is the tall view over [zlo, zhi]: lanes, labelled bars, cursor and
// axis.
func jrZoom(g jrGeom, j *scene.Journey, zlo, zhi, y, track float64, marks *markSet) ([]app.UI, float64) {
	x := func(t float64) float64 { return g.labelW + track*(t-zlo)/(zhi-zlo) }
	clip := func(t float64) float64 { return math.Min(math.Max(t, zlo), zhi) }
	var out []app.UI
	top := y
	gap := 6.0
	if len(marks.order) > 0 {
		gap = 26 // room for a callout above each lane
	}
	for _, l := range j.Lanes {
		key := l.Key
		if key == "" {
			key = l.Label
		}
		laneRef := "lane:" + key
		lane := marks.tag(svgEl("g").Class("jr-lane"), laneRef, box{0, y, g.w, jrLaneH})
		parts := []app.UI{
			svgRect(g.labelW, y, track, jrLaneH, "jr-track"),
			svgText(g.labelW-8, y+jrLaneH/2+4, "jr-label", fitText(l.Label, g.labelW-10, jrPx)),
		}
		for i, b := range l.Bars {
			if b.End < zlo || b.Start > zhi {
				continue
			}
			x0, x1 := x(clip(b.Start)), x(clip(b.End))
			w := math.Max(x1-x0, 1.5)
			ref := "span:" + key + ":" + strconv.Itoa(i)
			cls := "jr-bar jr-" + safeClass(b.Class)
			if b.Highlight {
				cls += " hl"
			}
			bar := marks.tag(svgEl("g"), ref, box{x0, y + 3, w, jrLaneH - 6})
			next := g.labelW + track
			if i+1 < len(l.Bars) {
				next = x(clip(l.Bars[i+1].Start))
			}
			tx, room, tcls := x0+4, w-8, "jr-bar-text"
			if need := float64(len([]rune(b.Label)))*charWidth(jrSmall) + 2; need > room && next-x0-w-8 > room {
				tx, room, tcls = x0+w+4, next-x0-w-8, "jr-bar-text outside"
			}
			parts = append(parts, bar.Body(
				svgTitle(b.Label+" ("+b.Class+"): "+formatNumber(b.Start)+"–"+formatNumber(b.End)+" "+j.Unit+", "+formatNumber(b.End-b.Start)+" "+j.Unit),
				svgRect(x0, y+3, w, jrLaneH-6, cls).Attr("rx", "3"),
				app.If(room > 24, func() app.UI {
					return svgText(tx, y+jrLaneH/2+4, tcls, fitText(b.Label, room, jrSmall))
				}),
			))
		}
		out = append(out, lane.Body(parts...))
		y += jrLaneH + gap
	}
	out = append(out, jrAxis(g, zlo, zhi, y, track, j.Unit)...)
	if j.Cursor != nil && *j.Cursor >= zlo && *j.Cursor <= zhi {
		cx := x(*j.Cursor)
		anchor := "jr-cursor-label"
		if cx > g.w-220 {
			anchor += " ti-end"
		}
		out = append(out,
			svgEl("line").Class("jr-cursor").Attr("x1", num(cx)).Attr("x2", num(cx)).Attr("y1", num(top-4)).Attr("y2", num(y+22)),
			svgText(cx+map[bool]float64{true: -4, false: 4}[cx > g.w-220], y+34, anchor, j.CursorLabel),
		)
		y += 16
	}
	return out, y + 24
}

// jrAxis is the zoomed view's time axis with round ticks.
func jrAxis(g jrGeom, lo, hi, y, track float64, unit string) []app.UI {
	ticks := 6.0
	if g.w < 500 { // a phone's drawing: tick labels of five digits stay apart
		ticks = 3
	}
	step := jrTick((hi - lo) / ticks)
	out := []app.UI{svgEl("line").Class("jr-axis").Attr("x1", num(g.labelW)).Attr("x2", num(g.labelW+track)).Attr("y1", num(y)).Attr("y2", num(y))}
	for t := math.Ceil(lo/step) * step; t <= hi+step*1e-9; t += step {
		px := g.labelW + track*(t-lo)/(hi-lo)
		out = append(out,
			svgEl("line").Class("jr-axis").Attr("x1", num(px)).Attr("x2", num(px)).Attr("y1", num(y)).Attr("y2", num(y+4)),
			svgText(px, y+16, "jr-tick", formatNumber(t)),
		)
	}
	return append(out, svgText(g.labelW-8, y+16, "jr-tick ti-end", unit))
}

// jrTick rounds a tick interval to 1, 2 or 5 times a power of ten.
func jrTick(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// journeyLegend says what the bars' classes are.
func journeyLegend() app.UI {
	return app.P().Class("legend").Body(
		app.Span().Class("key jr-key jr-prefill"), app.Text(" prefill "),
		app.Span().Class("key jr-key jr-transfer"), app.Text(" KV in transfer "),
		app.Span().Class("key jr-key jr-decode"), app.Text(" decode "),
		app.Span().Class("key jr-key jr-wait"), app.Text(" waiting"),
	)
}
