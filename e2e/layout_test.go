//go:build !wasm

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// The layout of every step (docs/ARCHITECTURE.md#browser-experience, "One
// screen per step"): at 1280×800 the step's narration and its main
// figure share one screen on every step of every lesson; on a 375×740
// phone the main figure starts in the first screen, the step controls stay
// in view, and nothing scrolls sideways. Every subject a step marks is drawn
// and outlined in its figure, no step is titled "Tick N", and the final
// figures and the claims table appear once. Each lesson is stepped with the
// arrow key; each step's boxes are read in one evaluation.

// layoutStep is what the page must show at one step, from the native script.
type layoutStep struct {
	Step     int         `json:"step"` // 1-based
	Main     string      `json:"main"` // the main figure's scene ID
	Charts   []string    `json:"charts"`
	Figures  []string    `json:"figures"`
	Marks    []markCheck `json:"marks"`
	Mentions []mentionJS `json:"mentions"`
}

type mentionJS struct {
	Text  string `json:"text"`
	Scene string `json:"scene"`
	Ref   string `json:"ref"`
}

// layoutSteps lists each step of s as the layout check needs it.
func layoutSteps(s *lessons.Script) []layoutStep {
	out := make([]layoutStep, len(s.Steps))
	for i, st := range s.Steps {
		ls := layoutStep{Step: i + 1, Charts: []string{}, Figures: []string{}, Marks: []markCheck{}, Mentions: []mentionJS{}}
		for j, sc := range st.Scenes {
			if j == 0 {
				ls.Main = sc.ID
			}
			ls.Figures = append(ls.Figures, sc.ID)
			if sc.Kind == scene.KindChart {
				ls.Charts = append(ls.Charts, sc.ID)
			}
			for _, m := range sc.Marks {
				ls.Marks = append(ls.Marks, markCheck{Scene: sc.ID, Kind: string(sc.Kind), Ref: m.Ref, Label: m.Label})
			}
		}
		for _, sc := range st.Scenes {
			if sc.Main {
				ls.Main = sc.ID
				break
			}
		}
		for _, m := range st.Mentions {
			ls.Mentions = append(ls.Mentions, mentionJS{Text: m.Text, Scene: m.Scene, Ref: m.Ref})
		}
		out[i] = ls
	}
	return out
}

