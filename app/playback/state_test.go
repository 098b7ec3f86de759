package playback

import (
	"strings"
	"testing"
	"time"

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
		name      string
		n, from   int
		to, want  int
		moved     bool
		urlTicket bool
	}{
		{"next", 5, 0, 1, 1, true, true},
		{"same step", 5, 2, 2, 2, false, false},
		{"past the end", 5, 3, 9, 4, true, true},
		{"before the start", 5, 2, -3, 0, true, true},
		{"at the end already", 5, 4, 7, 4, false, false},
		{"no script", 0, 0, 3, 0, false, false},
	}
	for _, c := range cases {
		s := shown(c.n)
		s.Step = c.from
		tk, moved := s.Seek(c.to)
		if s.Step != c.want || moved != c.moved || s.Due(tk) != c.urlTicket {
			t.Errorf("%s: Seek(%d) from %d = step %d moved %v due %v; want %d %v %v", c.name, c.to, c.from, s.Step, moved, s.Due(tk), c.want, c.moved, c.urlTicket)
		}
	}
}

// Only the latest address write is due: quick steps write once.
func TestURLWriteLatestWins(t *testing.T) {
	s := shown(10)
	var tickets []Ticket
	for i := 1; i <= 6; i++ {
		tk, _ := s.Seek(i)
		tickets = append(tickets, tk)
	}
	due := 0
	for _, tk := range tickets {
		if s.Due(tk) {
			due++
		}
	}
	if due != 1 || !s.Due(tickets[5]) {
		t.Fatalf("%d of 6 writes due, want only the last", due)
	}
	s.Cancel(URLWrite) // an immediate write supersedes it
	if s.Due(tickets[5]) {
		t.Error("a cancelled write is still due")
	}
}

// The address write is pending from the first quick step until it is done
// or cancelled; a superseded ticket's Done changes nothing.
func TestURLWritePending(t *testing.T) {
	s := shown(10)
	if s.Pending(URLWrite) {
		t.Fatal("pending before any step")
	}
	first, _ := s.Seek(1)
	last, _ := s.Seek(2)
	s.Done(first) // an older timer fires: not the latest, the write still pends
	if !s.Pending(URLWrite) {
		t.Error("a superseded ticket's Done cleared the pending write")
	}
	s.Done(last)
	if s.Pending(URLWrite) {
		t.Error("still pending after the latest write was done")
	}
	s.Seek(3)
	s.Cancel(URLWrite) // written at once (a simulation answered)
	if s.Pending(URLWrite) {
		t.Error("still pending after the write was cancelled")
	}
	if _, moved := s.Seek(3); moved || s.Pending(URLWrite) {
		t.Error("seeking the step shown asked for a write")
	}
}

// Step changes closer than MotionGap jump; the first one after a pause
// animates, and only the latest settle ticket ends the jumping.
func TestMotion(t *testing.T) {
	var s State
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at   time.Duration
		jump bool
	}{
		{0, false},                               // the first step change animates
		{40 * time.Millisecond, true},            // a held key
		{80 * time.Millisecond, true},            // still held
		{80*time.Millisecond + MotionGap, false}, // after a pause: animates again
		{80*time.Millisecond + MotionGap + 400*time.Millisecond, false}, // playback at 4x
	}
	var tickets []Ticket
	for i, st := range steps {
		tk, jump := s.Moved(t0.Add(st.at))
		if jump != st.jump || s.Jump != st.jump {
			t.Errorf("change %d at %v: jump %v (State.Jump %v), want %v", i, st.at, jump, s.Jump, st.jump)
		}
		if jump {
			tickets = append(tickets, tk)
		}
	}
	if s.Jump {
		t.Fatal("jumping after an animated change")
	}
	// Held again: the older settle ticket must not end the newer jumping.
	s.Moved(t0.Add(time.Hour))
	old, _ := s.Moved(t0.Add(time.Hour + 10*time.Millisecond))
	latest, _ := s.Moved(t0.Add(time.Hour + 20*time.Millisecond))
	if s.Settle(old) || !s.Jump {
		t.Error("a superseded settle ticket ended the jumping")
	}
	if !s.Settle(latest) || s.Jump {
		t.Error("the latest settle ticket did not end the jumping")
	}
	if s.Settle(tickets[0]) {
		t.Error("a ticket of an earlier burst settled again")
	}
}

