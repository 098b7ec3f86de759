//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// Natively the package only exists for its tests; the program is the wasm.
func main() {
	fmt.Fprintln(os.Stderr, "sim: build with GOOS=js GOARCH=wasm (see web/sim-worker.js)")
	os.Exit(2)
}
