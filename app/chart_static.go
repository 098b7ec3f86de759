package app

import (
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
)

// The prerendered chart. A first visit shows a chart as markup drawn here,
// on the server, from the same scene.Chart the app hands to ECharts: on a
// Lighthouse mobile run, loading ECharts for a chart in view cost 400–1,100
// ms of blocked main thread (its 715 kB evaluated, then its first render),
// which is what kept /lesson/planner, /lesson/roofline and
// /lesson/measuring at 72–86. ECharts arrives with the app (a knob, a
// touch of the stage), which redraws the chart with tooltips and motion.
//
// The drawing must fit any width with text at its CSS size, so it is HTML
// for the text (tick labels, legend, callouts, placed in percent of the
// plot) over one SVG in a 1000×1000 box stretched to the plot
// (preserveAspectRatio="none") for the lines, bars and bands, whose strokes
// keep their width (vector-effect="non-scaling-stroke"). Points are HTML
// dots, so they stay round. The axes follow ECharts' defaults the options
// ask for: a value axis spans zero and rounds its ends to a tick; a log
// axis spans whole powers of ten.

// plotBox is the plot's scale: data values to percent of its width and
// height.
type plotBox struct {
	x, y axisScale
	bars int // categories, for a bar chart (x is then their index)
}

// axisScale maps values of one axis to 0–100.
type axisScale struct {
	log      bool
	min, max float64 // in log10 units on a log axis
	ticks    []float64
}

func (a axisScale) pct(v float64) float64 {
	if a.log {
		if v <= 0 {
			return math.NaN()
		}
		v = math.Log10(v)
	}
	if a.max == a.min {
		return 50
	}
	return (v - a.min) / (a.max - a.min) * 100
}

// newAxis is the scale of the values vs on a linear or log axis.
func newAxis(vs []float64, logScale bool) axisScale {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) || (logScale && v <= 0) {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > hi {
		lo, hi = 0, 1
		if logScale {
			lo, hi = 1, 10
		}
	}
	if logScale {
		a := axisScale{log: true, min: math.Floor(math.Log10(lo)), max: math.Ceil(math.Log10(hi))}
		if a.max == a.min {
			a.max++
		}
		for p := a.min; p <= a.max; p++ {
			a.ticks = append(a.ticks, math.Pow(10, p))
		}
		return a
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if lo == hi {
		hi = 1
	}
	step := echartsNice((hi - lo) / 5)
	a := axisScale{min: math.Floor(lo/step) * step, max: math.Ceil(hi/step) * step}
	for v := a.min; v <= a.max+step/2; v += step {
		a.ticks = append(a.ticks, math.Round(v/step)*step)
	}
	return a
}

// echartsNice is ECharts' rounding of a value axis' tick interval (its
// numberUtil.nice with round, applied to the span over five splits): 1,
// 2, 3, 5 or 10 times a power of ten.
func echartsNice(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f < 1.5:
		return p
	case f < 2.5:
		return 2 * p
	case f < 4:
		return 3 * p
	case f < 7:
		return 5 * p
	}
	return 10 * p
}

