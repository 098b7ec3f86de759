package app

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestEmbedSnippet(t *testing.T) {
	s := EmbedSnippet("https://lab.example/repo/embed/some-lesson?step=4&block_size=16", `Some "A"`, "https://lab.example/repo/web/embed.js")
	for _, want := range []string{
		`<iframe src="https://lab.example/repo/embed/some-lesson?step=4&amp;block_size=16"`,
		`title="Some &#34;A&#34; · Inference Lab"`,
		`width="100%"`, `loading="lazy"`, `sandbox="allow-scripts allow-same-origin`, `style="border:0;width:100%;`,
		`<script src="https://lab.example/repo/web/embed.js" defer></script>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("snippet lacks %s:\n%s", want, s)
		}
	}
}

func TestHitHrefAndVerdictKind(t *testing.T) {
	if got := HitHref(lessons.Hit{Lesson: "some-lesson", Query: "find=blocks+of"}); got != "/lesson/some-lesson?find=blocks+of" {
		t.Errorf("HitHref = %q", got)
	}
	if got := HitHref(lessons.Hit{Lesson: "some-lesson"}); got != "/lesson/some-lesson" {
		t.Errorf("HitHref = %q", got)
	}
	for v, want := range map[lessons.Verdict]string{{Correct: true}: "correct", {Correct: true, Close: true}: "close", {}: "wrong"} {
		if got := verdictKind(v); got != want {
			t.Errorf("verdictKind(%+v) = %q, want %q", v, got, want)
		}
	}
}

// TestPlayerQuizFlow drives the player natively: the next step's question is
// pending, an answer reveals the step and records the verdict, and a page
// that hides the narration asks nothing.
// The player built natively (as the server prerenders it) asks the next
// step's question, not under hide=narration, and find= picks the step
// without being written back.
func TestPlayerQuizFlow(t *testing.T) {
	l, find := quizLesson(t)
	p := &Player{}
	u, _ := url.Parse("/lesson/" + l.Slug + "?step=1")
	p.load(u)
	if p.st.Script == nil || p.st.Stale() || p.st.Busy() {
		t.Fatal("no script built at once")
	}
	qi := -1
	for i, st := range p.st.Script.Steps {
		if st.Quiz != nil && i > 0 {
			qi = i
			break
		}
	}
	if qi < 0 {
		t.Fatalf("%s has no quiz after step 1 in the player", l.Slug)
	}
	p.st.Step = qi - 1
	if got := p.st.PendingQuiz(); got != qi {
		t.Fatalf("pendingQuiz = %d at step %d, want %d", got, p.st.Step+1, qi)
	}
	u, _ = url.Parse("/embed/" + l.Slug + "?step=1&hide=narration")
	p2 := &Player{Embed: true}
	p2.load(u)
	p2.st.Step = qi - 1
	if got := p2.st.PendingQuiz(); got != -1 {
		t.Errorf("hide=narration still asks (%d)", got)
	}
	u, _ = url.Parse("/lesson/" + l.Slug + "?" + url.Values{"find": {find}}.Encode())
	p3 := &Player{}
	p3.load(u)
	if want := lessons.StepFor(p3.st.Script.Script, find); want == 0 || p3.st.Step != want-1 {
		t.Errorf("find=%s shows step %d, want %d", find, p3.st.Step+1, want)
	}
	if strings.Contains(p3.extra, "find") {
		t.Errorf("find= kept in %q", p3.extra)
	}
}

// quizLesson is the first lesson whose defaults ask a question after step 1
// and which explains a glossary term found at its defaults (no knobs), with
// that term's find= text: what the player's quiz and find= need.
func quizLesson(t *testing.T) (*lessons.Lesson, string) {
	t.Helper()
	for _, l := range lessons.All() {
		s, _, err := l.Run(nil)
		if err != nil {
			t.Fatalf("%s: %v", l.Slug, err)
		}
		quiz := false
		for i, st := range s.Steps {
			quiz = quiz || (i > 0 && st.Quiz != nil)
		}
		for _, term := range l.Terms {
			q, _ := url.ParseQuery(term.Link())
			if find := q.Get("find"); quiz && len(q) == 1 && lessons.StepFor(s, find) > 1 {
				return l, find
			}
		}
	}
	t.Skip("no lesson asks a question after step 1 and explains a term past it")
	return nil, ""
}

// A bad knob in the address is kept in its field with a message naming the
// range, while the figure uses the default.
func TestPlayerBadKnobAtField(t *testing.T) {
	l, k := intKnob(t)
	p := &Player{}
	u, _ := url.Parse("/lesson/" + l.Slug + "?" + k.Key + "=zero")
	p.load(u)
	if rng := fmt.Sprintf("from %d to %d", int(k.Min), int(k.Max)); p.bad[k.Key] != "zero" || !strings.Contains(p.badMsg[k.Key], rng) {
		t.Fatalf("%s: bad %v, messages %v, want %q", l.Slug, p.bad, p.badMsg, rng)
	}
	if p.values.Int(k.Key) != int(k.Default) || p.st.Script == nil {
		t.Fatalf("the figure must use the default: %v", p.values.Text())
	}
}

// intKnob is the first integer knob (below a million, so that its range is
// written without an exponent) of the first lesson that has one.
func intKnob(t *testing.T) (*lessons.Lesson, lessons.Param) {
	t.Helper()
	for _, l := range lessons.All() {
		for _, p := range l.Params {
			if p.Kind == lessons.Int && p.Max < 1e6 {
				return l, p
			}
		}
	}
	t.Skip("no lesson has an integer knob")
	return nil, lessons.Param{}
}
