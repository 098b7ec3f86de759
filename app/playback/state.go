// Package playback is the lesson player's state as a plain type: the script
// shown and the one wanted (a simulation may be running for it), the step
// shown, the quiz checkpoints, and the delayed actions pending (a
// simulation, a knob settling). Stepping itself (keys, buttons, playback,
// motion, the step in the address) is web/lab.js's player, the same before
// the app runs and after: it tells the app which step to show, whether it
// plays and at what speed, and the app renders that (State.Step, Playing,
// Speed). It has no UI and no timers: the go-app component (app.Player)
// renders a State, runs the timers it asks for, and hands each timer's
// Ticket back, and only the latest ticket of each kind is still due.
// Everything here is tested natively.
package playback

import (
	"fmt"
	"strings"
	"time"

	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/lessons"
)

// Kind names a kind of delayed action. A newer ticket of a kind supersedes
// every older one of the same kind.
type Kind int

// The kinds of delayed action.
const (
	Simulation Kind = iota // a simulation for the wanted state
	KnobSim                // a knob moved: simulate once it pauses (debounce)
	KnobURL                // a knob moved: write the address once it settles
	numKinds
)

// Ticket identifies one delayed action; State.Due says whether it is still
// the latest of its kind.
type Ticket struct {
	Kind Kind
	gen  int
}

// QuizResult is the learner's answer to one checkpoint.
type QuizResult struct {
	Answer  string
	Verdict lessons.Verdict
	Skipped bool
}

// StepWish says which step to show when the wanted script arrives.
type StepWish struct {
	Step int    // 1-based step from the address; 0 when none
	Find string // find= text (search links), used when Step is 0
	Keep bool   // keep the current step, clamped (a knob changed)
}

// Speeds are the playback speeds offered.
var Speeds = []string{"0.5", "1", "2", "4"}

// BaseDelay is the time a step stays on screen while playing at 1×
// (web/lab.js's player reads it from #steps-data).
const BaseDelay = 1600 * time.Millisecond

// State is one lesson page's player state. The zero value shows nothing and
// wants nothing.
type State struct {
	// Script is the script shown (nil while none arrived, or when the
	// build failed: then Fail says why).
	Script *sim.Script
	Fail   *sim.Failure
	// Step is the 0-based step shown; Playing and Speed are the player's
	// (web/lab.js), shown in the toolbar.
	Step    int
	Playing bool
	Speed   string // one of Speeds; "" means 1×
	// QuizzesOn is whether checkpoints are asked (not when an embed hides
	// the player or the narration).
	QuizzesOn bool
	// Hint is the quiz form's own message (an empty answer).
	Hint string

	shown, wanted string // keys of the state shown and the state wanted
	hasShown      bool
	pending       bool // a simulation for wanted is running
	wish          StepWish
	moved         bool     // the learner changed step since the wish was made
	placed        []string // the notices of placing the shown script's step by the wish (show)

	quizzes map[int]QuizResult

	gens   [numKinds]int
	issued [numKinds]bool // a ticket of the kind was issued and neither done nor cancelled
}

// Due reports whether t is still the latest ticket of its kind.
func (s *State) Due(t Ticket) bool {
	return t.gen != 0 && t.Kind >= 0 && t.Kind < numKinds && t.gen == s.gens[t.Kind]
}

// Later issues a ticket of kind k, superseding the pending one.
func (s *State) Later(k Kind) Ticket {
	s.gens[k]++
	s.issued[k] = true
	return Ticket{Kind: k, gen: s.gens[k]}
}

// Cancel supersedes any pending ticket of kind k.
func (s *State) Cancel(k Kind) {
	s.gens[k]++
	s.issued[k] = false
}

// Done marks ticket t carried out, when it is still the latest of its kind:
// nothing of the kind is pending any more (see Pending).
func (s *State) Done(t Ticket) {
	if s.Due(t) {
		s.issued[t.Kind] = false
	}
}

// Pending reports whether an action of kind k was asked for and is neither
// done nor cancelled.
func (s *State) Pending(k Kind) bool { return k >= 0 && k < numKinds && s.issued[k] }

