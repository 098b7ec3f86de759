// Command sim is the simulation worker's WebAssembly
// (GOOS=js GOARCH=wasm go build -o web/sim.wasm ./wasm/sim): the lessons and
// the core, without go-app, so web/sim-worker.js can run simulations off the
// page's thread. It exposes one function, inferlabSimulate(request JSON) →
// Uint8Array (package sim's wire format), and inferlabRequestFor(path,
// query) → the request JSON a page's address asks for (or null); see
// app/sim.
package main

import (
	"encoding/json"

	"github.com/inferlab/inferlab/app/sim"
)

// requestFor is the request (as its JSON bytes) a page's address asks for
// (path and raw query), read as the page will read it, so the worker can
// start it before the page's app has loaded; ok is false when the address
// names no lesson.
func requestFor(path, rawQuery string) (body []byte, ok bool) {
	r, ok := sim.ForAddress(path, rawQuery)
	if !ok {
		return nil, false
	}
	body, err := r.Body()
	return body, err == nil
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
