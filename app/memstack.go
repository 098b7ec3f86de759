package app

import (
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// markLabels maps each element a scene marks to its callout (possibly
// empty). Renderers give a marked element the class "marked" and its
// data-ref, and draw the callout beside it.
func markLabels(sc scene.Scene) map[string]string {
	out := make(map[string]string, len(sc.Marks))
	for _, m := range sc.Marks {
		out[m.Ref] = m.Label
	}
	return out
}

// markClass is " marked" when ref is marked.
func markClass(marks map[string]string, ref string) string {
	if _, ok := marks[ref]; ok {
		return " marked"
	}
	return ""
}

// callout is the marked element's label, drawn beside it, or nothing.
func callout(marks map[string]string, ref string) app.UI {
	if l := marks[ref]; l != "" {
		return app.Span().Class("mark-label").Text(l)
	}
	return nil
}

// pctOf formats x / total as a CSS percentage.
func pctOf(x, total float64) string {
	if total <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*math.Max(0, x)/total, 'f', 3, 64) + "%"
}

// renderMemoryStack draws one GPU's memory as a stacked bar (parts laid
// end to end, lines for levels such as the utilization cap), one token's KV
// bytes per attention kind as bars on a shared scale, and the requests the
// pool holds as a row of marks. Every part keeps its place in the DOM from
// step to step (a zero part has zero width), so a part that grows or
// shrinks animates its width.
func renderMemoryStack(sc scene.Scene) app.UI {
	ms := sc.Memory
	marks := markLabels(sc)
	var at float64
	return app.Figure().Class("scene", "scene-memory").DataSet("kind", string(scene.KindMemoryStack)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text(formatNumber(ms.Total)+" "+ms.Unit+" in all"),
		),
		app.Div().Class("mem-bar").Role("list").Aria("label", sc.Title).Body(
			app.Range(ms.Parts).Slice(func(i int) app.UI {
				p := ms.Parts[i]
				left := at
				at += p.Size
				ref := "part:" + p.Key
				cls := "mem-part mem-" + safeClass(p.Class) + markClass(marks, ref)
				if p.Highlight {
					cls += " hl"
				}
				return app.Div().Class(cls).Role("listitem").DataSet("ref", ref).
					Style("left", pctOf(left, ms.Total)).Style("width", pctOf(p.Size, ms.Total)).
					Title("%s: %s %s", p.Label, formatNumber(p.Size), ms.Unit).
					Body(app.Span().Class("mem-label").Text(p.Label), callout(marks, ref))
			}),
			app.Range(ms.Lines).Slice(func(i int) app.UI {
				l := ms.Lines[i]
				return app.Div().Class("mem-line").Style("left", pctOf(l.At, ms.Total)).Title(l.Label).
					Body(app.Span().Text(l.Label))
			}),
		),
		app.Div().Class("strip-axis").Aria("hidden", "true").Body(
			app.Span().Text("0"),
			app.Span().Text(formatNumber(ms.Total)+" "+ms.Unit),
		),
		app.If(len(ms.PerToken) > 0, func() app.UI { return renderTokenCosts(ms.PerToken, marks) }),
		app.If(ms.Fit != nil, func() app.UI { return renderRequestFit(ms.Fit, marks) }),
		// The legend lists every part with its size: small parts (the
		// reserve) are too narrow for their label on the bar.
		app.P().Class("legend mem-legend").Body(
			app.Range(ms.Parts).Slice(func(i int) app.UI {
				p := ms.Parts[i]
				if p.Size <= 0 {
					return nil
				}
				return app.Span().Class("mem-key").Body(app.Span().Class("key mem-"+safeClass(p.Class)), app.Text(" "+p.Label))
			}),
		),
	)
}

// renderTokenCosts draws each entry's bytes per token as a bar on one
// scale, with its attention kind and the formula that gives it.
func renderTokenCosts(costs []scene.TokenCost, marks map[string]string) app.UI {
	top := 0.0
	for _, c := range costs {
		top = math.Max(top, c.Bytes)
	}
	return app.Div().Class("tok-costs").Role("list").Aria("label", "KV bytes per token").Body(
		app.Range(costs).Slice(func(i int) app.UI {
			c := costs[i]
			ref := "attn:" + c.Key
			cls := "tok-cost" + markClass(marks, ref)
			if c.Highlight {
				cls += " hl"
			}
			return app.Div().Class(cls).Role("listitem").DataSet("ref", ref).Title("%s (%s): %s B per token, %s", c.Label, c.Kind, comma(int(c.Bytes)), c.Note).Body(
				app.Span().Class("tok-cost-name").Body(app.Strong().Text(c.Kind), app.Text(" "+c.Label)),
				app.Span().Class("tok-cost-track").Body(
					app.Span().Class("tok-cost-bar kind-"+safeClass(strings.ToLower(c.Kind))).Style("width", pctOf(c.Bytes, top)),
				),
				app.Span().Class("tok-cost-value").Text(comma(int(c.Bytes))+" B"),
				callout(marks, ref),
			)
		}),
	)
}

// maxFitMarks is the most request marks drawn; beyond it each mark stands
// for several requests.
const maxFitMarks = 60

// renderRequestFit draws the requests the pool holds as a row of marks,
// the last one in part when the count is fractional.
func renderRequestFit(f *scene.RequestFit, marks map[string]string) app.UI {
	per := 1.0
	for f.Count/per > maxFitMarks {
		per *= 2
	}
	n := f.Count / per
	whole := int(n)
	glyphs := make([]float64, 0, whole+1)
	for i := 0; i < whole; i++ {
		glyphs = append(glyphs, 1)
	}
	if frac := n - float64(whole); frac > 0.005 {
		glyphs = append(glyphs, frac)
	}
	unit := "each mark is one request of " + comma(f.Context) + " tokens"
	if per > 1 {
		unit = "each mark is " + formatNumber(per) + " requests of " + comma(f.Context) + " tokens"
	}
	ref := "fit:requests"
	return app.Div().Class("req-fit"+markClass(marks, ref)).DataSet("ref", ref).Body(
		app.Div().Class("req-fit-label").Text(f.Label),
		app.Div().Class("req-marks").Role("img").Aria("label", formatNumber(f.Count)+" requests fit; "+unit).Body(
			app.Range(glyphs).Slice(func(i int) app.UI {
				return app.Span().Class("req-mark").Aria("hidden", "true").Style("width", strconv.FormatFloat(10*glyphs[i], 'f', 2, 64)+"px")
			}),
		),
		app.Div().Class("req-fit-unit").Text(unit),
		callout(marks, ref),
	)
}
