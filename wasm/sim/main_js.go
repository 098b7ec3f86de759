//go:build js && wasm

package main

import (
	"runtime/debug"
	"syscall/js"

	"github.com/inferlab/inferlab/app/sim"
)

func main() {
	debug.SetGCPercent(sim.GCPercent)
	simulate := js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) == 0 || args[0].Type() != js.TypeString {
			return js.Null()
		}
		out := handle([]byte(args[0].String()))
		arr := js.Global().Get("Uint8Array").New(len(out))
		js.CopyBytesToJS(arr, out)
		return arr
	})
	js.Global().Set("inferlabSimulate", simulate)
	requestFor := js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) < 2 {
			return js.Null()
		}
		body, ok := requestFor(args[0].String(), args[1].String())
		if !ok {
			return js.Null()
		}
		return string(body)
	})
	js.Global().Set("inferlabRequestFor", requestFor)
	select {} // serve calls until the worker is terminated
}
