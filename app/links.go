package app

import (
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Link turns an in-app path ("/", "/lesson/garage?step=2") into an href that
// works when the site is hosted under a sub-path: in the browser go-app
// resolves only /web/… URLs against GOAPP_ROOT_PREFIX, so a plain "/" would
// leave the sub-path (docs/SOURCES.md#go-app).
//
// On the server go-app's resource resolver already adds the prefix to
// absolute hrefs when the page is generated with app.PrefixedLocation, so the
// path is returned unchanged. In the browser go-app resolves only /web/ URLs,
// so the prefix that app.js publishes as GOAPP_ROOT_PREFIX is added here.
// Every in-app href goes through this one helper.
func Link(path string) string {
	if app.IsServer {
		return path
	}
	return strings.TrimSuffix(app.Getenv("GOAPP_ROOT_PREFIX"), "/") + path
}

// LessonPath is the in-app path of a lesson page (without prefix).
func LessonPath(slug string) string { return "/lesson/" + slug }

// EmbedPath is the in-app path of a lesson's embeddable page.
func EmbedPath(slug string) string { return "/embed/" + slug }
