//go:build !wasm

package e2e

// Learner experience: quiz checkpoints, search, keyboard and
// accessibility, exports, embeds in a cross-site host page, offline use,
// updates after a new deployment, and the static site under a sub-path.
// Every test fails on console errors, as the other browser tests do.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/app"
	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/server"
)

// ---- quizzes ----------------------------------------------------------------

// TestLearnerQuiz: a checkpoint asks before its step, accepts a right answer and a
// typo'd right term, rejects a wrong one, can be skipped, pauses playback, and shows
// folded when its step is opened directly.
func TestLearnerQuiz(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	_, _, cow := nativeDefaults(t, "cow-fork")
	ti := quizIndex(t, cow, lessons.QuizTerm)
	ni := quizIndex(t, cow, lessons.QuizNumber)

	// ask opens the step before quiz step i and checks the question is asked.
	ask := func(slug string, s *lessons.Script, i int) {
		b.t.Helper()
		b.navigate(fmt.Sprintf("%s/lesson/%s?step=%d", site, slug, i))
		b.waitFor("#quiz asking for step "+strconv.Itoa(i+1),
			`document.querySelector("#quiz")?.dataset.quizStep === `+jsString(strconv.Itoa(i+1)))
		if q := evalJS[string](b, `document.querySelector("#quiz-question").textContent`); q != s.Steps[i].Quiz.Question {
			b.t.Errorf("#quiz-question = %q, want %q", q, s.Steps[i].Quiz.Question)
		}
		if st := b.mustState(); st.Step != strconv.Itoa(i) {
			b.t.Errorf("asking shows step %s, want %d (the step before the checkpoint)", st.Step, i)
		}
	}
	// verdict waits for the reveal of step i+1 and checks #quiz-verdict.
	verdict := func(s *lessons.Script, i int, answer, wantKind string) {
		b.t.Helper()
		b.waitStep("after answering", i+1)
		// The address follows even though the form that moved the step is gone.
		b.waitFor(fmt.Sprintf("step=%d in the address after answering", i+1), urlStepIs(i+1))
		b.waitFor("#quiz-verdict[data-verdict="+wantKind+"]",
			`document.querySelector("#quiz-verdict")?.dataset.verdict === `+jsString(wantKind))
		want := s.Steps[i].Quiz.Check(answer).Message
		if got := evalJS[string](b, `document.querySelector("#quiz-verdict .verdict-message")?.textContent ?? ""`); got != want {
			b.t.Errorf("#quiz-verdict message = %q, want %q", got, want)
		}
		if live := evalJS[string](b, `document.querySelector("#quiz-verdict").getAttribute("aria-live")`); live != "polite" {
			b.t.Errorf("#quiz-verdict aria-live = %q", live)
		}
		wantFocus := "btn-next"
		if i+1 == len(s.Steps) {
			wantFocus = "btn-play"
		}
		if err := b.tryWaitFor(`document.activeElement?.id === ` + jsString(wantFocus)); err != nil {
			b.t.Errorf("focus after answering is on %q, want #%s", evalJS[string](b, `document.activeElement?.id ?? ""`), wantFocus)
		}
	}

	subtest(t, b, "typo'd term accepted", func(t *testing.T) {
		ask("cow-fork", cow, ti)
		if k := evalJS[string](b, `document.querySelector("#quiz").dataset.kind`); k != "term" {
			t.Errorf("#quiz[data-kind] = %q, want term", k)
		}
		b.do("type the answer", changeTimeout, chromedp.SendKeys(chromedp.CSS("#quiz-answer"), "copy on wrte"))
		b.keys(kb.Enter)
		verdict(cow, ti, "copy on wrte", "close")
		b.screenshot("learner-quiz-term")
	})

	subtest(t, b, "wrong number rejected", func(t *testing.T) {
		ask("cow-fork", cow, ni)
		wrong := "7"
		if cow.Steps[ni].Quiz.Answer == wrong {
			wrong = "8"
		}
		b.do("type a wrong answer", changeTimeout, chromedp.SendKeys(chromedp.CSS("#quiz-answer"), wrong))
		b.do("click #quiz-submit", changeTimeout, chromedp.Click(chromedp.CSS("#quiz-submit")))
		verdict(cow, ni, wrong, "wrong")
	})

	subtest(t, b, "right number accepted", func(t *testing.T) {
		ask("cow-fork", cow, ni)
		// An empty answer is not judged: a hint, and the step stays.
		b.do("click #quiz-submit", changeTimeout, chromedp.Click(chromedp.CSS("#quiz-submit")))
		b.waitFor("#quiz-hint", `(document.querySelector("#quiz-hint")?.textContent ?? "") !== ""`)
		if st := b.mustState(); st.Step != strconv.Itoa(ni) {
			t.Errorf("an empty answer moved to step %s", st.Step)
		}
		b.do("type the answer", changeTimeout, chromedp.SendKeys(chromedp.CSS("#quiz-answer"), cow.Steps[ni].Quiz.Answer))
		b.keys(kb.Enter)
		verdict(cow, ni, cow.Steps[ni].Quiz.Answer, "correct")
	})

	subtest(t, b, "choice by keyboard", func(t *testing.T) {
		_, _, roof := nativeDefaults(t, "roofline")
		ci := quizIndex(t, roof, lessons.QuizChoice)
		q := roof.Steps[ci].Quiz
		ask("roofline", roof, ci)
		want := -1
		for i, c := range q.Choices {
			if c == q.Answer {
				want = i
			}
		}
		// Focus the first radio; arrows move within the group; Enter submits.
		evalJS[bool](b, `(document.querySelector("#quiz-choice-0").focus(), true)`)
		b.keys(" ")
		for i := 0; i < want; i++ {
			b.keys(kb.ArrowDown)
		}
		if got := evalJS[string](b, `document.querySelector('#quiz input[name="quiz-choice"]:checked')?.value ?? ""`); got != q.Answer {
			t.Fatalf("checked choice %q after the arrow keys, want %q", got, q.Answer)
		}
		b.keys(kb.Enter)
		verdict(roof, ci, q.Answer, "correct")
	})

	subtest(t, b, "skip with Escape, and Next passes", func(t *testing.T) {
		ask("cow-fork", cow, ni)
		evalJS[bool](b, `(document.querySelector("#quiz-answer").focus(), true)`)
		b.keys(kb.Escape)
		b.waitStep("after skipping", ni+1)
		b.waitFor(fmt.Sprintf("step=%d in the address after skipping", ni+1), urlStepIs(ni+1))
		if v := evalJS[string](b, `document.querySelector("#quiz-verdict").dataset.verdict ?? ""`); v != "" {
			t.Errorf("a skipped question shows verdict %q", v)
		}
		// Next by hand is never blocked: from the step before the term checkpoint.
		b.navigate(fmt.Sprintf("%s/lesson/cow-fork?step=%d", site, ti))
		b.waitFor("#quiz", `!!document.querySelector("#quiz")`)
		b.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
		b.waitStep("after Next past a checkpoint", ti+1)
	})

	subtest(t, b, "playback pauses at a checkpoint", func(t *testing.T) {
		b.navigate(fmt.Sprintf("%s/lesson/cow-fork?step=%d", site, ni))
		b.do("speed 4x", changeTimeout, chromedp.SetValue(chromedp.CSS("#speed"), "4"))
		evalJS[bool](b, `(document.querySelector("#speed").dispatchEvent(new Event("change", {bubbles: true})), true)`)
		b.do("click #btn-play", changeTimeout, chromedp.Click(chromedp.CSS("#btn-play")))
		b.waitFor("playback paused with the focus in the question",
			`document.querySelector("#btn-play").getAttribute("aria-pressed") === "false" && document.activeElement?.id === "quiz-answer"`)
		if st := b.mustState(); st.Step != strconv.Itoa(ni) {
			t.Errorf("playback went on to step %s past the checkpoint of step %d", st.Step, ni+1)
		}
		// Play again: the learner chose to go on without answering.
		b.do("click #btn-play", changeTimeout, chromedp.Click(chromedp.CSS("#btn-play")))
		b.waitStep("playing on past the checkpoint", ni+1)
		b.do("pause", changeTimeout, chromedp.Click(chromedp.CSS("#btn-play")))
	})

	subtest(t, b, "opened directly: folded, not blocking", func(t *testing.T) {
		b.navigate(fmt.Sprintf("%s/lesson/cow-fork?step=%d", site, ti+1))
		if n := evalJS[int](b, `document.querySelectorAll("#quiz-review").length`); n != 1 {
			t.Errorf("#quiz-review count = %d on the checkpoint's own step, want 1", n)
		}
		if evalJS[bool](b, `document.querySelector("#quiz-review").open`) {
			t.Error("#quiz-review is open: the answer should be folded away")
		}
	})
}

