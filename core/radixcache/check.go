package radixcache

import (
	"fmt"
	"slices"
)

// Check verifies the tree's invariants (docs/ARCHITECTURE.md#radix-tree-invariants) and returns the
// first violation found:
//   - the root has an empty key and a lock count ≥ 1;
//   - every other reachable node has a non-empty key of whole pages, is not
//     marked evicted, points back to its parent and sits under its first page;
//     so no two children share a first token (page);
//   - lock counts are ≥ 0 and a non-root node's count is ≥ the sum of its
//     children's (each lock chain through a child passes through it);
//   - evictable and protected sizes equal the token sums over unlocked and
//     locked nodes, and the node count matches;
//   - ids are unique and no access time is ahead of the clock.
func (t *Tree) Check() error {
	r := t.root
	if len(r.key) != 0 || r.lockRef < 1 || r.parent != nil || r.evicted {
		return fmt.Errorf("radixcache: bad root (key %d tokens, lock %d)", len(r.key), r.lockRef)
	}
	seen := map[int]bool{}
	evictable, protected, nodes := 0, 0, 0
	stack := []*Node{r}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nodes++
		if seen[n.id] {
			return fmt.Errorf("radixcache: node id %d appears twice", n.id)
		}
		seen[n.id] = true
		if n.lastAccess > t.clock {
			return fmt.Errorf("radixcache: node %d accessed at %d, after clock %d", n.id, n.lastAccess, t.clock)
		}
		if n.lockRef < 0 {
			return fmt.Errorf("radixcache: node %d lock count %d < 0", n.id, n.lockRef)
		}
		if n != r {
			switch {
			case n.evicted:
				return fmt.Errorf("radixcache: evicted node %d still reachable", n.id)
			case len(n.key) == 0 || len(n.key)%t.pageSize != 0:
				return fmt.Errorf("radixcache: node %d key of %d tokens, page %d", n.id, len(n.key), t.pageSize)
			}
			if n.lockRef == 0 {
				evictable += len(n.key)
			} else {
				protected += len(n.key)
			}
		}
		sum := 0
		for k, c := range n.children {
			if c.parent != n {
				return fmt.Errorf("radixcache: node %d's child %d points to another parent", n.id, c.id)
			}
			if len(c.key) == 0 || k != string(t.page(c.key)) {
				return fmt.Errorf("radixcache: node %d's child %d filed under another first page", n.id, c.id)
			}
			sum += c.lockRef
			stack = append(stack, c)
		}
		if n != r && n.lockRef < sum {
			return fmt.Errorf("radixcache: node %d lock count %d < its children's %d", n.id, n.lockRef, sum)
		}
	}
	if evictable != t.evictable || protected != t.protected {
		return fmt.Errorf("radixcache: sizes evictable %d protected %d, nodes hold %d and %d",
			t.evictable, t.protected, evictable, protected)
	}
	if nodes != t.nodes {
		return fmt.Errorf("radixcache: %d nodes reachable, %d counted", nodes, t.nodes)
	}
	return nil
}

// Sequences returns every root-to-leaf token run, in Walk order: the set of
// sequences whose prefixes the tree caches. For tests and narration.
func (t *Tree) Sequences() [][]int {
	var out [][]int
	var path []int
	var walk func(n *Node)
	walk = func(n *Node) {
		path = append(path, n.key...)
		kids := sortedChildren(n)
		if len(kids) == 0 && n != t.root {
			out = append(out, slices.Clone(path))
		}
		for _, c := range kids {
			walk(c)
		}
		path = path[:len(path)-len(n.key)]
	}
	walk(t.root)
	return out
}
