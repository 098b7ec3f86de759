package radixcache

import "slices"

// NodeView is a copy of one node for drawing.
type NodeView struct {
	ID         int
	Parent     int   // -1 for the root
	Depth      int   // edges from the root
	Prefix     int   // tokens on the path above this edge
	Key        []int // the edge's token run (empty for the root)
	LockRef    int
	LastAccess uint64
	Children   []int // child ids in drawing order (by first token)
}

// Walk visits every node in pre-order, children ordered by their token runs,
// and stops early when fn returns false. It does not touch access times.
func (t *Tree) Walk(fn func(NodeView) bool) {
	type item struct {
		n      *Node
		depth  int
		prefix int
	}
	stack := []item{{t.root, 0, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids := sortedChildren(it.n)
		v := NodeView{
			ID:         it.n.id,
			Parent:     parentID(it.n),
			Depth:      it.depth,
			Prefix:     it.prefix,
			Key:        slices.Clone(it.n.key),
			LockRef:    it.n.lockRef,
			LastAccess: it.n.lastAccess,
			Children:   make([]int, len(kids)),
		}
		for i, c := range kids {
			v.Children[i] = c.id
		}
		if !fn(v) {
			return
		}
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, item{kids[i], it.depth + 1, it.prefix + len(it.n.key)})
		}
	}
}

// Snapshot returns every node in Walk order.
func (t *Tree) Snapshot() []NodeView {
	var out []NodeView
	t.Walk(func(v NodeView) bool { out = append(out, v); return true })
	return out
}

func sortedChildren(n *Node) []*Node {
	kids := make([]*Node, 0, len(n.children))
	for _, c := range n.children {
		kids = append(kids, c)
	}
	slices.SortFunc(kids, func(a, b *Node) int { return slices.Compare(a.key, b.key) })
	return kids
}
