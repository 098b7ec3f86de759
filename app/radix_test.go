package app

import (
	"strconv"
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/scene"
)

// outlineTree is a small cache: two prompts sharing a system prompt, one of
// them branching again, and a second root child.
func outlineTree() *scene.RadixTree {
	return &scene.RadixTree{Capacity: 4096, Cached: 900, Locked: 300, Unit: "tokens", Nodes: []scene.RadixNode{
		{ID: 0, Parent: -1},
		{ID: 1, Parent: 0, Text: "You are a helpful assistant. Answer briefly and cite sources.", Tokens: 400, LockRef: 1},
		{ID: 2, Parent: 1, Text: "What is a KV cache?", Tokens: 200, LastUse: 3},
		{ID: 3, Parent: 1, Text: "Explain paged attention", Tokens: 100, LastUse: 4},
		{ID: 4, Parent: 3, Text: "in one paragraph", Tokens: 100, LastUse: 5, State: scene.NodeNew},
		{ID: 5, Parent: 0, Text: "Translate to French:", Tokens: 100, LastUse: 2},
	}}
}

// TestRadixOutline: the phone's drawing of the tree is an outline within
// its 320 units: one row per node in depth-first order (a parent above its
// children, a subtree before its next sibling), indented by depth, rows
// apart, and room above a marked node for its callout.
func TestRadixOutline(t *testing.T) {
	tree := outlineTree()
	marks := newMarkSet([]scene.Mark{{Ref: "node:3", Label: "matched"}})
	place, w, h := layoutRadixOutline(tree, marks)
	if w != rxOutlineW {
		t.Fatalf("width %v, want %v", w, rxOutlineW)
	}
	order := []int{0, 1, 2, 3, 4, 5} // depth-first
	depth := map[int]int{0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 5: 1}
	prevBottom := 0.0
	for i, id := range order {
		p, ok := place[id]
		if !ok {
			t.Fatalf("node %d not placed", id)
		}
		if p.x != rxOutlineIndent*float64(depth[id]) {
			t.Errorf("node %d at x %v, want %v (depth %d)", id, p.x, rxOutlineIndent*float64(depth[id]), depth[id])
		}
		if p.x+p.w > w || p.y+p.h > h {
			t.Errorf("node %d (%v,%v %vx%v) outside the %vx%v drawing", id, p.x, p.y, p.w, p.h, w, h)
		}
		if i > 0 {
			gap := p.y - prevBottom
			want := rxOutlineGap
			if id == 3 {
				want += rxOutlineMarkH
			}
			if gap != want {
				t.Errorf("node %d starts %v under the row above, want %v", id, gap, want)
			}
		}
		prevBottom = p.y + p.h
	}

	// A marked root and a marked capacity bar: the bar's callout under the
	// bar (its two lines of text are above it), the root's above the root,
	// each in room of its own.
	both := newMarkSet([]scene.Mark{{Ref: "cache:capacity", Label: "0 of 48"}, {Ref: "node:0", Label: "root"}})
	top, _, _ := layoutRadixOutline(tree, both)
	const barBottom = rxOutlineBarY + rxBarH
	if both.place["cache:capacity"] != "below" {
		t.Errorf("the capacity bar's callout is placed %q, want below the bar", both.place["cache:capacity"])
	}
	if gap := top[0].y - barBottom; gap < 2*rxOutlineMarkH {
		t.Errorf("the marked root starts %v under the marked bar, want room for two callouts (%v)", gap, 2*rxOutlineMarkH)
	}
	plain, _, _ := layoutRadixOutline(tree, newMarkSet([]scene.Mark{{Ref: "node:0", Label: "root"}}))
	if gap := plain[0].y - barBottom; gap < rxOutlineMarkH {
		t.Errorf("the marked root starts %v under the bar, want room for its callout (%v)", gap, rxOutlineMarkH)
	}

	// Both drawings are in the figure; the outline's links are elbows
	// down from under the parent.
	html := app.HTMLString(&sceneView{Scene: scene.Scene{ID: "tree", Kind: scene.KindRadixTree, Title: "Radix tree", Radix: tree,
		Marks: []scene.Mark{{Ref: "node:3", Label: "matched"}}}})
	if !strings.Contains(html, `viewBox="0 0 `+num(rxOutlineW)+` `) || strings.Count(html, `data-ref="node:3"`) != 2 {
		t.Errorf("want the wide drawing and a 320-unit outline, each naming node 3:\n%s", html)
	}
	p1, p3 := place[1], place[3]
	elbow := "M" + num(p1.x+rxOutlineIndent/2) + " " + num(p1.y+p1.h) + " C"
	if !strings.Contains(html, elbow) {
		t.Errorf("no link from under node 1 (%q) to node 3 at y %s", elbow, strconv.FormatFloat(p3.y+p3.h/2, 'f', -1, 64))
	}
}
