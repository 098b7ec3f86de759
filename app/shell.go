package app

import (
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The site shell around every page: the header (brand, search, theme
// toggle), the footer, the "update available" banner, the keyboard
// shortcuts dialog, and the page of an address the lab does not know.

// siteHeader, siteFooter and keysDialog return components without fields, so
// a page's re-render (every step change) skips them.
func siteHeader() app.UI { return &headerView{} }
func siteFooter() app.UI { return &footerView{} }
func keysDialog() app.UI { return &keysView{} }

type headerView struct{ app.Compo }
type footerView struct{ app.Compo }
type keysView struct{ app.Compo }

func (*headerView) Render() app.UI {
	return app.Header().Class("site-header").Body(
		app.A().Class("brand").Href(Link("/")).Body(
			app.Span().Class("brand-mark").Aria("hidden", "true").Text("◧"),
			app.Text(" Inference Lab"),
		),
		&searchBox{},
		app.Nav().Class("site-nav").Aria("label", "Site").Body(
			app.A().Href(Link("/")).Text("All lessons"),
			&themeToggle{},
		),
	)
}

func (*footerView) Render() app.UI {
	return app.Footer().Class("site-footer").Body(
		app.P().Text("Inference Lab — lessons for the AI Inference Deep-Dive series. Every number comes from the simulation. Press ? for keyboard shortcuts."),
		// web/lab.js handles it (it starts the app, whose service worker
		// keeps the lab for offline use); no handler here.
		app.P().Class("offline").Body(
			app.Button().ID("btn-offline").Type("button").Class("ghost").Text("Keep for offline use"),
			app.Span().ID("offline-status").Class("offline-status").Aria("live", "polite"),
		),
	)
}

// updateBanner is #update, always present (last in the page, so it never
// shifts the player); it holds #update-banner once the service worker has
// installed a new version of the lab.
func updateBanner(show bool) app.UI {
	return app.Div().ID("update").Class("update").Body(
		app.If(show, func() app.UI {
			return app.Div().ID("update-banner").Class("update-banner").Role("status").Body(
				app.Span().Text("A new version of the lab is ready. "),
				app.Button().ID("btn-reload").Type("button").Class("primary").
					OnClick(func(ctx app.Context, e app.Event) {
						// The reader was using the app: the reloaded page starts it
						// again at once (lab.js reads the mark) rather than waiting
						// for a first touch.
						if ss := app.Window().Get("sessionStorage"); ss.Truthy() {
							ss.Call("setItem", "inferlab-restart", "1")
						}
						ctx.Reload()
					}).Text("Reload to update"),
			)
		}),
	)
}

// keyList is what the shortcuts dialog lists.
var keyList = [][2]string{
	{"← / →", "previous / next step"},
	{"Space", "play / pause"},
	{"Home / End", "first / last step"},
	{"P", "present: the figure full screen (Esc leaves)"},
	{"Enter", "check a question's answer"},
	{"Esc", "skip a question · close search or this dialog"},
	{"/", "search lessons and terms"},
	{"↑ / ↓, Enter", "choose a search result, open it"},
	{"Tab / Shift+Tab", "move between controls"},
	{"?", "show this list"},
}

// keysDialog is dialog#keys-dialog, opened by ? (web/lab.js) or #btn-keys;
// Escape closes it (the browser's modal dialog behaviour) and the focus
// returns to where it was.
func (*keysView) Render() app.UI {
	return app.Dialog().ID("keys-dialog").Class("keys-dialog").Aria("labelledby", "keys-title").Body(
		app.H2().ID("keys-title").Text("Keyboard shortcuts"),
		app.Dl().Class("keys-list").Body(
			app.Range(keyList).Slice(func(i int) app.UI {
				return app.Div().Body(
					app.Dt().Body(app.Span().Class("kbd").Text(keyList[i][0])),
					app.Dd().Text(keyList[i][1]),
				)
			}),
		),
		app.Button().ID("keys-close").Type("button").Class("primary").
			OnClick(func(ctx app.Context, e app.Event) { closeKeysDialog() }).Text("Close"),
	)
}

func openKeysDialog()  { labJS("keys", true) }
func closeKeysDialog() { labJS("keys", false) }

// themeToggle is #btn-theme: it switches between the dark and the light
// theme; web/lab.js applies and remembers the choice (localStorage). Without
// a choice the page is dark, the articles' palette.
type themeToggle struct {
	app.Compo
	theme string // "dark" or "light" as shown; "" before mount
	fn    app.Func
}

func (t *themeToggle) OnMount(ctx app.Context) {
	t.read()
	t.fn = app.FuncOf(func(this app.Value, args []app.Value) any {
		ctx.Dispatch(func(app.Context) { t.read() })
		return nil
	})
	app.Window().Call("addEventListener", "inferlab:theme", t.fn)
}

func (t *themeToggle) OnDismount() {
	if t.fn != nil {
		app.Window().Call("removeEventListener", "inferlab:theme", t.fn)
		t.fn.Release()
		t.fn = nil
	}
}

func (t *themeToggle) read() {
	if h := app.Window().Get("inferlab"); h.Truthy() {
		t.theme = h.Call("theme").String()
	}
}

func (t *themeToggle) Render() app.UI {
	next, label := "light", "Light theme"
	if t.theme == "light" {
		next, label = "dark", "Dark theme"
	}
	return app.Button().ID("btn-theme").Type("button").Class("ghost").
		DataSet("theme", t.theme).
		Aria("label", "Switch to the "+next+" theme").Title("Switch to the "+next+" theme").
		// go-app keeps the first render's handler (it compares code
		// pointers), so the handler reads the state, not render-time locals.
		OnClick(func(ctx app.Context, e app.Event) {
			to := "light"
			if t.theme == "light" {
				to = "dark"
			}
			labJS("setTheme", to)
			t.read()
		}).Body(app.Span().Aria("hidden", "true").Text("◐ "), app.Span().Class("wide-only").Text(label))
}

// NotFoundPath is where the not-found page is routed, so that a server can
// render it once (with status 404) for every address it does not know. In
// the browser the app shows it for any path no other route names (Register):
// a static host's 404.html boots the app, which then shows this page.
const NotFoundPath = "/not-found"

// NotFound is the page of an address the lab does not know: in the site's
// chrome, naming the address, with links to every lesson.
type NotFound struct {
	app.Compo
	path   string
	live   bool
	update bool
}

func (n *NotFound) OnNav(ctx app.Context) {
	n.path = ctx.Page().URL().Path
	ctx.Page().SetTitle("Page not found · Inference Lab")
	ctx.Page().SetDescription("This address is not a page of Inference Lab.")
}

func (n *NotFound) OnMount(ctx app.Context) {
	n.live = true
	n.update = ctx.AppUpdateAvailable()
}

// OnAppUpdate shows the "update available" banner (see Player.OnAppUpdate).
func (n *NotFound) OnAppUpdate(ctx app.Context) { n.update = true }

func (n *NotFound) Render() app.UI {
	all := lessons.All()
	what := "This address is not a page of the lab."
	if n.path != "" && n.path != NotFoundPath {
		what = "No page of the lab lives at " + n.path + "."
	}
	return app.Div().ID("not-found").Class("page").DataSet("live", n.live).Body(
		siteHeader(),
		app.Main().ID("main").Class("index-main not-found").Body(
			app.H1().Text("Page not found"),
			app.P().Class("lede").ID("not-found-what").Text(what),
			app.P().Body(app.A().ID("not-found-home").Class("primary-link").Href(Link("/")).Text("← All lessons")),
			app.H2().Text("Or open a lesson"),
			app.Ul().Class("not-found-list").Body(app.Range(all).Slice(func(i int) app.UI {
				return app.Li().Body(app.A().Href(Link(LessonPath(all[i].Slug))).Text(all[i].Title))
			})),
		),
		siteFooter(),
		updateBanner(n.update),
		keysDialog(),
	)
}
