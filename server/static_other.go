//go:build !unix && !wasm

package server

import "os"

// processAlive reports whether a process with this id runs: elsewhere,
// whether the system finds it.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
