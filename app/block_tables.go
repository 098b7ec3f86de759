package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderBlockTables draws requests' block tables. With the physical pool
// (the scene's Grid) it draws a map: the tables on top, one row per
// request, the pool's blocks beneath, and a line from each table entry to
// the block it names (shared blocks get a ×k badge), so a scattered table
// and blocks held by several tables are seen at once. With a Lookup it
// walks one token through the table to its byte address above the map.
// Without a pool, the tables alone, as rows of cells.
func renderBlockTables(sc scene.Scene) app.UI {
	bt := sc.Tables
	mk := marksOf(sc.Marks)
	var body app.UI
	if sc.Grid != nil {
		body = renderTableMap(bt, sc.Grid, mk)
	} else {
		body = renderTableRows(bt, mk)
	}
	return app.Figure().Class("scene", "scene-block-tables").DataSet("kind", string(scene.KindBlockTables)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text(comma(len(bt.Rows))+" tables · "+strconv.Itoa(bt.BlockSize)+" tokens per block · logical block → physical block"),
		),
		renderLookup(bt, mk),
		body,
	)
}

// renderTableRows draws each table as a row of cells: the logical block
// over the physical block it maps to.
func renderTableRows(bt *scene.BlockTables, mk marks) app.UI {
	return app.Div().Class("block-tables").Body(
		app.Range(bt.Rows).Slice(func(i int) app.UI {
			r := bt.Rows[i]
			return app.Div().Class(mk.class("bt-row", reqRef(r.Label))).DataSet("owner", r.Owner).DataSet("ref", reqRef(r.Label)).Body(
				app.Div().Class("bt-head").Body(
					app.Span().Class("bt-label").Text(r.Label),
					app.Span().Class("bt-tokens").Text(comma(r.Tokens)+" tokens"),
				),
				app.Ol().Class("bt-cells").Aria("label", r.Label+" block table").Body(
					app.Range(r.Blocks).Slice(func(j int) app.UI {
						shared := j < len(r.Shared) && r.Shared[j]
						ref := entryRef(r.Label, j)
						cls := "bt-cell " + styleClass(r.Colour, r.Owner)
						title := "logical " + strconv.Itoa(j) + " → physical " + strconv.Itoa(r.Blocks[j])
						if shared {
							cls += " shared"
							title += " (shared)"
						}
						if j == r.Focus {
							cls += " focus"
							title += " (this token's block)"
						}
						return app.Li().Class(mk.class(cls, ref)).DataSet("ref", ref).Title("%s", title).Body(
							app.Span().Class("bt-logical").Text(strconv.Itoa(j)),
							app.Span().Class("bt-physical").Text(strconv.Itoa(r.Blocks[j])),
						)
					}),
				),
			)
		}),
	)
}

// entryRef is the reference of logical block j in a request's table.
func entryRef(label string, j int) string { return "entry:" + label + ":" + strconv.Itoa(j) }

// The map's geometry, in viewBox units (the SVG scales to its width).
const (
	tmLabelW  = 96 // the table's name
	tmPitch   = 50 // a table cell and its gap
	tmCellW   = 44
	tmCellH   = 30
	tmRowH    = 40
	tmGap     = 64 // between the tables and the pool, where the lines run
	tmMaxCols = 12 // table cells shown per row; the middle of longer tables is elided
)

// mapLayout places the tables' cells and the pool's blocks.
type mapLayout struct {
	w, h         float64
	poolCols     int
	poolY        float64
	rowY         []float64 // each pool row's top
	poolW, poolH float64
	shown        [][]bool // per row, per entry: drawn (else elided into "…")
}

// tmNoteRoom is the room under a pool row holding a marked block, for the
// callout drawn under the block.
const tmNoteRoom = 22.0

