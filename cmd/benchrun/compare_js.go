//go:build js

package main

import (
	"fmt"
	"io"

	"github.com/inferlab/inferlab/cmd/internal/bench"
)

// compare needs to start processes, which WebAssembly cannot: the driver
// is the native build.
func compare(_ options, _ []bench.Scenario, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "benchrun: --wasm runs in the native build only")
	return 2
}
