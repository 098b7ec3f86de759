package app

import (
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderCards draws a row of metric cards: label, value with unit, note.
func renderCards(sc scene.Scene) app.UI {
	return app.Figure().Class("scene", "scene-cards").DataSet("kind", string(scene.KindCards)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(app.Span().Class("scene-title").Text(sc.Title)),
		app.Div().Class("cards").Body(
			app.Range(sc.Cards).Slice(func(i int) app.UI {
				c := sc.Cards[i]
				return app.Div().Class("card").Body(
					app.Div().Class("card-label").Text(c.Label),
					app.Div().Class("card-value").Body(
						app.Span().Class("num").Text(formatNumber(c.Value)),
						app.If(c.Unit != "", func() app.UI { return app.Span().Class("unit").Text(" " + c.Unit) }),
					),
					app.If(c.Note != "", func() app.UI { return app.Div().Class("card-note").Text(c.Note) }),
				)
			}),
		),
	)
}
