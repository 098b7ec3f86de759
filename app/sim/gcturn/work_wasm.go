//go:build js && wasm

package gcturn

import "runtime"

// done is the work since the last turn. WebAssembly runs one thread, so a
// plain counter is enough.
var done int

// Work counts n units of work and yields the processor once Period of
// them have been done since the last turn, so that a collection in
// progress can finish.
func Work(n int) {
	done += n
	if done >= Period {
		done = 0
		runtime.Gosched()
	}
}