// layoutJS steps to want.step (pressing → first unless the page shows it),
// waits until its figures are drawn, and returns what is wrong with the
// layout at this viewport.
func layoutJS(want layoutStep, press bool) string {
	js, _ := json.Marshal(want)
	pressJS := ""
	if press {
		pressJS = `document.activeElement?.blur(); window.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true}));`
	}
	return `(async () => {
  const want = ` + string(js) + `;
  ` + pressJS + `
  const q = (s) => document.querySelector(s);
  const fig = (id) => q('#lab figure.scene[data-scene-id="' + CSS.escape(id) + '"]');
  const ready = () => {
    const lab = q("#lab");
    return lab && lab.dataset.step === String(want.step) && lab.dataset.busy !== "true" &&
      want.figures.every((id) => fig(id)) &&
      want.charts.every((id) => q("#chart-" + CSS.escape(id) + '[data-ready="true"]'));
  };
  for (let i = 0; i < 600 && !ready(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!ready()) return ["step " + want.step + " did not show its figures: " + JSON.stringify({step: q("#lab")?.dataset.step, busy: q("#lab")?.dataset.busy})];
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  window.scrollTo(0, 0);
  const out = [];
  const W = window.innerWidth, H = window.innerHeight, phone = W < 600;
  const box = (e) => e.getBoundingClientRect();
  const shown = (e) => { const r = box(e); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility === "visible"; };
  const inside = (r) => r.top >= -0.5 && r.left >= -0.5 && r.bottom <= H + 0.5 && r.right <= W + 0.5;
  const fmt = (r) => "[" + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + "]";
  const first = q("#lab .scenes > figure.scene");
  const main = fig(want.main);
  if (!main) out.push("no main figure " + want.main);
  else if (first !== main) out.push("the main figure " + want.main + " is not first in .scenes (first: " + first?.dataset.sceneId + ")");
  const narration = q("#narration-panel");
  const controls = q("#controls");
  if (!phone) {
    if (main && !inside(box(main))) out.push("main figure " + want.main + " " + fmt(box(main)) + " not within the " + W + "×" + H + " viewport");
    // The step's title and narration: in the viewport, and not cut by the
    // panel (a question under them may scroll inside it).
    if (narration && !inside(box(narration))) out.push("narration panel " + fmt(box(narration)) + " not within the " + W + "×" + H + " viewport");
    for (const s of ["#step-title", "#narration"]) {
      const e = q(s), p = box(narration);
      if (e && (!inside(box(e)) || box(e).bottom > p.bottom + 0.5)) out.push(s + " " + fmt(box(e)) + " not fully in view (panel " + fmt(p) + ")");
    }
  } else {
    if (main && !(box(main).top >= 0 && box(main).top < H)) out.push("main figure's top " + Math.round(box(main).top) + " not within the first screen (" + H + " px)");
    if (!controls || !inside(box(controls)) || !shown(controls)) out.push("step controls " + (controls ? fmt(box(controls)) : "missing") + " not in view");
    if (main) {
      main.scrollIntoView({block: "end"});
      if (!inside(box(controls))) out.push("step controls not in view with the main figure's bottom in view");
      window.scrollTo(0, 0);
    }
    // Systems pictures keep legible text: each label of the main figure's
    // SVG drawn at least 7 px high (they were 3–5 px, shrunk to the screen).
    for (const svg of document.querySelectorAll("#lab .scenes > figure.scene:first-child svg.sys-svg")) {
      const vb = svg.viewBox.baseVal, r = box(svg);
      if (!vb || !vb.width || !r.width) continue;
      const scale = Math.min(r.width / vb.width, r.height / vb.height);
      let least = Infinity, what = "";
      for (const tx of svg.querySelectorAll("text")) {
        if (!tx.textContent.trim()) continue;
        const px = parseFloat(getComputedStyle(tx).fontSize) * scale;
        if (px < least) { least = px; what = tx.textContent.trim().slice(0, 30); }
      }
      if (least < 6.9) out.push("the main figure's text " + JSON.stringify(what) + " drawn " + least.toFixed(1) + " px high on a " + W + " px screen");
    }
    const sw = document.documentElement.scrollWidth;
    if (sw > W) {
      const wide = [...document.querySelectorAll("#lab *")].filter((e) => box(e).right > W + 1 && getComputedStyle(e).position !== "fixed").slice(0, 4)
        .map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + "." + [...e.classList].join("."));
      out.push("scrolls sideways: scrollWidth " + sw + " > " + W + " (" + wide.join(" ") + ")");
    }
  }
  for (const c of want.marks) {
    const f = fig(c.scene);
    if (!f) { out.push("no figure " + c.scene + " for the mark " + c.ref); continue; }
    const els = [...f.querySelectorAll('[data-ref="' + CSS.escape(c.ref) + '"]')];
    if (!els.length) out.push(c.scene + ": no element with data-ref " + c.ref);
    else if (!els.some((e) => e.classList.contains("marked") && shown(e))) out.push(c.scene + ": " + c.ref + " is drawn but not visibly marked");
  }
  const mentions = [...document.querySelectorAll("#narration .mention")];
  for (const m of want.mentions) {
    const el = mentions.find((e) => e.dataset.scene === m.scene && e.dataset.target === m.ref && e.textContent === m.text);
    if (!el) out.push("the mention " + JSON.stringify(m.text) + " is not linked in the narration");
    else if (el.tabIndex !== 0 || !document.getElementById(el.getAttribute("aria-describedby") || "-")) out.push("the mention " + JSON.stringify(m.text) + " is not focusable or not described");
  }
  const title = q("#step-title")?.textContent.trim() || "";
  if (/^Tick \d+/.test(title)) out.push("titled " + JSON.stringify(title) + ": say what happens");
  const heads = [...document.querySelectorAll("#lab .panel h2, #lab .scene-title")].filter(shown).map((e) => e.textContent.trim());
  for (const t of ["Final figures", "Article claim vs this model"]) {
    const n = heads.filter((h) => h === t).length;
    if (n > 1) out.push(JSON.stringify(t) + " shown " + n + " times");
  }
  return out;
})()`
}

// TestLayout steps through every lesson at 1280×800 and at 375×740.
func TestLayout(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	sizes := []struct {
		name string
		w, h int64
	}{{"laptop", 1280, 800}, {"phone", 375, 740}}
	for _, size := range sizes {
		b.viewport(size.w, size.h)
		for _, l := range lessons.All() {
			subtest(t, b, size.name+"/"+l.Slug, func(t *testing.T) {
				s, _, err := l.Run(nil)
				if err != nil {
					t.Fatalf("native %s: %v", l.Slug, err)
				}
				b.navigate(site + "/lesson/" + l.Slug)
				for i, want := range layoutSteps(s) {
					for _, p := range awaitJS[[]string](b, layoutJS(want, i > 0)) {
						t.Errorf("step %d (%s): %s", i+1, s.Steps[i].Title, p)
					}
				}
			})
		}
	}
	b.viewport(1200, 900)
}

