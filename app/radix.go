package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The radix tree is drawn root at left, one column per depth: each node is
// a box holding its edge's tokens, with its length, lock_ref and last use;
// a link joins it to its parent. Leaves take one row each in the scene's
// order and a parent sits level with the middle of its children, so depth
// reads left to right. Each node and link is keyed by the node's ID: a node
// that moves (its edge was cut and it went one column right) slides there,
// a new node fades in, an evicted one fades out.

// Radix layout, in viewBox units.
const (
	rxTop     = 66.0  // room for the capacity bar and a callout under it
	rxRootW   = 56.0  // the root's box
	rxNodeW   = 236.0 // a node's box
	rxNodeH   = 72.0
	rxColGap  = 40.0
	rxRowH    = 102.0
	rxTextPx  = 13.0
	rxSmallPx = 11.0
	rxLines   = 3
	rxBarY    = 22.0 // the capacity bar, under its label
	rxBarH    = 16.0
	// A deep tree's boxes narrow, down to rxMinNodeW, so that the tree
	// fits rxFitW units: a laptop's figure column beside the narration
	// (about 800 px) at the least scale a wide picture is drawn at
	// (sysMinScale). Below rxTwoLineW a box's head takes two lines.
	rxFitW     = 860.0
	rxMinNodeW = 160.0
	rxTwoLineW = 200.0
)

// rxNodeWidth is the width of the nodes' boxes of a tree maxDepth deep.
func rxNodeWidth(maxDepth int) float64 {
	if maxDepth <= 0 {
		return rxNodeW
	}
	return min(rxNodeW, max(rxMinNodeW, (rxFitW-rxRootW)/float64(maxDepth)-rxColGap))
}

// radixDepth is the depth of the deepest node under id.
func radixDepth(kids map[int][]int, id int) int {
	d := 0
	for _, c := range kids[id] {
		d = max(d, 1+radixDepth(kids, c))
	}
	return d
}

// rxPlace is a node's box.
type rxPlace struct {
	x, y, w, h float64
	depth      int
}

// radixChildren is the tree's shape: each node's children in the scene's
// order, and the root (the first node without a parent; -1 for none).
func radixChildren(t *scene.RadixTree) (kids map[int][]int, root int) {
	kids, root = map[int][]int{}, -1
	for _, n := range t.Nodes {
		if n.Parent < 0 {
			if root < 0 {
				root = n.ID
			}
			continue
		}
		kids[n.Parent] = append(kids[n.Parent], n.ID)
	}
	return kids, root
}

// layoutRadix places every node: x by depth, y by leaf order.
func layoutRadix(t *scene.RadixTree) (map[int]rxPlace, float64, float64) {
	kids, root := radixChildren(t)
	place := map[int]rxPlace{}
	row, maxDepth := 0, 0
	nodeW := rxNodeW
	if root >= 0 {
		nodeW = rxNodeWidth(max(radixDepth(kids, root), t.LayoutDepth))
	}
	var walk func(id, depth int) float64
	walk = func(id, depth int) float64 {
		maxDepth = max(maxDepth, depth)
		var y float64
		if cs := kids[id]; len(cs) == 0 {
			y = rxTop + float64(row)*rxRowH
			row++
		} else {
			first := walk(cs[0], depth+1)
			last := first
			for _, c := range cs[1:] {
				last = walk(c, depth+1)
			}
			y = (first + last) / 2
		}
		x, w, h := 0.0, nodeW, rxNodeH
		if depth == 0 {
			w, h = rxRootW, 40
			y += (rxNodeH - h) / 2
		} else {
			x = rxRootW + rxColGap + float64(depth-1)*(nodeW+rxColGap)
		}
		place[id] = rxPlace{x: x, y: y, w: w, h: h, depth: depth}
		if depth == 0 {
			return y - (rxNodeH-h)/2
		}
		return y
	}
	if root >= 0 {
		walk(root, 0)
	}
	w := rxRootW + float64(maxDepth)*(nodeW+rxColGap)
	h := rxTop + float64(max(row, 1))*rxRowH
	return place, max(w, 560), h
}

// renderRadix draws a scene.RadixTree: the tree in columns by depth, and
// for a phone a second drawing as an outline (sysFigureFor).
func renderRadix(sc scene.Scene) app.UI {
	t := sc.Radix
	wide, narrow := radixPic(sc, false), radixPic(sc, true)
	sub := comma(len(t.Nodes)-countState(t, scene.NodeEvicted)) + " nodes · " + comma(t.Cached) + " " + t.Unit + " cached"
	if t.Capacity > 0 {
		sub = comma(len(t.Nodes)-countState(t, scene.NodeEvicted)) + " nodes · " + comma(t.Cached) + " of " + comma(t.Capacity) + " " + t.Unit + " cached"
	}
	return sysFigureFor(sc, "scene-radix", sub, wide, &narrow, radixLegend())
}

