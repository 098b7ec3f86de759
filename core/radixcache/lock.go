package radixcache

import (
	"container/heap"
	"errors"
)

// ErrEvicted is returned when a lock or unlock names a node that has left
// the tree.
var ErrEvicted = errors.New("radixcache: node was evicted")

// ErrNotLocked is returned by Unlock when a node on the path is not locked;
// nothing changes.
var ErrNotLocked = errors.New("radixcache: unlock of a node that is not locked")

// Lock pins node and every ancestor (SGLang inc_lock_ref): a running request
// holds one lock chain on its last matched node so that its prefix cannot be
// evicted. Tokens of nodes whose count leaves 0 move from evictable to
// protected. Locking the root changes nothing.
func (t *Tree) Lock(node *Node) error {
	if node == nil || node.evicted {
		return ErrEvicted
	}
	for n := node; n != t.root; n = n.parent {
		if n.lockRef == 0 {
			t.evictable -= len(n.key)
			t.protected += len(n.key)
		}
		n.lockRef++
	}
	t.record(Event{Kind: Locked, Node: node.id, Parent: parentID(node)})
	return nil
}

// Unlock releases one lock chain taken by Lock (SGLang dec_lock_ref). It is
// all-or-nothing: if any node on the path is unlocked it returns
// ErrNotLocked and changes nothing.
func (t *Tree) Unlock(node *Node) error {
	if node == nil || node.evicted {
		return ErrEvicted
	}
	for n := node; n != t.root; n = n.parent {
		if n.lockRef <= 0 {
			return ErrNotLocked
		}
	}
	for n := node; n != t.root; n = n.parent {
		if n.lockRef == 1 {
			t.protected -= len(n.key)
			t.evictable += len(n.key)
		}
		n.lockRef--
	}
	t.record(Event{Kind: Unlocked, Node: node.id, Parent: parentID(node)})
	return nil
}

// Evict frees at least tokens cached tokens if it can (SGLang evict): it
// heaps every leaf by last access, pops the least recent, skips locked ones,
// deletes unlocked ones whole and pushes a parent that has become a leaf. It
// returns the number of tokens freed, which may exceed the request because
// leaves go whole, and falls short only when no unlocked token is left. A
// prefix is never evicted before its extensions.
func (t *Tree) Evict(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	var h lruHeap
	var stack []*Node
	stack = append(stack, t.root)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(n.children) == 0 && n != t.root {
			h = append(h, n)
		}
		for _, c := range n.children {
			stack = append(stack, c)
		}
	}
	heap.Init(&h)
	evicted := 0
	for evicted < tokens && h.Len() > 0 {
		x := heap.Pop(&h).(*Node)
		if x.lockRef > 0 {
			continue
		}
		evicted += len(x.key)
		p := x.parent
		t.deleteLeaf(x)
		if p != t.root && len(p.children) == 0 {
			heap.Push(&h, p)
		}
	}
	return evicted
}

// deleteLeaf removes an unlocked leaf from the tree.
func (t *Tree) deleteLeaf(x *Node) {
	delete(x.parent.children, string(t.page(x.key)))
	t.evictable -= len(x.key)
	t.nodes--
	x.evicted = true
	x.children = nil
	t.record(Event{Kind: Evicted, Node: x.id, Parent: x.parent.id, Len: len(x.key)})
}

// lruHeap orders nodes by last access, then by id, so eviction order never
// depends on map iteration.
type lruHeap []*Node

func (h lruHeap) Len() int { return len(h) }
func (h lruHeap) Less(i, j int) bool {
	if h[i].lastAccess != h[j].lastAccess {
		return h[i].lastAccess < h[j].lastAccess
	}
	return h[i].id < h[j].id
}
func (h lruHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lruHeap) Push(x any)   { *h = append(*h, x.(*Node)) }
func (h *lruHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