// ---- search -------------------------------------------------------------------

// searchSettled is a predicate true once the open result list answers the
// whole query (keys are typed faster than go-app renders) and has a hit.
func searchSettled(query string) string {
	return `!document.querySelector("#search-results").hidden && document.querySelector("#search-results").dataset.query === ` +
		jsString(query) + ` && document.querySelectorAll("#search-results .search-hit").length > 0`
}

// TestLearnerSearch: the header search finds "ttft" and a typo'd "paged atention",
// is keyboard operable, and its results open the lesson at the explaining step.
func TestLearnerSearch(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)

	hits := func() []string {
		return evalJS[[]string](b, `Array.from(document.querySelectorAll("#search-results .search-hit")).map((e) => e.querySelector(".hit-name").textContent)`)
	}
	open := func(query string) {
		b.t.Helper()
		b.do("type "+query, changeTimeout, chromedp.SendKeys(chromedp.CSS("#search"), query))
		b.waitFor("search results for "+query, searchSettled(query))
	}
	expectLesson := func(slug, find string) {
		b.t.Helper()
		_, _, s := nativeDefaults(b.t, slug)
		want := lessons.StepFor(s, find)
		if want == 0 {
			want = 1
		}
		b.waitFor("lesson "+slug+" live", `document.querySelector("#lab")?.dataset.lesson === `+jsString(slug)+
			` && document.querySelector("#lab")?.dataset.live === "true"`)
		b.waitStep("from find="+find, want)
		b.waitFor("find= replaced by step= in the URL", `!location.search.includes("find=") && new URLSearchParams(location.search).get("step") === `+jsString(strconv.Itoa(want)))
	}

	subtest(t, b, "ttft from the index", func(t *testing.T) {
		b.navigateIndex(site + "/")
		b.shortcut("/", "Slash")
		if id := evalJS[string](b, `document.activeElement?.id ?? ""`); id != "search" {
			t.Fatalf("/ focused %q, want #search", id)
		}
		if v := evalJS[string](b, `document.querySelector("#search").value`); v != "" {
			t.Fatalf("/ typed %q into #search: the shortcut should only focus it", v)
		}
		open("ttft")
		hs := hits()
		if hs[0] != "TTFT" {
			t.Errorf("first hit for ttft = %q, want TTFT (all: %v)", hs[0], hs)
		}
		if e := evalJS[string](b, `document.querySelector("#search").getAttribute("aria-expanded")`); e != "true" {
			t.Errorf("#search aria-expanded = %q", e)
		}
		// go-app renders on its own tick, so each key's effect is awaited
		// before the next: ↓ must reach the second result and ↑ come back.
		active := `document.querySelector("#search").getAttribute("aria-activedescendant") === `
		b.keys(kb.ArrowDown)
		b.waitFor("↓ activates the second result", active+`"search-hit-1" && document.querySelector("#search-hit-1").classList.contains("active")`)
		b.keys(kb.ArrowUp)
		b.waitFor("↑ activates the first result again", active+`"search-hit-0" && document.querySelector("#search-hit-0").getAttribute("aria-selected") === "true"`)
		b.keys(kb.Enter)
		expectLesson("measuring", "TTFT")
	})

	subtest(t, b, "typo'd paged attention from a lesson's header", func(t *testing.T) {
		b.navigate(site + "/lesson/cow-fork")
		b.do("click #search", changeTimeout, chromedp.Click(chromedp.CSS("#search")))
		open("paged atention")
		hs := hits()
		if hs[0] != "PagedAttention" {
			t.Errorf("first hit for %q = %q, want PagedAttention (all: %v)", "paged atention", hs[0], hs)
		}
		href := evalJS[string](b, `document.querySelector("#search-hit-0 a").getAttribute("href")`)
		if !strings.HasPrefix(href, "/lesson/garage?") || !strings.Contains(href, "find=") {
			t.Errorf("first hit links to %q, want /lesson/garage?…find=…", href)
		}
		b.keys(kb.Escape)
		b.waitFor("Escape closes the results", `document.querySelector("#search-results").hidden`)
		b.keys(kb.ArrowDown)
		b.waitFor("↓ reopens the results", `!document.querySelector("#search-results").hidden`)
		b.keys(kb.Enter)
		expectLesson("garage", "blocks of")
	})
}

