package lessons_test

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// betterByName is the direction a metric's key implies where the lab's
// naming is unambiguous: throughput, goodput, utilisation, hit rates, SLO
// attainment and capacity improve upwards; latencies (TTFT, ITL, TPOT,
// end-to-end), waste, fragmentation, preemptions and stalls downwards. NoDirection: the key says
// nothing (a count, a setting, a ratio between two mechanisms).
func betterByName(key string) lessons.Direction {
	for _, w := range []string{"throughput", "goodput", "hit_rate", "utilization", "attainment", "capacity_req_s", "capacity_per_gpu_req_s", "_tok_s"} {
		if strings.Contains(key, w) {
			return lessons.HigherIsBetter
		}
	}
	if strings.Contains(key, "gain") {
		return lessons.NoDirection // an improvement: its own direction, whatever it improves
	}
	for _, w := range []string{"ttft", "itl", "tpot", "e2e", "waste", "frag", "preemptions", "stall"} {
		if strings.Contains(key, w) {
			return lessons.LowerIsBetter
		}
	}
	return lessons.NoDirection
}

// A comparison of two settings names the better side by each metric's
// Better: a metric whose key names a throughput or a latency must declare
// the way it improves, and the right way. (A lesson whose figures are all
// addresses or counts may declare none: the log says which.)
func TestMetricDirections(t *testing.T) {
	for _, l := range lessons.All() {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			s, _, err := l.Run(nil)
			if err != nil {
				t.Fatal(err)
			}
			directed := 0
			for _, m := range s.Metrics {
				if m.Better != lessons.NoDirection {
					directed++
				}
				if want := betterByName(m.Key); want != lessons.NoDirection && m.Better != want {
					t.Errorf("%s (%s): better = %q, want %q", m.Key, m.Label, m.Better, want)
				}
			}
			if directed == 0 && len(s.Metrics) > 0 {
				t.Log("no metric declares a direction: a comparison of two settings gives no verdict")
			}
		})
	}
}
