package app

import (
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The block grid draws up to a few thousand physical KV blocks. Building and
// diffing that many go-app elements per step would cost tens of milliseconds
// in WebAssembly, so the grid's cells are owned by gridCells, not by
// go-app's diff: the server prerenders them as raw HTML, and in the browser
// they are written once (innerHTML) and then only the cells that changed
// between steps are patched. The cells persist, so CSS transitions run on
// them.
//
// Cells sit in explicit columns (BlockGrid.Columns, or a default by pool
// size), so that the callouts of marked blocks, drawn by go-app over the
// cells, can be placed by row and column. Every cell carries its reference
// (data-ref="block:I"); a marked block is outlined (class marked) and
// labelled by a callout.

// maxPatchDivisor: when more than 1/maxPatchDivisor of the cells changed,
// the whole grid is rewritten instead of patched cell by cell.
const maxPatchDivisor = 2

// compactAbove is the pool size from which a grid is drawn compact: small
// cells in a near 2:1 rectangle, no text inside (the title and the
// callouts name them). 2,048 blocks fit in about 400 × 200 px.
const compactAbove = 512

// gridColumns is the number of columns a grid of n blocks is drawn in.
func gridColumns(n, cols int) int {
	switch {
	case cols > 0:
		return cols
	case n <= 16:
		return max(n, 1)
	case n <= 256:
		return 16
	case n <= compactAbove:
		return 32
	}
	c := 8
	for c*c < 2*n { // about twice as wide as tall
		c += 8
	}
	return c
}

// gridCells owns the cells of one grid in the DOM (browser only).
type gridCells struct {
	shown  []scene.Block
	marked []bool
	bsize  int
}

// paint brings the cells under the element hostID in line with grid,
// touching only the cells that changed.
func (c *gridCells) paint(hostID string, grid *scene.BlockGrid, mk marks) {
	if grid == nil || app.IsServer {
		return
	}
	host := app.Window().GetElementByID(hostID)
	if host.IsNull() || host.IsUndefined() {
		return
	}
	blocks := grid.Blocks
	box := host.Get("firstElementChild")
	if len(c.shown) != len(blocks) || c.bsize != grid.BlockSize || box.IsNull() || len(blocks) > compactAbove {
		// A compact grid is one SVG (grid_svg.go): redrawn whole when
		// anything changed.
		if len(blocks) > compactAbove && len(c.shown) == len(blocks) && c.bsize == grid.BlockSize && !box.IsNull() && c.same(blocks, mk) {
			return
		}
		c.rewrite(host, grid, mk)
		return
	}
	var changed []int
	for i := range blocks {
		m := mk.has(blockRef(i))
		if blocks[i] != c.shown[i] || m != c.marked[i] {
			changed = append(changed, i)
			if len(changed) > len(blocks)/maxPatchDivisor {
				c.rewrite(host, grid, mk)
				return
			}
		}
	}
	if len(changed) == 0 {
		return
	}
	if helper := app.Window().Get("inferlab"); helper.Truthy() {
		// One call for all changed cells (web/lab.js).
		var b strings.Builder
		for k, i := range changed {
			blk, m := blocks[i], mk.has(blockRef(i))
			if k > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strconv.Itoa(i))
			b.WriteByte('\t')
			b.WriteString(blockClass(blk, grid.BlockSize, m))
			b.WriteByte('\t')
			b.WriteString(strconv.Itoa(blk.Owner))
			b.WriteByte('\t')
			b.WriteString(tabless(blockLabel(blk)))
			b.WriteByte('\t')
			b.WriteString(tabless(blockTitle(i, blk, grid.BlockSize)))
			c.shown[i], c.marked[i] = blk, m
		}
		helper.Call("patchGrid", box, b.String())
		return
	}
	cells := box.Get("children")
	for _, i := range changed {
		b, m := blocks[i], mk.has(blockRef(i))
		el := cells.Index(i)
		el.Set("className", blockClass(b, grid.BlockSize, m))
		el.Call("setAttribute", "data-owner", strconv.Itoa(b.Owner))
		el.Set("textContent", blockLabel(b))
		el.Set("title", blockTitle(i, b, grid.BlockSize))
		c.shown[i], c.marked[i] = b, m
	}
}

// same reports whether the cells shown are blocks with the marks mk.
func (c *gridCells) same(blocks []scene.Block, mk marks) bool {
	for i := range blocks {
		if blocks[i] != c.shown[i] || mk.has(blockRef(i)) != c.marked[i] {
			return false
		}
	}
	return true
}

func (c *gridCells) rewrite(host app.Value, grid *scene.BlockGrid, mk marks) {
	host.Set("innerHTML", gridMarkup(host.Get("id").String(), grid, mk))
	c.shown = append(c.shown[:0], grid.Blocks...)
	c.marked = c.marked[:0]
	for i := range grid.Blocks {
		c.marked = append(c.marked, mk.has(blockRef(i)))
	}
	c.bsize = grid.BlockSize
}

