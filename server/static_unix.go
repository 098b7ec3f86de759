//go:build unix

package server

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this id runs (or may: one
// owned by another user answers EPERM).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
