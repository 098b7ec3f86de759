package app

import (
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The cluster is drawn as a router above rows of workers (one row per pool:
// pools without a link are small multiples on one scale), or, when the
// scene has a link, as a prefill pool and a decode pool side by side with
// the link between them as a pipe labelled with its rate. Each worker shows
// its cache as a bar split by group (palette colour plus the group's name)
// and its queue as a second bar, both on the scene's scales; the router's
// cost for the travelling request is printed on each candidate. What
// travels in the step (a request, a request's KV) is a chip that mounts
// afresh each step and slides from where it came from to where it goes.

// Cluster layout, in viewBox units.
const (
	clRowW = 124.0 // a worker's box in a row
	clColW = 210.0 // a worker's box in a pool column (beside a link)
	clGap  = 12.0
	// clPerLine is the most workers a row holds on a laptop: six rows'
	// boxes (824 units) fit its figure column at the 0.92 scale that keeps
	// 11-unit labels at 10 px (web/lab.css). A phone's drawing holds two.
	clPerLine       = 6
	clPerLineNarrow = 2
	clRouterH       = 46.0
	clChipH         = 24.0
	clPx            = 12.0
	clSmallPx       = 11.0
	clPipeH         = 40.0
	clPipeMinW      = 300.0
)

// clLayout is where a cluster's parts lie.
type clLayout struct {
	w, h       float64
	workers    map[string]box
	router     box
	hasRouter  bool
	pipe       box
	poolLabels []struct {
		x, y float64
		text string
	}
	workerH float64
	boxW    float64
	mini    bool // workers drawn as their bars alone (clMiniW)
	// stacked: the pools above and below the link (a phone), the KV
	// flowing down the pipe rather than across it.
	stacked bool
}

// workerHeight is the height of every worker box of the scene: its
// header, its cache bar (with its figure under it, or in the header where
// no worker shows the router's cost), its queue and its lines; a mini
// worker has the bars alone.
func workerHeight(c *scene.Cluster, mini bool) float64 {
	lines := 0
	cache := false
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			lines = max(lines, len(w.Lines))
			cache = cache || len(w.Cache) > 0
		}
	}
	h := 24.0 // header
	if mini {
		if cache {
			h += 16
		}
		if c.QueueUnit != "" {
			h += 14
		}
		return h + 4
	}
	if c.QueueUnit != "" {
		h += 30
	}
	if cache {
		h += 34
		if cacheInHeader(c) {
			h -= 16
		}
	}
	return h + float64(lines)*14 + 6
}

// cacheInHeader reports whether the workers' cache figures go in their
// headers, after their names: where no worker shows the router's cost
// there and every name and figure fit a row's box side by side.
func cacheInHeader(c *scene.Cluster) bool {
	if hasCost(c) {
		return false
	}
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			total := 0.0
			for _, f := range w.Cache {
				total += f.Value
			}
			need := boldWidth(clPx)*float64(len([]rune(workerName(w)))) + charWidth(clSmallPx)*float64(len([]rune(formatNumber(total)+" "+c.CacheUnit))) + 28
			if need > clRowW {
				return false
			}
		}
	}
	return true
}

// hasCost reports whether a worker shows the router's cost in its header.
func hasCost(c *scene.Cluster) bool {
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			if w.Cost != "" {
				return true
			}
		}
	}
	return false
}

// clMiniW is a mini worker's box: more than two pools without a link are
// drawn with their workers' bars alone, a pool a row, so four policies of
// eight workers fit beside the narration; the figures are in each box's
// tooltip and the pools' callouts.
const clMiniW = 90.0

// clMarkRoom is the room above a row holding a marked worker, for its
// callout: between two rows there is only clGap.
const clMarkRoom = 24.0

