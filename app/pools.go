package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// poolsView draws two KV pools side by side in one figure (scene.KindPools):
// the paged pool as a compact block grid and the contiguous pool as a strip
// cut into bays of Strip.Bay slots (one max-context reservation each),
// reserved runs' used part filled and their reserved-but-empty part
// hatched, each pool with its queue beneath. Both pools are drawn over the
// same area, so equal areas are equal memory. The grid's cells are painted
// as gridView's are; the rest is go-app elements, kept in a stable order
// (one row per bay) so that steps reuse the nodes and the bars grow and
// shrink by CSS transitions.
type poolsView struct {
	app.Compo

	SceneID string
	// Get returns the scene; a func so that go-app never deep-compares the
	// grid (see gridView.Get).
	Get func() *scene.Scene

	cells gridCells
}

func (p *poolsView) CompoID() string { return "pools:" + p.SceneID }

func (p *poolsView) scene() *scene.Scene {
	if p.Get == nil {
		return nil
	}
	return p.Get()
}

func (p *poolsView) Render() app.UI {
	sc := p.scene()
	if sc == nil || sc.Grid == nil || sc.Strip == nil {
		return app.Figure().Class("scene", "scene-pools").DataSet("kind", string(scene.KindPools)).DataSet("scene-id", p.SceneID)
	}
	mk := marksOf(sc.Marks)
	grid, strip := sc.Grid, sc.Strip
	n := len(grid.Blocks)
	cols := poolColumns(grid)
	rows := max(1, (n+cols-1)/cols)
	aspect := strconv.Itoa(cols) + " / " + strconv.Itoa(rows)
	owned, used := 0, 0
	for _, b := range grid.Blocks {
		if b.Owner != scene.Free {
			owned++
			used += b.Used
		}
	}
	reserved, held := 0, 0
	for _, s := range strip.Segments {
		reserved += s.Len
		held += s.Used
	}
	pagedReqs, contigReqs := countOwners(grid), len(strip.Segments)
	return app.Figure().Class("scene", "scene-pools").DataSet("kind", string(scene.KindPools)).DataSet("scene-id", p.SceneID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
			app.Span().Class("scene-sub").Text("the same "+comma(strip.Total)+" KV slots, two ways: equal areas are equal memory"),
		),
		app.Div().Class("pools").Body(
			p.pool(mk, "paged", "Paged pool", comma(n)+" blocks × "+strconv.Itoa(grid.BlockSize)+" tokens",
				comma(pagedReqs)+" "+plural(pagedReqs, "request", "requests")+" · "+poolPct(float64(used), float64(n*grid.BlockSize))+" of slots hold tokens",
				app.Div().Class("pool-area").Style("aspect-ratio", aspect).Body(gridArea(p.SceneID, "Paged pool", gridWithColumns(grid, cols), mk)),
				gridNotes(grid, mk), queueOf(sc.Queues, "paged")),
			p.pool(mk, "contiguous", "Contiguous pool", bayWords(strip),
				comma(contigReqs)+" "+plural(contigReqs, "request", "requests")+" · "+poolPct(float64(held), float64(strip.Total))+" hold tokens · "+
					poolPct(float64(reserved-held), float64(max(reserved, 1)))+" of reserved empty",
				app.Div().Class("pool-area").Style("aspect-ratio", aspect).Body(renderBays(strip, mk)),
				runNotes(strip, mk), queueOf(sc.Queues, "contiguous")),
		),
		app.P().Class("legend").Body(
			app.Span().Class("key key-free"), app.Text(" free "),
			app.Span().Class("key key-used"), app.Text(" tokens held "),
			app.Span().Class("key key-reserved"), app.Text(" reserved but empty "),
			app.Span().Class("key key-hl"), app.Text(" changed this step · labels name the requests (hover a block)"),
		),
	)
}