// TestMentions: a mention in the narration, reached with Tab, lights its
// element up in the figure and dims the rest; hovering the element lights
// the phrase; the element's tooltip says the phrase. Once for an element
// drawn in HTML and once for one drawn in SVG.
func TestMentions(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	for _, svg := range []bool{false, true} {
		name := map[bool]string{false: "html", true: "svg"}[svg]
		subtest(t, b, name, func(t *testing.T) {
			slug, step, m := firstMention(t, svg)
			t.Logf("%s step %d: %q → %s %s", slug, step, m.Text, m.Scene, m.Ref)
			b.checkMention(site, slug, step, m)
		})
	}
}

func (b *browser) checkMention(site, slug string, step int, m scene.Mention) {
	t := b.t
	t.Helper()
	b.navigate(fmt.Sprintf("%s/lesson/%s?step=%d", site, slug, step))
	sel := `#narration .mention[data-scene=` + jsString(m.Scene) + `][data-target=` + jsString(m.Ref) + `]`
	target := `document.querySelector('#lab figure.scene[data-scene-id="' + CSS.escape(` + jsString(m.Scene) + `) + '"] [data-ref="' + CSS.escape(` + jsString(m.Ref) + `) + '"]')`
	b.waitFor("the mention and its element", `!!document.querySelector(`+jsString(sel)+`) && !!`+target)

	// Keyboard: Tab from the control before the narration's first mention.
	evalJS[bool](b, `(() => {
  const all = [...document.querySelectorAll("a[href], button:not([disabled]), input:not([disabled]):not([tabindex='-1']), select, textarea, [tabindex='0']")];
  const m = document.querySelector("#narration .mention");
  all[all.indexOf(m) - 1].focus();
  return true;
})()`)
	for i := 0; i < 8 && !evalJS[bool](b, `document.activeElement?.matches(`+jsString(sel)+`) === true`); i++ {
		b.keys(kb.Tab)
	}
	if !evalJS[bool](b, `document.activeElement?.matches(`+jsString(sel)+`) === true`) {
		b.fatal("Tab did not reach the mention %q", m.Text)
	}
	type lit struct {
		Lit, Dim, Phrase, Outline bool
		Tip                       string
	}
	got := evalJS[lit](b, `(() => {
  const el = `+target+`;
  const m = document.activeElement;
  const tip = el instanceof SVGElement ? (el.querySelector(":scope > title")?.textContent || "") : (el.getAttribute("title") || "");
  const cs = getComputedStyle(m);
  return {lit: el.hasAttribute("data-lit"), dim: !!el.closest("figure.scene[data-mention-on]"), phrase: m.hasAttribute("data-lit"),
    outline: cs.outlineStyle !== "none" && parseFloat(cs.outlineWidth) >= 2, tip};
})()`)
	if !got.Lit || !got.Dim || !got.Phrase {
		t.Errorf("focusing %q: element lit %v, figure dimmed %v, phrase lit %v; want all", m.Text, got.Lit, got.Dim, got.Phrase)
	}
	if !got.Outline {
		t.Errorf("the focused mention %q has no visible focus outline", m.Text)
	}
	if !strings.Contains(got.Tip, m.Text) {
		t.Errorf("the element's tooltip %q does not name it as the narration does (%q)", got.Tip, m.Text)
	}

	// Pointer: leaving the phrase clears it; hovering the element lights the phrase.
	evalJS[bool](b, `(document.activeElement.blur(), true)`)
	if evalJS[bool](b, `!!document.querySelector("#lab [data-lit], #lab [data-mention-on]")`) {
		t.Error("something stays lit after the mention lost the focus")
	}
	b.hover(target)
	if !evalJS[bool](b, `document.querySelector(`+jsString(sel)+`).hasAttribute("data-lit")`) {
		t.Errorf("hovering the element of %q does not light the phrase", m.Text)
	}
	b.hover(`document.querySelector("#step-title")`)
	if evalJS[bool](b, `!!document.querySelector("#lab [data-lit]")`) {
		t.Error("something stays lit after the pointer left")
	}
	// The next step takes back the tooltips it gave.
	b.keys(kb.ArrowRight)
	b.waitStep("after →", step+1)
	b.nextFrame()
	b.nextFrame()
	stale := evalJS[[]string](b, `(() => {
  const phrases = [...document.querySelectorAll("#narration .mention")].map((m) => m.textContent.trim());
  const svgTips = [...document.querySelectorAll("#lab figure.scene title.mention-tip")].map((e) => e.textContent);
  const htmlTips = [...document.querySelectorAll("#lab figure.scene [title]")].map((e) => e.getAttribute("title"));
  const old = `+jsString(m.Text)+`;
  return [...svgTips.filter((x) => !phrases.some((p) => x.startsWith(p))),
    ...(phrases.includes(old) ? [] : htmlTips.filter((x) => x === old || x.startsWith(old + " — ")))];
})()`)
	if len(stale) > 0 {
		t.Errorf("tooltips of the step before stay: %q", stale)
	}
}