func layoutMap(bt *scene.BlockTables, grid *scene.BlockGrid, mk marks) mapLayout {
	n := max(len(grid.Blocks), 1)
	l := mapLayout{poolH: 30}
	poolRows := (n + 15) / 16 // at most 16 blocks a row, rows evenly filled
	l.poolCols = (n + poolRows - 1) / poolRows
	l.poolW = 44
	if l.poolCols > 8 {
		l.poolW = 30
	}
	slots := 0
	for _, r := range bt.Rows {
		row := make([]bool, len(r.Blocks))
		for j := range r.Blocks {
			// The first entries, the focus and the last.
			row[j] = len(r.Blocks) <= tmMaxCols || j < tmMaxCols-2 || j == len(r.Blocks)-1 || j == r.Focus
		}
		l.shown = append(l.shown, row)
		slots = max(slots, slotOf(row, len(row)))
	}
	l.w = float64(tmLabelW) + max(float64(slots*tmPitch), float64(l.poolCols)*(l.poolW+6)) + 8
	l.poolY = float64(len(bt.Rows)*tmRowH + tmGap)
	y := l.poolY
	for r := range poolRows {
		l.rowY = append(l.rowY, y)
		y += l.poolH + 18
		for i := r * l.poolCols; i < min(n, (r+1)*l.poolCols); i++ {
			if mk.has(blockRef(i)) {
				y += tmNoteRoom // its callout, over no block of the row below
				break
			}
		}
	}
	l.h = y + 4
	return l
}

// slotOf is the slot entry j of a row is drawn in: each shown entry takes
// one, each run of elided entries one ("…").
func slotOf(row []bool, j int) int {
	k := 0
	for i := 0; i < j && i < len(row); i++ {
		if row[i] || i == 0 || row[i-1] {
			k++
		}
	}
	return k
}

// blockXY is the top-left corner of physical block i.
func (l mapLayout) blockXY(i int) (float64, float64) {
	return float64(tmLabelW) + float64(i%l.poolCols)*(l.poolW+6), l.rowY[i/l.poolCols]
}

