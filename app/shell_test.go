package app

import (
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/lessons"
)

// The not-found page prerenders in the site's chrome, names the address,
// and links home and to every lesson.
func TestNotFoundPage(t *testing.T) {
	html := app.HTMLString(&NotFound{path: "/lesson/nope"})
	for _, want := range []string{`id="not-found"`, `class="site-header"`, `No page of the lab lives at /lesson/nope.`, `id="not-found-home"`, `href="/"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the not-found page lacks %s", want)
		}
	}
	for _, l := range lessons.All() {
		if !strings.Contains(html, `href="/lesson/`+l.Slug+`"`) {
			t.Errorf("the not-found page does not link %s", l.Slug)
		}
	}
}