// layoutCluster lays c out with at most perLine workers a row (rows
// balanced: 8 workers are two rows of 4), at least minW units wide; a row
// with a worker marks names gets room above it for the callout.
func layoutCluster(c *scene.Cluster, marks []scene.Mark, perLine int, minW float64) clLayout {
	marked := map[string]bool{}
	for _, m := range marks {
		marked[m.Ref] = true
	}
	mini := perLine > clPerLineNarrow && c.Link == nil && len(c.Pools) > 2
	l := clLayout{workers: map[string]box{}, workerH: workerHeight(c, mini), mini: mini}
	y := 8.0
	if c.Router != "" {
		l.hasRouter = true
		y += clRouterH + 30
		if c.Travel != nil && c.Link == nil {
			y += clChipH + 38 // the request on its way down, clear of the pool's label
		}
	}
	if c.Link != nil && len(c.Pools) >= 2 {
		l.boxW = clColW
		n := max(len(c.Pools[0].Workers), len(c.Pools[1].Workers))
		l.w = 2*clColW + clPipeMinW + 2*clGap + 40
		colH := float64(n)*(l.workerH+clGap) - clGap
		top := y + 48 // the pools' labels, and a callout above them
		for i, p := range c.Pools[:2] {
			x := 10.0
			if i == 1 {
				x = l.w - 10 - clColW
			}
			l.poolLabels = append(l.poolLabels, struct {
				x, y float64
				text string
			}{x, top - 6, p.Label})
			off := (colH - (float64(len(p.Workers))*(l.workerH+clGap) - clGap)) / 2
			for j, w := range p.Workers {
				l.workers[w.ID] = box{x, top + off + float64(j)*(l.workerH+clGap), clColW, l.workerH}
			}
		}
		px := 10 + clColW + clGap + 10
		l.pipe = box{px, top + colH/2 - clPipeH/2, l.w - 2*px, clPipeH}
		l.h = top + max(colH, clPipeH+50) + 8
	} else {
		l.boxW = clRowW
		if mini {
			l.boxW, perLine = clMiniW, 8
		}
		lineOf := func(n int) int { // a pool's row length: its rows balanced
			rows := (n + perLine - 1) / perLine
			return (n + max(rows, 1) - 1) / max(rows, 1)
		}
		per := 1
		for _, p := range c.Pools {
			per = max(per, lineOf(len(p.Workers)))
		}
		l.w = max(float64(per)*(l.boxW+clGap)+8, minW)
		for _, p := range c.Pools {
			y += 40 // the pool's label, and room for callouts over its workers
			l.poolLabels = append(l.poolLabels, struct {
				x, y float64
				text string
			}{4, y - 26, p.Label})
			y += poolCalloutRoom(p.Label, marks, l.w)
			line := max(lineOf(len(p.Workers)), 1)
			for row := 0; row*line < len(p.Workers); row++ {
				ws := p.Workers[row*line : min(len(p.Workers), (row+1)*line)]
				for _, w := range ws {
					if marked["worker:"+w.ID] {
						y += clMarkRoom
						break
					}
				}
				x0 := (l.w - float64(len(ws))*(l.boxW+clGap) + clGap) / 2
				for col, w := range ws {
					l.workers[w.ID] = box{x0 + float64(col)*(l.boxW+clGap), y, l.boxW, l.workerH}
				}
				y += l.workerH + clGap
			}
			y += 10
		}
		l.h = y + 4
	}
	if l.hasRouter {
		rw := min(460, l.w-20)
		l.router = box{(l.w - rw) / 2, 8, rw, clRouterH}
	}
	return l
}

// layoutLinkedStacked lays two pools joined by a link out for a phone:
// the first pool's workers two a row, the link across the figure under
// them, the second pool below, so nothing is cut off at 375 px.
func layoutLinkedStacked(c *scene.Cluster, marks []scene.Mark) clLayout {
	l := clLayout{workers: map[string]box{}, workerH: workerHeight(c, false), boxW: clRowW, stacked: true}
	l.w = float64(clPerLineNarrow)*(clRowW+clGap) + 8
	y := 8.0
	if c.Router != "" {
		l.hasRouter = true
		y += clRouterH + 30
	}
	place := func(p scene.Pool) {
		y += 40 // the pool's label, and room for a callout over its workers
		l.poolLabels = append(l.poolLabels, struct {
			x, y float64
			text string
		}{4, y - 26, p.Label})
		y += poolCalloutRoom(p.Label, marks, l.w)
		for j, w := range p.Workers {
			row, col := j/clPerLineNarrow, j%clPerLineNarrow
			inRow := min(clPerLineNarrow, len(p.Workers)-row*clPerLineNarrow)
			x0 := (l.w - float64(inRow)*(clRowW+clGap) + clGap) / 2
			l.workers[w.ID] = box{x0 + float64(col)*(clRowW+clGap), y + float64(row)*(l.workerH+clGap), clRowW, l.workerH}
		}
		rows := (len(p.Workers) + clPerLineNarrow - 1) / clPerLineNarrow
		y += float64(rows)*(l.workerH+clGap) + 10
	}
	place(c.Pools[0])
	y += 34 // the link's name and rate, above the pipe
	l.pipe = box{10, y, l.w - 20, clPipeH}
	y += clPipeH + 36 // the link's callout, below the pipe
	for _, p := range c.Pools[1:] {
		place(p)
	}
	l.h = y + 4
	if l.hasRouter {
		l.router = box{10, 8, l.w - 20, clRouterH}
	}
	return l
}

