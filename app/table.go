package app

import (
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderTable draws a small text table (e.g. "article claim vs this model").
func renderTable(sc scene.Scene) app.UI {
	return app.Figure().Class("scene", "scene-table").DataSet("kind", string(scene.KindTable)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(app.Span().Class("scene-title").Text(sc.Title)),
		textTable(sc.Table.Columns, sc.Table.Rows),
	)
}

// textTable is a scrollable table with a header row.
func textTable(cols []string, rows [][]string) app.UI {
	return app.Div().Class("table-wrap").TabIndex(0).Body(
		app.Table().Body(
			app.THead().Body(app.Tr().Body(
				app.Range(cols).Slice(func(i int) app.UI { return app.Th().Scope("col").Text(cols[i]) }),
			)),
			app.TBody().Body(
				app.Range(rows).Slice(func(i int) app.UI {
					r := rows[i]
					return app.Tr().Body(app.Range(r).Slice(func(j int) app.UI {
						if j == 0 {
							return app.Th().Scope("row").Text(r[j])
						}
						return app.Td().Text(r[j])
					}))
				}),
			),
		),
	)
}