// ---- keyboard, dialog, theme, contrast -------------------------------------------

// controlsJS lists the player's keyboard-reachable controls: every enabled,
// visible button, input, select, textarea, link, summary and tabindex=0 element.
const controlsJS = `(() => {
  const sel = 'a[href], button, input, select, textarea, summary, [tabindex]';
  const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const name = (e) => e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className ? "." + String(e.className).trim().split(/\s+/).join(".") : "") + "[" + (e.textContent || "").trim().slice(0, 24) + "]";
  return Array.from(document.querySelectorAll(sel)).filter((e) => {
    if (e.disabled || e.tabIndex < 0 || !visible(e)) return false;
    if (e.closest("dialog:not([open])")) return false;
    const d = e.closest("details:not([open])");
    if (d && e.tagName !== "SUMMARY") return false;
    if (e.type === "radio" && !e.checked && e !== document.querySelector('input[name="' + e.name + '"]')) return false;
    return true;
  }).map(name);
})()`

// TestLearnerKeyboard: Tab reaches every control of the player with a visible focus
// ring; ? opens the shortcuts dialog and Escape closes it; the theme toggles and is
// remembered; text contrast is at least 4.5:1 in both themes.
func TestLearnerKeyboard(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.navigate(site + "/lesson/garage?step=3")

	tabOrder := func(t *testing.T) {
		want := evalJS[[]string](b, controlsJS)
		evalJS[bool](b, `(document.activeElement?.blur(), window.scrollTo(0, 0), true)`)
		type focused struct {
			Name    string `json:"name"`
			Outline string `json:"outline"`
			Width   string `json:"width"`
		}
		const probe = `(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return {name: "", outline: "", width: ""};
  const name = e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className ? "." + String(e.className).trim().split(/\s+/).join(".") : "") + "[" + (e.textContent || "").trim().slice(0, 24) + "]";
  const cs = getComputedStyle(e);
  return {name, outline: cs.outlineStyle, width: cs.outlineWidth};
})()`
		reached := map[string]bool{}
		var order []string
		for i := 0; i < len(want)+15; i++ {
			b.keys(kb.Tab)
			f := evalJS[focused](b, probe)
			if f.Name == "" {
				continue
			}
			if !reached[f.Name] {
				order = append(order, f.Name)
			}
			reached[f.Name] = true
			if f.Outline == "none" || f.Width == "0px" {
				t.Errorf("%s has no visible focus ring (outline %s %s)", f.Name, f.Outline, f.Width)
			}
		}
		for _, w := range want {
			if !reached[w] {
				t.Errorf("Tab never reached %s", w)
			}
		}
		for _, must := range []string{"#search", "#btn-theme", "#btn-play", "#btn-next", "#btn-last", "#scrubber", "#speed", "#btn-keys", "#btn-copy-link", "#btn-copy-embed", "#btn-export-json", "#params-apply"} {
			if !reached[must] {
				t.Errorf("Tab never reached %s", must)
			}
		}
		t.Logf("Tab order (%d of %d controls): %s", len(order), len(want), strings.Join(order, " "))
	}
	subtest(t, b, "Tab order reaches every control", tabOrder)
	subtest(t, b, "Tab order with a question and the embed panel open", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=1")
		b.waitFor("#quiz", `!!document.querySelector("#quiz-answer")`)
		evalJS[bool](b, `(document.querySelector("#embed-panel").open = true, true)`)
		b.waitFor("the embed panel's content", `!!document.querySelector("#embed-code")`)
		tabOrder(t)
		for _, must := range []string{"#quiz-answer", "#quiz-submit", "#quiz-skip", "#embed-hide-controls", "#embed-theme", "#embed-code"} {
			if !strings.Contains(strings.Join(evalJS[[]string](b, controlsJS), " "), must) {
				t.Errorf("%s is not among the keyboard controls", must)
			}
		}
		b.navigate(site + "/lesson/garage?step=3")
	})

	subtest(t, b, "? opens the shortcuts, Escape closes them", func(t *testing.T) {
		evalJS[bool](b, `(document.querySelector("#btn-next").focus(), true)`)
		b.shortcut("?", "Slash")
		b.waitFor("#keys-dialog open", `document.querySelector("#keys-dialog").open`)
		if n := evalJS[int](b, `document.querySelectorAll("#keys-dialog dt").length`); n < 6 {
			t.Errorf("#keys-dialog lists %d keys", n)
		}
		b.keys(kb.Escape)
		b.waitFor("#keys-dialog closed", `!document.querySelector("#keys-dialog").open`)
		if f := evalJS[string](b, `document.activeElement?.id ?? ""`); f != "btn-next" {
			t.Errorf("focus after closing the dialog is on %q, want #btn-next back", f)
		}
		// The button opens it too.
		b.do("click #btn-keys", changeTimeout, chromedp.Click(chromedp.CSS("#btn-keys")))
		b.waitFor("#keys-dialog open", `document.querySelector("#keys-dialog").open`)
		b.do("click #keys-close", changeTimeout, chromedp.Click(chromedp.CSS("#keys-close")))
		b.waitFor("#keys-dialog closed", `!document.querySelector("#keys-dialog").open`)
	})

	contrast := func(theme string) {
		b.t.Helper()
		type low struct {
			What  string  `json:"what"`
			Ratio float64 `json:"ratio"`
			FG    string  `json:"fg"`
			BG    string  `json:"bg"`
		}
		lows := evalJS[[]low](b, contrastJS)
		for _, l := range lows {
			b.t.Errorf("%s theme: %s: contrast %.2f:1 (%s on %s), want ≥ 4.5:1", theme, l.What, l.Ratio, l.FG, l.BG)
		}
	}

	subtest(t, b, "theme toggle, remembered; contrast in both themes", func(t *testing.T) {
		// Without a choice the page is dark, whatever the system prefers.
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}); err != nil {
			t.Fatal(err)
		}
		evalJS[bool](b, `(localStorage.removeItem("inferlab-theme"), true)`)
		b.navigate(site + "/lesson/chunked-prefill?step=2")
		b.waitFor("dark by default", `document.documentElement.dataset.theme === "dark"`)
		b.nextFrame()
		contrast("dark")
		b.screenshot("learner-theme-dark")
		b.do("click #btn-theme", changeTimeout, chromedp.Click(chromedp.CSS("#btn-theme")))
		b.waitFor("light theme chosen", `document.documentElement.dataset.theme === "light" && localStorage.getItem("inferlab-theme") === "light"`)
		b.nextFrame()
		contrast("light")
		b.screenshot("learner-theme-light")
		b.do("click #btn-theme", changeTimeout, chromedp.Click(chromedp.CSS("#btn-theme")))
		b.waitFor("dark theme chosen", `document.documentElement.dataset.theme === "dark" && localStorage.getItem("inferlab-theme") === "dark"`)
		b.navigate(site + "/lesson/chunked-prefill?step=2")
		if th := evalJS[string](b, `document.documentElement.dataset.theme`); th != "dark" {
			t.Errorf("after a reload the theme is %q, want the remembered dark", th)
		}
		b.waitFor("charts drawn", `document.querySelectorAll(".chart[data-ready=true]").length > 0`)
		b.do("click #btn-theme", changeTimeout, chromedp.Click(chromedp.CSS("#btn-theme")))
		b.waitFor("light theme chosen", `document.documentElement.dataset.theme === "light"`)
		b.waitFor("charts redrawn in the light theme",
			`Array.from(document.querySelectorAll(".chart")).every((e) => { const c = echarts.getInstanceByDom(e); return c && !c.isDisposed() && e.dataset.ready === "true"; })`)
		b.nextFrame()
		contrast("light")
	})
}