// wholeQueues says whether every queue is a whole number (requests, drawn
// as squares) rather than a mean (drawn as a bar).
func wholeQueues(c *scene.Cluster) bool {
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			if w.Queue != float64(int(w.Queue)) {
				return false
			}
		}
	}
	return true
}

// clScales are the bars' full lengths.
func clScales(c *scene.Cluster) (cacheMax, queueMax float64) {
	cacheMax, queueMax = c.CacheMax, c.QueueMax
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			sum := 0.0
			for _, f := range w.Cache {
				sum += f.Value
			}
			cacheMax = max(cacheMax, sum)
			queueMax = max(queueMax, w.Queue)
		}
	}
	return max(cacheMax, 1), max(queueMax, 1)
}

// renderCluster draws a scene.Cluster: rows of workers (pools beside a
// link), and for a phone a second drawing two workers wide, linked pools
// stacked (sysFigureFor).
func renderCluster(sc scene.Scene) app.UI {
	c := sc.Cluster
	wide := clusterPic(sc, layoutCluster(c, sc.Marks, clPerLine, 600))
	narrowLayout := layoutCluster(c, sc.Marks, clPerLineNarrow, 0)
	if c.Link != nil && len(c.Pools) >= 2 {
		narrowLayout = layoutLinkedStacked(c, sc.Marks)
	}
	narrow := clusterPic(sc, narrowLayout)
	count := 0
	for _, p := range c.Pools {
		count += len(p.Workers)
	}
	sub := comma(count) + " " + plural(count, "worker", "workers")
	if n := len(c.Pools); n > 1 && c.Link == nil && samePoolSize(c.Pools) {
		// Small multiples (the same workers under each policy, or a
		// replica's stages): so many rows of so many, not their sum.
		sub = comma(n) + " × " + comma(len(c.Pools[0].Workers)) + " " + plural(len(c.Pools[0].Workers), "worker", "workers")
	}
	if c.Link != nil {
		sub += " · link " + c.Link.Label + ", " + c.Link.Rate
	}
	return sysFigureFor(sc, "scene-cluster", sub, wide, &narrow, clBelow(c)...)
}

// poolCalloutRoom is the room a pool's label needs under it for its
// callout: none unless the pool is marked and the callout does not fit
// beside the label (clusterPic places it "right").
func poolCalloutRoom(label string, marks []scene.Mark, w float64) float64 {
	for _, m := range marks {
		if m.Ref == "pool:"+label && m.Label != "" && !calloutRight(m.Label, 4+boldWidth(12)*float64(len([]rune(label))), w) {
			return clMarkRoom
		}
	}
	return 0
}

// samePoolSize reports whether every pool has as many workers as the first.
func samePoolSize(ps []scene.Pool) bool {
	for _, p := range ps {
		if len(p.Workers) != len(ps[0].Workers) {
			return false
		}
	}
	return true
}

// clusterPic draws c in layout l.
func clusterPic(sc scene.Scene, l clLayout) sysPic {
	c := sc.Cluster
	marks := newMarkSet(sc.Marks)
	cacheMax, queueMax := clScales(c)
	var body []app.UI
	// The pipe's pattern: its id is the scene's, and the phone's drawing
	// has its own, so no two elements of the page share one.
	pid := sc.ID
	if l.stacked {
		pid += "-narrow"
	}
	if c.Link != nil {
		body = append(body, clDefs(pid))
	}
	if l.hasRouter {
		body = append(body, clRouter(c, l, marks))
	}
	if c.Link != nil && len(c.Pools) >= 2 {
		body = append(body, clPipe(pid, c, l, marks))
	}
	for _, pl := range l.poolLabels {
		if c.Link == nil || l.stacked {
			marks.place["pool:"+pl.text] = "right"
		}
		// Cut to the drawing's width (bold text: fitText's estimate scaled).
		text := fitText(pl.text, (l.w-pl.x-4)*charWidth(12)/boldWidth(12), 12)
		t := marks.tag(svgText(pl.x, pl.y, "sys-label cl-pool", text), "pool:"+pl.text, box{pl.x, pl.y - 12, boldWidth(12) * float64(len([]rune(text))), 15})
		body = append(body, t)
	}
	var workers []app.UI
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			workers = append(workers, clWorker(c, w, l.workers[w.ID], cacheMax, queueMax, marks, l.mini))
		}
	}
	body = append(body, svgEl("g").Class("cl-workers").Body(workers...))
	if c.Travel != nil {
		body = append(body, clTravel(c, l, marks))
	}
	body = append(body, marks.layer(l.w))
	return sysPic{l.w, l.h, body}
}

