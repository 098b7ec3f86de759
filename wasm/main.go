// Command wasm is the browser entry point of Inference Lab
// (GOOS=js GOARCH=wasm go build -o web/app.wasm ./wasm). It only registers the
// routes and runs the app; the server code lives in package server, which this
// build never imports (it would double the size of app.wasm).
package main

import (
	"runtime/debug"

	"github.com/inferlab/inferlab/app"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

func main() {
	// A performance mark for the interactive-time measurement (e2e
	// TestInteractiveTime): when Go starts, after app.wasm was compiled.
	if perf := goapp.Window().Get("performance"); perf.Truthy() && perf.Get("mark").Truthy() {
		perf.Call("mark", "inferlab:main")
	}
	// Lesson scripts keep every step's scene in memory (megabytes), and the
	// stop-the-world collector of WebAssembly then runs often during renders;
	// trading memory for fewer collections keeps step changes within a frame.
	debug.SetGCPercent(400)
	app.Register()
	goapp.RunWhenOnBrowser()
}
