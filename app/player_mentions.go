package app

import (
	"html"
	"sort"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Mentions: a step's narration names elements of its figures (block 8, R17,
// the stall). Each mention (scene.Mention) becomes a button in the
// narration (span.mention[role=button][tabindex=0], data-scene and
// data-target): hovering or
// focusing it lights the element up in its figure and dims the rest
// (web/lab.js, inferlab.annotate); hovering the element lights the phrase;
// the element's tooltip repeats the phrase. The figure's title reaches
// screen readers through aria-describedby.

// narrationPart is a run of the narration: plain text, or the phrase of
// mention Mention (an index into the step's mentions; -1 for plain text).
type narrationPart struct {
	Text    string
	Mention int
}

// splitMentions cuts text at the first occurrence of each mention's phrase.
// Phrases that do not occur, are empty, or overlap an earlier (or, at the
// same place, a longer) phrase stay plain text.
func splitMentions(text string, ms []scene.Mention) []narrationPart {
	type hit struct{ start, end, i int }
	var hits []hit
	for i, m := range ms {
		if m.Text == "" {
			continue
		}
		if at := strings.Index(text, m.Text); at >= 0 {
			hits = append(hits, hit{at, at + len(m.Text), i})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool {
		if hits[a].start != hits[b].start {
			return hits[a].start < hits[b].start
		}
		return hits[a].end > hits[b].end
	})
	var out []narrationPart
	pos := 0
	for _, h := range hits {
		if h.start < pos {
			continue // overlaps the phrase before
		}
		if h.start > pos {
			out = append(out, narrationPart{Text: text[pos:h.start], Mention: -1})
		}
		out = append(out, narrationPart{Text: text[h.start:h.end], Mention: h.i})
		pos = h.end
	}
	if pos < len(text) || len(out) == 0 {
		out = append(out, narrationPart{Text: text[pos:], Mention: -1})
	}
	return out
}

// mentionDescID is the id of the hidden description of mention i.
func mentionDescID(i int) string { return "mention-desc-" + strconv.Itoa(i) }

// renderNarrationText is #narration's paragraph, its mentions linked. It
// is written as one raw element, not as go-app text nodes: go-app's
// prerender indents each child on a line of its own and trims a text's
// leading space, so "of <mention> 8" read "of a budget of8" and ", I" got
// a space before its comma until the app drew the page.
func renderNarrationText(st lessons.Step) app.UI {
	var b strings.Builder
	b.WriteString("<p>")
	for _, pt := range splitMentions(st.Narration, st.Mentions) {
		if pt.Mention < 0 {
			b.WriteString(html.EscapeString(pt.Text))
			continue
		}
		m := st.Mentions[pt.Mention]
		// A span, not a <button>: a button is an inline block, and a
		// phrase must wrap with the text around it.
		b.WriteString(`<span class="mention" tabindex="0" role="button" data-scene="` + html.EscapeString(m.Scene) +
			`" data-target="` + html.EscapeString(m.Ref) + `" aria-describedby="` + mentionDescID(pt.Mention) + `">` +
			html.EscapeString(pt.Text) + `</span>`)
	}
	b.WriteString("</p>")
	return app.Raw(b.String())
}

// renderMentionDescs are the hidden descriptions the mentions point at:
// which figure shows the element. Outside the live region, so a step
// change announces the narration alone.
func renderMentionDescs(st lessons.Step, scenes []scene.Scene) app.UI {
	titles := map[string]string{}
	for _, sc := range scenes {
		titles[sc.ID] = sc.Title
	}
	ms := st.Mentions
	return app.Div().ID("mention-descs").Hidden(true).Body(app.Range(ms).Slice(func(i int) app.UI {
		where := "the figure"
		if t := titles[ms[i].Scene]; t != "" {
			where = "the figure “" + t + "”"
		}
		return app.Span().ID(mentionDescID(i)).Text("Marked in " + where + "; hover or focus to highlight it.")
	}))
}

// mainFirst returns the step's scenes with its main figure first (the one
// with Main set, else the first), and whether any scene repeats a panel
// under the stage: the claims table (a table scene "claims") or the final
// figures (cards titled "Final figures").
func mainFirst(scenes []scene.Scene) (out []scene.Scene, claims, final bool) {
	main := 0
	for i, sc := range scenes {
		if sc.Main {
			main = i
			break
		}
	}
	out = scenes
	if main > 0 {
		out = make([]scene.Scene, 0, len(scenes))
		out = append(out, scenes[main])
		out = append(out, scenes[:main]...)
		out = append(out, scenes[main+1:]...)
	}
	for _, sc := range scenes {
		switch {
		case sc.Kind == scene.KindTable && sc.ID == "claims":
			claims = true
		case sc.Kind == scene.KindCards && (sc.ID == "final" || strings.EqualFold(sc.Title, "Final figures")):
			final = true
		}
	}
	return out, claims, final
}