// clDefs holds the pipe's pattern (ids are unique per scene).
func clDefs(id string) app.UI {
	return svgEl("defs").Body(
		svgEl("pattern").ID("cl-flow-"+id).Attr("width", "12").Attr("height", "12").Attr("patternUnits", "userSpaceOnUse").
			Attr("patternTransform", "rotate(45)").Body(
			svgRect(0, 0, 12, 12, "cl-flow-a"),
			svgRect(0, 0, 6, 12, "cl-flow-b"),
		),
	)
}

// clRouter is the router's box.
func clRouter(c *scene.Cluster, l clLayout, marks *markSet) app.UI {
	b := l.router
	lines := wrapText(c.Router, b.w-20, clPx, 2)
	g := marks.tag(svgEl("g").Class("cl-router"), "router:R", b)
	body := []app.UI{svgTitle(c.Router), svgRect(b.x, b.y, b.w, b.h, "cl-router-box").Attr("rx", "8")}
	for i, line := range lines {
		y := b.y + b.h/2 + 4 + (float64(i)-float64(len(lines)-1)/2)*15
		body = append(body, svgText(b.x+b.w/2, y, "cl-router-text", line))
	}
	return g.Body(body...)
}

// clPipe is the link between the pools.
func clPipe(id string, c *scene.Cluster, l clLayout, marks *markSet) app.UI {
	p := l.pipe
	g := marks.tag(svgEl("g").Class("cl-link"), "link:KV", p)
	tip := c.Link.Label + ": " + c.Link.Rate
	if c.Link.Note != "" {
		tip += " (" + c.Link.Note + ")"
	}
	marks.place["link:KV"] = "below"
	ax := p.x + p.w - 4
	arrow := "M" + num(ax-14) + " " + num(p.y+8) + " L" + num(ax) + " " + num(p.y+p.h/2) + " L" + num(ax-14) + " " + num(p.y+p.h-8)
	if l.stacked { // the KV flows down, from the pool above to the one below
		cx := p.x + p.w/2
		arrow = "M" + num(cx-16) + " " + num(p.y+10) + " L" + num(cx) + " " + num(p.y+p.h-8) + " L" + num(cx+16) + " " + num(p.y+10)
	}
	return g.Body(
		svgTitle(tip),
		svgRect(p.x, p.y, p.w, p.h, "cl-pipe").Attr("rx", num(p.h/2)).Attr("fill", "url(#cl-flow-"+id+")"),
		svgEl("path").Class("cl-pipe-arrow").Attr("d", arrow),
		svgText(p.x+p.w/2, p.y-24, "cl-link-name", fitText(c.Link.Label, p.w+20, clPx)),
		svgText(p.x+p.w/2, p.y-8, "cl-link-rate", fitText(strings.TrimSpace(c.Link.Rate+" · "+c.Link.Note), p.w+20, clPx)),
	)
}

