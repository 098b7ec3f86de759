package app

import (
	"encoding/json"
	"strings"

	"github.com/inferlab/inferlab/app/playback"
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Stepping before the app runs. A lesson page and an embed are prerendered
// at the lesson's defaults, and the page's WebAssembly starts only when the
// reader first uses something only it does (web/lab.js, inferlab.start). Until
// then web/lab.js steps the lesson from #steps-data: every step's markup of
// the parts of the page that change from step to step, rendered here by the
// same code that renders them live, so that a change of layout in the
// player changes both. Each part is an element with an id (stepParts);
// lab.js replaces it whole with the step's copy. The toolbar (#controls)
// is not among them: lab.js moves its scrubber, label and buttons in place,
// so a scrubber being dragged is never replaced. docs/DOM.md has the
// format.

// stepParts are the ids of the elements #steps-data carries per step.
var stepParts = []string{"narration-panel", "scenes"}

// stepsData is the JSON of #steps-data.
type stepsData struct {
	Parts []string `json:"parts"`
	// DelayMs is the time per step while playing at 1× (playback.BaseDelay).
	DelayMs int         `json:"delayMs"`
	Steps   []stepsItem `json:"steps"`
}

type stepsItem struct {
	HTML  []string `json:"html"`  // one per part, in Parts' order
	Query string   `json:"query"` // #lab[data-query] at this step
	// HideFinal and HideClaims: the step shows the final figures or the
	// claims itself, so the panel under the stage that repeats it hides.
	HideFinal  bool `json:"hideFinal,omitempty"`
	HideClaims bool `json:"hideClaims,omitempty"`
}

// renderSteps is script#steps-data (server only): every step of the script
// shown, for web/lab.js to step through before the app runs.
func (p *Player) renderSteps() app.UI {
	if !app.IsServer || p.st.Stale() || p.st.Script == nil || p.lesson == nil {
		return nil
	}
	n := p.st.Count()
	keep := p.st.Step
	defer func() { p.st.Step = keep }()
	data := stepsData{Parts: stepParts, DelayMs: int(playback.BaseDelay.Milliseconds())}
	for i := 0; i < n; i++ {
		p.st.Step = i
		scenes, dupClaims, dupFinal := mainFirst(p.stepScenes())
		data.Steps = append(data.Steps, stepsItem{
			HTML:       []string{PrerenderedARIA(compactHTML(app.HTMLString(p.renderNarration(n, scenes)))), PrerenderedARIA(compactHTML(app.HTMLString(renderScenesBox(scenes, true))))},
			Query:      EncodeQuery(p.lesson, p.shownValues, i+1),
			HideFinal:  dupFinal,
			HideClaims: dupClaims,
		})
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // markup as it is, a fifth of the \u003c-escaped size
	if err := enc.Encode(data); err != nil {
		return nil
	}
	// Nothing in it can end the script element or open a comment there:
	// "</" is written "<\/" and "<!--" "\u003c!--" (both the same JSON).
	text := strings.NewReplacer("</", `<\/`, "<!--", `\u003c!--`).Replace(strings.TrimSpace(buf.String()))
	return app.Raw(`<script type="application/json" id="steps-data">` + text + `</script>`)
}

// renderScenesBox is the step's figures, #scenes.
func renderScenesBox(scenes []scene.Scene, motion bool) app.UI {
	return app.Div().ID("scenes").Class("scenes").Body(renderScenes(scenes, motion)...)
}

// compactHTML drops the line breaks and indentation go-app's encoder puts
// around every node: between inline elements they would render as spaces
// the live page does not have ("tail ," for "tail,"). The encoder indents a
// node by two spaces per level of nesting, so a text node's own leading
// spaces (" as decoding…" after a mention) are those past its level's
// indentation, and are kept.
func compactHTML(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < len(s) && s[j] != '<' {
				// Text: keep what lies past the indentation of its level.
				if keep := j - (i + 1) - 2*depth; keep > 0 {
					b.WriteString(s[j-keep : j])
				}
			}
			i = j - 1
			continue
		}
		if c == '<' && i+1 < len(s) {
			switch {
			case s[i+1] == '/':
				depth--
			case s[i+1] != '!' && !voidElement(s[i+1:]):
				depth++
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// voidElement reports whether the tag that s starts with (after its "<")
// has no closing tag, so that it does not nest what follows.
func voidElement(s string) bool {
	end := strings.IndexAny(s, " />\t\n")
	if end < 0 {
		return false
	}
	switch strings.ToLower(s[:end]) {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr":
		return true
	}
	return false
}