// pool is one pool's column (a named group, not a landmark: a comparison
// draws two of each pool): its name, its state with the callouts of the
// blocks or runs marked in its picture, its picture and its queue.
func (p *poolsView) pool(mk marks, key, name, shape, state string, picture app.UI, notes []app.UI, q *scene.Queue) app.UI {
	ref := "pool:" + key
	return app.Div().Role("group").Class(mk.class("pool pool-"+key, ref)).DataSet("ref", ref).Aria("label", name+", "+shape).Body(
		app.Div().Class("pool-head").Body(
			app.H3().Class("pool-name").Text(name),
			app.Span().Class("pool-shape").Text(shape),
			app.If(mk.has(ref), func() app.UI {
				return app.Span().Class("callout pool-callout").DataSet("for", ref).Text(mk.label(ref, name))
			}),
		),
		app.P().Class("pool-state").Body(append([]app.UI{app.Text(state)}, notes...)...),
		picture,
		renderQueue(key, q, mk),
	)
}

// gridWithColumns is grid drawn in cols columns.
func gridWithColumns(g *scene.BlockGrid, cols int) *scene.BlockGrid {
	if g.Columns == cols {
		return g
	}
	c := *g
	c.Columns = cols
	return &c
}

func countOwners(g *scene.BlockGrid) int {
	seen := map[int]bool{}
	for _, b := range g.Blocks {
		if b.Owner != scene.Free {
			seen[b.Owner] = true
		}
	}
	return len(seen)
}

// poolPct formats part/whole as a percentage with one decimal.
func poolPct(part, whole float64) string {
	if whole <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*part/whole, 'f', 1, 64) + "%"
}

// bayWords describes the contiguous pool's shape.
func bayWords(st *scene.MemoryStrip) string {
	if st.Bay <= 0 || st.Bay >= st.Total {
		return comma(st.Total) + " slots"
	}
	return comma(st.Total/st.Bay) + " bays × " + comma(st.Bay) + " slots"
}

// queueOf returns the queue of a pool, or nil.
func queueOf(qs []scene.Queue, pool string) *scene.Queue {
	for i := range qs {
		if qs[i].Pool == pool {
			return &qs[i]
		}
	}
	return nil
}

// renderBays draws a contiguous strip as rows of Bay slots; a run that
// crosses a row's end continues on the next row. The row count is fixed
// by the pool, so the DOM keeps its shape from step to step.
func renderBays(st *scene.MemoryStrip, mk marks) app.UI {
	bay := st.Bay
	if bay <= 0 || bay > st.Total {
		bay = max(st.Total, 1)
	}
	rows := (st.Total + bay - 1) / bay
	type piece struct {
		seg        scene.Segment
		start, len int // within the row
		used       int
		first      bool
	}
	pieces := make([][]piece, rows)
	for _, s := range st.Segments {
		for at := s.Start; at < s.Start+s.Len; {
			r := at / bay
			if r >= rows {
				break
			}
			end := min(s.Start+s.Len, (r+1)*bay)
			u := min(max(s.Used-(at-s.Start), 0), end-at)
			pieces[r] = append(pieces[r], piece{seg: s, start: at - r*bay, len: end - at, used: u, first: at == s.Start})
			at = end
		}
	}
	pct := func(x int) string { return strconv.FormatFloat(100*float64(x)/float64(bay), 'f', 3, 64) + "%" }
	// A group of bays, each holding runs a list of them (a list's children
	// must be its items: the runs sit inside their bay).
	return app.Div().Class("memory-strip bays").Role("group").Aria("label", "contiguous pool").Style("--rows", strconv.Itoa(rows)).Body(
		app.Range(pieces).Slice(func(r int) app.UI {
			row := pieces[r]
			box := app.Div().Class("bay")
			if len(row) > 0 { // a list with no items is not one
				box = box.Role("list").Aria("label", "bay "+strconv.Itoa(r+1))
			}
			return box.Body(
				app.Range(row).Slice(func(j int) app.UI {
					pc := row[j]
					s := pc.seg
					ref := reqRef(s.Label)
					cls := "segment " + styleClass(s.Colour, s.Owner)
					if s.Highlight {
						cls += " hl"
					}
					if pc.first {
						cls = mk.class(cls, ref)
					}
					fill := 0.0
					if pc.len > 0 {
						fill = 100 * float64(pc.used) / float64(pc.len)
					}
					el := app.Div().Class(cls).Role("listitem").DataSet("owner", s.Owner).
						Style("left", pct(pc.start)).Style("width", pct(pc.len)).
						Title("%s: slots %d–%d reserved (%d), %d hold tokens, %d reserved but empty", s.Label, s.Start, s.Start+s.Len-1, s.Len, s.Used, s.Len-s.Used)
					if pc.first {
						el = el.DataSet("ref", ref)
					}
					return el.Body(
						app.Span().Class("seg-used").Style("width", strconv.FormatFloat(fill, 'f', 1, 64)+"%").Aria("hidden", "true"),
						app.Span().Class("seg-label").Text(segText(pc.first, s)),
					)
				}),
			)
		}),
	)
}