// clWorker is one worker's box: name, cost, cache bar, queue bar, lines.
func clWorker(c *scene.Cluster, w scene.Worker, b box, cacheMax, queueMax float64, marks *markSet, mini bool) app.UI {
	ref := "worker:" + w.ID
	marks.note(ref, b)
	cls := "cl-worker"
	if w.Chosen {
		cls += " chosen"
	}
	whole := wholeQueues(c)
	return &keyedSVG{Key: "cl-worker:" + w.ID, Build: func() app.UI {
		g := marks.apply(svgEl("g").Class(cls).Style("transform", "translate("+num(b.x)+"px, "+num(b.y)+"px)"), ref)
		inner := b.w - 16
		body := []app.UI{
			svgTitle(clWorkerTip(c, w)),
			svgRect(0, 0, b.w, b.h, "cl-box").Attr("rx", "6"),
			svgText(8, 17, "cl-name", workerName(w)),
		}
		if w.Cost != "" {
			body = append(body, svgText(b.w-8, 17, "cl-cost", fitText(w.Cost, b.w-40, clSmallPx)))
		}
		y := 26.0
		if len(w.Cache) > 0 || hasCache(c) {
			body = append(body, svgRect(8, y, inner, 12, "sys-free"))
			x, total := 8.0, 0.0
			for i, f := range w.Cache {
				fw := inner * f.Value / cacheMax
				body = append(body, &keyedSVG{Key: "fill:" + strconv.Itoa(f.Group) + ":" + strconv.Itoa(i), Build: clFill(x, y, fw, f.Group, c)})
				x += fw
				total += f.Value
			}
			figure := formatNumber(total) + " " + c.CacheUnit
			switch {
			case mini:
				y += 16
			case cacheInHeader(c):
				body = append(body, svgText(b.w-8, 17, "cl-small cl-end", figure))
				y += 18
			default:
				body = append(body, svgText(8, y+25, "cl-small", fitText(figure, inner, clSmallPx)))
				y += 34
			}
		}
		if c.QueueUnit != "" {
			if mini {
				qw := inner * min(w.Queue/queueMax, 1)
				body = append(body, svgRect(8, y, inner, 8, "sys-free"), svgRect(8, y, qw, 8, "cl-queue").Style("width", num(qw)+"px"))
				return g.Body(body...)
			}
			body = append(body, clQueue(w.Queue, queueMax, y, inner, whole)...)
			body = append(body, svgText(8, y+23, "cl-small", fitText(formatNumber(w.Queue)+" "+c.QueueUnit, inner, clSmallPx)))
			y += 30
		}
		if mini {
			return g.Body(body...)
		}
		for i, line := range w.Lines {
			body = append(body, svgText(8, y+12+float64(i)*14, "cl-small", fitText(line, inner, clSmallPx)))
		}
		return g.Body(body...)
	}}
}

// workerName is what a worker box prints.
func workerName(w scene.Worker) string {
	if w.Name != "" {
		return w.Name
	}
	return w.ID
}

// clQueue draws a queue: one square per request when it is a whole number
// that fits, else (a mean, or a long queue) a bar on the scene's scale.
func clQueue(q, queueMax, y, inner float64, whole bool) []app.UI {
	const sq, gap = 8.0, 2.0
	per := int((inner + gap) / (sq + gap))
	if whole && int(q) <= per {
		out := []app.UI{}
		for i := 0; i < per; i++ {
			cls := "cl-slot"
			if i < int(q) {
				cls = "cl-req"
			}
			out = append(out, svgRect(8+float64(i)*(sq+gap), y+1, sq, sq, cls).Attr("rx", "1.5"))
		}
		return out
	}
	qw := inner * min(q/queueMax, 1)
	return []app.UI{svgRect(8, y, inner, 10, "sys-free"), svgRect(8, y, qw, 10, "cl-queue").Style("width", num(qw)+"px")}
}

func hasCache(c *scene.Cluster) bool {
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			if len(w.Cache) > 0 {
				return true
			}
		}
	}
	return false
}

// clFill is one group's segment of a cache bar.
func clFill(x, y, w float64, g int, c *scene.Cluster) func() app.UI {
	return func() app.UI {
		name := "other cached blocks"
		if g >= 0 && g < len(c.Groups) {
			name = c.Groups[g]
		}
		r := svgRect(x, y, w, 12, "cl-fill "+paletteClass(g)).Style("x", num(x)+"px").Style("width", num(w)+"px")
		return svgEl("g").Body(svgTitle(name), r)
	}
}

// clWorkerTip is a worker's tooltip.
func clWorkerTip(c *scene.Cluster, w scene.Worker) string {
	s := "Worker " + workerName(w)
	if c.QueueLabel != "" {
		s += ": " + formatNumber(w.Queue) + " " + c.QueueLabel
	}
	if len(w.Cache) > 0 {
		for _, f := range w.Cache {
			name := "other"
			if f.Group >= 0 && f.Group < len(c.Groups) {
				name = c.Groups[f.Group]
			}
			s += "; " + name + " " + formatNumber(f.Value)
		}
	}
	if w.Cost != "" {
		s += "; " + w.Cost
	}
	for _, l := range w.Lines {
		s += "; " + l
	}
	if w.Chosen {
		s += "; chosen"
	}
	return s
}

