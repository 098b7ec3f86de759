package app

import (
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/scene"
)

// Over a pool, every table entry draws a line to its block, a block k
// tables hold gets one ×k badge, the lookup walks token → logical →
// physical → offset → address, and marked elements are outlined and
// labelled.
func TestRenderTableMap(t *testing.T) {
	grid := &scene.BlockGrid{BlockSize: 16, Blocks: []scene.Block{{Owner: 0, Label: "S1", Used: 16, Refs: 2}, {Owner: scene.Free}, {Owner: 1, Label: "S2", Used: 3}}}
	bt := &scene.BlockTables{BlockSize: 16, Rows: []scene.TableRow{
		{Owner: 0, Label: "S1", Tokens: 16, Blocks: []int{0}, Focus: 0},
		{Owner: 1, Label: "S2", Tokens: 19, Blocks: []int{0, 2}, Focus: -1},
	}, Lookup: &scene.Lookup{Row: 1, Token: 18, Logical: 1, Physical: 2, Offset: 2, Expr: "2 · 16 · 8 + 2 · 8", Address: "272 B"}}
	html := app.HTMLString(renderBlockTables(scene.Scene{Kind: scene.KindBlockTables, ID: "tables", Tables: bt, Grid: grid,
		Marks: []scene.Mark{{Ref: "block:2", Label: "block 2 holds token 18"}, {Ref: "lookup:offset", Label: "slot 2"}}}))
	if n := strings.Count(html, `<path class="tm-line`); n != 3 {
		t.Errorf("%d lines, want one per entry (3)", n)
	}
	if n := strings.Count(html, `class="tm-badge"`); n != 1 || !strings.Contains(html, "×2") {
		t.Errorf("%d badges, want one ×2 on block 0", n)
	}
	for _, want := range []string{`data-ref="block:2"`, `block 2 holds token 18`, `data-ref="lookup:offset"`, `18 mod 16 = 2`, `T[1] = 2`, `272 B`,
		`class="bt-physical"`, `data-ref="entry:S2:1"`, `class="lk-step lk-offset marked"`} {
		if !strings.Contains(html, want) {
			t.Errorf("no %q in %s", want, html)
		}
	}
}

// A long table shows its first entries, the focus and the last; the rest
// are kept (hidden) so each entry still has its element.
func TestTableMapElides(t *testing.T) {
	var blocks []int
	var pool []scene.Block
	for i := 0; i < 40; i++ {
		blocks = append(blocks, i)
		pool = append(pool, scene.Block{Owner: 0, Label: "A", Used: 1})
	}
	bt := &scene.BlockTables{BlockSize: 1, Rows: []scene.TableRow{{Owner: 0, Label: "A", Tokens: 40, Blocks: blocks, Focus: 20}}}
	l := layoutMap(bt, &scene.BlockGrid{BlockSize: 1, Blocks: pool}, nil)
	shown := 0
	for _, s := range l.shown[0] {
		if s {
			shown++
		}
	}
	if shown != tmMaxCols || !l.shown[0][20] || !l.shown[0][39] || l.shown[0][15] {
		t.Errorf("%d entries shown (want %d: the first, the focus 20, the last 39): %v", shown, tmMaxCols, l.shown[0])
	}
	if slotOf(l.shown[0], 10) != 10 || slotOf(l.shown[0], 20) != 11 || slotOf(l.shown[0], 39) != 13 {
		t.Errorf("slots: 10 → %d, 20 → %d, 39 → %d", slotOf(l.shown[0], 10), slotOf(l.shown[0], 20), slotOf(l.shown[0], 39))
	}
}
