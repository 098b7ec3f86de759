package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// mark records a performance mark in the browser (temporary profiling aid).
func mark(name string) {
	if app.IsClient {
		app.Window().Get("performance").Call("mark", name)
	}
}
