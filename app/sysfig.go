package app

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Shared drawing helpers of the systems pictures (radix tree, cluster,
// tiers, journey): SVG elements, text fitting, and the marks the narration
// names. Every drawn element a mark may name carries its ref in data-ref;
// a marked element also gets class "marked" and data-mark (the callout's
// text), and a ring and a callout are drawn over it in the figure's last
// layer. The figures scale with their viewBox, so a phone shrinks them
// instead of scrolling sideways.

const svgNS = "http://www.w3.org/2000/svg"

// svgEl is an SVG element (go-app needs the namespace on each one).
func svgEl(tag string) app.HTMLElem { return app.Elem(tag).XMLNS(svgNS) }

// num formats a coordinate.
func num(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// svgText is a text element at (x, y) with a class.
func svgText(x, y float64, cls, text string) app.HTMLElem {
	return svgEl("text").Attr("x", num(x)).Attr("y", num(y)).Class(cls).Text(text)
}

// svgRect is a rectangle with a class.
func svgRect(x, y, w, h float64, cls string) app.HTMLElem {
	return svgEl("rect").Attr("x", num(x)).Attr("y", num(y)).Attr("width", num(max(w, 0))).Attr("height", num(max(h, 0))).Class(cls)
}

// svgTitle is an element's tooltip.
func svgTitle(text string) app.UI { return svgEl("title").Text(text) }

// charWidth estimates the width of one character of the figures' sans-serif
// font at size px (the mean advance of mixed lower-case text and digits).
func charWidth(px float64) float64 { return 0.6 * px }

// boldWidth is charWidth for bold text.
func boldWidth(px float64) float64 { return 0.66 * px }

// fitText cuts s to at most width units at font size px, ending in "…".
func fitText(s string, width, px float64) string {
	n := int(width / charWidth(px))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// wrapText breaks s into at most lines lines of width units at font size
// px, the last one cut with "…" when the text does not fit.
func wrapText(s string, width, px float64, lines int) []string {
	per := max(1, int(width/charWidth(px)))
	var out []string
	line := ""
	words := strings.Fields(s)
	for i, w := range words {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= per:
			line += " " + w
		default:
			out = append(out, line)
			line = w
		}
		if len(out) == lines {
			last := out[lines-1]
			if i < len(words) {
				last += " " + strings.Join(words[i:], " ")
			}
			out[lines-1] = fitText(last, width, px)
			if !strings.HasSuffix(out[lines-1], "…") {
				out[lines-1] = fitText(last+" …", width, px)
			}
			return out
		}
	}
	if line != "" {
		out = append(out, fitText(line, width, px))
	}
	return out
}

// box is an element's place in a figure, for the ring and callout of a mark.
type box struct{ x, y, w, h float64 }

// markSet is a scene's marks by ref, and where the drawn elements they name
// lie.
type markSet struct {
	label map[string]string
	at    map[string]box
	place map[string]string // where a callout goes when not above: "right" (labels of rows) or "below"
	order []string          // refs in the scene's order
}

func newMarkSet(marks []scene.Mark) *markSet {
	m := &markSet{label: map[string]string{}, at: map[string]box{}, place: map[string]string{}}
	for _, mk := range marks {
		if _, dup := m.label[mk.Ref]; !dup {
			m.order = append(m.order, mk.Ref)
		}
		m.label[mk.Ref] = mk.Label
	}
	return m
}

// note records where the element named ref lies (the first place wins).
func (m *markSet) note(ref string, b box) {
	if _, seen := m.at[ref]; !seen {
		m.at[ref] = b
	}
}

// apply gives el its ref, and flags it when marked.
func (m *markSet) apply(el app.HTMLElem, ref string) app.HTMLElem {
	el = el.DataSet("ref", ref)
	if l, ok := m.label[ref]; ok {
		el = el.Class("marked").DataSet("mark", l)
	}
	return el
}

// tag is note and apply.
func (m *markSet) tag(el app.HTMLElem, ref string, b box) app.HTMLElem {
	m.note(ref, b)
	return m.apply(el, ref)
}

// layer draws a ring round each marked element and its callout above it (or
// below, near the top edge), inside a figure of width w. The callouts are
// keyed by ref so a mark that stays in place does not restart its fade.
func (m *markSet) layer(w float64) app.UI {
	var out []app.UI
	for _, ref := range m.order {
		b, ok := m.at[ref]
		if !ok {
			continue
		}
		label, place := m.label[ref], m.place[ref]
		ref := ref
		out = append(out, &keyedSVG{Key: "mark:" + ref, Build: func() app.UI { return sysCallout(ref, label, b, w, place) }})
	}
	return svgEl("g").Class("sys-marks").Aria("hidden", "true").Body(out...)
}

// sysCallout is one mark's ring and label.
func sysCallout(ref, label string, b box, w float64, place string) app.UI {
	const pad, px, h = 4.0, 12.0, 18.0
	x0, x1 := max(b.x-pad, 1), min(b.x+b.w+pad, w-1) // inside the figure, where the SVG is not clipped
	ring := svgRect(x0, b.y-pad, x1-x0, b.h+2*pad, "sys-mark-ring").Attr("rx", "6")
	if label == "" {
		return svgEl("g").Class("sys-mark").DataSet("for", ref).Body(ring)
	}
	tw := min(float64(utf8.RuneCountInString(label))*boldWidth(px)+12, w)
	x := min(max(b.x-pad, 0), w-tw)
	y := b.y - pad - h - 2
	if place == "right" && b.x+b.w+pad+6+tw > w {
		place = "below" // no room beside it: the layout left room under it (calloutRight)
	}
	switch place {
	case "right":
		x, y = b.x+b.w+pad+6, b.y+b.h/2-h/2
	case "below":
		x, y = min(max(b.x+b.w/2-tw/2, 0), w-tw), b.y+b.h+pad+4
	}
	if y < 0 {
		y = b.y + b.h + pad + 2
	}
	return svgEl("g").Class("sys-mark").DataSet("for", ref).Body(
		ring,
		svgRect(x, y, tw, h, "sys-mark-tag").Attr("rx", "4"),
		svgText(x+6, y+13, "sys-mark-text", fitText(label, (tw-8)*charWidth(px)/boldWidth(px), px)),
	)
}

// calloutRight reports whether the callout of a mark labelled label fits
// beside an element ending at x in a drawing w units wide; where it does
// not, sysCallout puts it under the element, and the layout leaves room.
func calloutRight(label string, x, w float64) bool {
	const pad, px = 4.0, 12.0
	tw := float64(utf8.RuneCountInString(label))*boldWidth(px) + 12
	return x+pad+6+tw <= w
}

// keyedSVG is a piece of a figure with an identity: go-app reuses its DOM
// only for the same Key, so an element keeps its node (and its CSS
// transitions run) across steps while one that is new mounts fresh (and its
// entry animation runs). Build is a func, so it re-renders on every update.
type keyedSVG struct {
	app.Compo
	Key   string
	Build func() app.UI
}

func (k *keyedSVG) CompoID() string { return k.Key }

func (k *keyedSVG) Render() app.UI {
	if k.Build == nil {
		return svgEl("g")
	}
	return k.Build()
}

// sysPic is one drawing of a systems picture: its viewBox size and body.
type sysPic struct {
	w, h float64
	body []app.UI
}

// sysFigureFor wraps a systems picture: the figure, its caption, the SVG
// (scaled by its viewBox), what comes under it and, optionally, a second
// drawing laid out for a phone's width (about 320 units): web/lab.css shows
// it instead of the wide one on a narrow screen, so the picture re-lays itself out rather than
// shrinking its text or panning. A picture without one keeps its drawn
// size on a phone and pans sideways in .sys-scroll, which says so.
func sysFigureFor(sc scene.Scene, cls, sub string, wide sysPic, narrow *sysPic, below ...app.UI) app.UI {
	svg := func(p sysPic, variant string) app.UI {
		return svgEl("svg").Class("sys-svg", variant).Attr("viewBox", "0 0 "+num(p.w)+" "+num(p.h)).
			Attr("preserveAspectRatio", "xMidYMin meet").Attr("role", "img").Aria("label", sc.Title).
			Style("max-height", num(1.2*p.h)+"px").Style("--sys-w", num(p.w)).Style("--sys-h", num(p.h)).Body(p.body...)
	}
	pics := []app.UI{svg(wide, "sys-wide")}
	frame := app.Div().Class("sys-scroll")
	if narrow != nil {
		pics = append(pics, svg(*narrow, "sys-narrow"))
		// Where the frame is narrower than the wide drawing at the least
		// scale it is drawn at (sysMinScale), the narrow one shows
		// instead, so no picture pans beside the narration (lab.css).
		frame = frame.Class("sys-min-" + strconv.Itoa(sysMinClass(wide.w)))
	}
	body := []app.UI{
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.If(sub != "", func() app.UI { return app.Span().Class("scene-sub").Text(sub) }),
		),
		// Focusable, so that a keyboard can pan it where it scrolls.
		frame.TabIndex(0).Role("group").Aria("label", sc.Title+" (picture)").Body(pics...),
		app.P().Class("sys-pan-hint").Aria("hidden", "true").Text("⇆ Swipe the picture sideways for the rest of it"),
	}
	body = append(body, below...)
	return app.Figure().Class("scene", "sys-fig", cls).DataSet("kind", string(sc.Kind)).DataSet("scene-id", sc.ID).Body(body...)
}

// sysMinScale is the least scale a wide drawing is shown at where the
// narrow one is not (lab.css: 0.92 from 701 px wide, labels ≥ 10 px).
const sysMinScale = 0.92

// sysMinClass is the frame width, in hundreds of px, from which a wide
// drawing of w units fits at sysMinScale: lab.css shows the narrow drawing
// in a frame narrower than that (classes sys-min-4 to sys-min-16).
func sysMinClass(w float64) int {
	return min(16, max(4, int(math.Ceil(sysMinScale*w/100))))
}

// paletteClass is the owner-colour class of palette entry g (grey for -1).
func paletteClass(g int) string {
	if g < 0 {
		return "cx"
	}
	return "c" + strconv.Itoa(g%ownerColours)
}
