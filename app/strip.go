package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderStrip draws a contiguous memory pool as one bar: each reservation a
// segment positioned by its start and length, its used part filled, its
// label written inside; the free gaps show the strip's hatched background.
func renderStrip(sc scene.Scene) app.UI {
	st := sc.Strip
	total := st.Total
	if total <= 0 {
		total = 1
	}
	reserved, used := 0, 0
	for _, s := range st.Segments {
		reserved += s.Len
		used += s.Used
	}
	pct := func(x int) string {
		return strconv.FormatFloat(100*float64(x)/float64(total), 'f', 3, 64) + "%"
	}
	return app.Figure().Class("scene", "scene-strip").DataSet("kind", string(scene.KindMemoryStrip)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text(comma(len(st.Segments))+" reservations · "+comma(reserved)+" of "+
				comma(st.Total)+" slots reserved · "+comma(used)+" hold tokens"),
		),
		app.Div().Class("memory-strip").Aria("label", sc.Title).Role("list").Body(
			app.Range(st.Segments).Slice(func(i int) app.UI {
				s := st.Segments[i]
				fill := 0.0
				if s.Len > 0 {
					fill = 100 * float64(s.Used) / float64(s.Len)
				}
				cls := "segment c" + strconv.Itoa(abs(s.Owner)%ownerColours)
				if s.Highlight {
					cls += " hl"
				}
				return app.Div().Class(cls).Role("listitem").
					DataSet("owner", s.Owner).
					Style("left", pct(s.Start)).Style("width", pct(s.Len)).
					Title("%s: slots %d–%d reserved (%d), %d hold tokens", s.Label, s.Start, s.Start+s.Len-1, s.Len, s.Used).
					Body(
						app.Span().Class("seg-used").Style("width", strconv.FormatFloat(fill, 'f', 1, 64)+"%").Aria("hidden", "true"),
						app.Span().Class("seg-label").Text(s.Label),
					)
			}),
		),
		app.Div().Class("strip-axis").Aria("hidden", "true").Body(
			app.Span().Text("0"),
			app.Span().Text(comma(st.Total)+" slots"),
		),
	)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
