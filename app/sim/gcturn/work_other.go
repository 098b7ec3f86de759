//go:build !(js && wasm)

package gcturn

// Work does nothing natively: the collector has threads of its own.
func Work(n int) {}
