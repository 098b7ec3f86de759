package router

import (
	"container/heap"
	"fmt"
	"slices"
)

// tenantTree is the SGLang router's approximate tree (sgl-router/src/tree.rs)
// over token ids instead of characters: one radix tree for all workers, each
// node recording which workers ("tenants") have been sent a request through
// it and when. A worker's nodes always include its node's ancestors, so the
// tenants of the deepest matched node are exactly the workers with the
// longest match: it answers what one approximate tree per worker would.
type tenantTree struct {
	root   *tenantNode
	count  map[int]int // worker → tokens on its nodes (tenant_char_count)
	clock  uint64
	nextID int
}

type tenantNode struct {
	id       int
	key      []int
	parent   *tenantNode
	children map[int]*tenantNode // by first token
	tenants  map[int]uint64      // worker → last access tick
}

func newTenantTree() *tenantTree {
	return &tenantTree{
		root:   &tenantNode{children: map[int]*tenantNode{}, tenants: map[int]uint64{}},
		count:  map[int]int{},
		nextID: 1,
	}
}

func (t *tenantTree) newNode(key []int, parent *tenantNode, tenants map[int]uint64) *tenantNode {
	n := &tenantNode{id: t.nextID, key: key, parent: parent, children: map[int]*tenantNode{}, tenants: tenants}
	t.nextID++
	return n
}

// stamp gives worker the node at tick now, counting its tokens if new.
func (t *tenantTree) stamp(n *tenantNode, worker int, now uint64) {
	if _, ok := n.tenants[worker]; !ok {
		t.count[worker] += len(n.key)
	}
	n.tenants[worker] = now
}

// insert adds tokens under worker (tree.rs insert): shared edges gain the
// worker, an edge that diverges part-way is split (both halves keep its
// tenants), and the rest becomes a new leaf.
func (t *tenantTree) insert(tokens []int, worker int) {
	t.clock++
	now := t.clock
	node := t.root
	t.stamp(node, worker, now)
	rest := tokens
	for len(rest) > 0 {
		child := node.children[rest[0]]
		if child == nil {
			leaf := t.newNode(slices.Clone(rest), node, map[int]uint64{})
			node.children[rest[0]] = leaf
			t.stamp(leaf, worker, now)
			return
		}
		n := commonPrefix(child.key, rest)
		if n < len(child.key) {
			mid := t.newNode(child.key[:n:n], node, copyTenants(child.tenants))
			node.children[rest[0]] = mid
			child.key = child.key[n:]
			child.parent = mid
			mid.children[child.key[0]] = child
			child = mid
		}
		t.stamp(child, worker, now)
		node = child
		rest = rest[n:]
	}
}

// match walks tokens as far as the tree goes (tree.rs prefix_match); a
// partial edge counts its shared tokens and ends the walk at that node.
func (t *tenantTree) match(tokens []int) (int, *tenantNode) {
	node := t.root
	matched := 0
	rest := tokens
	for len(rest) > 0 {
		child := node.children[rest[0]]
		if child == nil {
			break
		}
		n := commonPrefix(child.key, rest)
		matched += n
		node = child
		if n < len(child.key) {
			break
		}
		rest = rest[n:]
	}
	return matched, node
}

// touch refreshes worker's access time from n up to the root.
func (t *tenantTree) touch(n *tenantNode, worker int) {
	t.clock++
	for ; n != nil; n = n.parent {
		if _, ok := n.tenants[worker]; ok {
			n.tenants[worker] = t.clock
		}
	}
}

// leafOf reports whether n is one of worker's leaves: worker is on n and on
// none of its children.
func leafOf(n *tenantNode, worker int) bool {
	if _, ok := n.tenants[worker]; !ok {
		return false
	}
	for _, c := range n.children {
		if _, ok := c.tenants[worker]; ok {
			return false
		}
	}
	return true
}

// evict trims every worker over limit tokens by dropping it from its least
// recently used leaves until it fits (tree.rs evict_tenant_by_size); a node
// left with no tenant leaves the tree. Workers go in ascending id order.
func (t *tenantTree) evict(limit int) {
	var ws []int
	for w, c := range t.count {
		if c > limit {
			ws = append(ws, w)
		}
	}
	slices.Sort(ws)
	for _, w := range ws {
		h := &tenantHeap{worker: w}
		var stack []*tenantNode
		for _, c := range t.root.children {
			stack = append(stack, c)
		}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if leafOf(n, w) {
				h.nodes = append(h.nodes, n)
			}
			for _, c := range n.children {
				stack = append(stack, c)
			}
		}
		heap.Init(h)
		for t.count[w] > limit && h.Len() > 0 {
			n := heap.Pop(h).(*tenantNode)
			if _, ok := n.tenants[w]; !ok {
				continue
			}
			t.count[w] -= len(n.key)
			delete(n.tenants, w)
			p := n.parent
			if len(n.tenants) == 0 && len(n.children) == 0 {
				delete(p.children, n.key[0])
			}
			if p != t.root && leafOf(p, w) {
				heap.Push(h, p)
			}
		}
	}
}

// check verifies the tree: children filed under their first token, parents
// linked, every tenant of a node also on its parent, no tenant-less leaf,
// and token counts equal to the sums over each worker's nodes.
func (t *tenantTree) check() error {
	sizes := map[int]int{}
	stack := []*tenantNode{t.root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for w := range n.tenants {
			sizes[w] += len(n.key)
		}
		if n != t.root {
			if len(n.key) == 0 {
				return fmt.Errorf("router: approximate tree node %d has an empty edge", n.id)
			}
			if len(n.tenants) == 0 && len(n.children) == 0 {
				return fmt.Errorf("router: approximate tree leaf %d has no worker", n.id)
			}
			for w := range n.tenants {
				if _, ok := n.parent.tenants[w]; !ok {
					return fmt.Errorf("router: worker %d on node %d but not on its parent", w, n.id)
				}
			}
		}
		for k, c := range n.children {
			if c.parent != n || c.key[0] != k {
				return fmt.Errorf("router: approximate tree node %d misfiled under %d", c.id, n.id)
			}
			stack = append(stack, c)
		}
	}
	for w, c := range t.count {
		if sizes[w] != c {
			return fmt.Errorf("router: worker %d counted %d tokens, holds %d", w, c, sizes[w])
		}
	}
	for w, s := range sizes {
		if t.count[w] != s {
			return fmt.Errorf("router: worker %d holds %d tokens, counted %d", w, s, t.count[w])
		}
	}
	return nil
}

func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func copyTenants(m map[int]uint64) map[int]uint64 {
	c := make(map[int]uint64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// tenantHeap orders one worker's leaves by its access time, then node id.
type tenantHeap struct {
	worker int
	nodes  []*tenantNode
}

func (h *tenantHeap) Len() int { return len(h.nodes) }
func (h *tenantHeap) Less(i, j int) bool {
	a, b := h.nodes[i].tenants[h.worker], h.nodes[j].tenants[h.worker]
	if a != b {
		return a < b
	}
	return h.nodes[i].id < h.nodes[j].id
}
func (h *tenantHeap) Swap(i, j int) { h.nodes[i], h.nodes[j] = h.nodes[j], h.nodes[i] }
func (h *tenantHeap) Push(x any)    { h.nodes = append(h.nodes, x.(*tenantNode)) }
func (h *tenantHeap) Pop() any {
	x := h.nodes[len(h.nodes)-1]
	h.nodes = h.nodes[:len(h.nodes)-1]
	return x
}