// Count is the number of steps of the script shown.
func (s *State) Count() int { return s.Script.Count() }

// Seek shows step i (0-based, clamped to the script). It reports whether
// the step changed.
func (s *State) Seek(i int) bool {
	n := s.Count()
	if n == 0 {
		return false
	}
	i = max(0, min(i, n-1))
	if i == s.Step {
		return false
	}
	s.Step = i
	s.moved, s.placed = true, nil
	return true
}

// Stop stops playback (the player sees it in the toolbar drawn).
func (s *State) Stop() { s.Playing = false }

// PendingQuiz is the 0-based index of the step whose question is asked now
// (the next step's, while unanswered), or -1.
func (s *State) PendingQuiz() int {
	i := s.Step + 1
	if !s.QuizzesOn || i >= s.Count() || s.Script.Steps[i].Quiz == nil {
		return -1
	}
	if _, done := s.quizzes[i]; done {
		return -1
	}
	return i
}

// Result is the learner's answer to step i's question, if any.
func (s *State) Result(i int) (QuizResult, bool) {
	r, ok := s.quizzes[i]
	return r, ok
}

// maxAnswer bounds an answer's length.
const maxAnswer = 200

// Answer judges an answer to the question of step i and reveals the step.
// An empty answer only sets Hint.
func (s *State) Answer(i int, answer string) bool {
	if i < 0 || i >= s.Count() || s.Script.Steps[i].Quiz == nil {
		return false
	}
	if len(answer) > maxAnswer {
		answer = answer[:maxAnswer]
	}
	if strings.TrimSpace(answer) == "" {
		s.Hint = "Type or pick an answer first, or skip the question."
		return false
	}
	s.record(i, QuizResult{Answer: answer, Verdict: s.Script.Steps[i].Quiz.Check(answer)})
	s.Seek(i)
	return true
}

// Skip reveals step i without an answer.
func (s *State) Skip(i int) bool {
	if i < 0 || i >= s.Count() {
		return false
	}
	s.record(i, QuizResult{Skipped: true})
	s.Seek(i)
	return true
}

func (s *State) record(i int, r QuizResult) {
	if s.quizzes == nil {
		s.quizzes = map[int]QuizResult{}
	}
	s.quizzes[i] = r
	s.Hint = ""
}

// Shown and Wanted are the keys of the state shown and of the state wanted
// (a lesson, its knobs, and the trace it runs on).
func (s *State) Shown() string  { return s.shown }
func (s *State) Wanted() string { return s.wanted }

// Busy reports whether a simulation for the wanted state is running.
func (s *State) Busy() bool { return s.pending }

// Stale reports whether what is shown is not the wanted state (its
// simulation has not answered yet): the page must say so on the figure.
func (s *State) Stale() bool { return !s.hasShown || s.shown != s.wanted }

// Want asks for the state key. It reports whether a simulation must start
// for it (with its ticket): not when key is what is shown or already
// running. A newer want supersedes a running simulation.
func (s *State) Want(key string, wish StepWish) (Ticket, bool) {
	if key == s.wanted && (s.pending || (s.hasShown && s.shown == key)) {
		return Ticket{}, false
	}
	s.wanted, s.wish, s.moved, s.placed = key, wish, false, nil
	if s.hasShown && s.shown == key {
		// Back to what is shown: nothing to compute, and a running
		// simulation for another state is dropped.
		s.pending = false
		s.Cancel(Simulation)
		return Ticket{}, false
	}
	s.pending = true
	return s.Later(Simulation), true
}

// Deliver shows the answer to simulation t (a script, or why it failed) if t
// is still the latest; a stale answer is dropped (false). It returns the
// notices of placing the step (a step out of range, a find= without match).
func (s *State) Deliver(t Ticket, sc *sim.Script, f *sim.Failure) ([]string, bool) {
	if t.Kind != Simulation || !s.Due(t) || !s.pending {
		return nil, false
	}
	s.pending = false
	return s.show(s.wanted, sc, f), true
}

