package app

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/scene"
)

func TestGridHTML(t *testing.T) {
	g := &scene.BlockGrid{BlockSize: 16, Blocks: []scene.Block{
		{Owner: scene.Free},
		{Owner: 3, Label: "R4", Used: 8, Highlight: true},
		{Owner: 14, Label: "R<15>", Used: 16, Refs: 2},
	}}
	h := gridHTML(g, marksOf([]scene.Mark{{Ref: "block:1", Label: "block 1"}}))
	for _, want := range []string{
		`<div class="blocks" role="list">`,
		`data-ref="block:0" class="block free" data-owner="-1"`,
		`data-ref="block:1" class="block c3 f2 hl marked" data-owner="3"`, `>R4</div>`,
		`class="block c2 f4 shared" data-owner="14"`, `>R&lt;15&gt;×2</div>`,
		`title="block 1: R4, 8/16 tokens"`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("grid HTML lacks %q:\n%s", want, h)
		}
	}
	if strings.Count(h, `role="listitem"`) != 3 {
		t.Errorf("want 3 cells: %s", h)
	}
	if densityClass(4096) != "dense-3" || densityClass(100) != "dense-0" {
		t.Error("density classes")
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{34: "34", 32768: "32,768", 97.5712: "97.57", 0.001234: "0.00123", 1234.56: "1234.6"} {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", v, got, want)
		}
	}
	if metricText(97.57) != "97.57" || metricText(34) != "34" {
		t.Error("metricText")
	}
}

func BenchmarkGridHTML4096(b *testing.B) {
	g := &scene.BlockGrid{BlockSize: 16, Blocks: make([]scene.Block, 4096)}
	for i := range g.Blocks {
		g.Blocks[i] = scene.Block{Owner: i % 40, Label: "R" + string(rune('0'+i%10)), Used: i % 17}
	}
	for b.Loop() {
		_ = gridHTML(g, nil)
	}
}

// A request's style: its palette slot when the lesson set one (colour and,
// past twelve, a pattern), else one from its id.
func TestStyleClass(t *testing.T) {
	for _, c := range []struct {
		colour, owner int
		want          string
	}{{0, 14, "c2"}, {0, -3, "c3"}, {1, 99, "c0"}, {2, 0, "c3"}, {12, 0, "c11"}, {13, 0, "c0 p1"}, {14, 0, "c3 p1"}, {36, 0, "c11 p2"}, {37, 0, "c0"}} {
		if got := styleClass(c.colour, c.owner); got != c.want {
			t.Errorf("styleClass(%d, %d) = %q, want %q", c.colour, c.owner, got, c.want)
		}
	}
}

func TestGridColumns(t *testing.T) {
	for _, c := range []struct{ n, cols, want int }{{8, 0, 8}, {64, 0, 16}, {2048, 0, 64}, {1024, 0, 48}, {100, 10, 10}} {
		if got := gridColumns(c.n, c.cols); got != c.want {
			t.Errorf("gridColumns(%d, %d) = %d, want %d", c.n, c.cols, got, c.want)
		}
	}
}