// contrastJS returns the visible text elements whose text contrast against
// the nearest opaque background is under 4.5:1 (gradients and images are
// skipped: block cells carry labels on fixed pastel colours, checked in app).
const contrastJS = `(() => {
  const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const bgOf = (e) => { for (let n = e; n; n = n.parentElement) { const cs = getComputedStyle(n); if (cs.backgroundImage !== "none") return null; const c = parse(cs.backgroundColor); if (c && c.a > 0.5) return c; } return parse(getComputedStyle(document.documentElement).backgroundColor) || {r: 255, g: 255, b: 255, a: 1}; };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const e = t.parentElement;
    if (!e || seen.has(e) || !t.textContent.trim()) continue;
    seen.add(e);
    if (e.closest("[hidden], dialog:not([open]), .sr-only, canvas, #app-wasm-loader, :disabled, .block-grid, .chart")) continue;
    if (e.getClientRects().length === 0) continue;
    let op = 1; for (let n = e; n; n = n.parentElement) op *= Number(getComputedStyle(n).opacity);
    if (op < 0.99) continue;
    const fg = parse(getComputedStyle(e).color), bg = bgOf(e);
    if (!fg || !bg) continue;
    const r = ratio(fg, bg);
    if (r < 4.5) out.push({what: (e.id ? "#" + e.id : e.tagName.toLowerCase() + "." + String(e.className)) + " " + JSON.stringify(t.textContent.trim().slice(0, 30)), ratio: r, fg: getComputedStyle(e).color, bg: "rgb(" + bg.r + "," + bg.g + "," + bg.b + ")"});
  }
  return out.slice(0, 20);
})()`

// ---- reduced motion, phone layout -------------------------------------------------