// clTravel is the chip of what moves in this step, placed where it goes
// and sliding there from where it came from.
func clTravel(c *scene.Cluster, l clLayout, marks *markSet) app.UI {
	t := c.Travel
	to, ok := l.workers[t.To]
	if !ok {
		return svgEl("g")
	}
	const cw = 168.0
	var from box
	var end box
	if fw, ok := l.workers[t.From]; ok && c.Link != nil {
		// KV across the link: from the prefill worker into the pipe.
		pw := l.pipe.w - 36
		from = box{fw.x + fw.w/2 - pw/2, fw.y + fw.h/2 - clChipH/2, pw, clChipH}
		end = box{l.pipe.x + 8, l.pipe.y + l.pipe.h/2 - clChipH/2, pw, clChipH}
	} else {
		// A request from the router down to its worker.
		from = box{l.router.x + l.router.w/2 - cw/2, l.router.y + l.router.h/2 - clChipH/2, cw, clChipH}
		// It stops above the first pool's label (above the first row
		// of workers when there is none), over its own column, so a
		// worker in a lower row is not covered by the row above.
		top := to.y
		for _, b := range l.workers {
			top = min(top, b.y)
		}
		y := top - clChipH - 52
		if len(l.poolLabels) > 0 {
			y = min(y, l.poolLabels[0].y-14-12-clChipH) // the label's ascent, a gap
		}
		end = box{min(max(to.x+to.w/2-cw/2, 2), l.w-cw-2), y, cw, clChipH}
	}
	marks.note(t.Ref, end)
	path := ""
	if c.Link == nil {
		path = "M" + num(l.router.x+l.router.w/2) + " " + num(l.router.y+l.router.h) + " L" + num(to.x+to.w/2) + " " + num(end.y)
	}
	dx, dy := from.x-end.x, from.y-end.y
	return &keyedSVG{Key: "travel:" + t.Ref + ":" + t.From + ">" + t.To, Build: func() app.UI {
		g := marks.apply(svgEl("g").Class("cl-travel"), t.Ref)
		return g.Body(
			app.If(path != "", func() app.UI { return svgEl("path").Class("cl-route").Attr("d", path) }),
			svgEl("g").Class("cl-chip").Style("--dx", num(dx)+"px").Style("--dy", num(dy)+"px").Body(
				svgTitle(t.Label),
				svgRect(end.x, end.y, end.w, end.h, "cl-chip-box "+paletteClass(t.Group)).Attr("rx", "12"),
				svgText(end.x+end.w/2, end.y+16, "cl-chip-text", fitText(t.Label, end.w-12, clPx)),
			),
		)
	}}
}

// clBelow is the legend and the dashboard under the diagram.
func clBelow(c *scene.Cluster) []app.UI {
	var out []app.UI
	legend := []app.UI{}
	other := false
	for _, p := range c.Pools {
		for _, w := range p.Workers {
			for _, f := range w.Cache {
				other = other || f.Group < 0
			}
		}
	}
	for g, name := range c.Groups {
		legend = append(legend, app.Span().Class("key cl-key "+paletteClass(g)), app.Text(" "+name+" "))
	}
	if other {
		legend = append(legend, app.Span().Class("key cl-key cx"), app.Text(" other blocks "))
	}
	if hasCache(c) && c.CacheLabel != "" {
		legend = append(legend, app.Text(" — first bar: "+c.CacheLabel+"; "))
	}
	if c.QueueLabel != "" {
		legend = append(legend, app.Span().Class("key key-cl-queue"), app.Text(" "+c.QueueLabel))
	}
	if len(legend) > 0 {
		out = append(out, app.P().Class("legend").Body(legend...))
	}
	if len(c.Stats) > 0 {
		out = append(out, app.Dl().Class("cl-dash").Body(
			app.Range(c.Stats).Slice(func(i int) app.UI {
				st := c.Stats[i]
				return app.Div().Class("cl-stat").Title(st.Label+": "+st.Value).Body(app.Dt().Text(st.Label), app.Dd().Text(st.Value))
			}),
		))
	}
	return out
}