// tickText is an axis tick's label: separators for whole numbers, at most
// three significant digits otherwise.
func tickText(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return comma(int(v))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// svgUnit is a percent of the plot in the SVG's 1000-unit box; y grows
// down there.
func svgX(p float64) string { return strconv.FormatFloat(math.Round(p*10*10)/10, 'f', -1, 64) }
func svgY(p float64) string { return strconv.FormatFloat(math.Round((100-p)*10*10)/10, 'f', -1, 64) }

// staticChart is the markup of c drawn for the prerendered page (see the
// comment at the top of this file), with marks mks.
func staticChart(c *scene.Chart, mks []scene.Mark) string {
	mk := marksOf(mks)
	box := plotBox{}
	var xs, ys []float64
	for _, se := range c.Series {
		xs = append(xs, se.X...)
		ys = append(ys, se.Y...)
	}
	// As in ECharts, the guides do not stretch the axes: a guide outside
	// the data's range is left out, a band is cut at the plot's edge.
	box.y = newAxis(ys, c.YLog)
	if c.Type == scene.Bar {
		if len(c.Series) > 0 {
			box.bars = len(c.Series[0].X)
		}
	} else {
		box.x = newAxis(xs, c.XLog)
	}
	// xPct is a point's x in percent: a category's centre on a bar chart.
	xPct := func(se scene.Series, i int) float64 {
		if box.bars > 0 {
			return (float64(i) + 0.5) / float64(box.bars) * 100
		}
		return box.x.pct(se.X[i])
	}
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<div class="chart-static" aria-hidden="true">`)
	b.WriteString(`<div class="cs-legend">`)
	for i, se := range c.Series {
		b.WriteString(`<span class="cs-key" data-series="` + strconv.Itoa(i) + `"><i style="background:` + colourOf(i) + `"></i>` + esc(se.Name) + `</span>`)
	}
	b.WriteString(`</div>`)
	b.WriteString(`<div class="cs-yname">` + esc(axisName(c.YLabel, c.YUnit)) + `</div>`)

	yw := 1
	for _, t := range box.y.ticks {
		yw = max(yw, len([]rune(tickText(t))))
	}
	b.WriteString(`<div class="cs-body"><div class="cs-yticks" style="width:` + strconv.Itoa(yw+1) + `ch">`)
	for _, t := range box.y.ticks {
		b.WriteString(`<span style="bottom:` + pctText(box.y.pct(t)) + `">` + tickText(t) + `</span>`)
	}
	b.WriteString(`</div><div class="cs-plot">`)

	// The SVG: grid lines, bands, guides, then the series.
	b.WriteString(`<svg class="cs-svg" viewBox="0 0 1000 1000" preserveAspectRatio="none" focusable="false">`)
	for _, t := range box.y.ticks {
		y := svgY(box.y.pct(t))
		b.WriteString(`<line class="cs-grid" x1="0" x2="1000" y1="` + y + `" y2="` + y + `" vector-effect="non-scaling-stroke"/>`)
	}
	guidePct := func(g scene.Guide, v float64) float64 {
		if g.Axis == "y" {
			return box.y.pct(v)
		}
		if box.bars > 0 {
			return (v + 0.5) / float64(box.bars) * 100
		}
		return box.x.pct(v)
	}
	var labels strings.Builder // the HTML over the SVG
	below, beside, xFrac := calloutBelow(c, mk), calloutBeside(c, mk), xSpan(c)
	// The marked points' callouts, on a phone's plot, in px: a guide's
	// label one would cover is left out (the live chart hides it too).
	var chips []pxBox
	for _, se := range c.Series {
		for i := 0; i < min(len(se.X), len(se.Y)); i++ {
			if ref := "point:" + se.Name + ":" + strconv.Itoa(i); mk.has(ref) && typeOf(se, c) != scene.Bar {
				if px, py := xPct(se, i), box.y.pct(se.Y[i]); ok(px) && ok(py) {
					chips = append(chips, staticCallout(px, py, mk.label(ref, ref), below[ref], beside[ref], xFrac(se, i)))
				}
			}
		}
	}
	covered := func(b pxBox) bool {
		for _, c := range chips {
			if min(b.x1, c.x1) > max(b.x0, c.x0) && min(b.y1, c.y1) > max(b.y0, c.y0) {
				return true
			}
		}
		return false
	}
	for _, g := range c.Guides {
		marked := mk.has("guide:" + g.ID)
		cls, lcls := "cs-guide", "cs-glabel"
		if marked {
			cls += " cs-marked"
			lcls += " cs-marked"
		}
		a, z := guidePct(g, g.From), guidePct(g, g.To)
		if !ok(a) || !ok(z) || math.Max(a, z) < 0 || math.Min(a, z) > 100 || (g.From == g.To && (a < 0 || a > 100)) {
			continue
		}
		a, z = math.Max(0, math.Min(100, a)), math.Max(0, math.Min(100, z))
		tw := float64(len([]rune(g.Label)))*boldWidth(12) + 6
		if g.From == g.To {
			if g.Axis == "y" {
				b.WriteString(`<line class="` + cls + `" x1="0" x2="1000" y1="` + svgY(a) + `" y2="` + svgY(a) + `" vector-effect="non-scaling-stroke"/>`)
				if y := staticPlotH * (1 - a/100); !covered(pxBox{staticPlotW - 2 - tw, y - 18, staticPlotW - 2, y - 2}) {
					labels.WriteString(`<span class="` + lcls + ` cs-at-y" style="bottom:` + pctText(a) + `">` + esc(g.Label) + `</span>`)
				}
			} else {
				b.WriteString(`<line class="` + cls + `" y1="0" y2="1000" x1="` + svgX(a) + `" x2="` + svgX(a) + `" vector-effect="non-scaling-stroke"/>`)
				if x := staticPlotW * a / 100; !covered(pxBox{x - tw/2, -16, x + tw/2, 0}) {
					labels.WriteString(`<span class="` + lcls + ` cs-at-x" style="left:` + pctText(a) + `">` + esc(g.Label) + `</span>`)
				}
			}
			continue
		}
		lo, hi := math.Min(a, z), math.Max(a, z)
		if g.Axis == "y" {
			b.WriteString(`<rect class="cs-band` + strings.TrimPrefix(cls, "cs-guide") + `" x="0" width="1000" y="` + svgY(hi) + `" height="` + svgX(hi-lo) + `"/>`)
			if y := staticPlotH * (1 - hi/100); !covered(pxBox{3, y + 2, 3 + tw, y + 18}) {
				labels.WriteString(`<span class="` + lcls + ` cs-band-label" style="left:0;bottom:` + pctText(hi) + `">` + esc(g.Label) + `</span>`)
			}
		} else {
			b.WriteString(`<rect class="cs-band` + strings.TrimPrefix(cls, "cs-guide") + `" y="0" height="1000" x="` + svgX(lo) + `" width="` + svgX(hi-lo) + `"/>`)
			if x := staticPlotW * lo / 100; !covered(pxBox{x + 3, 2, x + 3 + tw, 18}) {
				labels.WriteString(`<span class="` + lcls + ` cs-band-label" style="left:` + pctText(lo) + `;bottom:100%">` + esc(g.Label) + `</span>`)
			}
		}
	}
	barSeries := 0
	for _, se := range c.Series {
		if typeOf(se, c) == scene.Bar {
			barSeries++
		}
	}
	bar := 0
	for si, se := range c.Series {
		colour := colourOf(si)
		n := min(len(se.X), len(se.Y))
		switch typeOf(se, c) {
		case scene.Bar:
			if box.bars == 0 {
				continue
			}
			slot := 100 / float64(box.bars)
			w := slot * 0.7 / float64(max(barSeries, 1))
			base := box.y.pct(math.Max(box.y.min, 0))
			if box.y.log {
				base = 0
			}
			for i := 0; i < n && i < box.bars; i++ {
				top := box.y.pct(se.Y[i])
				if !ok(top) {
					continue
				}
				x := float64(i)*slot + slot*0.15 + float64(bar)*w
				lo, hi := math.Min(base, top), math.Max(base, top)
				b.WriteString(`<rect data-series="` + strconv.Itoa(si) + `" fill="` + colour + `" x="` + svgX(x) + `" width="` + svgX(w) + `" y="` + svgY(hi) + `" height="` + svgX(hi-lo) + `"/>`)
			}
			bar++
		case scene.Scatter:
			// Dots only: drawn in the HTML layer below.
		default:
			var pts []string
			prevY := ""
			for i := 0; i < n; i++ {
				px, py := xPct(se, i), box.y.pct(se.Y[i])
				if !ok(px) || !ok(py) {
					continue
				}
				if se.Step && prevY != "" {
					// ECharts' step "start": the new value holds from the
					// previous x, so the rise is drawn at that x.
					pts = append(pts, pts[len(pts)-1][:strings.IndexByte(pts[len(pts)-1], ',')]+","+svgY(py))
				}
				pts = append(pts, svgX(px)+","+svgY(py))
				prevY = svgY(py)
			}
			width := "2"
			if se.Curve {
				width = "2.5"
			}
			if len(pts) > 0 {
				b.WriteString(`<polyline data-series="` + strconv.Itoa(si) + `" fill="none" stroke="` + colour + `" stroke-width="` + width + `" points="` + strings.Join(pts, " ") + `" vector-effect="non-scaling-stroke"/>`)
			}
		}
	}
	if c.Cursor != nil && ok(*c.Cursor) {
		p := box.x.pct(*c.Cursor)
		if box.bars > 0 {
			p = (*c.Cursor + 0.5) / float64(box.bars) * 100
		}
		if ok(p) && p >= 0 && p <= 100 {
			b.WriteString(`<line class="cs-now" y1="0" y2="1000" x1="` + svgX(p) + `" x2="` + svgX(p) + `" vector-effect="non-scaling-stroke"/>`)
			labels.WriteString(`<span class="cs-now-label" style="left:` + pctText(p) + `">now</span>`)
		}
	}
	b.WriteString(`</svg>`)

	// Points: round dots (ECharts shows a line's symbols up to 40 points),
	// the marked ones larger with their callout, and the points' labels,
	// placed as chartOptionsAt places ECharts'.
	for si, se := range c.Series {
		typ := typeOf(se, c)
		n := min(len(se.X), len(se.Y))
		dots := typ == scene.Scatter || (typ == scene.Line && !se.Curve && !se.Step && n <= 40)
		for i := 0; i < n; i++ {
			ref := "point:" + se.Name + ":" + strconv.Itoa(i)
			marked := mk.has(ref)
			text := ""
			if i < len(se.Labels) {
				text = se.Labels[i]
			}
			if !dots && !marked && text == "" {
				continue
			}
			px, py := xPct(se, i), box.y.pct(se.Y[i])
			if typ == scene.Bar && box.bars > 0 {
				continue
			}
			if !ok(px) || !ok(py) {
				continue
			}
			at := `left:` + pctText(px) + `;bottom:` + pctText(py)
			cls := "cs-dot"
			if typ == scene.Scatter {
				cls += " cs-big"
			}
			if marked {
				cls += " cs-marked"
			}
			labels.WriteString(`<i class="` + cls + `" data-series="` + strconv.Itoa(si) + `" style="` + at + `;background:` + colourOf(si) + `"></i>`)
			switch {
			case marked:
				side := ""
				switch f := xFrac(se, i); {
				case beside[ref] != "":
					side = " cs-" + beside[ref]
				case f < 0.2:
					side = " cs-start"
				case f > 0.8:
					side = " cs-end"
				}
				if below[ref] && beside[ref] == "" && typ != scene.Bar {
					side += " cs-below"
				}
				labels.WriteString(`<span class="cs-callout` + side + `" style="` + at + `">` + esc(mk.label(ref, text)) + `</span>`)
			case text != "":
				cls := "cs-plabel"
				if xFrac(se, i) > 0.8 {
					cls += " cs-left"
				}
				labels.WriteString(`<span class="` + cls + `" style="` + at + `">` + esc(text) + `</span>`)
			}
		}
	}
	b.WriteString(labels.String())
	b.WriteString(`</div><div></div><div class="cs-xticks">`)
	if box.bars > 0 && len(c.Series) > 0 {
		every := max(1, (box.bars+11)/12)
		for i, x := range c.Series[0].X {
			if i%every == 0 {
				b.WriteString(`<span style="left:` + pctText((float64(i)+0.5)/float64(box.bars)*100) + `">` + esc(c.CategoryName(i, x)) + `</span>`)
			}
		}
	} else {
		for _, t := range box.x.ticks {
			b.WriteString(`<span style="left:` + pctText(box.x.pct(t)) + `">` + tickText(t) + `</span>`)
		}
	}
	b.WriteString(`</div></div>`)
	b.WriteString(`<div class="cs-xname">` + esc(axisName(c.XLabel, c.XUnit)) + `</div>`)
	b.WriteString(`</div>`)
	return b.String()
}

// The plot of a prerendered chart on a phone, in px (lab.css: a 190 px
// body less its x ticks, in a 330 px figure less the y ticks): where its
// labels are judged for overlaps.
const (
	staticPlotW = 290.0
	staticPlotH = 170.0
)

// pxBox is a box on the static plot, in px from its top left.
type pxBox struct{ x0, y0, x1, y1 float64 }

// staticCallout is where a marked point's callout lies on the static plot
// (lab.css .cs-callout and its placements): the point at px, py percent.
func staticCallout(px, py float64, text string, below bool, beside string, f float64) pxBox {
	x, y := staticPlotW*px/100, staticPlotH*(1-py/100)
	w, h := float64(len([]rune(text)))*boldWidth(13)+12, 22.0
	switch beside {
	case "left":
		return pxBox{x - 14 - w, y - h/2, x - 14, y + h/2}
	case "right":
		return pxBox{x + 14, y - h/2, x + 14 + w, y + h/2}
	}
	x0 := x - w/2
	switch {
	case f < 0.2:
		x0 = x - 9
	case f > 0.8:
		x0 = x + 9 - w
	}
	if below {
		return pxBox{x0, y + 14, x0 + w, y + 14 + h}
	}
	return pxBox{x0, y - 14 - h, x0 + w, y - 14}
}

// typeOf is a series' type: its own, else the chart's.
func typeOf(se scene.Series, c *scene.Chart) scene.ChartType {
	if se.Type != "" {
		return se.Type
	}
	if c.Type == "" {
		return scene.Line
	}
	return c.Type
}

// colourOf is the i-th series' colour, as ECharts picks it from the
// options' colour list.
func colourOf(i int) string { return chartColours[i%len(chartColours)] }
