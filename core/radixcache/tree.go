package radixcache

import (
	"encoding/binary"
	"slices"
)

// Node is one edge of a Tree: a run of token ids (a multiple of the page
// size) hanging under its parent. A *Node stays valid across splits (the
// node keeps the lower part of its run) and is marked evicted, never reused,
// once it leaves the tree.
type Node struct {
	id         int
	key        []int
	parent     *Node
	children   map[string]*Node // keyed by the child's first page
	lockRef    int
	lastAccess uint64
	evicted    bool
}

// ID is the node's number, unique within its tree; the root is 0.
func (n *Node) ID() int { return n.id }

// Len is the number of tokens on the node's edge (SGLang len(node.value)).
func (n *Node) Len() int { return len(n.key) }

// LockRef is the number of lock chains passing through the node.
func (n *Node) LockRef() int { return n.lockRef }

// LastAccess is the tick of the last Match or Insert that visited the node.
func (n *Node) LastAccess() uint64 { return n.lastAccess }

// Evicted reports whether the node has left the tree.
func (n *Node) Evicted() bool { return n.evicted }

// Tree is SGLang's RadixCache without the KV pool behind it: it counts
// token slots instead of holding their indices. The root has an empty key and
// a permanent lock.
type Tree struct {
	root      *Node
	pageSize  int
	clock     uint64
	nextID    int
	nodes     int // nodes in the tree, root included
	evictable int // tokens on unlocked nodes
	protected int // tokens on locked nodes
	buf       []byte
	eventLog
}

// New returns an empty tree. pageSize ≤ 1 means token granularity
// (SGLang's default, page_size None → 1); larger pages make keys whole pages
// and compare them a page at a time.
func New(pageSize int) *Tree {
	if pageSize < 1 {
		pageSize = 1
	}
	t := &Tree{pageSize: pageSize, nextID: 1, nodes: 1}
	t.root = &Node{id: 0, children: map[string]*Node{}, lockRef: 1}
	return t
}

// PageSize is the tree's page size in tokens.
func (t *Tree) PageSize() int { return t.pageSize }

// Root is the tree's root node.
func (t *Tree) Root() *Node { return t.root }

// Clock is the logical time: the number of Match and Insert calls so far.
func (t *Tree) Clock() uint64 { return t.clock }

// EvictableSize is the number of cached tokens on unlocked nodes.
func (t *Tree) EvictableSize() int { return t.evictable }

// ProtectedSize is the number of cached tokens on locked nodes.
func (t *Tree) ProtectedSize() int { return t.protected }

// TotalSize is the number of cached tokens.
func (t *Tree) TotalSize() int { return t.evictable + t.protected }

// Nodes is the number of nodes, the root included.
func (t *Tree) Nodes() int { return t.nodes }

// aligned truncates tokens to a whole number of pages.
func (t *Tree) aligned(tokens []int) []int {
	return tokens[:len(tokens)/t.pageSize*t.pageSize]
}

// page encodes the first page of key as bytes, the child-map key. The result
// is scratch space, valid until the next call.
func (t *Tree) page(key []int) []byte {
	n := min(t.pageSize, len(key)) * 8
	if cap(t.buf) < n {
		t.buf = make([]byte, n)
	}
	b := t.buf[:n]
	for i := range n / 8 {
		binary.LittleEndian.PutUint64(b[i*8:], uint64(key[i]))
	}
	return b
}

// common is the length of the shared prefix of a and b, in whole pages.
func (t *Tree) common(a, b []int) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i / t.pageSize * t.pageSize
}

// Match finds the longest cached prefix of tokens (truncated to whole pages)
// and returns its length and the deepest node on it (the root when nothing
// matches). Like SGLang's match_prefix it splits a node that matches only in
// part, so that the returned node ends exactly at the match, and it stamps
// every visited node with a new tick.
func (t *Tree) Match(tokens []int) (int, *Node) {
	matched, node, _, _ := t.walk(tokens)
	t.record(Event{Kind: Matched, Node: node.id, Parent: parentID(node), Len: matched})
	return matched, node
}

// walk follows the longest cached prefix of tokens (truncated to whole
// pages) from the root, stamping every visited node with a new tick and
// splitting the edge where the match ends inside it. It returns the tokens
// matched, the node the match ends at, the tokens left over and the tick.
func (t *Tree) walk(tokens []int) (matched int, node *Node, rest []int, now uint64) {
	key := t.aligned(tokens)
	t.clock++
	now = t.clock
	node = t.root
	node.lastAccess = now
	for len(key) > 0 {
		child := node.children[string(t.page(key))]
		if child == nil {
			break
		}
		child.lastAccess = now
		n := t.common(child.key, key)
		matched += n
		key = key[n:]
		if n < len(child.key) {
			node = t.split(child, n)
			break
		}
		node = child
	}
	return matched, node, key, now
}

// Insert caches tokens (truncated to whole pages): it walks the shared
// prefix, splitting where the new sequence diverges inside an edge, and hangs
// the rest under the last node as a new unlocked leaf. It returns the number
// of tokens that were already cached; in SGLang the caller frees the
// request's duplicate KV slots for them (cache_finished_req de-duplication).
func (t *Tree) Insert(tokens []int) int {
	existing, node, key, now := t.walk(tokens)
	if len(key) > 0 {
		leaf := &Node{
			id:         t.nextID,
			key:        slices.Clone(key),
			parent:     node,
			children:   map[string]*Node{},
			lastAccess: now,
		}
		t.nextID++
		t.nodes++
		node.children[string(t.page(key))] = leaf
		t.evictable += len(key)
		t.record(Event{Kind: Inserted, Node: leaf.id, Parent: node.id, Len: len(key)})
	}
	return existing
}

// split cuts child after n tokens (0 < n < len(child.key)): a new node takes
// the first n tokens and child's place under its parent, child keeps the
// rest under the new node. The new node copies child's lock count, so the
// evictable and protected sizes do not change (SGLang _split_node).
func (t *Tree) split(child *Node, n int) *Node {
	p := child.parent
	mid := &Node{
		id:         t.nextID,
		key:        child.key[:n:n],
		parent:     p,
		children:   make(map[string]*Node, 2),
		lockRef:    child.lockRef,
		lastAccess: t.clock,
	}
	t.nextID++
	t.nodes++
	p.children[string(t.page(mid.key))] = mid
	child.key = child.key[n:]
	child.parent = mid
	mid.children[string(t.page(child.key))] = child
	t.record(Event{Kind: Split, Node: mid.id, Parent: p.id, Child: child.id, Len: n})
	return mid
}

func parentID(n *Node) int {
	if n.parent == nil {
		return -1
	}
	return n.parent.id
}
