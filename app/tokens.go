package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// tokenWords says what each token state means, for the legend and the
// tooltips (colour is never the only carrier: rejected tokens are struck,
// discarded ones faded and dashed, the target's own bold).
var tokenWords = map[string]string{
	"plain":     "decoded",
	"drafted":   "drafted, not yet checked",
	"accepted":  "accepted",
	"rejected":  "rejected",
	"discarded": "discarded unchecked",
	"resampled": "the target's token in place of the rejected one",
	"bonus":     "bonus: the target's token after all were accepted",
}

// renderTokens draws speculative decoding's rounds as rows of tokens: the
// drafts as the target judged them, then the target's own token.
func renderTokens(sc scene.Scene) app.UI {
	ts := sc.Tokens
	marks := markLabels(sc)
	return app.Figure().Class("scene", "scene-tokens").DataSet("kind", string(scene.KindTokens)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(app.Span().Class("scene-title").Text(sc.Title)),
		app.Div().Class("tok-rows").Role("list").Aria("label", sc.Title).Body(
			app.Range(ts.Rows).Slice(func(i int) app.UI {
				row := ts.Rows[i]
				ref := "row:" + row.Key
				cls := "tok-row" + markClass(marks, ref)
				if row.Highlight {
					cls += " hl"
				}
				// The callouts of the row and its marked tokens follow its
				// tokens as chips: above a token, one would cover the
				// line of tokens above it where the row wraps.
				var notes []app.UI
				if l := marks[ref]; l != "" {
					notes = append(notes, noteChip(ref, l))
				}
				for j := range row.Tokens {
					if tref := "tok:" + row.Key + ":" + strconv.Itoa(j); marks[tref] != "" {
						notes = append(notes, noteChip(tref, marks[tref]))
					}
				}
				return app.Div().Class(cls).Role("listitem").DataSet("ref", ref).Body(
					app.Span().Class("tok-row-label").Text(row.Label),
					app.Span().Class("tok-chips").Body(
						app.Range(row.Tokens).Slice(func(j int) app.UI {
							t := row.Tokens[j]
							tref := "tok:" + row.Key + ":" + strconv.Itoa(j)
							return app.Span().Class("tok tok-"+safeClass(t.State)+markClass(marks, tref)).DataSet("ref", tref).
								Title("%s: %s", t.Text, tokenWords[t.State]).Text(t.Text)
						}),
						app.Range(notes).Slice(func(k int) app.UI { return notes[k] }),
					),
					app.Span().Class("tok-row-note").Text(row.Note),
				)
			}),
		),
		app.P().Class("legend mem-legend").Body(
			app.Range(tokenLegend).Slice(func(i int) app.UI {
				s := tokenLegend[i]
				return app.Span().Class("mem-key").Body(app.Span().Class("tok tok-key tok-"+s).Text("t"), app.Text(" "+tokenWords[s]))
			}),
		),
	)
}

// tokenLegend lists the states in the order a round shows them.
var tokenLegend = []string{"drafted", "accepted", "rejected", "discarded", "resampled", "bonus"}
