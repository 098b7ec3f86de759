package lessons

// Checks is what a lesson registers, from its own
// <file>_checks_test.go, for the package's shared tests beyond the contract
// (TestLessonContract needs nothing registered). The shared tests iterate
// the registry and read this; no shared test names a lesson.
type Checks struct {
	// Narration runs the lesson's typed run on knob values and lists what
	// its narration gets wrong (TestNarratedCountsMatchTheSimulation).
	// Every lesson has one.
	Narration func(v Values) ([]string, error)
	// Mismatches alter one narrated count each of a default run, which
	// narration must then report (TestNarrationChecksCatchMismatches).
	Mismatches []Mismatch
	// Paced: the steps follow the pictures' pacing (TestPicturesPacing).
	Paced bool
	// Systems: every step's main figure is a systems picture (radix tree,
	// cluster, tiers, journey), checked at the defaults and at
	// SystemsSets (TestSystemsPictures).
	Systems     bool
	SystemsSets []map[string]string
	// PromptMetrics maps the metrics that cover a whole prompt to the knob
	// holding its length: their physical floor includes the prompt's
	// FLOPs (TestLatenciesRespectPhysicalFloors).
	PromptMetrics map[string]string
	// Refusals are knob settings Run must refuse with a *ParamError on a
	// given knob, saying something (TestLessonsRefuse).
	Refusals []Refusal
	// SweepGPUsAndModels: every GPU × model choice, with SweepKnobs set
	// too, builds or is refused by Check with a knob error
	// (TestEveryGPUAndModelBuildsOrIsRefused).
	SweepGPUsAndModels bool
	SweepKnobs         map[string]string
	// BatchDefaults: the lesson's batch knobs default to vLLM's on its
	// default GPU (an H100), and step BatchNoteStep (0-based) of a run with
	// BatchNoteKnobs says what vLLM would pick on an L4, and only there
	// (TestLessonsRunVLLMBatchDefaults).
	BatchDefaults  bool
	BatchNoteKnobs map[string]string
	BatchNoteStep  int
	// ServingFits are knob settings walked over every GPU × model: each is
	// refused with a knob error or fits the GPU and the model's positions
	// (TestServingLessonsOnlyRunWhatFits).
	ServingFits []ServingFit
}

// Refusal is a knob setting Run refuses: a *ParamError on key whose text
// contains want ("" for any text).
type Refusal struct {
	Set       map[string]string
	Key, Want string
}

// lessonTests holds each lesson's checks, by slug.
var lessonTests = map[string]Checks{}

// registerChecks registers l's checks; its <file>_checks_test.go calls it
// from init.
func registerChecks(l *Lesson, c Checks) {
	if _, dup := lessonTests[l.Slug]; dup {
		panic("lessons: checks registered twice for " + l.Slug)
	}
	lessonTests[l.Slug] = c
}
