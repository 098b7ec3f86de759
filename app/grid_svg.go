package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
)

// A compact grid (more than compactAbove blocks: cells too small for text)
// is drawn as one SVG instead of one element per block: a path per owner
// for its blocks' pale background, one for the part of each block that
// holds tokens, one each for the free blocks, the blocks changed this step,
// the shared and the cached ones, and a rect only for each marked block
// (data-ref="block:I", which the step's mentions and callouts name). The
// 2,048-block garage pool is about a hundred elements instead of 2,048,
// and a step change rewrites one string.
//
// What a cell used to carry in its own attributes is on the SVG, one entry
// per block, in order: data-owners (the owner, -1 when free) and data-used
// (tokens held), with data-labels naming each owner ("ID:LABEL;…"); web/lab.js
// (inferlab.gridReadout) reads them to name the block under the pointer or
// the keyboard cursor (the grid is focusable; arrow keys move the cursor),
// in the grid's readout line. docs/DOM.md has the contract.
//
// Geometry, in SVG units: a block is svgCell wide with svgGap between
// blocks; its tokens fill it from the bottom in quarters (as the HTML
// cells' f0…f4 classes).
const (
	svgPitch = 9 // one block and its gap
	svgCell  = 8 // 2 per quarter filled
)

// appendGridSVG appends the SVG of a compact grid drawn in cols columns.
// id makes the ids of its fill patterns unique in the page.
func appendGridSVG(buf []byte, id string, grid *scene.BlockGrid, mk marks, cols int) []byte {
	n := len(grid.Blocks)
	rows := max(1, (n+cols-1)/cols)
	bs := grid.BlockSize
	type owner struct {
		id        int
		style     string
		label     string
		bg, fill  []byte
		patterned byte // 0, '1' or '2'
		first     int
	}
	var owners []*owner
	byID := map[int]*owner{}
	var free, hl, shared, cached []byte
	var marked []int
	cell := func(p []byte, i, top, h int) []byte {
		x, y := (i%cols)*svgPitch, (i/cols)*svgPitch+top
		p = append(p, 'M')
		p = strconv.AppendInt(p, int64(x), 10)
		p = append(p, ' ')
		p = strconv.AppendInt(p, int64(y), 10)
		p = append(p, "h8v"...)
		p = strconv.AppendInt(p, int64(h), 10)
		p = append(p, "h-8z"...)
		return p
	}
	ownersAttr := make([]byte, 0, 3*n)
	usedAttr := make([]byte, 0, 3*n)
	for i, b := range grid.Blocks {
		if i > 0 {
			ownersAttr = append(ownersAttr, ',')
			usedAttr = append(usedAttr, ',')
		}
		ownersAttr = strconv.AppendInt(ownersAttr, int64(b.Owner), 10)
		usedAttr = strconv.AppendInt(usedAttr, int64(b.Used), 10)
		if mk.has(blockRef(i)) {
			marked = append(marked, i)
		}
		if b.Highlight {
			hl = cell(hl, i, 0, svgCell)
		}
		if b.Cached {
			cached = cell(cached, i, 0, svgCell)
		}
		if b.Owner == scene.Free {
			free = cell(free, i, 0, svgCell)
			continue
		}
		if b.Refs > 1 {
			shared = cell(shared, i, 0, svgCell)
		}
		o := byID[b.Owner]
		if o == nil {
			o = &owner{id: b.Owner, style: styleClass(b.Colour, b.Owner), label: b.Label, first: i}
			if o.label == "" {
				o.label = strconv.Itoa(b.Owner)
			}
			if s := o.style; len(s) > 3 && s[len(s)-3] == ' ' && s[len(s)-2] == 'p' {
				o.patterned = s[len(s)-1]
			}
			byID[b.Owner] = o
			owners = append(owners, o)
		}
		o.bg = cell(o.bg, i, 0, svgCell)
		if f := fillQuarters(b, bs); f > 0 {
			o.fill = cell(o.fill, i, svgCell-2*f, 2*f)
		}
	}
	w, h := cols*svgPitch-(svgPitch-svgCell), rows*svgPitch-(svgPitch-svgCell)
	buf = append(buf, `<svg class="blocks blocks-svg" viewBox="0 0 `...)
	buf = strconv.AppendInt(buf, int64(w), 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, int64(h), 10)
	buf = append(buf, `" preserveAspectRatio="none" tabindex="0" role="img" aria-label="`...)
	buf = appendEscaped(buf, gridAria(grid))
	buf = append(buf, `" data-cols="`...)
	buf = strconv.AppendInt(buf, int64(cols), 10)
	buf = append(buf, `" data-block-size="`...)
	buf = strconv.AppendInt(buf, int64(bs), 10)
	buf = append(buf, `" data-owners="`...)
	buf = append(buf, ownersAttr...)
	buf = append(buf, `" data-used="`...)
	buf = append(buf, usedAttr...)
	buf = append(buf, `" data-labels="`...)
	for k, o := range owners {
		if k > 0 {
			buf = append(buf, ';')
		}
		buf = strconv.AppendInt(buf, int64(o.id), 10)
		buf = append(buf, ':')
		buf = appendEscaped(buf, tabless(o.label))
	}
	buf = append(buf, `">`...)
	pat := func(p byte) string { return id + "-p" + string(p) }
	var pats [3]bool
	for _, o := range owners {
		if o.patterned == '1' || o.patterned == '2' {
			pats[o.patterned-'0'] = true
		}
	}
	if pats[1] || pats[2] {
		buf = append(buf, `<defs>`...)
		if pats[1] {
			buf = append(buf, `<pattern id="`+pat('1')+`" width="4" height="4" patternUnits="userSpaceOnUse"><circle cx="2" cy="2" r="0.9" fill="rgba(15,23,42,0.55)"/></pattern>`...)
		}
		if pats[2] {
			buf = append(buf, `<pattern id="`+pat('2')+`" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="1" height="4" fill="rgba(15,23,42,0.4)"/></pattern>`...)
		}
		buf = append(buf, `</defs>`...)
	}
	path := func(buf []byte, cls string, d []byte, extra string) []byte {
		if len(d) == 0 {
			return buf
		}
		buf = append(buf, `<path class="`...)
		buf = append(buf, cls...)
		buf = append(buf, '"')
		buf = append(buf, extra...)
		buf = append(buf, ` d="`...)
		buf = append(buf, d...)
		return append(buf, `"/>`...)
	}
	buf = path(buf, "free", free, "")
	for _, o := range owners {
		owner := ` data-owner="` + strconv.Itoa(o.id) + `"`
		buf = path(buf, "own "+o.style, o.bg, owner)
		buf = path(buf, "tok "+o.style, o.fill, "")
		if o.patterned != 0 {
			buf = path(buf, "pat", o.bg, ` fill="url(#`+pat(o.patterned)+`)"`)
		}
	}
	buf = path(buf, "cached", cached, "")
	buf = path(buf, "shared", shared, "")
	buf = path(buf, "hl", hl, "")
	for _, i := range marked {
		buf = append(buf, `<rect class="marked" data-ref="block:`...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, `" x="`...)
		buf = strconv.AppendInt(buf, int64((i%cols)*svgPitch), 10)
		buf = append(buf, `" y="`...)
		buf = strconv.AppendInt(buf, int64((i/cols)*svgPitch), 10)
		buf = append(buf, `" width="8" height="8"/>`...)
	}
	return append(buf, `</svg>`...)
}

// fillQuarters is how many quarters of a block its tokens fill (0…4, a
// started quarter counts), as the HTML cells' f0…f4 classes.
func fillQuarters(b scene.Block, bsize int) int {
	if bsize <= 0 || b.Used <= 0 {
		return 0
	}
	return min(4, (b.Used*4+bsize-1)/bsize)
}

// gridAria is a compact grid's accessible name: what it holds, and how to
// read it block by block.
func gridAria(grid *scene.BlockGrid) string {
	owned, used := 0, 0
	for _, b := range grid.Blocks {
		if b.Owner != scene.Free {
			owned++
			used += b.Used
		}
	}
	return comma(len(grid.Blocks)) + " blocks, " + comma(owned) + " in use, " + comma(used) + " tokens held; arrow keys read the blocks one by one"
}
