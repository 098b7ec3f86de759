package lessons

// lessonChecks is what a lesson registers, from its own
// <file>_checks_test.go, for the package's shared tests beyond the contract
// (TestLessonContract needs nothing registered). The shared tests iterate
// the registry and read this; no shared test names a lesson.
type lessonChecks struct {
	// narration runs the lesson's typed run on knob values and lists what
	// its narration gets wrong (TestNarratedCountsMatchTheSimulation).
	// Every lesson has one.
	narration func(v Values) ([]string, error)
	// mismatches alter one narrated count each of a default run, which
	// narration must then report (TestNarrationChecksCatchMismatches).
	mismatches []narrationMismatch
	// paced: the steps follow the pictures' pacing (TestPicturesPacing).
	paced bool
	// systems: every step's main figure is a systems picture (radix tree,
	// cluster, tiers, journey), checked at the defaults and at
	// systemsSets (TestSystemsPictures).
	systems     bool
	systemsSets []map[string]string
	// promptMetrics maps the metrics that cover a whole prompt to the knob
	// holding its length: their physical floor includes the prompt's
	// FLOPs (TestLatenciesRespectPhysicalFloors).
	promptMetrics map[string]string
	// refusals are knob settings Run must refuse with a *ParamError on a
	// given knob, saying something (TestLessonsRefuse).
	refusals []refusal
	// sweepGPUsAndModels: every GPU × model choice, with sweepKnobs set
	// too, builds or is refused by Check with a knob error
	// (TestEveryGPUAndModelBuildsOrIsRefused).
	sweepGPUsAndModels bool
	sweepKnobs         map[string]string
	// batchDefaults: the lesson's batch knobs default to vLLM's on its
	// default GPU (an H100), and step batchNoteStep (0-based) of a run with
	// batchNoteKnobs says what vLLM would pick on an L4, and only there
	// (TestLessonsRunVLLMBatchDefaults).
	batchDefaults  bool
	batchNoteKnobs map[string]string
	batchNoteStep  int
	// servingFits are knob settings walked over every GPU × model: each is
	// refused with a knob error or fits the GPU and the model's positions
	// (TestServingLessonsOnlyRunWhatFits).
	servingFits []servingFit
}

// refusal is a knob setting Run refuses: a *ParamError on key whose text
// contains want ("" for any text).
type refusal struct {
	set       map[string]string
	key, want string
}

// lessonTests holds each lesson's checks, by slug.
var lessonTests = map[string]lessonChecks{}

// registerChecks registers l's checks; its <file>_checks_test.go calls it
// from init.
func registerChecks(l *Lesson, c lessonChecks) {
	if _, dup := lessonTests[l.Slug]; dup {
		panic("lessons: checks registered twice for " + l.Slug)
	}
	lessonTests[l.Slug] = c
}
