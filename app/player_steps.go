package app

import (
	"encoding/json"

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
			HTML:       []string{app.HTMLString(p.renderNarration(n, scenes)), app.HTMLString(renderScenesBox(scenes, true))},
			Query:      EncodeQuery(p.lesson, p.shownValues, i+1),
			HideFinal:  dupFinal,
			HideClaims: dupClaims,
		})
	}
	// encoding/json escapes <, > and &, so the text cannot end the script
	// element.
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	return app.Raw(`<script type="application/json" id="steps-data">` + string(b) + `</script>`)
}

// renderScenesBox is the step's figures, #scenes.
func renderScenesBox(scenes []scene.Scene, motion bool) app.UI {
	return app.Div().ID("scenes").Class("scenes").Body(renderScenes(scenes, motion)...)
}
