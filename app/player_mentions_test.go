package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

func TestSplitMentions(t *testing.T) {
	m := func(text string) scene.Mention { return scene.Mention{Text: text, Scene: "s", Ref: "r"} }
	p := func(text string, i int) narrationPart { return narrationPart{Text: text, Mention: i} }
	cases := []struct {
		name string
		text string
		ms   []scene.Mention
		want []narrationPart
	}{
		{"none", "R17 waits.", nil, []narrationPart{p("R17 waits.", -1)}},
		{"one in the middle", "Then R17 waits.", []scene.Mention{m("R17")}, []narrationPart{p("Then ", -1), p("R17", 0), p(" waits.", -1)}},
		{"first occurrence only", "R1 and R1 again", []scene.Mention{m("R1")}, []narrationPart{p("R1", 0), p(" and R1 again", -1)}},
		{"in the order of the text", "block 8 then R3", []scene.Mention{m("R3"), m("block 8")},
			[]narrationPart{p("block 8", 1), p(" then ", -1), p("R3", 0)}},
		{"overlap: the earlier wins", "the stall of R2", []scene.Mention{m("stall of R2"), m("the stall")},
			[]narrationPart{p("the stall", 1), p(" of R2", -1)}},
		{"same start: the longer wins", "physical block 8 is free", []scene.Mention{m("physical block"), m("physical block 8")},
			[]narrationPart{p("physical block 8", 1), p(" is free", -1)}},
		{"absent or empty phrases stay plain", "W3 is chosen", []scene.Mention{m("W9"), m("")}, []narrationPart{p("W3 is chosen", -1)}},
		{"whole text", "R5", []scene.Mention{m("R5")}, []narrationPart{p("R5", 0)}},
		{"utf-8", "⌊37/16⌋ = 2 → T[2]", []scene.Mention{m("T[2]")}, []narrationPart{p("⌊37/16⌋ = 2 → ", -1), p("T[2]", 0)}},
	}
	for _, c := range cases {
		if got := splitMentions(c.text, c.ms); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: splitMentions(%q) = %+v, want %+v", c.name, c.text, got, c.want)
		}
	}
}

func TestMainFirst(t *testing.T) {
	sc := func(kind scene.Kind, id, title string, main bool) scene.Scene {
		return scene.Scene{Kind: kind, ID: id, Title: title, Main: main}
	}
	ids := func(s []scene.Scene) []string {
		var out []string
		for _, x := range s {
			out = append(out, x.ID)
		}
		return out
	}
	cases := []struct {
		name          string
		in            []scene.Scene
		want          []string
		claims, final bool
	}{
		{"no Main: the first stays first", []scene.Scene{sc(scene.KindChart, "a", "", false), sc(scene.KindCards, "b", "", false)}, []string{"a", "b"}, false, false},
		{"Main moves first, the rest keep their order", []scene.Scene{sc(scene.KindCards, "a", "", false), sc(scene.KindChart, "b", "", false), sc(scene.KindCluster, "c", "", true)},
			[]string{"c", "a", "b"}, false, false},
		{"the claims table and the final figures", []scene.Scene{sc(scene.KindCards, "final", "Final figures", false), sc(scene.KindTable, "claims", "Article claim vs this model", false)},
			[]string{"final", "claims"}, true, true},
		{"final figures by title", []scene.Scene{sc(scene.KindCards, "end", "final figures", false)}, []string{"end"}, false, true},
		{"a chart called claims is not the table", []scene.Scene{sc(scene.KindChart, "claims", "", false)}, []string{"claims"}, false, false},
	}
	for _, c := range cases {
		got, claims, final := mainFirst(c.in)
		if !reflect.DeepEqual(ids(got), c.want) || claims != c.claims || final != c.final {
			t.Errorf("%s: %v claims=%v final=%v, want %v %v %v", c.name, ids(got), claims, final, c.want, c.claims, c.final)
		}
	}
}

// A mention renders as a focusable phrase naming its figure and element,
// described by a hidden line naming the figure's title.
func TestNarrationMentionsRender(t *testing.T) {
	st := lessons.Step{Narration: "R2 splits R1's edge.", Mentions: []scene.Mention{{Text: "R1's edge", Scene: "tree", Ref: "node:1"}}}
	html := app.HTMLString(renderNarrationText(st))
	// go-app writes attributes in map order, so each is looked for inside the span.
	start := strings.Index(html, "<span ")
	end := strings.Index(html, ">R1&#39;s edge</span>")
	if !strings.Contains(html, "R2 splits ") || start < 0 || end < start {
		t.Fatalf("narration %s lacks the phrase R1's edge as a span after \"R2 splits \"", html)
	}
	tag := html[start:end]
	for _, attr := range []string{`class="mention"`, `tabindex="0"`, `role="button"`, `data-scene="tree"`, `data-target="node:1"`, `aria-describedby="mention-desc-0"`} {
		if !strings.Contains(tag, attr) {
			t.Errorf("mention span %s lacks %s", tag, attr)
		}
	}
	// The text around a phrase keeps its spaces, exactly: the prerendered
	// page is what a first visit reads.
	st2 := lessons.Step{Narration: "of a budget of 8; at the ridge, I = 295",
		Mentions: []scene.Mention{{Text: "a budget of", Scene: "w", Ref: "guide:b"}, {Text: "at the ridge", Scene: "r", Ref: "guide:r"}}}
	html2 := app.HTMLString(renderNarrationText(st2))
	if !strings.Contains(html2, "<p>of <span ") || !strings.Contains(html2, ">a budget of</span> 8; <span ") || !strings.Contains(html2, ">at the ridge</span>, I = 295</p>") {
		t.Errorf("narration around mentions lost or gained spaces: %s", html2)
	}
	desc := app.HTMLString(renderMentionDescs(st, []scene.Scene{{ID: "tree", Title: "The radix tree"}}))
	if !strings.Contains(desc, `id="mention-desc-0"`) || !strings.Contains(desc, "“The radix tree”") || !strings.Contains(desc, "hidden") {
		t.Errorf("mention description: %s", desc)
	}
}