// Drop ends simulation t without showing anything (its request was
// refused, e.g. an uploaded trace that does not parse): the state shown
// stays, and becomes the wanted one again.
func (s *State) Drop(t Ticket) bool {
	if t.Kind != Simulation || !s.Due(t) || !s.pending {
		return false
	}
	s.pending = false
	s.wanted = s.shown
	return true
}

// Show shows a script built or found at once (natively, or carried by the
// prerendered page) as the state key, which becomes the wanted state too;
// a running simulation is dropped.
func (s *State) Show(key string, sc *sim.Script, f *sim.Failure, wish StepWish) []string {
	s.wanted, s.wish, s.moved, s.pending = key, wish, false, false
	s.Cancel(Simulation)
	return s.show(key, sc, f)
}

// ShowStale shows a script of another state (key) while the wanted one is
// computed: the prerendered defaults under a link with other knobs. The
// page marks it stale (Stale stays true).
func (s *State) ShowStale(key string, sc *sim.Script) {
	if s.hasShown {
		return
	}
	s.Script, s.Fail, s.shown, s.hasShown, s.placed = sc, nil, key, true, nil
	s.Step = 0
	if s.wish.Step > 0 {
		s.Step, _ = ClampStep(s.wish.Step, s.Count())
	}
}

// Clear forgets the script shown: another lesson is asked for, and its
// figures must not stand in for the new lesson's while it is computed.
func (s *State) Clear() {
	s.Stop()
	s.Script, s.Fail, s.shown, s.hasShown, s.Step = nil, nil, "", false, 0
	s.quizzes, s.Hint = nil, ""
}

// show adopts a script from its start: playback stops and the quiz answers,
// which belong to the old script, are cleared; the step follows the wish,
// unless the learner moved since; a knob change keeps the step that shows
// the same thing (lessons.Script.SameStep).
func (s *State) show(key string, sc *sim.Script, f *sim.Failure) []string {
	old := s.Script
	s.Script, s.Fail, s.shown, s.hasShown, s.placed = sc, f, key, true, nil
	if sc == nil {
		s.Script = nil
	}
	s.Stop()
	s.quizzes, s.Hint = nil, ""
	n := s.Count()
	if n == 0 {
		s.Step = 0
		return nil
	}
	if s.wish.Keep || s.moved {
		// the step that shows what the one shown did (Step.Key)
		var was *lessons.Script
		if old != nil {
			was = old.Script
		}
		s.Step = s.Script.SameStep(was, s.Step)
		return nil
	}
	var notices []string
	step := s.wish.Step
	if step == 0 && s.wish.Find != "" {
		var msg string
		step, msg = FindStep(s.Script.Script, s.wish.Find)
		if msg != "" {
			notices = append(notices, msg)
		}
	}
	idx, msg := ClampStep(step, n)
	if msg != "" {
		notices = append(notices, msg)
	}
	s.Step = idx
	s.placed = notices
	return notices
}

// Placed returns the notices of placing the shown script's step by the
// wish it was shown for (a step out of range, a find= without match), while
// that wish stands and the learner has not moved: a page that reads its
// address again (go-app calls OnNav after the first render) must show them
// again, though nothing is re-simulated or re-placed.
func (s *State) Placed() []string {
	if s.pending || !s.hasShown || s.shown != s.wanted {
		return nil
	}
	return s.placed
}

// ClampStep checks a 1-based step against the number of steps n and returns
// the 0-based index to show, with a notice when the step had to change.
func ClampStep(step, n int) (int, string) {
	if n <= 0 || step == 0 {
		return 0, ""
	}
	if step > n {
		return n - 1, fmt.Sprintf("step = %d is out of range: want a step from 1 to %d; showing step %d.", step, n, n)
	}
	return step - 1, ""
}

// FindStep resolves a find= phrase to the 1-based step of s that first
// mentions it, with a notice when no step does (then 0: the first step).
func FindStep(s *lessons.Script, find string) (int, string) {
	if s == nil || find == "" {
		return 0, ""
	}
	if n := lessons.StepFor(s, find); n > 0 {
		return n, ""
	}
	return 0, fmt.Sprintf("find = %q: no step of this lesson mentions it; showing step 1.", clip(find))
}

func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}
