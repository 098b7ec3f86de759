// Command sim is the simulation worker's WebAssembly
// (GOOS=js GOARCH=wasm go build -o web/sim.wasm ./wasm/sim): the lessons and
// the core, without go-app, so web/sim-worker.js can run simulations off the
// page's thread. It exposes one function, inferlabSimulate(request JSON) →
// Uint8Array (package sim's wire format); see app/sim.
package main

import (
	"encoding/json"

	"github.com/inferlab/inferlab/app/sim"
)

// handle answers one request (sim.Request as JSON) with a reply in the wire
// format. A request that does not parse is a failure reply, never a panic.
func handle(req []byte) []byte {
	var r sim.Request
	if err := json.Unmarshal(req, &r); err != nil {
		return sim.Encode(sim.Reply{Failure: &sim.Failure{Message: "sim: reading the request: " + err.Error()}}, nil)
	}
	return sim.Run(r)
}