// radixPic draws the tree in columns by depth, or (narrow) as an outline.
func radixPic(sc scene.Scene, narrow bool) sysPic {
	t := sc.Radix
	marks := newMarkSet(sc.Marks)
	var place map[int]rxPlace
	var w, h float64
	if narrow {
		place, w, h = layoutRadixOutline(t, marks)
	} else {
		place, w, h = layoutRadix(t)
	}
	var links, nodes []app.UI
	for _, n := range t.Nodes {
		p, ok := place[n.ID]
		if !ok {
			continue
		}
		if pp, ok := place[n.Parent]; ok {
			links = append(links, radixLink(n, pp, p, narrow))
		}
		nodes = append(nodes, radixNode(n, p, marks, narrow))
	}
	var capBar app.UI = svgEl("g")
	if t.Capacity > 0 {
		capBar = radixCapacity(t, w, marks, narrow)
	}
	body := []app.UI{
		capBar,
		svgEl("g").Class("rx-links").Body(links...),
		svgEl("g").Class("rx-nodes").Body(nodes...),
		marks.layer(w),
	}
	return sysPic{w, h, body}
}

// The outline drawn for a phone, in viewBox units: one row per node in
// depth-first order, each indented under its parent and as wide as the
// drawing allows, its link an elbow from the parent's left edge.
const (
	rxOutlineW      = 320.0 // a phone's figure is about 320 px wide: 11-unit text at 11 px
	rxOutlineTop    = 66.0  // the capacity bar's two lines and the bar
	rxOutlineBarY   = 40.0  // the capacity bar, under its two lines
	rxOutlineIndent = 16.0  // per depth
	rxOutlineNodeH  = 50.0  // a head line and two lines of tokens
	rxOutlineGap    = 8.0
	rxOutlineRootW  = 56.0
	rxOutlineRootH  = 28.0
	rxOutlineMarkH  = 24.0 // room above a marked node for its callout
	rxOutlineLines  = 2
)

// layoutRadixOutline places every node of the outline: rows in depth-first
// order (a parent above its children), x by depth.
func layoutRadixOutline(t *scene.RadixTree, marks *markSet) (map[int]rxPlace, float64, float64) {
	kids, root := radixChildren(t)
	place := map[int]rxPlace{}
	y := 4.0 // no capacity bar: the tree from the top
	if t.Capacity > 0 {
		y = rxOutlineTop
	}
	if _, marked := marks.label["cache:capacity"]; marked && t.Capacity > 0 {
		// Above the bar are its two lines of text: the callout goes under
		// it, in room of its own.
		marks.place["cache:capacity"] = "below"
		y += rxOutlineMarkH
	}
	var walk func(id, depth int)
	walk = func(id, depth int) {
		if _, marked := marks.label["node:"+strconv.Itoa(id)]; marked {
			y += rxOutlineMarkH
		}
		x, w, h := rxOutlineIndent*float64(depth), rxOutlineW-rxOutlineIndent*float64(depth), rxOutlineNodeH
		if depth == 0 {
			x, w, h = 0, rxOutlineRootW, rxOutlineRootH
		}
		place[id] = rxPlace{x: x, y: y, w: w, h: h, depth: depth}
		y += h + rxOutlineGap
		for _, c := range kids[id] {
			walk(c, depth+1)
		}
	}
	if root >= 0 {
		walk(root, 0)
	}
	return place, rxOutlineW, y
}

func countState(t *scene.RadixTree, state string) int {
	n := 0
	for _, nd := range t.Nodes {
		if nd.State == state {
			n++
		}
	}
	return n
}

// radixCapacity is the bar over the tree: locked, evictable and free
// tokens of the cache's capacity.
// On a phone's outline its label takes two lines over the bar.
func radixCapacity(t *scene.RadixTree, w float64, marks *markSet, narrow bool) app.UI {
	y, bh := rxBarY, rxBarH
	if narrow {
		y = rxOutlineBarY
	}
	capacity := float64(max(t.Capacity, 1))
	locked := float64(min(t.Locked, t.Cached))
	evictable := float64(t.Cached) - locked
	lw := w * locked / capacity
	ew := w * evictable / capacity
	held := comma(t.Cached) + " of " + comma(t.Capacity) + " " + t.Unit + " cached:"
	split := comma(int(locked)) + " locked, " + comma(int(evictable)) + " evictable, " + comma(max(0, t.Capacity-t.Cached)) + " free"
	label := held + " " + split
	bar := svgEl("g").Class("rx-capacity")
	text := []app.UI{svgText(0, 14, "sys-label", fitText(label, w, rxSmallPx+1))}
	if narrow {
		text = []app.UI{
			svgText(0, 14, "sys-label", fitText(held, w, rxSmallPx+1)),
			svgText(0, 31, "sys-label", fitText(split, w, rxSmallPx+1)),
		}
	}
	return marks.tag(bar, "cache:capacity", box{0, y, w, bh}).Body(
		svgTitle(label),
		app.Range(text).Slice(func(i int) app.UI { return text[i] }),
		svgRect(0, y, w, bh, "sys-free"),
		svgRect(0, y, lw, bh, "rx-cap-locked").Style("width", num(lw)+"px"),
		svgRect(lw, y, ew, bh, "rx-cap-evictable").Style("x", num(lw)+"px").Style("width", num(ew)+"px"),
	)
}

