package app

import (
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The block grid draws up to a few thousand physical KV blocks. Building and
// diffing that many go-app elements per step would cost tens of milliseconds
// in WebAssembly, so the grid's cells are owned by this component, not by
// go-app's diff: the server prerenders them as raw HTML, and in the browser the
// component writes them once (innerHTML) and then patches only the cells that
// changed between steps. The cells persist, so CSS transitions run on them.

// maxPatch is the fraction of changed cells above which the whole grid is
// rewritten instead of patched cell by cell.
const maxPatchDivisor = 2

// gridView renders one scene.BlockGrid.
type gridView struct {
	app.Compo

	SceneID string
	Title   string
	// Get returns the grid to show. It is a func so that go-app never
	// deep-compares thousands of blocks: a func field always counts as
	// changed, and OnUpdate diffs against what the DOM shows.
	Get func() *scene.BlockGrid

	shown []scene.Block // what the DOM holds now (browser only)
	bsize int
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
	host := app.Div().ID("grid-"+g.SceneID).Class("block-grid", densityClass(n)).
		Aria("label", g.Title)
	if app.IsServer && grid != nil {
		host = host.Body(app.Raw(gridHTML(grid)))
	}
	return app.Figure().Class("scene", "scene-grid").DataSet("kind", string(scene.KindBlockGrid)).DataSet("scene-id", g.SceneID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(g.Title),
			app.Span().Class("scene-sub").Text(gridSummary(n, owned, used, bs)),
		),
		host,
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

func (g *gridView) OnMount(ctx app.Context) { g.paint() }

func (g *gridView) OnUpdate(ctx app.Context) {
	// OnUpdate runs before the re-render; the host node stays (same tag and
	// position), so patch it once the render is done.
	ctx.Defer(func(app.Context) { g.paint() })
}

func (g *gridView) OnDismount() { g.shown = nil }

// paint brings the DOM in line with the current grid, touching only cells
// that changed.
func (g *gridView) paint() {
	grid := g.grid()
	if grid == nil || app.IsServer {
		return
	}
	host := app.Window().GetElementByID("grid-" + g.SceneID)
	if host.IsNull() || host.IsUndefined() {
		return
	}
	blocks := grid.Blocks
	box := host.Get("firstElementChild")
	if len(g.shown) != len(blocks) || g.bsize != grid.BlockSize || box.IsNull() {
		g.rewrite(host, grid)
		return
	}
	var changed []int
	for i := range blocks {
		if blocks[i] != g.shown[i] {
			changed = append(changed, i)
			if len(changed) > len(blocks)/maxPatchDivisor {
				g.rewrite(host, grid)
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
			blk := blocks[i]
			if k > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strconv.Itoa(i))
			b.WriteByte('\t')
			b.WriteString(blockClass(blk, grid.BlockSize))
			b.WriteByte('\t')
			b.WriteString(strconv.Itoa(blk.Owner))
			b.WriteByte('\t')
			b.WriteString(tabless(blockLabel(blk)))
			b.WriteByte('\t')
			b.WriteString(tabless(blockTitle(i, blk, grid.BlockSize)))
			g.shown[i] = blk
		}
		helper.Call("patchGrid", box, b.String())
		return
	}
	cells := box.Get("children")
	for _, i := range changed {
		b := blocks[i]
		el := cells.Index(i)
		el.Set("className", blockClass(b, grid.BlockSize))
		el.Call("setAttribute", "data-owner", strconv.Itoa(b.Owner))
		el.Set("textContent", blockLabel(b))
		el.Set("title", blockTitle(i, b, grid.BlockSize))
		g.shown[i] = b
	}
}

// tabless keeps a field of the patch format free of separators.
func tabless(s string) string {
	if strings.ContainsAny(s, "\t\n") {
		return strings.NewReplacer("\t", " ", "\n", " ").Replace(s)
	}
	return s
}

func (g *gridView) rewrite(host app.Value, grid *scene.BlockGrid) {
	host.Set("innerHTML", gridHTML(grid))
	g.shown = append(g.shown[:0], grid.Blocks...)
	g.bsize = grid.BlockSize
}

// gridHTML renders the cells as one HTML string (one root element). It
// writes straight into one buffer: the server prerenders it and the browser
// uses it to (re)draw whole grids of up to 4,096 cells.
func gridHTML(grid *scene.BlockGrid) string {
	buf := make([]byte, 0, len(grid.Blocks)*110+40)
	buf = append(buf, `<div class="blocks" role="list">`...)
	bs := grid.BlockSize
	for i, blk := range grid.Blocks {
		buf = append(buf, `<div role="listitem" class="`...)
		buf = appendBlockClass(buf, blk, bs)
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

func blockClass(b scene.Block, bsize int) string {
	return string(appendBlockClass(make([]byte, 0, 32), b, bsize))
}

func appendBlockClass(buf []byte, b scene.Block, bsize int) []byte {
	if b.Owner == scene.Free {
		buf = append(buf, "block free"...)
		if b.Cached {
			buf = append(buf, " cached"...)
		}
		if b.Highlight {
			buf = append(buf, " hl"...)
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
	o := b.Owner % ownerColours
	if o < 0 {
		o = -o
	}
	buf = append(buf, "block c"...)
	buf = strconv.AppendInt(buf, int64(o), 10)
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
