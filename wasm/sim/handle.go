// Command sim is the simulation worker's WebAssembly
// (GOOS=js GOARCH=wasm go build -o web/sim.wasm ./wasm/sim): the lessons and
// the core, without go-app, so web/sim-worker.js can run simulations off the
// page's thread. It exposes one function, inferlabSimulate(request JSON) →
// Uint8Array (package sim's wire format), and inferlabRequestFor(path,
// query) → the request JSON a page's address asks for (or null); see
// app/sim.
package main

import (
	"bytes"
	"encoding/json"

	"github.com/inferlab/inferlab/app/sim"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

// requestFor is the request (as its JSON bytes) a page's address asks for
// (path and raw query), read as the page will read it, so the worker can
// start it before the page's app has loaded; ok is false when the address
// names no lesson.
//
// An address whose state is the lesson's defaults asks for nothing: the
// page has that script already (the default script, which the app reads as
// it starts), so a prefetch of it would only hold the worker that the
// page's first simulation needs (run B's, in a comparison whose A is the
// defaults) until it is terminated and another started.
func requestFor(path, rawQuery string) (body []byte, ok bool) {
	r, ok := sim.ForAddress(path, rawQuery)
	if !ok {
		return nil, false
	}
	body, err := r.Body()
	if err != nil {
		return nil, false
	}
	if d, ok := sim.ForAddress(path, ""); ok {
		if db, err := d.Body(); err == nil && bytes.Equal(db, body) {
			return nil, false
		}
	}
	return body, true
}

// handle answers one request (sim.Request as JSON) with a reply in the wire
// format. A request that does not parse is a failure reply, never a panic.
func handle(req []byte) []byte {
	var r sim.Request
	if err := json.Unmarshal(req, &r); err != nil {
		return sim.Encode(sim.Reply{Failure: &sim.Failure{Message: "sim: reading the request: " + err.Error()}}, nil)
	}
	return sim.Run(r)
}
