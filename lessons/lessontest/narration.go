package lessontest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// A property test: for random accepted knob sets (seeded), every
// count a lesson narrates (running requests, cached tokens, blocks,
// sequences that fit) equals the simulated state it claims to report.
// Each lesson's Checks.Narration runs its typed run (run<Lesson>) and
// compares the fields its narration prints with the core's state,
// recomputed from that state (the steps, the pools, the index, a fresh pool
// of the size vLLM would allocate) rather than read back from the same
// field. Run fails a lesson without one.
//
// Each checker is a plain function of the typed run, so a test can feed it
// a run whose narrated count was altered and see it complain
// (Checks.Mismatches).
//
// narrationSets is how many random knob sets each lesson is checked with.
var narrationSets, narrationSeed = 8, uint64(17)

// Mismatch is a run of the lesson's defaults v whose checker must
// find nothing as it is and something once alter changes a narrated count.
type Mismatch struct {
	Name  string
	Check func(t *testing.T, v lessons.Values, alter bool) []string
}

// MustRun fails the test on a run's error.
func MustRun(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkNarration runs check on l's defaults and on random knob sets.
func checkNarration(t *testing.T, l *lessons.Lesson, check func(lessons.Values) ([]string, error)) {
	n := narrationSets
	if testing.Short() {
		n = 2
	}
	accepted := 0
	for _, set := range append([]map[string]string{{}}, RandomKnobSets(l, n, narrationSeed)...) {
		v, errs := l.Resolve(set)
		if len(errs) > 0 || (l.Check != nil && l.Check(v) != nil) {
			continue // refused: the contract test's business
		}
		accepted++
		problems, err := check(v)
		if err != nil {
			t.Errorf("%v: accepted by Check, then %v", set, err)
		}
		for _, p := range problems {
			t.Errorf("%v: %s", set, p)
		}
	}
	if accepted == 0 {
		t.Fatal("no knob set was accepted")
	}
}

// Problems collects what a checker found.
type Problems []string

// Addf adds one problem.
func (p *Problems) Addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// Narrates reports whether some step's narration contains s.
func Narrates(s *lessons.Script, sub string) bool {
	return slices.ContainsFunc(s.Steps, func(st lessons.Step) bool { return strings.Contains(st.Narration, sub) })
}

// The checks fail when the narration and the state disagree: each case
// alters one narrated count of a default run and expects its checker to
// say so (the unaltered run passes). Before this test, two real
// mismatches were found this way: roofline and cuda-graphs counted the
// sequences whose KV fits in tokens, not in the paged pool's blocks (435
// and 425 sequences of 1,025 tokens on an H100, where vLLM's pools, sized
// at their token budgets, hold 428 and 419),
// and chunked-prefill without chunking narrated its long prompt "alongside
// the decodes" when its budget had made it wait for them (decodes 16,
// long_prompt 23,488 on an A100-40GB).
func checkMismatches(t *testing.T, l *lessons.Lesson, mismatches []Mismatch) {
	v, errs := l.Resolve(nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, c := range mismatches {
		if p := c.Check(t, v, false); len(p) != 0 {
			t.Errorf("%s: the unaltered run fails: %v", c.Name, p)
		}
		if p := c.Check(t, v, true); len(p) == 0 {
			t.Errorf("%s: not caught", c.Name)
		}
	}
}
