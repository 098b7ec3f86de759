//go:build !wasm

package e2e

import (
	"strings"
	"testing"
)

// TestLabelProblems: how the label check judges what it read (no browser).
func TestLabelProblems(t *testing.T) {
	box := func(l, t, r, b float64) [4]float64 { return [4]float64{l, t, r, b} }
	all := box(0, 0, 800, 600)
	label := func(id int, text string, b [4]float64) labelBox {
		return labelBox{ID: id, Text: text, B: b, C: all, V: all}
	}
	for _, c := range []struct {
		name string
		fig  labelFig
		page float64
		fits bool
		want []string // substrings, one per problem; none for a clean figure
	}{
		{name: "two lines of a paragraph touching", fig: labelFig{ID: "f", Labels: []labelBox{
			label(1, "first line", box(10, 10, 200, 24)), label(2, "second", box(10, 23, 150, 37))}}},
		{name: "a callout over a label", fig: labelFig{ID: "f", Labels: []labelBox{
			label(1, "R1 · 1,518/8,192", box(10, 10, 120, 24)), label(2, "R1: 6,674 empty", box(60, 12, 260, 30))}},
			want: []string{`"R1 · 1,518/8,192" overlaps "R1: 6,674 empty" by 60×12 px`}},
		{name: "the lines of one label", fig: labelFig{ID: "f", Labels: []labelBox{
			label(1, "wrapped", box(10, 10, 200, 24)), label(1, "wrapped", box(10, 12, 90, 26))}}},
		{name: "a label cut by its frame", fig: labelFig{ID: "f", Labels: []labelBox{
			{ID: 1, Text: "node 7", B: box(700, 10, 860, 30), C: all, V: all}}},
			want: []string{`"node 7" sticks 60 px out`}},
		{name: "overlap only out of view (a frame scrolled)", fig: labelFig{ID: "f", Labels: []labelBox{
			{ID: 1, Text: "under", B: box(10, 580, 100, 620), C: box(0, 0, 800, 900), V: all},
			{ID: 2, Text: "legend", B: box(10, 605, 100, 620), C: box(0, 600, 800, 700), V: box(0, 600, 800, 700)}}}},
		{name: "content wider than the figure and the page", fig: labelFig{ID: "f", Box: box(0, 0, 900, 300), Over: 40}, page: 800,
			want: []string{"40 px wider than the figure", "100 px past the page's right edge"}},
		{name: "a mark out of view, another in view, in a scrolling frame", fig: labelFig{ID: "f", Marks: []markBox{
			{Ref: "a", Shown: true, B: box(10, 10, 50, 30), V: all, C: box(0, 0, 800, 1200)},
			{Ref: "b", Shown: true, B: box(10, 900, 50, 930), V: all, C: box(0, 0, 800, 1200)}}}},
		{name: "a mark past the picture's edge", fig: labelFig{ID: "f", Marks: []markBox{
			{Ref: "node:1", Shown: false, B: box(0, 0, 0, 0), V: all, C: all},
			{Ref: "node:1", Shown: true, B: box(820, 10, 900, 30), V: all, C: all}}},
			want: []string{"the marked node:1 does not show"}},
		{name: "a legend naming a series not drawn, one hidden", fig: labelFig{ID: "f", Legends: []legendRead{
			{Chart: "c", Names: []string{"a", "b", "c"}, Drawn: []string{"a", "c"}, Hidden: []string{"c"}}}},
			want: []string{`names "b", which the chart does not draw`, `names "c", drawn entirely under`}},
		{name: "a laptop's main picture scrolled", fig: labelFig{ID: "f", First: true, Kind: "cluster", Hidden: 80}, fits: true,
			want: []string{"80 px of it scroll out of its frame"}},
		{name: "a long table scrolls by design", fig: labelFig{ID: "f", First: true, Kind: "table", Hidden: 600}, fits: true},
	} {
		got := labelProblems(c.fig, c.page, c.fits)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d problems %q, want %d", c.name, len(got), got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: problem %q, want one saying %q", c.name, got[i], w)
			}
		}
	}
}
