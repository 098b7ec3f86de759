package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// presentTools is the toolbar's group for teachers (lesson pages only):
// #btn-present (presenter mode: the main figure filling the screen, the
// narration as its caption; also the P key), #btn-notes (speaker notes in a
// second window, shown while presenting) and #btn-export (a dialog: print a
// handout of every step, or export a range of steps as an animated PNG or
// numbered PNGs). They carry no handlers: web/lab.js handles them by
// delegation and loads web/present.js at the first use, so they work the
// same before the app runs and after, and cost the first visit nothing but
// their markup. #btn-notes' data-next is the title of the step after the
// one shown (the speaker notes show it); before the app runs web/present.js
// reads it from the page's steps instead.
func (p *Player) presentTools() app.UI {
	next := ""
	if s := p.st.Script; s != nil && p.st.Step+1 < s.Count() {
		next = s.Steps[p.st.Step+1].Title
	}
	return app.Div().Class("present-tools").Body(
		app.Button().ID("btn-present").Type("button").Class("ghost").
			Title("Present: the figure full screen, the narration as its caption (P)").
			Aria("keyshortcuts", "P").Aria("pressed", "false").
			Body(app.Span().Class("btn-icon").Aria("hidden", "true").Text("▣"), app.Span().Class("btn-word").Text(" Present")),
		app.Button().ID("btn-notes").Type("button").Class("ghost present-only").
			Title("Speaker notes in a second window: this step's narration, the next step's title").
			DataSet("next", next).
			Body(app.Span().Class("btn-icon").Aria("hidden", "true").Text("✎"), app.Span().Class("btn-word").Text(" Notes")),
		app.Button().ID("btn-export").Type("button").Class("ghost").
			Title("Print a handout, or export steps as an animated PNG or PNG images").
			Aria("haspopup", "dialog").
			Body(app.Span().Class("btn-icon").Aria("hidden", "true").Text("⤓"), app.Span().Class("btn-word").Text(" Export")),
	)
}