// TestLearnerMotionAndPhone: with reduced motion emulated no CSS transition runs and
// ECharts does not animate; without it the strip animates; at 375 px wide no page
// scrolls sideways and the scene, narration and controls stack.
func TestLearnerMotionAndPhone(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	setMotion := func(v string) {
		b.t.Helper()
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: v}}}); err != nil {
			b.t.Fatal(err)
		}
	}
	// steps presses → n times, counting transitionrun events, and returns them.
	const countJS = `(() => { window.__e2eTransitions = 0; document.addEventListener("transitionrun", () => window.__e2eTransitions++, true); return true; })()`
	const durationsJS = `Array.from(document.querySelectorAll(".segment, .seg-used, .chart-cursor, button")).slice(0, 40).map((e) => getComputedStyle(e).transitionDuration)`
	stepAndCount := func(n int) int {
		b.t.Helper()
		evalJS[bool](b, countJS)
		for i := 0; i < n; i++ {
			before := b.mustState().Step
			b.keys(kb.ArrowRight)
			b.waitFor("the next step", `document.querySelector("#lab").dataset.step !== `+jsString(before))
			b.nextFrame()
		}
		awaitJS[bool](b, `new Promise((r) => setTimeout(() => r(true), 300))`) // let any transition start
		return evalJS[int](b, `window.__e2eTransitions`)
	}

	subtest(t, b, "motion by default", func(t *testing.T) {
		setMotion("no-preference")
		b.navigate(site + "/lesson/garage?step=3")
		if n := evalJS[int](b, `document.querySelectorAll(".memory-strip .segment").length`); n == 0 {
			t.Fatal("test data: garage step 3 shows no memory strip segments")
		}
		moving := false
		for _, d := range evalJS[[]string](b, durationsJS) {
			if d != "0s" {
				moving = true
			}
		}
		if !moving {
			t.Error("without reduced motion no element has a transition: the reduced-motion check below would prove nothing")
		}
		if n := stepAndCount(3); n == 0 {
			t.Error("no transition ran while stepping without reduced motion")
		}
	})

	subtest(t, b, "reduced motion", func(t *testing.T) {
		setMotion("reduce")
		b.navigate(site + "/lesson/garage?step=3")
		if !evalJS[bool](b, `document.querySelector("#lab").classList.contains("reduced-motion")`) {
			t.Error("#lab lacks .reduced-motion under prefers-reduced-motion: reduce")
		}
		for i, d := range evalJS[[]string](b, durationsJS) {
			if d != "0s" {
				t.Errorf("element %d has transition-duration %s under reduced motion", i, d)
			}
		}
		if n := stepAndCount(3); n != 0 {
			t.Errorf("%d CSS transitions ran while stepping under reduced motion", n)
		}
		// ECharts animation is off too.
		b.navigate(site + "/lesson/chunked-prefill?step=2")
		b.waitFor("charts drawn", `document.querySelectorAll(".chart[data-ready=true]").length > 0`)
		anim := evalJS[[]bool](b, `Array.from(document.querySelectorAll(".chart")).map((e) => echarts.getInstanceByDom(e)?.getOption()?.animation !== false)`)
		for i, a := range anim {
			if a {
				t.Errorf("chart %d animates under reduced motion", i)
			}
		}
		setMotion("no-preference")
	})

	subtest(t, b, "375 px phone layout", func(t *testing.T) {
		b.do("phone viewport", changeTimeout, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
		defer b.do("desktop viewport", changeTimeout, chromedp.EmulateViewport(1200, 900))
		const overflowJS = `(() => {
  const w = document.documentElement.clientWidth;
  const wide = Array.from(document.querySelectorAll("body *")).filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > w + 1 && !e.closest(".table-wrap, .search-results, [hidden]"); })
    .slice(0, 5).map((e) => (e.id ? "#" + e.id : e.tagName.toLowerCase() + "." + String(e.className)) + " right=" + Math.round(e.getBoundingClientRect().right));
  return {scroll: document.documentElement.scrollWidth, width: w, wide};
})()`
		type overflow struct {
			Scroll int      `json:"scroll"`
			Width  int      `json:"width"`
			Wide   []string `json:"wide"`
		}
		check := func(what string) {
			b.t.Helper()
			b.nextFrame()
			o := evalJS[overflow](b, overflowJS)
			if o.Scroll > 375 {
				b.t.Errorf("%s at 375 px: document.documentElement.scrollWidth = %d (> 375); too wide: %v", what, o.Scroll, o.Wide)
			}
		}
		b.navigateIndex(site + "/")
		check("index")
		for _, l := range lessons.All() {
			b.navigate(site + "/lesson/" + l.Slug)
			check(l.Slug + " step 1")
			evalJS[bool](b, `(document.activeElement?.blur(), true)`)
			b.keys(kb.End)
			b.waitFor("last step", `document.querySelector("#lab").dataset.step === document.querySelector("#scrubber").max`)
			check(l.Slug + " last step")
			if l.Slug == "garage" {
				// Stacked: the scenes first, the narration under them; the step
				// controls fixed at the bottom of the screen, in reach of a thumb.
				stack := evalJS[[]float64](b, `["#controls", "#narration-panel", ".scenes"].map((s) => document.querySelector(s).getBoundingClientRect().top).concat([document.querySelector("#controls").getBoundingClientRect().bottom, innerHeight])`)
				if !(stack[2] < stack[1] && stack[0] > stack[4]/2 && stack[3] <= stack[4]+0.5) {
					t.Errorf("at 375 px the scenes, narration and controls do not stack (tops %v, controls' bottom %v, screen %v)", stack[:3], stack[3], stack[4])
				}
				b.screenshot("learner-phone-garage")
			}
		}
		b.navigate(site + "/embed/cow-fork?step=2")
		check("embed")
	})
}

// ---- export -------------------------------------------------------------------------

func TestLearnerExport(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	waitFile := downloads(t, b)
	raw := map[string]string{"n": "3"}
	l := lessons.Get("cow-fork")
	if _, ok := l.Param("n"); !ok {
		raw = nil
	}

	subtest(t, b, "JSON equals the CLI's", func(t *testing.T) {
		s, v, err := l.Run(raw)
		if err != nil {
			t.Fatal(err)
		}
		q := app.EncodeQuery(l, v, 2)
		b.navigate(site + "/lesson/cow-fork?" + q)
		b.do("click #btn-export-json", changeTimeout, chromedp.Click(chromedp.CSS("#btn-export-json")))
		got := waitFile("inferlab-cow-fork.json")
		want, err := export.RunJSON("cow-fork", v, s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("downloaded JSON differs from export.RunJSON:\n got %.300s\nwant %.300s", got, want)
		}
		args := []string{"run", "./cmd/inferlab", "run", "cow-fork", "--format", "json"}
		for _, p := range l.Params {
			args = append(args, "--set", p.Key+"="+v.TextOf(p.Key))
		}
		cli := goCmd(t, args...)
		if string(cli) != string(got) {
			t.Errorf("downloaded JSON differs from `inferlab run cow-fork --format json`:\n got %.300s\n cli %.300s", got, cli)
		}
	})

	subtest(t, b, "chart PNG", func(t *testing.T) {
		_, _, s := nativeDefaults(t, "chunked-prefill")
		step, id := 0, ""
		for i, st := range s.Steps {
			for _, sc := range st.Scenes {
				if sc.Chart != nil && id == "" {
					step, id = i+1, sc.ID
				}
			}
		}
		if id == "" {
			t.Skip("test data: chunked-prefill has no chart")
		}
		b.navigate(fmt.Sprintf("%s/lesson/chunked-prefill?step=%d", site, step))
		b.waitFor("#chart-"+id+" drawn", `document.querySelector(`+jsString("#chart-"+id)+`)?.dataset.ready === "true"`)
		b.do("click #png-"+id, changeTimeout, chromedp.Click(chromedp.CSS("#png-"+id)))
		png := waitFile(fmt.Sprintf("inferlab-chunked-prefill-%s-step%d.png", id, step))
		if !strings.HasPrefix(string(png), "\x89PNG\r\n") || len(png) < 2000 {
			t.Errorf("the chart download is not a PNG image (%d bytes)", len(png))
		}
	})

	subtest(t, b, "copy link and embed code", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=4")
		// Record what the page copies (the real clipboard needs a focused window).
		evalJS[bool](b, `(Object.defineProperty(navigator, "clipboard", {configurable: true, value: {writeText: (t) => { window.__e2eCopied = t; return Promise.resolve(); }}}), true)`)
		b.do("click #btn-copy-link", changeTimeout, chromedp.Click(chromedp.CSS("#btn-copy-link")))
		b.waitFor("#share-status", `(document.querySelector("#share-status")?.textContent ?? "").includes("copied")`)
		if got, href := evalJS[string](b, `window.__e2eCopied`), evalJS[string](b, `location.href`); got != href {
			t.Errorf("copied link %q, want this step's address %q", got, href)
		}
		b.do("click #btn-copy-embed", changeTimeout, chromedp.Click(chromedp.CSS("#btn-copy-embed")))
		b.waitFor("embed code copied", `(window.__e2eCopied ?? "").startsWith("<iframe")`)
		code := evalJS[string](b, `window.__e2eCopied`)
		for _, want := range []string{`src="` + site + `/embed/garage?step=4&`, `width="100%"`, `loading="lazy"`, `sandbox="allow-scripts allow-same-origin`, `border:0`, `title="`, `<script src="` + site + `/web/embed.js" defer></script>`} {
			if !strings.Contains(code, want) {
				t.Errorf("embed code lacks %q:\n%s", want, code)
			}
		}
		// The panel shows the same snippet, and its options change it.
		b.do("open the embed panel", changeTimeout, chromedp.Click(chromedp.CSS("#embed-panel summary")))
		b.waitFor("#embed-code", `!!document.querySelector("#embed-code")`)
		if ta := evalJS[string](b, `document.querySelector("#embed-code").value`); ta != code {
			t.Errorf("#embed-code = %q, want the copied snippet", ta)
		}
		b.do("hide controls", changeTimeout, chromedp.Click(chromedp.CSS("#embed-hide-controls")))
		b.waitFor("hide=controls in the snippet", `document.querySelector("#embed-code").value.includes("hide=controls")`)
	})
}

