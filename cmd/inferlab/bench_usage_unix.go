//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// childUsage is a finished child's CPU time (user + system, s) and peak
// resident memory (MB).
func childUsage(ps *os.ProcessState) (cpuS, peakMB float64, ok bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, false
	}
	peak := float64(ru.Maxrss) * 1024 // kilobytes on Linux
	if runtime.GOOS == "darwin" {
		peak = float64(ru.Maxrss) // bytes on macOS
	}
	return ps.UserTime().Seconds() + ps.SystemTime().Seconds(), peak / 1e6, true
}
