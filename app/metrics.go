package app

import (
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// metricsPanel draws #metrics: each final figure with its label and unit;
// the element carrying data-metric holds exactly the value's text (the same
// text `inferlab run` prints). A component of its own: a step change leaves
// its Metrics field equal (go-app compares it; a few dozen figures), so
// go-app skips it.
type metricsPanel struct {
	app.Compo
	Metrics []lessons.Metric
}

func (m *metricsPanel) Render() app.UI {
	ms := m.Metrics
	return app.Section().Class("metrics-panel panel").Aria("labelledby", "metrics-title").Body(
		app.H2().ID("metrics-title").Text("Final figures"),
		app.Dl().ID("metrics").Body(
			app.Range(ms).Slice(func(i int) app.UI {
				x := ms[i]
				return app.Div().Class("metric").Body(
					app.Dt().Text(x.Label),
					app.Dd().Body(
						app.Span().Class("num").DataSet("metric", x.Key).Text(metricText(x.Value)),
						app.If(x.Unit != "", func() app.UI { return app.Span().Class("unit").Text(" " + x.Unit) }),
					),
				)
			}),
		),
	)
}

// claimsPanel draws the "article claim vs this model" table of the script.
type claimsPanel struct {
	app.Compo
	Claims []lessons.Claim
}

func (c *claimsPanel) Render() app.UI {
	cs := c.Claims
	rows := make([][]string, len(cs))
	for i, x := range cs {
		rows[i] = []string{x.What, x.Article, x.Model, x.Why}
	}
	return app.Section().ID("claims").Class("claims panel").Aria("labelledby", "claims-title").Body(
		app.H2().ID("claims-title").Text("Article claim vs this model"),
		app.If(len(cs) == 0, func() app.UI { return app.P().Text("This lesson restates no figure from the articles.") }),
		app.If(len(cs) > 0, func() app.UI {
			return textTable([]string{"Claim", "Article", "This model", "Why they differ"}, rows)
		}),
	)
}