// hover moves the mouse over the centre of the element the expression returns.
func (b *browser) hover(elJS string) {
	b.t.Helper()
	pt := evalJS[[]float64](b, `(() => { const e = `+elJS+`; e.scrollIntoView({block: "nearest"}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	b.do("hover", changeTimeout, chromedp.MouseEvent("mouseMoved", pt[0], pt[1]))
	b.nextFrame()
}

// svgKinds are the scene kinds drawn in SVG.
var svgKinds = map[scene.Kind]bool{scene.KindRadixTree: true, scene.KindCluster: true, scene.KindTiers: true, scene.KindJourney: true}

// firstMention finds the first lesson step (in lessons.All's order, not the
// last step) with a mention of an element drawn in SVG, or in HTML.
func firstMention(t *testing.T, svg bool) (string, int, scene.Mention) {
	t.Helper()
	for _, l := range lessons.All() {
		s, _, err := l.Run(nil)
		if err != nil {
			t.Fatalf("%s: %v", l.Slug, err)
		}
		for i, st := range s.Steps {
			if i+1 == len(s.Steps) {
				break
			}
			for _, m := range st.Mentions {
				for _, sc := range st.Scenes {
					if sc.ID == m.Scene && svgKinds[sc.Kind] == svg && sc.Kind != scene.KindChart {
						return l.Slug, i + 1, m
					}
				}
			}
		}
	}
	t.Skip("no lesson mentions such an element yet")
	return "", 0, scene.Mention{}
}

// TestPages: the index shows every lesson once, in the series' order,
// numbered, grouped, each with a picture; an address the app does not know
// shows the not-found page in the site's chrome with a link to the lessons.
func TestPages(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	subtest(t, b, "index", func(t *testing.T) {
		b.navigateIndex(site + "/")
		type card struct {
			Slug, Order, Group string
			Thumb              bool
		}
		cards := evalJS[[]card](b, `[...document.querySelectorAll("#index .lesson-group .lesson-card")].map((c) => ({
  slug: c.dataset.lesson, order: c.dataset.order, group: c.closest(".lesson-group").dataset.group,
  thumb: !!c.querySelector("svg.thumb rect, svg.thumb circle, svg.thumb line") && c.querySelector("svg.thumb").getBoundingClientRect().width > 40}))`)
		all := lessons.All()
		if len(cards) != len(all) {
			t.Fatalf("%d cards for %d lessons", len(cards), len(all))
		}
		groups := map[string]bool{}
		for i, c := range cards {
			if c.Slug != all[i].Slug || c.Order != fmt.Sprint(i+1) {
				t.Errorf("card %d: %s numbered %s, want %s numbered %d", i, c.Slug, c.Order, all[i].Slug, i+1)
			}
			if !c.Thumb {
				t.Errorf("%s: no picture on its card", c.Slug)
			}
			groups[c.Group] = true
		}
		if len(groups) < 3 {
			t.Errorf("the lessons fall in %d groups, want the series' parts", len(groups))
		}
	})
	subtest(t, b, "not found", func(t *testing.T) {
		b.navigateIndex(site + "/")
		evalJS[bool](b, `(() => { const a = document.createElement("a"); a.href = "/lesson/no-such-lesson"; document.body.append(a); a.click(); a.remove(); return true; })()`)
		// The page appears first and names the address once its
		// navigation has run: wait for both.
		b.waitFor("the not-found page naming the address", `!!document.querySelector("#not-found-what")?.textContent.includes("/lesson/no-such-lesson")`)
		type page struct {
			H1, What, Home, Header string
			Links                  int
		}
		p := evalJS[page](b, `({h1: document.querySelector("#not-found h1")?.textContent, what: document.querySelector("#not-found-what")?.textContent,
  home: document.querySelector("#not-found-home")?.getAttribute("href"), header: document.querySelector("#not-found .site-header .brand")?.textContent.trim(),
  links: document.querySelectorAll("#not-found .not-found-list a[href^='/lesson/']").length})`)
		if p.H1 != "Page not found" || !strings.Contains(p.What, "/lesson/no-such-lesson") || p.Home != "/" || p.Header == "" || p.Links != len(lessons.All()) {
			t.Errorf("not-found page: %+v", p)
		}
		if title := evalJS[string](b, `document.title`); !strings.HasPrefix(title, "Page not found") {
			t.Errorf("title %q", title)
		}
		// Loaded directly, the server answers the same page (404), and the
		// app, once live, names the address.
		b.do("navigate to an unknown address", liveTimeout, chromedp.Navigate(site+"/nothing/here"),
			chromedp.WaitVisible(chromedp.CSS(`#not-found[data-live="true"]`)))
		if what := evalJS[string](b, `document.querySelector("#not-found-what")?.textContent || ""`); !strings.Contains(what, "/nothing/here") {
			t.Errorf("not-found page loaded directly says %q", what)
		}
		b.allowConsole("status of 404 (Not Found) (" + site + "/nothing/here")
	})
}

