package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderBlockTables draws each request's block table: one row per request,
// one cell per logical block holding the physical block it maps to. The
// focused entry is outlined; entries shared with other tables are marked
// with a pattern and the word "shared" in their title.
func renderBlockTables(sc scene.Scene) app.UI {
	bt := sc.Tables
	return app.Figure().Class("scene", "scene-block-tables").DataSet("kind", string(scene.KindBlockTables)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text(comma(len(bt.Rows))+" tables · "+strconv.Itoa(bt.BlockSize)+" tokens per block · logical block → physical block"),
		),
		app.Div().Class("block-tables").Body(
			app.Range(bt.Rows).Slice(func(i int) app.UI {
				r := bt.Rows[i]
				return app.Div().Class("bt-row").DataSet("owner", r.Owner).Body(
					app.Div().Class("bt-head").Body(
						app.Span().Class("bt-label").Text(r.Label),
						app.Span().Class("bt-tokens").Text(comma(r.Tokens)+" tokens"),
					),
					app.Ol().Class("bt-cells").Aria("label", r.Label+" block table").Body(
						app.Range(r.Blocks).Slice(func(j int) app.UI {
							shared := j < len(r.Shared) && r.Shared[j]
							cls := "bt-cell c" + strconv.Itoa(abs(r.Owner)%ownerColours)
							title := "logical " + strconv.Itoa(j) + " → physical " + strconv.Itoa(r.Blocks[j])
							if shared {
								cls += " shared"
								title += " (shared)"
							}
							if j == r.Focus {
								cls += " focus"
								title += " (this token's block)"
							}
							return app.Li().Class(cls).Title("%s", title).Body(
								app.Span().Class("bt-logical").Text(strconv.Itoa(j)),
								app.Span().Class("bt-physical").Text(strconv.Itoa(r.Blocks[j])),
							)
						}),
					),
				)
			}),
		),
	)
}
