package bench

import (
	"os"
	"strings"
)

// LoadAverage is /proc/loadavg's first three fields, or "unknown": the
// machine's load beside a timing, which BENCHMARKS.md quotes with it.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
