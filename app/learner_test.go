package app

import (
	"net/url"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

func TestEmbedSnippet(t *testing.T) {
	s := EmbedSnippet("https://lab.example/repo/embed/garage?step=4&block_size=16", `Garage "A"`, "https://lab.example/repo/web/embed.js")
	for _, want := range []string{
		`<iframe src="https://lab.example/repo/embed/garage?step=4&amp;block_size=16"`,
		`title="Garage &#34;A&#34; · Inference Lab"`,
		`width="100%"`, `loading="lazy"`, `sandbox="allow-scripts allow-same-origin`, `style="border:0;width:100%;`,
		`<script src="https://lab.example/repo/web/embed.js" defer></script>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("snippet lacks %s:\n%s", want, s)
		}
	}
}

func TestHitHrefAndVerdictKind(t *testing.T) {
	if got := HitHref(lessons.Hit{Lesson: "garage", Query: "find=blocks+of"}); got != "/lesson/garage?find=blocks+of" {
		t.Errorf("HitHref = %q", got)
	}
	if got := HitHref(lessons.Hit{Lesson: "garage"}); got != "/lesson/garage" {
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
	l := lessons.Get("cow-fork")
	if l == nil {
		t.Skip("no cow-fork lesson")
	}
	p := &Player{}
	u, _ := url.Parse("/lesson/cow-fork?step=1")
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
		t.Skip("cow-fork has no quiz after step 1")
	}
	p.st.Step = qi - 1
	if got := p.st.PendingQuiz(); got != qi {
		t.Fatalf("pendingQuiz = %d at step %d, want %d", got, p.st.Step+1, qi)
	}
	u, _ = url.Parse("/embed/cow-fork?step=1&hide=narration")
	p2 := &Player{Embed: true}
	p2.load(u)
	p2.st.Step = qi - 1
	if got := p2.st.PendingQuiz(); got != -1 {
		t.Errorf("hide=narration still asks (%d)", got)
	}
	u, _ = url.Parse("/lesson/cow-fork?find=copy+on+write")
	p3 := &Player{}
	p3.load(u)
	if want := lessons.StepFor(p3.st.Script.Script, "copy on write"); want == 0 || p3.st.Step != want-1 {
		t.Errorf("find=copy on write shows step %d, want %d", p3.st.Step+1, want)
	}
	if strings.Contains(p3.extra, "find") {
		t.Errorf("find= kept in %q", p3.extra)
	}
}

// A bad knob in the address is kept in its field with a message naming the
// range, while the figure uses the default.
func TestPlayerBadKnobAtField(t *testing.T) {
	p := &Player{}
	u, _ := url.Parse("/lesson/garage?block_size=zero")
	p.load(u)
	if p.bad["block_size"] != "zero" || !strings.Contains(p.badMsg["block_size"], "from 1 to 256") {
		t.Fatalf("bad %v, messages %v", p.bad, p.badMsg)
	}
	if p.values.Int("block_size") != 16 || p.st.Script == nil {
		t.Fatalf("the figure must use the default: %v", p.values.Text())
	}
}
