//go:build js && wasm

package sim

import (
	"github.com/inferlab/inferlab/app/sim/gcturn"
	"github.com/inferlab/inferlab/core/scheduler"
)

// In WebAssembly the simulations give Go's garbage collector a turn now
// and then (package gcturn says why): every program that runs lessons in
// the browser, or measures them as the browser runs them, imports this
// package (wasm, wasm/sim, cmd/benchrun), so the hook is set here, once,
// before any simulation starts.
func init() { scheduler.Yield = gcturn.Work }
