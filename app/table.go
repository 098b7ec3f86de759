package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderTable draws a small text table (e.g. "article claim vs this model").
// Row i carries data-ref "row:i", outlined (class marked) when the step's
// narration names it (scene.Mark).
func renderTable(sc scene.Scene) app.UI {
	return app.Figure().Class("scene", "scene-table").DataSet("kind", string(scene.KindTable)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(app.Span().Class("scene-title").Text(sc.Title)),
		markedTable(sc.Table.Columns, sc.Table.Rows, marksOf(sc.Marks)),
	)
}

// textTable is a scrollable table with a header row.
func textTable(cols []string, rows [][]string) app.UI { return markedTable(cols, rows, nil) }

// markedTable is textTable with each row's reference (row:i) and marks.
func markedTable(cols []string, rows [][]string, mk marks) app.UI {
	return app.Div().Class("table-wrap").TabIndex(0).Body(
		app.Table().Body(
			app.THead().Body(app.Tr().Body(
				app.Range(cols).Slice(func(i int) app.UI { return app.Th().Scope("col").Text(cols[i]) }),
			)),
			app.TBody().Body(
				app.Range(rows).Slice(func(i int) app.UI {
					r := rows[i]
					ref := "row:" + strconv.Itoa(i)
					tr := app.Tr().DataSet("ref", ref)
					if mk.has(ref) {
						tr = tr.Class("marked").DataSet("mark", mk.label(ref, ""))
					}
					return tr.Body(app.Range(r).Slice(func(j int) app.UI {
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