// TestFormErrors: a value out of range is reported at its field (aria-invalid,
// a message under it naming the range, in its aria-describedby) whether it
// came in the address (then also in the banner) or was typed and submitted
// (then the figure stays and the field keeps the focus); a focused field is
// never hidden under the sticky toolbar.
func TestFormErrors(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	type field struct {
		Invalid, Described, Msg, Notice, Query string
		Shown, Focused                         bool
		Top, BarBottom                         float64
	}
	read := func() field {
		return evalJS[field](b, `(() => {
  const f = document.querySelector("#param-block_size"), e = document.querySelector("#error-block_size");
  return {invalid: f.getAttribute("aria-invalid"), described: f.getAttribute("aria-describedby") || "", msg: e.textContent,
    shown: !e.hidden && e.getClientRects().length > 0, notice: document.querySelector("#notice").textContent,
    query: document.querySelector("#lab").dataset.query, focused: document.activeElement === f,
    top: f.getBoundingClientRect().top, barBottom: document.querySelector("#controls").getBoundingClientRect().bottom};
})()`)
	}
	subtest(t, b, "from the address", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?block_size=9999")
		f := read()
		if f.Invalid != "true" || !f.Shown || !strings.Contains(f.Msg, "9999") || !strings.Contains(f.Msg, "1 to 256") || !strings.Contains(f.Described, "error-block_size") {
			t.Errorf("block_size=9999 at its field: %+v", f)
		}
		if !strings.Contains(f.Notice, "block_size") && !strings.Contains(f.Notice, "Block size") {
			t.Errorf("the banner does not name the knob: %q", f.Notice)
		}
	})
	subtest(t, b, "typed and submitted", func(t *testing.T) {
		b.navigate(site + "/lesson/garage")
		before := read().Query
		b.do("type 0 into block_size and press Enter", changeTimeout,
			chromedp.SetValue(chromedp.CSS("#param-block_size"), ""),
			chromedp.Focus(chromedp.CSS("#param-block_size")),
			chromedp.KeyEvent("0"), chromedp.KeyEvent(kb.Enter))
		b.waitFor("the field marked invalid", `document.querySelector("#param-block_size").getAttribute("aria-invalid") === "true"`)
		f := read()
		if !f.Shown || !strings.Contains(f.Msg, "1 to 256") {
			t.Errorf("typed 0: the message under the field is %q (shown %v)", f.Msg, f.Shown)
		}
		if f.Query != before {
			t.Errorf("an invalid value changed the figure: %q → %q", before, f.Query)
		}
		if !f.Focused {
			t.Error("the invalid field lost the focus")
		}
		// Applied with the button: the focus goes to the invalid field.
		b.do("click Apply", changeTimeout, chromedp.Click(chromedp.CSS("#params-apply")))
		b.waitFor("the invalid field focused", `document.activeElement?.id === "param-block_size"`)
	})
	subtest(t, b, "focus clear of the toolbar", func(t *testing.T) {
		b.navigate(site + "/lesson/garage")
		// Shift+Tab back from the reset button to the knobs above it.
		evalJS[bool](b, `(document.querySelector("#params-reset").focus(), window.scrollTo(0, document.body.scrollHeight), true)`)
		for i := 0; i < 6; i++ {
			b.do("Shift+Tab", changeTimeout, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
			r := evalJS[[]float64](b, `(() => { const a = document.activeElement.getBoundingClientRect(), c = document.querySelector("#controls").getBoundingClientRect(); return [a.top, c.bottom]; })()`)
			if r[0] < r[1]-1 {
				t.Errorf("Shift+Tab %d: the focused field's top %.0f is under the toolbar (bottom %.0f)", i+1, r[0], r[1])
			}
		}
	})
}