// radixLink is the link from a node's parent to the node: a curve from
// the parent's right edge, or in the outline an elbow down from under the
// parent's left edge. Both are three-segment paths of the same commands,
// so CSS can move one into another.
func radixLink(n scene.RadixNode, from, to rxPlace, outline bool) app.UI {
	x0, y0 := from.x+from.w, from.y+from.h/2
	x1, y1 := to.x, to.y+to.h/2
	mx := (x0 + x1) / 2
	d := "M" + num(x0) + " " + num(y0) + " C" + num(mx) + " " + num(y0) + " " + num(mx) + " " + num(y1) + " " + num(x1) + " " + num(y1)
	if outline {
		x0, y0 = from.x+rxOutlineIndent/2, from.y+from.h
		d = "M" + num(x0) + " " + num(y0) + " C" + num(x0) + " " + num(y1) + " " + num(x0) + " " + num(y1) + " " + num(x1) + " " + num(y1)
	}
	cls := "rx-link"
	if n.State != "" {
		cls += " rx-" + n.State
	}
	return &keyedSVG{Key: "rx-link:" + strconv.Itoa(n.ID), Build: func() app.UI {
		return svgEl("path").Class(cls).Attr("d", d).Style("d", "path('"+d+"')")
	}}
}

// radixNode is one node's box: its edge's tokens, its length, lock_ref and
// last use.
func radixNode(n scene.RadixNode, p rxPlace, marks *markSet, outline bool) app.UI {
	ref := "node:" + strconv.Itoa(n.ID)
	cls := "rx-node"
	if n.State != "" {
		cls += " rx-" + n.State
	}
	switch {
	case n.Parent < 0:
		cls += " rx-root"
	case n.LockRef > 0:
		cls += " rx-locked"
	default:
		cls += " rx-evictable"
	}
	tip := radixTip(n)
	marks.note(ref, box{p.x, p.y, p.w, p.h})
	return &keyedSVG{Key: "rx-node:" + strconv.Itoa(n.ID), Build: func() app.UI {
		g := svgEl("g").Class(cls).Style("transform", "translate("+num(p.x)+"px, "+num(p.y)+"px)")
		g = marks.apply(g, ref)
		if n.Parent < 0 {
			return g.Body(svgTitle(tip), svgRect(0, 0, p.w, p.h, "rx-box").Attr("rx", "20"), svgText(p.w/2, p.h/2+5, "rx-root-text", "root"))
		}
		right := "lock_ref " + strconv.Itoa(n.LockRef) + " · t" + strconv.FormatUint(n.LastUse, 10)
		if n.State == scene.NodeEvicted {
			right = "evicted"
		}
		head := "#" + strconv.Itoa(n.ID) + " · " + comma(n.Tokens) + " " + plural(n.Tokens, "token", "tokens")
		body := []app.UI{
			svgTitle(tip),
			svgRect(0, 0, p.w, p.h, "rx-box").Attr("rx", "6"),
			svgText(8, 14, "rx-head", head),
			svgText(p.w-8, 14, "rx-head rx-end rx-lockref", right),
		}
		top, lines, pitch := 32.0, rxLines, 15.0
		switch {
		case outline:
			top, lines, pitch = 31, rxOutlineLines, 14
		case p.w < rxTwoLineW:
			// A narrow box: the lock and last use on a second line, the
			// edge's tokens on the two left.
			body[3] = svgText(8, 28, "rx-head rx-lockref", right)
			top, lines = 46, rxLines-1
		}
		for i, line := range wrapText(n.Text, p.w-16, rxTextPx, lines) {
			body = append(body, svgText(8, top+float64(i)*pitch, "rx-tokens", line))
		}
		return g.Body(body...)
	}}
}

// radixTip is a node's tooltip.
func radixTip(n scene.RadixNode) string {
	if n.Parent < 0 {
		return "The root: every cached prefix starts here"
	}
	s := "Node #" + strconv.Itoa(n.ID) + ": edge of " + comma(n.Tokens) + " " + plural(n.Tokens, "token", "tokens") + " \u201c" + n.Text + "\u201d; lock_ref " +
		strconv.Itoa(n.LockRef) + "; last use at tick " + strconv.FormatUint(n.LastUse, 10)
	switch n.State {
	case scene.NodeNew:
		s += "; inserted in this step"
	case scene.NodeSplit:
		s += "; created in this step by splitting an edge"
	case scene.NodeCut:
		s += "; its edge was cut in this step"
	case scene.NodeMatched:
		s += "; matched in this step"
	case scene.NodeEvicted:
		s += "; evicted in this step"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// radixLegend says what the boxes' styles mean.
func radixLegend() app.UI {
	return app.P().Class("legend").Body(
		app.Span().Class("key key-rx-locked"), app.Text(" locked (lock_ref > 0: a running request holds it) "),
		app.Span().Class("key key-rx-evictable"), app.Text(" cached, evictable "),
		app.Span().Class("key key-rx-new"), app.Text(" new or split in this step "),
		app.Span().Class("key key-rx-evicted"), app.Text(" evicted in this step"),
	)
}
