// Package lessontest holds what every lesson's tests share: Run, the
// checks a lesson hands its typed run to (narration counts against the
// simulated state, pacing, systems pictures, physical floors, refusals,
// GPU × model sweeps, vLLM's batch defaults, what fits a GPU), and the
// helpers those tests use (MetricOf, MustRun, Problems, CheckHeavyCorners).
// It imports testing; only tests import it.
package lessontest

import (
	"strconv"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// Checks is what a lesson's own TestLessonChecks hands to Run: the checks
// that need the lesson's typed run or settings only it knows. The contract
// every lesson is held to needs nothing here (lessons' TestLessonContract
// iterates the registry).
type Checks struct {
	// Narration runs the lesson's typed run on knob values and lists what
	// its narration gets wrong (Run: "narration").
	// Every lesson has one: Run fails without it.
	Narration func(v lessons.Values) ([]string, error)
	// Mismatches alter one narrated count each of a default run, which
	// narration must then report (Run: "mismatches").
	Mismatches []Mismatch
	// Paced: the steps follow the pictures' pacing (Run: "pacing").
	Paced bool
	// Systems: every step's main figure is a systems picture (radix tree,
	// cluster, tiers, journey), checked at the defaults and at
	// SystemsSets (Run: "systems").
	Systems     bool
	SystemsSets []map[string]string
	// PromptMetrics maps the metrics that cover a whole prompt to the knob
	// holding its length: their physical floor includes the prompt's
	// FLOPs (Run: "floors").
	PromptMetrics map[string]string
	// Refusals are knob settings Run must refuse with a *ParamError on a
	// given knob, saying something (Run: "refusals").
	Refusals []Refusal
	// SweepGPUsAndModels: every GPU × model choice, with SweepKnobs set
	// too, builds or is refused by Check with a knob error
	// (Run: "sweep", skipped under -short).
	SweepGPUsAndModels bool
	SweepKnobs         map[string]string
	// BatchDefaults: the lesson's batch knobs default to vLLM's on its
	// default GPU (an H100), and step BatchNoteStep (0-based) of a run with
	// BatchNoteKnobs says what vLLM would pick on an L4, and only there
	// (Run: "batch defaults").
	BatchDefaults  bool
	BatchNoteKnobs map[string]string
	BatchNoteStep  int
	// ServingFits are knob settings walked over every GPU × model: each is
	// refused with a knob error or fits the GPU and the model's positions
	// (Run: "serving fits").
	ServingFits []ServingFit
}

// Refusal is a knob setting Run refuses: a *ParamError on key whose text
// contains want ("" for any text).
type Refusal struct {
	Set       map[string]string
	Key, Want string
}

// Run runs c's checks on l, each a subtest named for what it checks.
// A lesson's checks_test.go calls it from TestLessonChecks:
//
//	func TestLessonChecks(t *testing.T) {
//		lessontest.Run(t, lesson, lessontest.Checks{Narration: …})
//	}
func Run(t *testing.T, l *lessons.Lesson, c Checks) {
	if c.Narration == nil {
		t.Fatalf("%s has no narration check: Checks.Narration runs the lesson's typed run and compares every count its narration states with the simulated state", l.Slug)
	}
	t.Run("narration", func(t *testing.T) { t.Parallel(); checkNarration(t, l, c.Narration) })
	if len(c.Mismatches) > 0 {
		t.Run("mismatches", func(t *testing.T) { checkMismatches(t, l, c.Mismatches) })
	}
	if c.Paced {
		t.Run("pacing", func(t *testing.T) { checkPacing(t, l) })
	}
	if c.Systems {
		t.Run("systems", func(t *testing.T) { checkSystems(t, l, c.SystemsSets) })
	}
	if _, gpu := l.Param("gpu"); gpu {
		if _, model := l.Param("model"); model {
			t.Run("floors", func(t *testing.T) { t.Parallel(); checkFloors(t, l, c.PromptMetrics) })
		}
	}
	if len(c.Refusals) > 0 {
		t.Run("refusals", func(t *testing.T) { checkRefusals(t, l, c.Refusals) })
	}
	if c.SweepGPUsAndModels {
		t.Run("sweep", func(t *testing.T) {
			if testing.Short() {
				t.Skip("builds every GPU × model combination")
			}
			sweepGPUsAndModels(t, l, c.SweepKnobs)
		})
	}
	if c.BatchDefaults {
		t.Run("batch defaults", func(t *testing.T) { checkBatchDefaults(t, l, c) })
	}
	for i, fit := range c.ServingFits {
		t.Run("serving fits "+strconv.Itoa(i+1), func(t *testing.T) { checkServingFits(t, l, fit) })
	}
}