// segText is a run's label: its request and how much it holds.
func segText(first bool, s scene.Segment) string {
	if !first {
		return s.Label + " (cont.)"
	}
	return s.Label + " · " + comma(s.Used) + "/" + comma(s.Len)
}

// runNotes are the callouts of the marked runs, in the strip's order, as
// chips beside the pool's state: over a bay one would cover the run's own
// label, and a narrow pool (a phone, a comparison) has no room for it.
func runNotes(st *scene.MemoryStrip, mk marks) []app.UI {
	var out []app.UI
	for _, s := range st.Segments {
		if ref := reqRef(s.Label); mk.has(ref) {
			out = append(out, noteChip(ref, mk.label(ref, s.Label)))
		}
	}
	return out
}

// reqRef is the reference of a request by its label ("req:R17").
func reqRef(label string) string { return "req:" + label }

// renderQueue draws a pool's queue, first in line first: a refused request
// turned away (red, with why), a preempted one marked as sent back.
func renderQueue(pool string, q *scene.Queue, mk marks) app.UI {
	var items []scene.QueueItem
	more := 0
	if q != nil {
		items, more = q.Items, q.More
	}
	total := len(items) + more
	return app.Div().Class("queue-wrap").Body(
		app.Span().Class("queue-label").Text("waiting ("+comma(total)+")"),
		app.Ol().Class("queue").DataSet("pool", pool).Aria("label", "waiting for the "+pool+" pool").Body(
			app.Range(items).Slice(func(i int) app.UI {
				it := items[i]
				ref := "queue:" + pool + ":" + it.Label
				title := it.Label + " asks for " + comma(it.Tokens) + " tokens"
				text := it.Label
				switch it.State {
				case "refused":
					title += ": refused this step"
					text = "✗ " + it.Label
					if it.Why != "" {
						title += " (" + it.Why + ")"
					}
				case "preempted":
					title += ": preempted this step, back in line"
					text = "↩ " + it.Label
				}
				return app.Li().Class(mk.class("q-item q-"+safeClass(it.State), ref)).DataSet("ref", ref).Title("%s", title).Body(
					app.Span().Class("q-name").Text(text),
					app.If(it.State == "refused" && it.Why != "", func() app.UI { return app.Span().Class("q-why").Text(it.Why) }),
					app.If(mk.has(ref), func() app.UI {
						return app.Span().Class("callout q-callout").DataSet("for", ref).Text(mk.label(ref, it.Label))
					}),
				)
			}),
			app.If(more > 0, func() app.UI { return app.Li().Class("q-more").Text("+" + comma(more) + " more") }),
			app.If(total == 0, func() app.UI { return app.Li().Class("q-empty").Text("no one") }),
		),
	)
}

func (p *poolsView) OnMount(ctx app.Context) { p.paint() }

func (p *poolsView) OnUpdate(ctx app.Context) {
	ctx.Defer(func(app.Context) { p.paint() })
}

func (p *poolsView) OnDismount() { p.cells.reset() }

func (p *poolsView) paint() {
	sc := p.scene()
	if sc == nil || sc.Grid == nil {
		return
	}
	p.cells.paint("grid-"+p.SceneID, gridWithColumns(sc.Grid, poolColumns(sc.Grid)), marksOf(sc.Marks))
}

// poolColumns is the paged pool's columns: a near 2:1 rectangle whatever
// its size, so that the two pools keep one shape.
func poolColumns(g *scene.BlockGrid) int {
	if g.Columns > 0 {
		return g.Columns
	}
	n := len(g.Blocks)
	c := 2
	for c*c < 2*n {
		c++
	}
	return c
}