func (c *gridCells) reset() { c.shown, c.marked = nil, nil }

// gridView renders one scene.BlockGrid.
type gridView struct {
	app.Compo

	SceneID string
	Title   string
	Marks   []scene.Mark
	// Get returns the grid to show. It is a func so that go-app never
	// deep-compares thousands of blocks: a func field always counts as
	// changed, and OnUpdate diffs against what the DOM shows.
	Get func() *scene.BlockGrid

	cells gridCells
}

func (g *gridView) CompoID() string { return "block-grid:" + g.SceneID }

func (g *gridView) grid() *scene.BlockGrid {
	if g.Get == nil {
		return nil
	}
	return g.Get()
}

func (g *gridView) Render() app.UI {
	grid := g.grid()
	n, used, owned := 0, 0, 0
	bs := 0
	cached := false
	if grid != nil {
		n, bs = len(grid.Blocks), grid.BlockSize
		for _, b := range grid.Blocks {
			if b.Owner != scene.Free {
				owned++
				used += b.Used
			}
			cached = cached || b.Cached
		}
	}
	notes := gridNotes(grid, marksOf(g.Marks))
	return app.Figure().Class("scene", "scene-grid").DataSet("kind", string(scene.KindBlockGrid)).DataSet("scene-id", g.SceneID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(g.Title),
			app.Span().Class("scene-sub").Text(gridSummary(n, owned, used, bs)),
		),
		app.If(len(notes) > 0, func() app.UI { return app.P().Class("grid-note-row").Body(notes...) }),
		gridArea(g.SceneID, g.Title, grid, marksOf(g.Marks)),
		app.P().Class("legend").Body(
			app.Span().Class("key key-free"),
			app.Text(" free (hatched) "),
			app.Span().Class("key key-used"),
			app.Text(" owned: label names the request, fill shows tokens used "),
			app.Span().Class("key key-hl"),
			app.Text(" changed this step"),
			app.If(cached, func() app.UI {
				return app.Span().Body(app.Span().Class("key key-cached"), app.Text(" dotted: holds a cached prefix"))
			}),
		),
	)
}

// gridArea is the cells' host (prerendered on the server, painted in the
// browser) and, over it, the callouts of the marked blocks.
func gridArea(id, label string, grid *scene.BlockGrid, mk marks) app.UI {
	n, cols := 0, 1
	if grid != nil {
		n = len(grid.Blocks)
		cols = gridColumns(n, grid.Columns)
	}
	rows := max(1, (n+cols-1)/cols)
	cls := "block-grid " + densityClass(n)
	if n > compactAbove {
		cls += " compact"
	}
	host := app.Div().ID("grid-"+id).Class(cls).Aria("label", label)
	if app.IsServer && grid != nil {
		host = host.Body(app.Raw(gridMarkup("grid-"+id, grid, mk)))
	}
	// A compact grid's cells are a few pixels: a chip over them hides
	// dozens, and above the top rows it would leave the grid. Its marked
	// blocks are ringed in the grid and named in a row of notes beside it
	// (gridNotes), which its figure places.
	if n > compactAbove {
		return app.Div().Class("grid-wrap").Style("--cols", strconv.Itoa(cols)).Body(
			host,
			// The block under the pointer or the keyboard cursor,
			// named by web/lab.js (grid_svg.go).
			app.P().Class("grid-readout").Role("status").Aria("live", "polite"),
		)
	}
	var notes []app.UI
	type placed struct {
		row      int
		from, to float64
		lift     int
	}
	var done []placed
	// The grid's width in px, roughly, to keep neighbouring callouts apart.
	px := float64(cols) * 30
	if n > compactAbove {
		px = 430
	}
	for i := 0; i < n; i++ {
		ref := blockRef(i)
		if !mk.has(ref) {
			continue
		}
		text := mk.label(ref, "block "+strconv.Itoa(i))
		x := 100 * (float64(i%cols) + 0.5) / float64(cols)
		y := 100 * float64(i/cols) / float64(rows)
		w := 100 * (7*float64(len([]rune(text))) + 16) / px
		p := placed{row: i / cols, from: x - w/2, to: x + w/2}
		switch cls := calloutSide("", x); cls { // as lab.css anchors it
		case " at-start":
			p.from, p.to = x-2, x-2+w
		case " at-end":
			p.from, p.to = x+2-w, x+2
		}
		for _, q := range done { // lift a callout above a neighbour it would cover
			if q.row >= p.row-2 && q.from < p.to && p.from < q.to && q.lift >= p.lift {
				p.lift = q.lift + 1
			}
		}
		done = append(done, p)
		notes = append(notes, app.Span().Class(calloutSide("callout grid-callout", x)).DataSet("for", ref).
			Style("left", pctText(x)).Style("top", pctText(y)).Style("margin-top", strconv.Itoa(-22*p.lift)+"px").Text(text))
	}
	wrap := "grid-wrap"
	if len(notes) > 0 {
		wrap += " has-notes"
	}
	return app.Div().Class(wrap).Style("--cols", strconv.Itoa(cols)).Body(
		host,
		app.Div().Class("grid-notes").Aria("hidden", "true").Body(notes...),
	)
}

