package app

import (
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderFormula shows an equation, each symbol with its meaning and the
// value the model plugged in, and the evaluated result.
func renderFormula(sc scene.Scene) app.UI {
	f := sc.Formula
	return app.Figure().Class("scene", "scene-formula").DataSet("kind", string(scene.KindFormula)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(app.Span().Class("scene-title").Text(sc.Title)),
		app.P().Class("expr").Body(app.Code().Text(f.Expr)),
		app.Dl().Class("terms").Body(
			app.Range(f.Terms).Slice(func(i int) app.UI {
				t := f.Terms[i]
				return app.Div().Class("term").Body(
					app.Dt().Body(app.Code().Text(t.Symbol)),
					app.Dd().Body(
						app.Span().Class("term-meaning").Text(t.Meaning),
						app.Span().Class("term-value").Text(t.Value),
					),
				)
			}),
		),
		app.P().Class("result").Body(app.Span().Text("Result: "), app.Strong().Text(f.Result)),
	)
}