func fmtF(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// svgAttr escapes text for an SVG attribute or text node.
func svgAttr(s string) string { return htmlAttr(s) }

// renderTableMap draws the tables over the pool, a line per entry from its
// cell to its block. The SVG is one raw node (a step redraws it whole: its
// lines and badges change together); the callouts of marked elements are
// go-app elements over it, placed in percent of the SVG's box.
func renderTableMap(bt *scene.BlockTables, grid *scene.BlockGrid, mk marks) app.UI {
	l := layoutMap(bt, grid, mk)
	refs := make([]int, len(grid.Blocks)) // tables holding each block
	for _, r := range bt.Rows {
		for _, p := range r.Blocks {
			if p >= 0 && p < len(refs) {
				refs[p]++
			}
		}
	}
	var lines, rows, pool strings.Builder
	var notes []app.UI
	note := func(ref, text string, x, y float64, below bool) {
		cls := calloutSide("callout grid-callout", 100*x/l.w)
		if below {
			cls += " under"
		}
		notes = append(notes, app.Span().Class(cls).DataSet("for", ref).Style("left", pctText(100*x/l.w)).Style("top", pctText(100*y/l.h)).Text(text))
	}
	for i, r := range bt.Rows {
		y := float64(i*tmRowH + 6)
		style := styleClass(r.Colour, r.Owner)
		ref := reqRef(r.Label)
		fmt.Fprintf(&rows, `<g class="%s" data-owner="%d" data-ref="%s"><text class="bt-label" x="0" y="%s">%s</text><text class="bt-tokens" x="0" y="%s">%s tokens</text>`,
			svgAttr(mk.class("bt-row", ref)), r.Owner, svgAttr(ref), fmtF(y+14), svgAttr(r.Label), fmtF(y+27), comma(r.Tokens))
		if mk.has(ref) {
			note(ref, mk.label(ref, r.Label), tmLabelW/2, y, false)
		}
		row := l.shown[i]
		for j, p := range r.Blocks {
			x := float64(tmLabelW + slotOf(row, j)*tmPitch)
			eref := entryRef(r.Label, j)
			cls := "tm-cell " + style
			switch {
			case !row[j] && (j == 0 || row[j-1]):
				cls += " tm-elided tm-first-elided"
			case !row[j]:
				cls += " tm-elided"
			}
			if j == r.Focus {
				cls += " focus"
			}
			if j < len(r.Shared) && r.Shared[j] {
				cls += " shared"
			}
			fmt.Fprintf(&rows, `<g class="%s" data-ref="%s"><title>%s</title><rect x="%s" y="%s" width="%d" height="%d" rx="4"></rect>`+
				`<text class="bt-logical" x="%s" y="%s">L%d</text><text class="bt-physical" x="%s" y="%s">%d</text><text class="tm-more" x="%s" y="%s">…</text></g>`,
				svgAttr(mk.class(cls, eref)), svgAttr(eref), svgAttr(r.Label+": logical "+strconv.Itoa(j)+" → physical "+strconv.Itoa(p)),
				fmtF(x), fmtF(y), tmCellW, tmCellH, fmtF(x+4), fmtF(y+10), j, fmtF(x+tmCellW/2), fmtF(y+25), p, fmtF(x+tmCellW/2), fmtF(y+20))
			if !row[j] || p < 0 || p >= len(grid.Blocks) {
				continue
			}
			if mk.has(eref) {
				note(eref, mk.label(eref, "logical "+strconv.Itoa(j)), x+tmCellW/2, y, false)
			}
			bx, by := l.blockXY(p)
			x0, y0, x1, y1 := x+tmCellW/2, y+tmCellH, bx+l.poolW/2, by
			lc := "tm-line " + style
			if j == r.Focus || mk.has(eref) {
				lc += " focus"
			}
			fmt.Fprintf(&lines, `<path class="%s" d="M%s %s C%s %s %s %s %s %s"></path>`, lc,
				fmtF(x0), fmtF(y0), fmtF(x0), fmtF(y0+tmGap*0.7), fmtF(x1), fmtF(y1-tmGap*0.7), fmtF(x1), fmtF(y1))
		}
		rows.WriteString(`</g>`)
	}
	for i, b := range grid.Blocks {
		x, y := l.blockXY(i)
		ref := blockRef(i)
		cls := "tm-block"
		if b.Owner == scene.Free {
			cls += " free"
		} else {
			cls += " " + styleClass(b.Colour, b.Owner)
		}
		if b.Highlight {
			cls += " hl"
		}
		fill := 0.0
		if grid.BlockSize > 0 && b.Owner != scene.Free {
			fill = l.poolH * float64(min(b.Used, grid.BlockSize)) / float64(grid.BlockSize)
		}
		fmt.Fprintf(&pool, `<g class="%s" data-ref="%s"><title>%s</title><rect class="tm-slot" x="%s" y="%s" width="%s" height="%s" rx="3"></rect>`+
			`<rect class="tm-fill" x="%s" y="%s" width="%s" height="%s" rx="3"></rect><text class="tm-owner" x="%s" y="%s">%s</text><text class="tm-index" x="%s" y="%s">%d</text>`,
			svgAttr(mk.class(cls, ref)), ref, svgAttr(blockTitle(i, b, grid.BlockSize)), fmtF(x), fmtF(y), fmtF(l.poolW), fmtF(l.poolH),
			fmtF(x), fmtF(y+l.poolH-fill), fmtF(l.poolW), fmtF(fill), fmtF(x+l.poolW/2), fmtF(y+l.poolH/2+4), svgAttr(b.Label), fmtF(x+l.poolW/2), fmtF(y+l.poolH+12), i)
		k := refs[i]
		if b.Refs > 0 { // the pool's own count (a prefix-cache hit holds it too)
			k = b.Refs
		}
		if k > 1 {
			fmt.Fprintf(&pool, `<g class="tm-badge"><rect x="%s" y="%s" width="26" height="16" rx="8"></rect><text x="%s" y="%s">×%d</text></g>`,
				fmtF(x+l.poolW-18), fmtF(y-9), fmtF(x+l.poolW-5), fmtF(y+3), k)
		}
		pool.WriteString(`</g>`)
		if mk.has(ref) {
			note(ref, mk.label(ref, "block "+strconv.Itoa(i)), x+l.poolW/2, y+l.poolH+16, true)
		}
	}
	svg := `<svg class="tm-svg" viewBox="0 0 ` + fmtF(l.w) + ` ` + fmtF(l.h) + `" role="img" aria-label="block tables and the physical blocks they map to">` +
		`<text class="tm-pool-label" x="0" y="` + fmtF(l.poolY+16) + `">physical</text><text class="tm-pool-label" x="0" y="` + fmtF(l.poolY+30) + `">blocks</text>` +
		`<g class="tm-lines">` + lines.String() + `</g><g class="tm-pool">` + pool.String() + `</g><g class="tm-tables">` + rows.String() + `</g></svg>`
	// On a phone the map keeps a legible size and scrolls sideways inside
	// the figure (lab.css), the callouts with it.
	// Focusable, so that a keyboard can pan it where it scrolls.
	return app.Div().Class("block-tables tm").TabIndex(0).Role("group").Aria("label", "block tables and the physical blocks").Body(
		app.Div().Class("tm-inner").Style("max-width", fmtF(l.w*1.15)+"px").Style("--tm-w", fmtF(l.w)).Body(
			app.Raw(svg),
			app.Div().Class("grid-notes").Aria("hidden", "true").Body(notes...),
		),
	)
}

// renderLookup walks a token through its table: token t → logical block
// ⌊t/B⌋ → the physical block the table names → the offset t mod B, shown
// as a slot in that block → the byte address, each link with its live
// value and a reference (lookup:token … lookup:address). Empty without a
// lookup (the node stays, so steps keep the figure's shape).
func renderLookup(bt *scene.BlockTables, mk marks) app.UI {
	lk := bt.Lookup
	if lk == nil {
		return app.Ol().Class("lookup", "none")
	}
	b := bt.BlockSize
	owner := ""
	if lk.Row >= 0 && lk.Row < len(bt.Rows) {
		owner = bt.Rows[lk.Row].Label
	}
	item := func(key, head, value string, extra ...app.UI) app.UI {
		ref := "lookup:" + key
		return app.Li().Class(mk.class("lk-step lk-"+key, ref)).DataSet("ref", ref).Body(
			app.Span().Class("lk-head").Text(head),
			app.Span().Class("lk-value").Text(value),
			app.Div().Class("lk-extra").Body(extra...),
			// In the step's box, in the flow: the steps wrap on a phone,
			// and a chip above one covered the row of steps above it.
			app.If(mk.has(ref), func() app.UI { return noteChip(ref, mk.label(ref, value)) }),
		)
	}
	// The offset's block, slot by slot (at most 64 drawn).
	shown := min(b, 64)
	slots := make([]int, shown)
	for i := range slots {
		slots[i] = i
	}
	return app.Ol().Class("lookup").Aria("label", "token "+strconv.Itoa(lk.Token)+" to its byte address").Body(
		item("token", "token", "t = "+strconv.Itoa(lk.Token)),
		item("logical", "logical block", "⌊"+strconv.Itoa(lk.Token)+"/"+strconv.Itoa(b)+"⌋ = "+strconv.Itoa(lk.Logical)),
		item("physical", owner+"'s table", "T["+strconv.Itoa(lk.Logical)+"] = "+strconv.Itoa(lk.Physical)),
		item("offset", "offset", strconv.Itoa(lk.Token)+" mod "+strconv.Itoa(b)+" = "+strconv.Itoa(lk.Offset),
			app.Div().Class("lk-slots").Style("--slots", strconv.Itoa(shown)).Title("block %d, slot %d of %d", lk.Physical, lk.Offset, b).Body(
				app.Range(slots).Slice(func(i int) app.UI {
					if i == lk.Offset || (lk.Offset >= shown && i == shown-1) {
						return app.Span().Class("lk-slot on")
					}
					return app.Span().Class("lk-slot")
				}),
			)),
		item("address", "byte address", lk.Address, app.Span().Class("lk-expr").Text(lk.Expr)),
	)
}