// gridNotes are the callouts of a compact grid's marked blocks, in block
// order, as chips in the flow of the text (class "callout note"): they
// wrap at any width and cover nothing.
func gridNotes(grid *scene.BlockGrid, mk marks) []app.UI {
	if grid == nil || len(grid.Blocks) <= compactAbove {
		return nil
	}
	var out []app.UI
	for i := range grid.Blocks {
		if ref := blockRef(i); mk.has(ref) {
			out = append(out, noteChip(ref, mk.label(ref, "block "+strconv.Itoa(i))))
		}
	}
	return out
}

// noteChip is a mark's callout set in a line of text rather than over the
// element (which its ring marks).
func noteChip(ref, text string) app.UI {
	return app.Span().Class("callout note").DataSet("for", ref).Text(text)
}

// calloutSide keeps a callout at x percent inside its figure.
func calloutSide(cls string, x float64) string {
	switch {
	case x < 12:
		return cls + " at-start"
	case x > 88:
		return cls + " at-end"
	}
	return cls
}

func gridSummary(n, owned, used, bs int) string {
	if n == 0 {
		return ""
	}
	return comma(n) + " blocks × " + strconv.Itoa(bs) + " tokens · " + comma(owned) + " in use · " +
		comma(used) + " of " + comma(owned*bs) + " slots filled"
}

func densityClass(n int) string {
	switch {
	case n > 2048:
		return "dense-3"
	case n > 1024:
		return "dense-2"
	case n > 256:
		return "dense-1"
	}
	return "dense-0"
}

func (g *gridView) OnMount(ctx app.Context) {
	g.cells.paint("grid-"+g.SceneID, g.grid(), marksOf(g.Marks))
}

func (g *gridView) OnUpdate(ctx app.Context) {
	// OnUpdate runs before the re-render; the host node stays (same tag and
	// position), so patch it once the render is done.
	ctx.Defer(func(app.Context) { g.cells.paint("grid-"+g.SceneID, g.grid(), marksOf(g.Marks)) })
}

func (g *gridView) OnDismount() { g.cells.reset() }

// tabless keeps a field of the patch format free of separators.
func tabless(s string) string {
	if strings.ContainsAny(s, "\t\n") {
		return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
	}
	return s
}

// blockRef is the reference of physical block i.
func blockRef(i int) string { return "block:" + strconv.Itoa(i) }

// gridHTML renders the cells as one HTML string (one root element). It
// writes straight into one buffer: the server prerenders it and the browser
// uses it to (re)draw whole grids of up to 4,096 cells.
func gridHTML(grid *scene.BlockGrid, mk marks) string {
	return gridMarkup("grid", grid, mk)
}

