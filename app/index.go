package app

import (
	"strconv"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Index is the lesson index page at "/": the lessons in the series' order
// (lessons.All), grouped by what they are about, each card with a small
// picture of its main figure, its number in the suggested order, title,
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

// indexGroup is a group with its lessons, numbered in the suggested order.
type indexGroup struct {
	lessons.Group
	Lessons []*lessons.Lesson
	First   int // the number of its first lesson
}

// groupLessons places every lesson of all, in all's order, into its group
// (lessons.Groups, in their order); empty groups are dropped and lessons
// whose group is not listed form a last one.
func groupLessons(all []*lessons.Lesson) []indexGroup {
	where := map[string]int{}
	groups := make([]indexGroup, len(lessons.Groups)+1)
	for i, g := range lessons.Groups {
		where[g.ID] = i
		groups[i].Group = g
	}
	more := len(lessons.Groups)
	groups[more].Group = lessons.Group{ID: "more", Title: "More lessons"}
	for _, l := range all {
		i, ok := where[l.Group]
		if !ok {
			i = more
		}
		groups[i].Lessons = append(groups[i].Lessons, l)
	}
	var out []indexGroup
	n := 1
	for _, g := range groups {
		if len(g.Lessons) == 0 {
			continue
		}
		g.First = n
		n += len(g.Lessons)
		out = append(out, g)
	}
	return out
}

func (x *Index) Render() app.UI {
	all := lessons.All()
	groups := groupLessons(all)
	return app.Div().ID("index").Class("page").DataSet("live", x.live).Body(
		siteHeader(),
		app.Main().ID("main").Class("index-main").Body(
			app.H1().Text("Inference Lab"),
			app.P().Class("lede").Text("Step through how an LLM serving engine manages KV-cache memory, schedules work and routes requests. "+
				"Every figure is computed by the lab's model as you turn the knobs; where the articles state a figure, the lesson shows it beside the model's."),
			app.If(len(all) == 0, func() app.UI { return app.P().Text("No lessons are registered yet.") }),
			app.If(len(all) > 0, func() app.UI {
				return app.P().Class("path-note").Text("A suggested path: the lessons are numbered in the series' order, each building on the ones before; any one also stands alone.")
			}),
			app.Range(groups).Slice(func(i int) app.UI { return renderGroup(groups[i]) }),
		),
		siteFooter(),
		updateBanner(x.update),
		keysDialog(),
	)
}

// renderGroup is one section of the index: its title, what it is about,
// and its lessons' cards, numbered from g.First.
func renderGroup(g indexGroup) app.UI {
	head := "group-" + g.ID
	return app.Section().Class("lesson-group").DataSet("group", g.ID).Aria("labelledby", head).Body(
		app.H2().ID(head).Class("group-title").Text(g.Title),
		app.If(g.About != "", func() app.UI { return app.P().Class("group-about").Text(g.About) }),
		app.Ol().Class("lesson-cards").Start(g.First).Body(
			app.Range(g.Lessons).Slice(func(i int) app.UI {
				l := g.Lessons[i]
				n := strconv.Itoa(g.First + i)
				href := Link(LessonPath(l.Slug))
				return app.Li().Class("lesson-card").DataSet("lesson", l.Slug).DataSet("order", n).Body(
					// Named, not aria-hidden: go-app's prerender writes an
					// attribute whose value is "true" bare (aria-hidden=""),
					// which hides nothing, so a hidden link had no name.
					app.A().Class("thumb-link").Href(href).TabIndex(-1).Aria("label", l.Title).Body(lessonThumb(l)),
					app.Div().Class("card-text").Body(
						app.H3().Body(
							app.Span().Class("order").Aria("hidden", "true").Text(n),
							app.A().Href(href).Text(l.Title),
						),
						app.P().Class("part").Text(l.Part),
						app.P().Class("summary").Text(l.Summary),
						app.A().Class("open").Href(href).Aria("label", "Open lesson "+n+": "+l.Title).Text("Open lesson →"),
					),
				)
			}),
		),
	)
}

// lessonThumb is a small drawing (120×72) of the kind of the lesson's main
// figure (Lesson.Thumb): a picture to recognise the lesson by, not data.
func lessonThumb(l *lessons.Lesson) app.UI {
	k := l.Thumb
	if k == "" {
		k = scene.KindCards
	}
	return svgEl("svg").Class("thumb").DataSet("kind", string(k)).Attr("viewBox", "0 0 120 72").
		Attr("width", "120").Attr("height", "72").Attr("focusable", "false").Body(thumbShapes(k)...)
}

// thumbShapes draws a kind of figure in miniature, in the figures' colours
// (lab.css .th-*).
func thumbShapes(k scene.Kind) []app.UI {
	r := func(x, y, w, h float64, cls string) app.UI { return svgRect(x, y, w, h, cls) }
	line := func(x1, y1, x2, y2 float64, cls string) app.UI {
		return svgEl("line").Attr("x1", num(x1)).Attr("y1", num(y1)).Attr("x2", num(x2)).Attr("y2", num(y2)).Class(cls)
	}
	var out []app.UI
	switch k {
	case scene.KindPools, scene.KindBlockGrid:
		for i := 0; i < 40; i++ {
			x, y := float64(8+(i%8)*7), float64(10+(i/8)*11)
			cls := []string{"th-a", "th-b", "th-c", "th-free"}[(i*7/5)%4]
			out = append(out, r(x, y, 6, 10, cls))
		}
		for i := 0; i < 4; i++ {
			out = append(out, r(68, float64(10+i*14), 44, 12, "th-free"), r(68, float64(10+i*14), float64(10+i*7), 12, []string{"th-a", "th-b", "th-c", "th-a"}[i]))
		}
	case scene.KindBlockTables:
		for row := 0; row < 3; row++ {
			y := float64(10 + row*20)
			for j := 0; j < 4; j++ {
				out = append(out, r(float64(8+j*12), y, 10, 12, []string{"th-a", "th-b", "th-c"}[row]))
			}
			out = append(out, line(58, y+6, 78, float64(14+row*18), "th-edge"))
		}
		for i := 0; i < 15; i++ {
			out = append(out, r(float64(80+(i%5)*7), float64(10+(i/5)*18), 6, 14, []string{"th-a", "th-free", "th-b", "th-c", "th-free"}[i%5]))
		}
	case scene.KindRadixTree:
		out = append(out,
			line(20, 36, 50, 18, "th-edge"), line(20, 36, 50, 54, "th-edge"), line(74, 18, 90, 10, "th-edge"), line(74, 18, 90, 30, "th-edge"),
			svgEl("circle").Attr("cx", "16").Attr("cy", "36").Attr("r", "7").Class("th-node"),
			r(48, 12, 26, 12, "th-lock"), r(48, 48, 26, 12, "th-node"), r(88, 4, 26, 12, "th-cache"), r(88, 24, 26, 12, "th-cache"))
	case scene.KindCluster:
		out = append(out, r(44, 4, 32, 14, "th-node"))
		for i := 0; i < 4; i++ {
			x := float64(6 + i*28)
			out = append(out, line(60, 18, x+12, 40, "th-edge"), r(x, 40, 24, 26, "th-node"), r(x+3, 58, float64(6+i*4), 5, []string{"th-a", "th-b", "th-c", "th-a"}[i]))
		}
	case scene.KindTiers:
		for i, w := range []float64{30, 52, 76, 104} {
			y := float64(6 + i*16)
			out = append(out, r(8, y, w, 12, "th-free"), r(8, y, w*0.4, 12, []string{"th-a", "th-b", "th-c", "th-a"}[i]))
		}
	case scene.KindTimeline, scene.KindJourney:
		for lane := 0; lane < 3; lane++ {
			y := float64(12 + lane*18)
			x := 8.0
			for j := 0; j < 6; j++ {
				w := float64(6 + (j*5+lane*3)%14)
				out = append(out, r(x, y, w, 12, []string{"th-a", "th-b", "th-c"}[(j+lane)%3]))
				x += w + 2
			}
		}
	case scene.KindChart:
		out = append(out, line(12, 62, 112, 62, "th-axis"), line(12, 62, 12, 6, "th-axis"),
			svgEl("polyline").Attr("points", "14,58 40,50 62,34 80,20 110,14").Class("th-curve"))
		for _, p := range [][2]float64{{40, 50}, {62, 34}, {80, 20}} {
			out = append(out, svgEl("circle").Attr("cx", num(p[0])).Attr("cy", num(p[1])).Attr("r", "3").Class("th-point"))
		}
	case scene.KindSlots:
		for lane := 0; lane < 3; lane++ {
			y := float64(8 + lane*22)
			out = append(out, r(8, y, 104, 16, "th-free"))
			for j := 0; j < 4; j++ {
				cls := "th-a"
				if lane == 0 && j%2 == 1 {
					cls = "th-pad"
				}
				out = append(out, r(float64(8+j*26), y+2, float64(14+lane*4), 12, cls))
			}
		}
	case scene.KindTokens:
		for i := 0; i < 8; i++ {
			cls := []string{"th-a", "th-a", "th-a", "th-b", "th-cache", "th-cache", "th-free", "th-free"}[i]
			out = append(out, r(float64(6+i*14), 28, 12, 16, cls))
		}
		out = append(out, line(60, 24, 72, 48, "th-strike"))
	case scene.KindMemoryStack:
		out = append(out, r(8, 24, 40, 24, "th-b"), r(48, 24, 10, 24, "th-pad"), r(58, 24, 46, 24, "th-c"), r(104, 24, 8, 24, "th-free"))
	default:
		for i := 0; i < 3; i++ {
			out = append(out, r(float64(6+i*38), 20, 32, 32, "th-node"), r(float64(12+i*38), 34, 20, 8, "th-a"))
		}
	}
	return out
}
