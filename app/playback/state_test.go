package playback

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/app/sim"
	"github.com/inferlab/inferlab/lessons"
)

// script has n steps titled "s1"…; quizzes lists the 0-based steps that
// carry a question (answer "yes").
func script(n int, quizzes ...int) *sim.Script {
	s := &lessons.Script{}
	for i := 0; i < n; i++ {
		s.Steps = append(s.Steps, lessons.Step{Title: "s" + strconvI(i+1), Narration: "narration " + strconvI(i+1)})
	}
	for _, q := range quizzes {
		s.Steps[q].Quiz = &lessons.Quiz{Question: "?", Kind: lessons.QuizChoice, Choices: []string{"yes", "no"}, Answer: "yes"}
	}
	return sim.Local(s)
}

func strconvI(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func shown(n int, quizzes ...int) *State {
	s := &State{QuizzesOn: true}
	s.Show("k", script(n, quizzes...), nil, StepWish{})
	return s
}

func TestSeek(t *testing.T) {
	cases := []struct {
		name     string
		n, from  int
		to, want int
		moved    bool
	}{
		{"next", 5, 0, 1, 1, true},
		{"same step", 5, 2, 2, 2, false},
		{"past the end", 5, 3, 9, 4, true},
		{"before the start", 5, 2, -3, 0, true},
		{"at the end already", 5, 4, 7, 4, false},
		{"no script", 0, 0, 3, 0, false},
	}
	for _, c := range cases {
		s := shown(c.n)
		s.Step = c.from
		moved := s.Seek(c.to)
		if s.Step != c.want || moved != c.moved {
			t.Errorf("%s: Seek(%d) from %d = step %d moved %v; want %d %v", c.name, c.to, c.from, s.Step, moved, c.want, c.moved)
		}
	}
}

// Only the latest ticket of a kind is due: a knob dragged simulates once
// it pauses; a cancel supersedes them all.
func TestTicketLatestWins(t *testing.T) {
	s := shown(10)
	var tickets []Ticket
	for i := 1; i <= 6; i++ {
		tickets = append(tickets, s.Later(KnobSim))
	}
	due := 0
	for _, tk := range tickets {
		if s.Due(tk) {
			due++
		}
	}
	if due != 1 || !s.Due(tickets[5]) {
		t.Fatalf("%d of 6 tickets due, want only the last", due)
	}
	if other := s.Later(KnobURL); !s.Due(other) || !s.Due(tickets[5]) {
		t.Error("a ticket of another kind superseded this one")
	}
	s.Cancel(KnobSim) // a valid value applied at once
	if s.Due(tickets[5]) {
		t.Error("a cancelled ticket is still due")
	}
}

// An action is pending from its first ticket until the latest is done or
// cancelled; a superseded ticket's Done changes nothing.
func TestTicketPending(t *testing.T) {
	s := shown(10)
	if s.Pending(KnobURL) {
		t.Fatal("pending before any ticket")
	}
	first := s.Later(KnobURL)
	last := s.Later(KnobURL)
	s.Done(first) // an older timer fires: not the latest, the write still pends
	if !s.Pending(KnobURL) {
		t.Error("a superseded ticket's Done cleared the pending action")
	}
	s.Done(last)
	if s.Pending(KnobURL) {
		t.Error("still pending after the latest was done")
	}
	s.Later(KnobURL)
	s.Cancel(KnobURL)
	if s.Pending(KnobURL) {
		t.Error("still pending after it was cancelled")
	}
}

func TestQuiz(t *testing.T) {
	s := shown(4, 2)
	s.Step = 1
	if s.PendingQuiz() != 2 {
		t.Fatalf("pending = %d, want 2", s.PendingQuiz())
	}
	if ok := s.Answer(2, "  "); ok || s.Hint == "" || s.Step != 1 {
		t.Fatalf("an empty answer revealed the step or gave no hint (%q)", s.Hint)
	}
	ok := s.Answer(2, "yes")
	if !ok || s.Step != 2 || s.Hint != "" {
		t.Fatalf("answer: ok %v step %d hint %q", ok, s.Step, s.Hint)
	}
	if r, ok := s.Result(2); !ok || !r.Verdict.Correct || r.Answer != "yes" {
		t.Fatalf("result %+v", r)
	}
	s.Step = 1
	if s.PendingQuiz() != -1 {
		t.Error("an answered question is asked again")
	}
	if ok := s.Answer(3, "yes"); ok {
		t.Error("a step without a question took an answer")
	}
	// Skip, and quizzes off (an embed hiding the narration).
	s2 := shown(4, 2)
	s2.Step = 1
	if ok := s2.Skip(2); !ok || s2.Step != 2 {
		t.Fatal("skip did not reveal")
	}
	if r, _ := s2.Result(2); !r.Skipped {
		t.Error("skip not recorded")
	}
	s3 := shown(4, 2)
	s3.QuizzesOn = false
	s3.Step = 1
	if s3.PendingQuiz() != -1 {
		t.Error("quizzes asked while off")
	}
	long := strings.Repeat("y", 500)
	s.Answer(2, long)
	if r, _ := s.Result(2); len(r.Answer) != maxAnswer {
		t.Errorf("answer kept %d bytes, want %d", len(r.Answer), maxAnswer)
	}
}

// Simulations: the latest want wins; an older answer is dropped; the step
// follows the address, or stays (clamped) when a knob changed.
func TestWantDeliver(t *testing.T) {
	s := &State{}
	a, need := s.Want("A", StepWish{Step: 3})
	if !need || !s.Busy() || !s.Stale() {
		t.Fatal("first want must simulate, busy and stale")
	}
	if _, need := s.Want("A", StepWish{Step: 3}); need {
		t.Fatal("the same state asked twice simulates twice")
	}
	b, _ := s.Want("B", StepWish{Keep: true})
	if _, ok := s.Deliver(a, script(5), nil); ok {
		t.Fatal("a superseded simulation was shown")
	}
	if s.Script != nil || !s.Busy() {
		t.Fatal("a stale answer changed the state")
	}
	if _, ok := s.Deliver(b, script(5), nil); !ok || s.Shown() != "B" || s.Stale() || s.Busy() {
		t.Fatalf("latest answer not shown: shown %q stale %v busy %v", s.Shown(), s.Stale(), s.Busy())
	}
	if _, ok := s.Deliver(b, script(2), nil); ok {
		t.Fatal("an answer was delivered twice")
	}

	// A knob change keeps the step, clamped to the new script.
	s.Step = 4
	c, _ := s.Want("C", StepWish{Keep: true})
	s.Deliver(c, script(3), nil)
	if s.Step != 2 {
		t.Errorf("knob change: step %d, want 2 (clamped)", s.Step+1)
	}
	// An address asks for step 9 of 4: clamped, with a notice.
	d, _ := s.Want("D", StepWish{Step: 9})
	notices, _ := s.Deliver(d, script(4), nil)
	if s.Step != 3 || len(notices) != 1 || !strings.Contains(notices[0], "from 1 to 4") {
		t.Errorf("step 9 of 4: step %d notices %v", s.Step+1, notices)
	}
	// find= picks the first step that mentions it.
	e, _ := s.Want("E", StepWish{Find: "narration 03"})
	s.Deliver(e, script(5), nil)
	if s.Step != 2 {
		t.Errorf("find: step %d, want 3", s.Step+1)
	}
	// Back to the state shown: nothing to compute, the running one is dropped.
	f, _ := s.Want("F", StepWish{Keep: true})
	if _, need := s.Want("E", StepWish{Keep: true}); need || s.Busy() || s.Stale() {
		t.Fatal("wanting the state shown simulates or stays busy")
	}
	if _, ok := s.Deliver(f, script(1), nil); ok {
		t.Fatal("a dropped simulation was shown")
	}
	// A failure is shown as the wanted state (not stale).
	g, _ := s.Want("G", StepWish{Keep: true})
	s.Deliver(g, nil, &sim.Failure{Message: "boom"})
	if s.Fail == nil || s.Script != nil || s.Count() != 0 || s.Stale() {
		t.Fatal("failure not shown")
	}
}

// A new script resets playback and the quiz answers, which belonged to the
// old one.
func TestDeliverResetsPlayAndQuizzes(t *testing.T) {
	s := shown(5, 2)
	s.Step = 1
	s.Answer(2, "no")
	s.Playing = true // the player (web/lab.js) plays
	k, _ := s.Want("k2", StepWish{Keep: true})
	s.Deliver(k, script(5, 2), nil)
	if s.Playing {
		t.Error("playback survived a new script")
	}
	if _, ok := s.Result(2); ok {
		t.Error("quiz answers survived a new script")
	}
}

// The prerendered defaults shown while another state computes: stale, at
// the asked step; the learner may step them, and keeps that step when the
// answer comes.
func TestShowStale(t *testing.T) {
	s := &State{}
	k, _ := s.Want("wanted", StepWish{Step: 2})
	s.ShowStale("defaults", script(4))
	if !s.Stale() || s.Step != 1 || s.Count() != 4 {
		t.Fatalf("stale: %v step %d", s.Stale(), s.Step+1)
	}
	s.Seek(3)
	s.Deliver(k, script(6), nil)
	if s.Stale() || s.Step != 3 {
		t.Fatalf("after the answer: stale %v step %d, want step 4 (where the learner went)", s.Stale(), s.Step+1)
	}
	s.ShowStale("other", script(2)) // only before anything was shown
	if s.Shown() != "wanted" {
		t.Error("ShowStale replaced a shown script")
	}
}

// An upload that does not parse leaves the page as it was.
func TestDrop(t *testing.T) {
	s := shown(3)
	k, _ := s.Want("with-trace", StepWish{})
	if !s.Drop(k) || s.Busy() || s.Stale() || s.Shown() != "k" {
		t.Fatalf("drop: busy %v stale %v", s.Busy(), s.Stale())
	}
	if s.Drop(k) {
		t.Error("dropped twice")
	}
}

func TestClampStep(t *testing.T) {
	cases := []struct {
		step, n, want int
		notice        bool
	}{
		{0, 5, 0, false}, {1, 5, 0, false}, {5, 5, 4, false}, {9, 5, 4, true}, {3, 0, 0, false},
	}
	for _, c := range cases {
		got, msg := ClampStep(c.step, c.n)
		if got != c.want || (msg != "") != c.notice {
			t.Errorf("ClampStep(%d,%d) = %d,%q", c.step, c.n, got, msg)
		}
		if c.notice && !strings.Contains(msg, "from 1 to 5") {
			t.Errorf("notice %q lacks the range", msg)
		}
	}
}

func TestFindStep(t *testing.T) {
	s := script(3).Script
	if n, msg := FindStep(s, "NARRATION 02"); n != 2 || msg != "" {
		t.Errorf("FindStep = %d %q", n, msg)
	}
	if n, msg := FindStep(s, "absent"); n != 0 || !strings.Contains(msg, "absent") {
		t.Errorf("FindStep(absent) = %d %q", n, msg)
	}
}

func TestClear(t *testing.T) {
	s := shown(4)
	s.Seek(2)
	k, _ := s.Want("other lesson", StepWish{Step: 1})
	s.Clear()
	if s.Count() != 0 || s.Step != 0 || !s.Stale() || !s.Busy() {
		t.Fatalf("after Clear: %d steps, step %d, stale %v, busy %v", s.Count(), s.Step, s.Stale(), s.Busy())
	}
	if _, ok := s.Deliver(k, script(3), nil); !ok || s.Count() != 3 || s.Stale() {
		t.Fatal("the wanted script is not shown after Clear")
	}
}

// A knob change that changes the number of steps keeps the reader on the
// step that shows the same thing: smart-routing with overlap_weight 0
// routes fewer requests step by step (7 steps instead of 9), and a reader
// on "Round robin vs KV-aware" (step 7 of 9) stays on it (step 5 of 7),
// not on step 7 of 7, the overload.
func TestKnobChangeKeepsTheSameStep(t *testing.T) {
	l := lessons.Get("smart-routing")
	if l == nil {
		t.Fatal("smart-routing is not registered")
	}
	run := func(set map[string]string) *sim.Script {
		sc, _, err := l.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		return sim.Local(sc)
	}
	def, zero := run(nil), run(map[string]string{"overlap_weight": "0"})
	if def.Count() == zero.Count() {
		t.Fatalf("both runs have %d steps: the case no longer tests a change of step count", def.Count())
	}
	at := func(sc *sim.Script, title string) int {
		for i, st := range sc.Steps {
			if st.Title == title {
				return i
			}
		}
		t.Fatalf("no step %q", title)
		return -1
	}
	for _, title := range []string{"Round robin vs KV-aware", "Every policy on the same stream", "Overload: when affinity hot-spots one worker"} {
		s := &State{}
		s.Show("default", def, nil, StepWish{})
		s.Seek(at(def, title))
		tk, _ := s.Want("zero", StepWish{Keep: true})
		s.Deliver(tk, zero, nil)
		if got := zero.Steps[s.Step].Title; got != title {
			t.Errorf("on %q (step %d of %d), overlap_weight=0 lands on step %d of %d, %q", title, at(def, title)+1, def.Count(), s.Step+1, zero.Count(), got)
		}
		// and back
		tk, _ = s.Want("default", StepWish{Keep: true})
		s.Deliver(tk, def, nil)
		if got := def.Steps[s.Step].Title; got != title {
			t.Errorf("back to the defaults from %q: step %d, %q", title, s.Step+1, got)
		}
	}
}
