// Package app holds the lab's go-app components: the lesson index, the lesson
// player and the renderers of each scene kind. It compiles natively (the
// server prerenders every page) and to WebAssembly (the browser runs it), so
// it never imports syscall/js or net/http: browser calls go through go-app's
// app.Window(), app.Value and app.FuncOf, which are no-ops natively.
package app

import (
	"github.com/inferlab/inferlab/lessons"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Paths lists every page path the app routes: the index, then one lesson page
// and one embed page per lesson. Static generation renders exactly these.
func Paths() []string {
	out := []string{"/"}
	for _, l := range lessons.All() {
		out = append(out, LessonPath(l.Slug), EmbedPath(l.Slug))
	}
	return out
}

// Register registers the routes of the lab with go-app. Call it once, before
// app.RunWhenOnBrowser (browser) or before serving (server). Every lesson path
// is registered explicitly so static generation renders it. Any other
// address shows the NotFound page (also routed at NotFoundPath, for a
// server to prerender; it is not in Paths).
//
// Plain static file servers reach a page as /lesson/SLUG/ (the directory's
// index.html that static generation also writes) or /lesson/SLUG.html; the
// pattern routes map those addresses to the same components, so go-app's
// client router does not show its "not found" page there.
func Register() {
	app.Route("/", func() app.Composer { return &Index{} })
	for _, l := range lessons.All() {
		app.Route(LessonPath(l.Slug), func() app.Composer { return &Player{} })
		app.Route(EmbedPath(l.Slug), func() app.Composer { return &Player{Embed: true} })
	}
	app.Route(NotFoundPath, func() app.Composer { return &NotFound{} })
	app.RouteWithRegexp(`^/index\.html$`, func() app.Composer { return &Index{} })
	app.RouteWithRegexp(`^/lesson/[A-Za-z0-9_-]+(/|/index\.html|\.html)$`, func() app.Composer { return &Player{} })
	app.RouteWithRegexp(`^/embed/[A-Za-z0-9_-]+(/|/index\.html|\.html)$`, func() app.Composer { return &Player{Embed: true} })
	// Last: every other address shows the not-found page (go-app v10 draws
	// its own bare page for an unrouted path, ignoring app.NotFound).
	app.RouteWithRegexp(`^/`, func() app.Composer { return &NotFound{} })
}
