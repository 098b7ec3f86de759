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
// at. Checked with the precise search (five seeds, 5%) on the lesson's
// own cluster and workload (four H100s behind the kv_aware router,
// conversations of four turns; about 20 s of CPU a search) over the
// default seed and seeds 1–5, and on independent prompts served by one
// H100 over requests ×2, rate ×2 and the seeds. On the defaults, requests
// ×2 and rate ×2 are held to the quick search instead, and exactly: a
// probe's stream takes neither knob (probeValues sets both), so only the
// run's share of the budget could move the answer. The quick search's
// single seed is not held to 5%: one seed at 10% spans 6% even on one
// H100, and at the defaults its budget stops it after one probe.
func TestSandboxCapacityStable(t *testing.T) {
	if testing.Short() {
		t.Skip("fourteen precise capacity searches, about two minutes of CPU")
	}
	search := func(set map[string]string) *sandboxCapacity {
		t.Helper()
		v := resolved(t, set)
		w, _ := sandboxGenerated(v)
		r, err := runSandbox(v, w, "")
		lessontest.MustRun(t, err)
		c, err := searchSandboxCapacity(v, r)
		lessontest.MustRun(t, err)
		t.Logf("%v: %s, %d probes", set, kit.CapacityText(c.cap, c.search), c.cap.Probes())
		if set["capacity_search"] == "precise" && (c.cap.Complete() < len(c.search.Seeds) || c.cap.AboveRange() || c.cap.BelowRange() || c.cap.Truncated) {
			t.Errorf("%v: the search found no capacity inside its range and budget (%s)", set, kit.CapacityText(c.cap, c.search))
		}
		return c
	}
	quick := search(map[string]string{"capacity_search": "quick"})
	for _, ch := range []map[string]string{{"requests": "400"}, {"rate": "16"}} {
		maps.Copy(ch, map[string]string{"capacity_search": "quick"})
		if c := search(ch); c.capacity() != quick.capacity() || c.cap.Probes() != quick.cap.Probes() {
			t.Errorf("%v: %s, %s at the defaults", ch, kit.CapacityText(c.cap, c.search), kit.CapacityText(quick.cap, quick.search))
		}
	}
	seeds := []map[string]string{nil}
	for seed := 1; seed <= 5; seed++ {
		seeds = append(seeds, map[string]string{"seed": strconv.Itoa(seed)})
	}
	for _, b := range []struct {
		base    map[string]string
		changes []map[string]string
	}{
		{map[string]string{"capacity_search": "precise"}, seeds},
		{map[string]string{"capacity_search": "precise", "workers": "1", "workload": "plain"}, append([]map[string]string{{"requests": "400"}, {"rate": "16"}}, seeds...)},
	} {
		var got []float64
		for _, ch := range b.changes {
			set := maps.Clone(b.base)
			maps.Copy(set, ch)
			got = append(got, search(set).capacity())
		}
		if lo, hi := slices.Min(got), slices.Max(got); !(hi/lo-1 < 0.05) {
			t.Errorf("%v: the capacity moves %.1f%% (%.2f to %.2f req/s) over %v", b.base, 100*(hi/lo-1), lo, hi, b.changes)
		}
	}
}
