// Command wasm is the browser entry point of Inference Lab
// (GOOS=js GOARCH=wasm go build -o web/app.wasm ./wasm). It only registers the
// routes and runs the app; the server code lives in package server, which this
// build never imports (it would double the size of app.wasm).
package main

import (
	"runtime/debug"

	"github.com/inferlab/inferlab/app"
	"github.com/inferlab/inferlab/app/sim"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson's knobs and checks; its simulation is left out (lessons.Simulation)
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

func main() {
	// A performance mark for the interactive-time measurement (e2e
	// TestInteractiveTime): when Go starts, after app.wasm was compiled.
	if perf := goapp.Window().Get("performance"); perf.Truthy() && perf.Get("mark").Truthy() {
		perf.Call("mark", "inferlab:main")
	}
	debug.SetGCPercent(sim.GCPercent)
	app.Register()
	goapp.RunWhenOnBrowser()
}
