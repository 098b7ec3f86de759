package app

import (
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Point labels (a batch size beside its dot, an offered rate) crowd where
// points do. ECharts hides overlapping labels only with its LabelLayout
// feature, which the "common" build the lab serves leaves out, so the
// chart does it itself once ECharts has drawn (its "finished" event):
// every text ECharts drew is ranked, and a point label that overlaps a
// text of its rank or above, kept before it, is hidden, and so is a
// guide's label that overlaps a callout, an axis's text, the legend or an
// earlier guide's label (the guide's line stays). Ranks: a
// marked point's callout first, then the chart's fixed texts (axes,
// legend, guides' labels), then point labels in series order. A point
// label, a callout and a guide's label are known by the line heights
// chartOptionsAt gives them (pointLabelLineHeight, calloutLineHeight,
// guideLabelLineHeight).
//
// This reads zrender's display list (getDisplayList, a text element's
// parent, bounding rect and transform): internals of the ECharts release
// the lab pins (package-lock.json), which e2e TestLabels exercises.

const (
	pointLabelLineHeight = 14
	guideLabelLineHeight = 15
	calloutLineHeight    = 16
)

// labelBox is one drawn text: its element (a zrender Text), its box in the
// chart's px and its rank (higher first).
type labelBox struct {
	el         app.Value
	x0, y0     float64
	x1, y1     float64
	rank       int
	pointLabel bool
	guide      bool
}

// declutter hides the point labels that overlap a text ranked above them
// or kept before them, and shows again those it hid before that now fit.
// It redraws only when that changes a label (a redraw ends in another
// "finished" event, which then finds nothing to change).
func (c *chartView) declutter() {
	if c.inst == nil || !c.inst.Truthy() {
		return
	}
	zr := c.inst.Call("getZr")
	mine := func(el app.Value) bool {
		for _, h := range c.hidden {
			if h.Equal(el) {
				return true
			}
		}
		return false
	}
	// Every text drawn, and those this hid (ECharts' own hidden ones,
	// such as labels shown on hover only, stay out).
	list := zr.Get("storage").Call("getDisplayList", true, true)
	seen := map[int]bool{}
	var boxes []labelBox
	for i, n := 0, list.Length(); i < n; i++ {
		span := list.Index(i)
		if span.Get("type").String() != "tspan" {
			continue
		}
		text := span.Get("parent")
		if !text.Truthy() || text.Get("type").String() != "text" {
			continue
		}
		id := text.Get("id").Int()
		if seen[id] || (text.Get("ignore").Truthy() && !mine(text)) || span.Get("ignore").Truthy() {
			continue
		}
		seen[id] = true
		b, ok := textBox(text)
		if !ok {
			continue
		}
		switch lh := text.Get("style").Get("lineHeight"); {
		case lh.Type() == app.TypeNumber && lh.Int() == calloutLineHeight:
			b.rank = 3
		case lh.Type() == app.TypeNumber && lh.Int() == pointLabelLineHeight:
			b.rank, b.pointLabel = 1, true
		case lh.Type() == app.TypeNumber && lh.Int() == guideLabelLineHeight:
			b.rank, b.guide = 2, true
		default:
			b.rank = 2
		}
		boxes = append(boxes, b)
	}
	// Higher ranks first; within rank 2 the fixed texts before the
	// guides' labels; then the drawing order.
	var kept []labelBox
	var hide []app.Value
	for _, pass := range []struct {
		rank  int
		guide bool
	}{{3, false}, {2, false}, {2, true}, {1, false}} {
		for _, b := range boxes {
			if b.rank != pass.rank || b.guide != pass.guide {
				continue
			}
			if (b.pointLabel || b.guide) && overlapsAny(b, kept) {
				hide = append(hide, b.el)
				continue
			}
			kept = append(kept, b)
		}
	}
	// Set each flag (ECharts resets a label's on its own updates) and
	// redraw only when one changed.
	changed := false
	set := func(el app.Value, ignore bool) {
		if el.Get("ignore").Truthy() != ignore {
			el.Set("ignore", ignore)
			changed = true
		}
	}
	for _, el := range c.hidden {
		set(el, false)
	}
	for _, el := range hide {
		set(el, true)
	}
	c.hidden = hide
	if changed {
		zr.Call("refresh")
	}
}

// textBox is a zrender text's box in the chart: its bounding rect moved by
// its transform, at least as tall as its font (zrender measures a line's
// height with a CJK glyph, narrow where the browser has no CJK font).
func textBox(text app.Value) (labelBox, bool) {
	r := text.Call("getBoundingRect")
	x, y, w, h := r.Get("x").Float(), r.Get("y").Float(), r.Get("width").Float(), r.Get("height").Float()
	if w <= 0 || h <= 0 {
		return labelBox{}, false
	}
	if px := fontPx(text.Get("style")); h < 1.15*px {
		y -= (1.15*px - h) / 2
		h = 1.15 * px
	}
	if t := text.Get("transform"); t.Truthy() && t.Length() == 6 {
		a, b, cc, d, e, f := t.Index(0).Float(), t.Index(1).Float(), t.Index(2).Float(), t.Index(3).Float(), t.Index(4).Float(), t.Index(5).Float()
		xs := []float64{a*x + cc*y + e, a*(x+w) + cc*y + e, a*x + cc*(y+h) + e, a*(x+w) + cc*(y+h) + e}
		ys := []float64{b*x + d*y + f, b*(x+w) + d*y + f, b*x + d*(y+h) + f, b*(x+w) + d*(y+h) + f}
		return labelBox{el: text, x0: minOf(xs), y0: minOf(ys), x1: maxOf(xs), y1: maxOf(ys)}, true
	}
	return labelBox{el: text, x0: x, y0: y, x1: x + w, y1: y + h}, true
}

// fontPx is a text style's font size in px (its fontSize, else the size in
// its font shorthand, else ECharts' 12).
func fontPx(style app.Value) float64 {
	if fs := style.Get("fontSize"); fs.Type() == app.TypeNumber {
		return fs.Float()
	}
	if f := style.Get("font"); f.Type() == app.TypeString {
		for _, part := range strings.Fields(f.String()) {
			if v, err := strconv.ParseFloat(strings.TrimSuffix(part, "px"), 64); err == nil && strings.HasSuffix(part, "px") {
				return v
			}
		}
	}
	return 12
}

// overlapsAny reports whether b overlaps one of the boxes by more than a
// pixel each way.
func overlapsAny(b labelBox, boxes []labelBox) bool {
	for _, o := range boxes {
		if min(b.x1, o.x1)-max(b.x0, o.x0) > 1 && min(b.y1, o.y1)-max(b.y0, o.y0) > 1 {
			return true
		}
	}
	return false
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs[1:] {
		m = max(m, x)
	}
	return m
}
