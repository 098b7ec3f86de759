package sandbox

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// The capacity belongs to the cluster and the kind of workload: doubling
// the run's length (requests) or its rate leaves it where it was, and so
// does drawing the workload from other seeds (1 to 5), within 5%; and
// every answer is a capacity the search closed, not a bound it stopped
// at. Checked where the search closes within its budget: the precise
// search (five seeds, 5%) of independent prompts on one H100, where
// stratified lengths hold its answers to 76.0–77.6 req/s (71.4–78.5,
// 9.9%, when each probe drew its lengths independently). The quick
// search's single seed and the defaults' cluster are not held to it: at
// the defaults the budget stops the search before a probe misses, and
// one seed at 10% spans 6% even on one H100.
func TestSandboxCapacityStable(t *testing.T) {
	if testing.Short() {
		t.Skip("eight precise capacity searches, about 12 s of CPU")
	}
	for _, base := range []map[string]string{
		{"capacity_search": "precise", "workers": "1", "workload": "plain"},
	} {
		changes := []map[string]string{nil, {"requests": "400"}, {"rate": "16"}}
		for seed := 1; seed <= 5; seed++ {
			changes = append(changes, map[string]string{"seed": strconv.Itoa(seed)})
		}
		var got []float64
		for _, ch := range changes {
			set := maps.Clone(base)
			maps.Copy(set, ch)
			v := resolved(t, set)
			w, _ := sandboxGenerated(v)
			r, err := runSandbox(v, w, "")
			lessontest.MustRun(t, err)
			c, err := searchSandboxCapacity(v, r)
			lessontest.MustRun(t, err)
			capacity := c.capacity()
			t.Logf("%v %v: %.2f req/s, %d probes, %d of %d seeds complete", base, ch, capacity, c.cap.Probes(), c.cap.Complete(), len(c.search.Seeds))
			if c.cap.Complete() == 0 || c.cap.AboveRange() || c.cap.BelowRange() {
				t.Errorf("%v %v: the search found no capacity inside its range (%s)", base, ch, kit.CapacityText(c.cap, c.search))
			}
			got = append(got, capacity)
		}
		if lo, hi := slices.Min(got), slices.Max(got); !(hi/lo-1 < 0.05) {
			t.Errorf("%v: the capacity moves %.1f%% (%.2f to %.2f req/s) over requests ×2, rate ×2 and seeds 1–5", base, 100*(hi/lo-1), lo, hi)
		}
	}
}