// ---- embeds -------------------------------------------------------------------------

// TestLearnerEmbed: an embed inside a host page on another origin reports its height
// and the host script resizes the iframe (again when its width changes); a forged
// message is ignored; hide= flags hide what they name.
func TestLearnerEmbed(t *testing.T) {
	site := startSite(t)                                            // http://127.0.0.1:PORT
	labOrigin := strings.Replace(site, "127.0.0.1", "localhost", 1) // another site for the host
	b := newBrowser(t)
	l, v, _ := nativeDefaults(t, "garage")
	src := labOrigin + "/embed/garage?" + app.EncodeQuery(l, v, 3) + "&theme=dark"
	snippet := app.EmbedSnippet(src, l.Title, labOrigin+"/web/embed.js")
	hostPage := `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Host article</title>
<script src="/record.js"></script></head><body style="margin:0;font-family:sans-serif">
<h1>An article</h1><p>The lab, embedded:</p>
<div id="wrap" style="width:900px">` + snippet + `</div><p>After the lab.</p></body></html>`
	recordJS := `window.__msgs = [];
window.addEventListener("message", (e) => { if (e.data && e.data.type === "inferlab:height") window.__msgs.push({origin: e.origin, height: e.data.height, slug: e.data.slug}); });`
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/record.js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, recordJS)
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, hostPage)
		default:
			http.NotFound(w, r)
		}
	}))
	defer host.Close()

	type msg struct {
		Origin string `json:"origin"`
		Height int    `json:"height"`
		Slug   string `json:"slug"`
	}
	frameHeight := `Math.round(document.querySelector("iframe[data-inferlab]").getBoundingClientRect().height)`

	subtest(t, b, "height reported, iframe resized", func(t *testing.T) {
		b.do("open the host page", liveTimeout, chromedp.Navigate(host.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS("iframe[data-inferlab]")))
		b.waitFor("a height message", `window.__msgs.length > 0`)
		// Wait for the frame to show its step (the frame is cross-site: its own
		// target). Its app does not load: nothing was used yet.
		frameCtx := b.frameContext("/embed/garage")
		if _, err := chromedp.Run(frameCtx, chromedp.Poll[chromedp.Void](embedShows(3),
			chromedp.WithPollingTimeout(liveTimeout))); err != nil {
			b.fatal("the embed did not show step 3 inside the iframe: %v", err)
		}
		if step, err := chromedp.Run(frameCtx, chromedp.Evaluate[string](`document.querySelector("#lab").dataset.step`)); err != nil || step != "3" {
			t.Errorf("embed step = %q (%v), want 3", step, err)
		}
		if href, err := chromedp.Run(frameCtx, chromedp.Evaluate[string](`document.querySelector("a.open-full").href`)); err != nil ||
			href != labOrigin+"/lesson/garage?"+app.EncodeQuery(l, v, 3) {
			t.Errorf(`"open in the full lab" links to %q (%v), want %q`, href, err, labOrigin+"/lesson/garage?"+app.EncodeQuery(l, v, 3))
		}
		b.nextFrame()
		b.waitFor("the iframe takes the last reported height",
			`window.__msgs.length > 0 && `+frameHeight+` === window.__msgs[window.__msgs.length - 1].height`)
		ms := evalJS[[]msg](b, `window.__msgs`)
		last := ms[len(ms)-1]
		if last.Origin != labOrigin || last.Slug != "garage" || last.Height < 400 {
			t.Errorf("last message %+v, want origin %s, slug garage, a height of the content (≥ 400 px)", last, labOrigin)
		}
		inner, err := chromedp.Run(frameCtx, chromedp.Evaluate[int](`Math.ceil(document.documentElement.getBoundingClientRect().height)`))
		if err != nil || inner != last.Height {
			t.Errorf("the frame's content is %d px tall (%v), last reported %d", inner, err, last.Height)
		}
		if sc, err := chromedp.Run(frameCtx, chromedp.Evaluate[bool](`document.scrollingElement.scrollHeight <= window.innerHeight + 1`)); err != nil || !sc {
			t.Errorf("the resized frame still scrolls (%v)", err)
		}
		b.screenshot("learner-embed-host")

		// A narrower frame is taller: a new message, a new height.
		before := last.Height
		evalJS[bool](b, `(document.querySelector("#wrap").style.width = "420px", true)`)
		b.waitFor("a taller height after narrowing the frame",
			`window.__msgs[window.__msgs.length - 1].height > `+strconv.Itoa(before)+` && `+frameHeight+` === window.__msgs[window.__msgs.length - 1].height`)

		// A forged message from the host itself is ignored.
		h := evalJS[int](b, frameHeight)
		evalJS[bool](b, `(window.postMessage({type: "inferlab:height", height: 37, slug: "garage"}, "*"), true)`)
		awaitJS[bool](b, `new Promise((r) => setTimeout(() => r(true), 200))`)
		if got := evalJS[int](b, frameHeight); got != h {
			t.Errorf("a message from the host page itself resized the frame to %d", got)
		}
	})

	// Enter in a knob of the embed (a frame sandboxed without
	// 'allow-forms', as the snippet writes it) applies the value, and the
	// browser logs no refused form submission.
	subtest(t, b, "Enter in an embedded knob", func(t *testing.T) {
		b.do("open the host page", liveTimeout, chromedp.Navigate(host.URL+"/"), chromedp.WaitVisible(chromedp.CSS("iframe[data-inferlab]")))
		frame := b.frameTarget("/embed/garage")
		run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			ctx, cancel := context.WithTimeout(b.attach(frame), liveTimeout)
			defer cancel()
			if err := chromedp.Do(ctx, actions...); err != nil {
				b.fatal("in the embed, %s: %v", what, err)
			}
		}
		// (once the frame's page has loaded: a reader's first tap comes after it)
		run("open the parameters", chromedp.Poll[chromedp.Void](`document.readyState === "complete" && !!document.querySelector("#embed-params > summary")`,
			chromedp.WithPollingTimeout(liveTimeout)), chromedp.Click(chromedp.CSS("#embed-params > summary")))
		run("the app, live", chromedp.Poll[chromedp.Void](`!!document.querySelector(`+jsString(liveSelector)+`) && !!document.querySelector("#param-requests")`,
			chromedp.WithPollingTimeout(liveTimeout)))
		// The console is read on a session of its own from the app's start.
		consoleCtx := b.attach(frame)
		if _, err := chromedp.Run(consoleCtx, chromedp.Evaluate[bool](`true`)); err != nil {
			b.fatal("in the embed, attaching to its console: %v", err)
		}
		var mu sync.Mutex
		var refused []string
		go func() {
			for m, err := range chromedp.Console(consoleCtx) {
				if err != nil {
					return
				}
				if strings.Contains(m.Text, "allow-forms") || strings.Contains(m.Text, "Blocked form submission") {
					mu.Lock()
					refused = append(refused, m.Text)
					mu.Unlock()
				}
			}
		}()
		run("type 50 and Enter", chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector("#param-requests"); f.focus(); f.select(); })()`),
			chromedp.KeyEvent("50"), chromedp.KeyEvent(kb.Enter))
		run("requests=50 applied", chromedp.Poll[chromedp.Void](`document.querySelector("#lab").dataset.query.includes("requests=50") && document.querySelector("#lab").dataset.stale !== "true"`,
			chromedp.WithPollingTimeout(changeTimeout)))
		awaitJS[bool](b, `new Promise((r) => setTimeout(() => r(true), 300))`)
		mu.Lock()
		defer mu.Unlock()
		if len(refused) > 0 {
			t.Errorf("Enter in the embed's knob logged %q", refused)
		}
	})

	subtest(t, b, "hide= flags", func(t *testing.T) {
		shown := func(sel string) bool {
			return evalJS[bool](b, `(() => { const e = document.querySelector(`+jsString(sel)+`); return !!e && e.getClientRects().length > 0; })()`)
		}
		b.navigate(site + "/embed/garage?step=2&hide=controls,narration")
		if shown("#controls") || shown("#narration-panel") {
			t.Errorf("hide=controls,narration: controls shown %v, narration shown %v", shown("#controls"), shown("#narration-panel"))
		}
		if !shown("#embed-params") || !shown(".scenes") || !shown("a.open-full") {
			t.Error("hide=controls,narration also hid the parameters, the scenes or the full-lab link")
		}
		if h := evalJS[string](b, `new URLSearchParams(location.search).get("hide")`); h != "controls,narration" {
			t.Errorf("the URL keeps hide=%q, want controls,narration", h)
		}
		b.keys(kb.ArrowRight)
		b.nextFrame()
		if s := b.mustState(); s.Step != "2" {
			t.Errorf("→ stepped a frame whose controls are hidden (step %s)", s.Step)
		}
		b.navigate(site + "/embed/garage?step=2&hide=params")
		if shown("#embed-params") {
			t.Error("hide=params: the parameters are shown")
		}
		if !shown("#controls") || !shown("#narration-panel") {
			t.Error("hide=params hid the controls or the narration")
		}
		b.navigate(site + "/lesson/garage?hide=params,bogus")
		if shown("#params") {
			t.Error("hide=params on a lesson page: the parameters form is shown")
		}
		if s := b.mustState(); !strings.Contains(s.Notice, "bogus") {
			t.Errorf("#notice = %q, want a message naming the unknown flag", s.Notice)
		}
	})
}

// ---- offline, updates, static sub-path ---------------------------------------------

// TestLearnerOffline: after one visit, with the server gone and the network emulated
// offline, other lesson pages and an embed load and step.
func TestLearnerOffline(t *testing.T) {
	srv := httptest.NewServer(labHandler(t, "offline-v1"))
	var closeOnce sync.Once
	stop := func() { closeOnce.Do(srv.Close) }
	t.Cleanup(stop)
	b := newBrowser(t)
	// The offline cache is filled once the reader asks for it (or first
	// uses the app), not on arrival: no service worker before.
	b.do("open garage", liveTimeout, chromedp.Navigate(srv.URL+"/lesson/garage"))
	b.awaitCondition("the page at rest", liveTimeout, `new Promise((r) => setTimeout(() => r(document.readyState === "complete"), 1500))`)
	if awaitJS[bool](b, `navigator.serviceWorker.getRegistration().then((r) => !!r)`) {
		t.Error("a service worker registered on arrival, before the reader used anything")
	}
	b.do("keep for offline use", changeTimeout, chromedp.Click(chromedp.CSS("#btn-offline")))
	b.waitServiceWorker()
	for _, l := range lessons.All() {
		b.waitCached("/lesson/" + l.Slug)
	}
	b.checkConsole()

	stop()
	if _, err := chromedp.Call(b.ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		EmulateOfflineServiceWorker: ptrTo(true),
		MatchedNetworkConditions:    []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}},
	}); err != nil {
		t.Fatalf("emulating offline: %v", err)
	}
	if _, err := chromedp.Call(b.ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		t.Fatalf("navigator offline: %v", err)
	}

	b.navigate(srv.URL + "/lesson/cow-fork?step=2")
	if s := b.mustState(); s.Lesson != "cow-fork" || s.Step != "2" || s.Narration == "" {
		t.Fatalf("offline cow-fork: %s", s)
	}
	if on := evalJS[bool](b, `navigator.onLine`); on {
		t.Error("navigator.onLine is true: the offline emulation is not on")
	}
	evalJS[bool](b, `(document.activeElement?.blur(), true)`)
	before := b.mustState()
	b.keys(kb.ArrowRight)
	b.waitStep("offline, after →", 3)
	if after := b.mustState(); after.Narration == before.Narration {
		t.Error("offline: the narration did not change with the step")
	}
	b.screenshot("learner-offline")

	// Not pre-cached: an embed page boots from the cached shell.
	b.navigate(srv.URL + "/embed/roofline?step=2")
	if s := b.mustState(); s.Lesson != "roofline" || s.Step != "2" {
		t.Errorf("offline embed: %s", s)
	}
	if !evalJS[bool](b, `document.querySelector("#lab").classList.contains("embed")`) {
		t.Error("offline /embed/roofline is not an embed page")
	}
}

// staticHost serves a static site the way GitHub Pages does under /repo: a
// path maps to the file, to PATH.html, or to the directory's index.html.
func staticHost(dir, prefix string) http.Handler {
	return http.StripPrefix(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := filepath.Join(dir, filepath.FromSlash(filepath.Clean("/"+r.URL.Path)))
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, "index.html")
		} else if err != nil {
			p += ".html"
		}
		if _, err := os.Stat(p); err != nil {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, p)
	}))
}

// TestLearnerStaticSubpath: `inferlab static --prefix /repo` works under the sub-path:
// deep links, stepping, search links and the embed snippet keep /repo.
func TestLearnerStaticSubpath(t *testing.T) {
	if skipReason != "" {
		t.Skip(skipReason)
	}
	dist := t.TempDir()
	if err := server.GenerateStatic(dist, webDir, "/repo"); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/repo/", staticHost(dist, "/repo"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := newBrowser(t)

	b.navigate(srv.URL + "/repo/lesson/garage?step=3")
	b.waitStep("from the deep link", 3)
	evalJS[bool](b, `(document.activeElement?.blur(), true)`)
	b.keys(kb.ArrowRight)
	b.waitStep("after →", 4)
	if p := evalJS[string](b, `location.pathname`); p != "/repo/lesson/garage" {
		t.Errorf("pathname %q after stepping, want /repo/lesson/garage", p)
	}
	if h := evalJS[string](b, `document.querySelector(".brand").getAttribute("href")`); !strings.HasPrefix(h, "/repo") {
		t.Errorf("the home link is %q, want it under /repo", h)
	}
	b.do("open the embed panel", changeTimeout, chromedp.Click(chromedp.CSS("#embed-panel summary")))
	b.waitFor("#embed-code", `!!document.querySelector("#embed-code")`)
	if code := evalJS[string](b, `document.querySelector("#embed-code").value`); !strings.Contains(code, srv.URL+"/repo/embed/garage?step=4") ||
		!strings.Contains(code, srv.URL+"/repo/web/embed.js") {
		t.Errorf("the embed snippet leaves /repo:\n%s", code)
	}
	b.do("click #search", changeTimeout, chromedp.Click(chromedp.CSS("#search")))
	b.do("type ttft", changeTimeout, chromedp.SendKeys(chromedp.CSS("#search"), "ttft"))
	b.waitFor("results", searchSettled("ttft"))
	if h := evalJS[string](b, `document.querySelector("#search-hit-0 a").getAttribute("href")`); !strings.HasPrefix(h, "/repo/lesson/measuring?") {
		t.Errorf("the search result links to %q, want /repo/lesson/measuring?…", h)
	}
	b.keys(kb.Enter)
	b.waitFor("measuring live", `document.querySelector("#lab")?.dataset.lesson === "measuring" && document.querySelector("#lab")?.dataset.live === "true"`)
	if p := evalJS[string](b, `location.pathname`); p != "/repo/lesson/measuring" {
		t.Errorf("pathname %q after the search, want /repo/lesson/measuring", p)
	}
	// A reload of the address works on the static host (no 404, no go-app "not found").
	b.navigate(evalJS[string](b, `location.href`))
	if s := b.mustState(); s.Lesson != "measuring" {
		t.Errorf("reloading %s: %s", evalJS[string](b, `location.href`), s)
	}
}

// TestLearnerStepTiming records (never asserts) how long a step change takes in the
// browser (window.inferlabStepMs, set by the player after the render and the grid and
// chart patches), on garage's 2,048-block grid, with the question panel, the share
// toolbar and the embed snippet on the page. BENCHMARKS.md quotes it.
func TestLearnerStepTiming(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.navigate(site + "/lesson/garage?step=3")
	evalJS[bool](b, `(document.activeElement?.blur(), true)`)
	var ms []float64
	for i := 0; i < 24; i++ {
		before := b.mustState().Step
		evalJS[bool](b, `(window.inferlabStepMs = -1, true)`)
		// Forward over steps 3–14, then back: garage has 20 steps.
		key := kb.ArrowRight
		if i%24 >= 12 {
			key = kb.ArrowLeft
		}
		b.keys(key)
		b.waitFor("the next step", `document.querySelector("#lab").dataset.step !== `+jsString(before)+` && window.inferlabStepMs >= 0`)
		ms = append(ms, evalJS[float64](b, `window.inferlabStepMs`))
	}
	sorted := append([]float64(nil), ms...)
	sortFloats(sorted)
	recordTiming(t, fmt.Sprintf("E2E_TIMING step_change garage steps=%d median_ms=%.1f p90_ms=%.1f max_ms=%.1f",
		len(ms), sorted[len(sorted)/2], sorted[len(sorted)*9/10], sorted[len(sorted)-1]))
}

func sortFloats(x []float64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}