// gridMarkup is the markup of a grid's cells: an SVG for a compact grid
// (grid_svg.go), else one element per block. id is the host's.
func gridMarkup(id string, grid *scene.BlockGrid, mk marks) string {
	if len(grid.Blocks) > compactAbove {
		return string(appendGridSVG(make([]byte, 0, len(grid.Blocks)*40+400), id, grid, mk, gridColumns(len(grid.Blocks), grid.Columns)))
	}
	buf := make([]byte, 0, len(grid.Blocks)*130+40)
	buf = append(buf, `<div class="blocks" role="list">`...)
	bs := grid.BlockSize
	for i, blk := range grid.Blocks {
		buf = append(buf, `<div role="listitem" data-ref="block:`...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, `" class="`...)
		buf = appendBlockClass(buf, blk, bs, mk.has(blockRef(i)))
		buf = append(buf, `" data-owner="`...)
		buf = strconv.AppendInt(buf, int64(blk.Owner), 10)
		buf = append(buf, `" title="block `...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		if blk.Owner == scene.Free && !blk.Cached {
			buf = append(buf, `: free"></div>`...)
			continue
		}
		if blk.Owner == scene.Free {
			buf = append(buf, ": free, holds a cached prefix "...)
			buf = appendEscaped(buf, blk.Label)
			buf = append(buf, `">`...)
			buf = appendEscaped(buf, blk.Label)
			buf = append(buf, `</div>`...)
			continue
		}
		buf = append(buf, ": "...)
		buf = appendEscaped(buf, blk.Label)
		buf = append(buf, ", "...)
		buf = strconv.AppendInt(buf, int64(blk.Used), 10)
		buf = append(buf, '/')
		buf = strconv.AppendInt(buf, int64(bs), 10)
		buf = append(buf, " tokens"...)
		if blk.Refs > 1 {
			buf = append(buf, ", "...)
			buf = strconv.AppendInt(buf, int64(blk.Refs), 10)
			buf = append(buf, " references"...)
		}
		if blk.Cached {
			buf = append(buf, ", cached"...)
		}
		buf = append(buf, `">`...)
		buf = appendEscaped(buf, blockLabel(blk))
		buf = append(buf, `</div>`...)
	}
	buf = append(buf, `</div>`...)
	return string(buf)
}

// appendEscaped appends s with the five HTML-special characters escaped.
func appendEscaped(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			buf = append(buf, "&lt;"...)
		case '>':
			buf = append(buf, "&gt;"...)
		case '&':
			buf = append(buf, "&amp;"...)
		case '"':
			buf = append(buf, "&#34;"...)
		case '\'':
			buf = append(buf, "&#39;"...)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// ownerColours is the number of owner colour classes in lab.css (c0…c11).
const ownerColours = 12

func blockClass(b scene.Block, bsize int, marked bool) string {
	return string(appendBlockClass(make([]byte, 0, 40), b, bsize, marked))
}

func appendBlockClass(buf []byte, b scene.Block, bsize int, marked bool) []byte {
	if b.Owner == scene.Free {
		buf = append(buf, "block free"...)
		if b.Cached {
			buf = append(buf, " cached"...)
		}
		if b.Highlight {
			buf = append(buf, " hl"...)
		}
		if marked {
			buf = append(buf, " marked"...)
		}
		return buf
	}
	fill := 0
	if bsize > 0 && b.Used > 0 {
		fill = (b.Used*4 + bsize - 1) / bsize
		if fill > 4 {
			fill = 4
		}
	}
	buf = append(buf, "block "...)
	buf = appendStyleClass(buf, b.Colour, b.Owner)
	buf = append(buf, " f"...)
	buf = append(buf, byte('0'+fill))
	if b.Refs > 1 {
		buf = append(buf, " shared"...)
	}
	if b.Cached {
		buf = append(buf, " cached"...)
	}
	if b.Highlight {
		buf = append(buf, " hl"...)
	}
	if marked {
		buf = append(buf, " marked"...)
	}
	return buf
}

// styleClass is the CSS class of an owner's style: the palette slot of
// Colour (scene.Colours) when set, else one derived from the owner: a
// colour c0…c11 and, past the first twelve slots, a fill pattern p1 or p2.
func styleClass(colour, owner int) string {
	return string(appendStyleClass(make([]byte, 0, 8), colour, owner))
}

// slotColours orders lab.css's colours (c0…c11) so that palette slots
// taken one after another differ most: cyan, amber, pink, green, indigo,
// orange, lime, violet, rose, teal, sky, yellow.
var slotColours = [ownerColours]int{0, 3, 4, 2, 1, 8, 5, 7, 10, 9, 6, 11}

func appendStyleClass(buf []byte, colour, owner int) []byte {
	if colour <= 0 {
		buf = append(buf, 'c')
		return strconv.AppendInt(buf, int64(abs(owner)%ownerColours), 10)
	}
	s := (colour - 1) % scene.Palette
	buf = append(buf, 'c')
	buf = strconv.AppendInt(buf, int64(slotColours[s%ownerColours]), 10)
	if p := s / ownerColours; p > 0 {
		buf = append(buf, " p"...)
		buf = strconv.AppendInt(buf, int64(p), 10)
	}
	return buf
}

func blockLabel(b scene.Block) string {
	if b.Owner == scene.Free {
		if b.Cached {
			return b.Label
		}
		return ""
	}
	l := b.Label
	if l == "" {
		l = strconv.Itoa(b.Owner)
	}
	if b.Refs > 1 {
		l += "×" + strconv.Itoa(b.Refs)
	}
	return l
}

func blockTitle(i int, b scene.Block, bsize int) string {
	if b.Owner == scene.Free {
		if b.Cached {
			return "block " + strconv.Itoa(i) + ": free, holds a cached prefix " + b.Label
		}
		return "block " + strconv.Itoa(i) + ": free"
	}
	t := "block " + strconv.Itoa(i) + ": " + b.Label + ", " + strconv.Itoa(b.Used) + "/" + strconv.Itoa(bsize) + " tokens"
	if b.Refs > 1 {
		t += ", " + strconv.Itoa(b.Refs) + " references"
	}
	if b.Cached {
		t += ", cached"
	}
	return t
}