func TestPlayback(t *testing.T) {
	s := shown(4, 2) // step 3 (index 2) asks a question
	tick, _, ok := s.TogglePlay()
	if !ok || !s.Playing {
		t.Fatal("play did not start")
	}
	type want struct {
		res  TickResult
		step int
	}
	var got []want
	for i := 0; i < 4; i++ {
		res, next, _ := s.Tick(tick)
		got = append(got, want{res, s.Step})
		tick = next
	}
	// 0 → 1, then stop before the checkpoint at index 2; later ticks are stale.
	exp := []want{{TickAdvanced, 1}, {TickQuiz, 1}, {TickStale, 1}, {TickStale, 1}}
	for i := range exp {
		if got[i] != exp[i] {
			t.Fatalf("ticks = %v, want %v", got, exp)
		}
	}
	if s.Playing || s.PendingQuiz() != 2 {
		t.Fatalf("playing %v, pending quiz %d", s.Playing, s.PendingQuiz())
	}
	// Play again at the checkpoint: plays past it without an answer.
	tick, _, _ = s.TogglePlay()
	res, tick, _ := s.Tick(tick)
	if res != TickAdvanced || s.Step != 2 {
		t.Fatalf("replay at the checkpoint: %v step %d", res, s.Step)
	}
	res, tick, _ = s.Tick(tick)
	if res != TickAdvanced || s.Step != 3 {
		t.Fatalf("%v step %d", res, s.Step)
	}
	if res, _, _ = s.Tick(tick); res != TickEnded || s.Playing {
		t.Fatalf("at the end: %v playing %v", res, s.Playing)
	}
	// Play at the end restarts from the first step.
	tick, url, _ := s.TogglePlay()
	if s.Step != 0 || !s.Due(url) || !s.Due(tick) {
		t.Fatalf("restart: step %d", s.Step)
	}
	// Pausing makes the pending tick stale.
	s.TogglePlay()
	if res, _, _ := s.Tick(tick); res != TickStale || s.Step != 0 {
		t.Fatalf("tick after pause: %v step %d", res, s.Step)
	}
}

func TestDelay(t *testing.T) {
	for speed, want := range map[string]int64{"": 1600, "1": 1600, "2": 800, "0.5": 3200, "x": 1600, "-1": 1600} {
		s := State{Speed: speed}
		if got := s.Delay().Milliseconds(); got != want {
			t.Errorf("Delay at %q = %d ms, want %d", speed, got, want)
		}
	}
}

func TestQuiz(t *testing.T) {
	s := shown(4, 2)
	s.Step = 1
	if s.PendingQuiz() != 2 {
		t.Fatalf("pending = %d, want 2", s.PendingQuiz())
	}
	if _, ok := s.Answer(2, "  "); ok || s.Hint == "" || s.Step != 1 {
		t.Fatalf("an empty answer revealed the step or gave no hint (%q)", s.Hint)
	}
	url, ok := s.Answer(2, "yes")
	if !ok || s.Step != 2 || s.Hint != "" || !s.Due(url) {
		t.Fatalf("answer: ok %v step %d hint %q", ok, s.Step, s.Hint)
	}
	if r, ok := s.Result(2); !ok || !r.Verdict.Correct || r.Answer != "yes" {
		t.Fatalf("result %+v", r)
	}
	s.Step = 1
	if s.PendingQuiz() != -1 {
		t.Error("an answered question is asked again")
	}
	if _, ok := s.Answer(3, "yes"); ok {
		t.Error("a step without a question took an answer")
	}
	// Skip, and quizzes off (an embed hiding the narration).
	s2 := shown(4, 2)
	s2.Step = 1
	if _, ok := s2.Skip(2); !ok || s2.Step != 2 {
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
	tick, _, _ := s.TogglePlay()
	k, _ := s.Want("k2", StepWish{Keep: true})
	s.Deliver(k, script(5, 2), nil)
	if s.Playing || s.Due(tick) {
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
