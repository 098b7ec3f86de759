package app

import (
	"strconv"

	"github.com/inferlab/inferlab/export"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Sharing and export: "copy link to this step", "copy embed code" (with the
// embed's hide= and theme= choices) and "export JSON" (export.RunJSON, the
// bytes of `inferlab run SLUG --format json`). The clipboard and downloads go
// through web/lab.js (inferlab.copy, inferlab.download), which report into
// #share-status, a node go-app renders empty and never changes.

// embedOptions are the choices of the embed panel.
type embedOptions struct {
	Hide  Hide
	Theme string // "dark" (default, the articles' theme), "light" or "auto"
}

// EmbedSnippet is the HTML a page pastes to embed a lesson: an iframe of the
// embed page src (absolute when origin is known) that fills the width, and
// the optional host script that sizes it from the frame's postMessage.
// scriptSrc is the URL of web/embed.js.
func EmbedSnippet(src, title, scriptSrc string) string {
	return `<iframe src="` + htmlAttr(src) + `" title="` + htmlAttr(title+" · Inference Lab") +
		`" width="100%" height="640" loading="lazy" sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox"` +
		` style="border:0;width:100%;height:640px" data-inferlab></iframe>` + "\n" +
		`<script src="` + htmlAttr(scriptSrc) + `" defer></script>`
}

// origin is the site's origin in the browser ("" on the server).
func origin() string {
	if !app.IsClient {
		return ""
	}
	return app.Window().Get("location").Get("origin").String()
}

// shareURL is the absolute address of the lesson page at this step.
func (p *Player) shareURL() string { return origin() + Link(p.fullPath()) }

// embedSrc is the embed page's address for the current state and choices.
func (p *Player) embedSrc() string {
	if p.lesson == nil {
		return ""
	}
	q := EncodeQuery(p.lesson, p.values, p.st.Step+1) + p.custom.Query() + p.compareQuery()
	if h := p.embed.Hide.String(); h != "" {
		q += "&hide=" + h
	}
	switch p.embed.Theme {
	case "", "dark":
		q += "&theme=dark"
	case "light":
		q += "&theme=light"
	}
	return origin() + Link(EmbedPath(p.lesson.Slug)+"?"+q)
}

func (p *Player) embedCode() string {
	if p.lesson == nil {
		return ""
	}
	return EmbedSnippet(p.embedSrc(), p.lesson.Title, origin()+Link("/web/embed.js"))
}

// labJS calls a helper of web/lab.js (browser only).
func labJS(fn string, args ...any) {
	if !app.IsClient {
		return
	}
	if h := app.Window().Get("inferlab"); h.Truthy() && h.Get(fn).Truthy() {
		h.Call(fn, args...)
	}
}

func (p *Player) exportJSON() {
	if p.lesson == nil || p.st.Script == nil {
		labJS("status", "share-status", "Nothing to export: the lesson did not build.")
		return
	}
	vals := p.shownValues
	if p.trace != nil {
		vals = p.lesson.TraceValues(vals) // as `inferlab run --trace` writes them
	}
	b, err := export.RunJSON(p.lesson.Slug, vals, p.st.Script.Script)
	if err != nil {
		labJS("status", "share-status", "Export failed: "+err.Error())
		return
	}
	labJS("download", "inferlab-"+p.lesson.Slug+".json", "application/json", string(b), "share-status", "Saved inferlab-"+p.lesson.Slug+".json.")
}

// shareBar is the toolbar under the stage (lesson pages only). A component
// whose fields do not change with the step, so a step change skips it; its
// handlers read the player's state when clicked.
type shareBar struct {
	app.Compo
	P     *Player
	Ready bool // a lesson is shown
	Built bool // its script built
}

func (b *shareBar) Render() app.UI {
	p := b.P
	none := !b.Ready
	return app.Div().ID("share").Class("share").Role("toolbar").Aria("label", "Share and export").Body(
		button("btn-copy-link", none).Title("Copy the address of this step, with every parameter").
			OnClick(func(ctx app.Context, e app.Event) {
				labJS("copy", p.shareURL(), "share-status", "Link to step "+itoa(p.st.Step+1)+" copied.")
			}).Body(app.Span().Aria("hidden", "true").Text("↗ "), app.Text("Copy link to this step")),
		button("btn-copy-embed", none).Title("Copy an <iframe> that embeds this lesson at this step").
			OnClick(func(ctx app.Context, e app.Event) {
				labJS("copy", p.embedCode(), "share-status", "Embed code copied: paste it into your page.")
			}).Body(app.Span().Aria("hidden", "true").Text("⟨⟩ "), app.Text("Copy embed code")),
		button("btn-export-json", none || !b.Built).Title("Download this run as JSON (the same as inferlab run --format json)").
			OnClick(func(ctx app.Context, e app.Event) { p.exportJSON() }).
			Body(app.Span().Aria("hidden", "true").Text("⤓ "), app.Text("Export JSON")),
		// Filled by lab.js only; go-app never changes it.
		app.Span().ID("share-status").Class("share-status").Role("status").Aria("live", "polite"),
	)
}

// embedPanel is the "embed this lesson" panel: what to hide, the theme, and
// the snippet (#embed-code). Folded, it renders only its summary, so a step
// change (its Step field) costs one tiny render.
type embedPanel struct {
	app.Compo
	P    *Player
	Step int
	Key  string

	open bool
}

func (e *embedPanel) Render() app.UI {
	p := e.P
	if p == nil || p.lesson == nil {
		return app.Details().ID("embed-panel").Class("embed-snippet")
	}
	d := app.Details().ID("embed-panel").Class("embed-snippet").On("toggle", func(ctx app.Context, ev app.Event) {
		e.open = ctx.JSSrc().Get("open").Bool()
	})
	if !e.open {
		return d.Body(app.Summary().Text("Embed this lesson at this step"))
	}
	flag := func(name, label string) app.UI {
		id := "embed-hide-" + name
		in := app.Input().ID(id).Type("checkbox").Value(name).
			OnChange(func(ctx app.Context, e app.Event) {
				on := ctx.JSSrc().Get("checked").Bool()
				switch name {
				case "controls":
					p.embed.Hide.Controls = on
				case "params":
					p.embed.Hide.Params = on
				case "narration":
					p.embed.Hide.Narration = on
				}
			})
		if p.embed.Hide.Has(name) {
			in = in.Checked(true)
		}
		return app.Label().Class("check").For(id).Body(in, app.Text(" "+label))
	}
	theme := p.embed.Theme
	if theme == "" {
		theme = "dark"
	}
	return d.Body(
		app.Summary().Text("Embed this lesson at this step"),
		app.P().Text("The frame opens at step "+itoa(p.st.Step+1)+" with these parameters. It reports its height to your page with "+
			`postMessage({type: "inferlab:height", height, slug}); the script line (optional) resizes the frame from it. See "Embedding a lesson" in the README.`),
		app.Div().Class("embed-options").Role("group").Aria("labelledby", "embed-hide-label").Body(
			app.Span().ID("embed-hide-label").Class("legend-label").Text("Hide in the frame:"),
			flag("controls", "player controls"),
			flag("params", "parameters"),
			flag("narration", "narration and questions"),
		),
		app.Label().Class("embed-theme").For("embed-theme").Body(
			app.Text("Theme "),
			app.Select().ID("embed-theme").OnChange(func(ctx app.Context, e app.Event) {
				p.embed.Theme = ctx.JSSrc().Get("value").String()
			}).Body(
				option("dark", theme == "dark").Text("dark (the articles')"),
				option("light", theme == "light").Text("light"),
				option("auto", theme == "auto").Text("follow the reader's setting"),
			),
		),
		app.Textarea().ID("embed-code").ReadOnly(true).Rows(4).Aria("label", "Embed code").Text(p.embedCode()),
	)
}

func itoa(n int) string { return strconv.Itoa(n) }
