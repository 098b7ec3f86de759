//go:build js && wasm

package bench

import (
	"syscall/js"
	"time"
)

// cpuTime is the CPU time of the Node.js process this WebAssembly runs
// in (process.cpuUsage: user and system, all its threads, V8's compilers
// and collector included); ok is false outside Node.js. On a machine
// shared with other work it varies far less than wall-clock time.
func cpuTime() (time.Duration, bool) {
	p := js.Global().Get("process")
	if p.Type() != js.TypeObject || p.Get("cpuUsage").Type() != js.TypeFunction {
		return 0, false
	}
	u := p.Call("cpuUsage")
	return time.Duration((u.Get("user").Float() + u.Get("system").Float()) * float64(time.Microsecond)), true
}
