//go:build !unix && !(js && wasm)

package bench

import "time"

// cpuTime cannot be read on this platform.
func cpuTime() (time.Duration, bool) { return 0, false }
