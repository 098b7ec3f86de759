package app

import (
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Index is the lesson index page at "/": one card per lesson with its title,
// article part, summary and a link.
type Index struct {
	app.Compo
	live   bool
	update bool
}

func (x *Index) OnNav(ctx app.Context) {
	ctx.Page().SetTitle("Inference Lab")
	ctx.Page().SetDescription("Interactive lessons on LLM serving: KV-cache paging, scheduling, kernels and routing, computed by one Go model.")
}

func (x *Index) OnMount(ctx app.Context) {
	x.live = true
	x.update = ctx.AppUpdateAvailable()
}

// OnAppUpdate shows the "update available" banner (see Player.OnAppUpdate).
func (x *Index) OnAppUpdate(ctx app.Context) { x.update = true }

func (x *Index) Render() app.UI {
	all := lessons.All()
	return app.Div().ID("index").Class("page").DataSet("live", x.live).Body(
		siteHeader(),
		app.Main().ID("main").Class("index-main").Body(
			app.H1().Text("Inference Lab"),
			app.P().Class("lede").Text("Step through how an LLM serving engine manages KV-cache memory, schedules work and routes requests. "+
				"Every figure is computed by the lab's model as you turn the knobs; where the articles state a figure, the lesson shows it beside the model's."),
			app.If(len(all) == 0, func() app.UI { return app.P().Text("No lessons are registered yet.") }),
			app.Ul().Class("lesson-cards").Body(
				app.Range(all).Slice(func(i int) app.UI {
					l := all[i]
					return app.Li().Class("lesson-card").DataSet("lesson", l.Slug).Body(
						app.H2().Body(app.A().Href(Link(LessonPath(l.Slug))).Text(l.Title)),
						app.P().Class("part").Text(l.Part),
						app.P().Class("summary").Text(l.Summary),
						app.A().Class("open").Href(Link(LessonPath(l.Slug))).Aria("label", "Open lesson: "+l.Title).Text("Open lesson →"),
					)
				}),
			),
		),
		siteFooter(),
		updateBanner(x.update),
		keysDialog(),
	)
}
