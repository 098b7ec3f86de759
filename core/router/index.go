package router

import (
	"errors"
	"slices"
)

// EventKind names a KV event a worker publishes.
type EventKind string

// KV events (vLLM BlockStored / BlockRemoved / AllBlocksCleared,
// docs/SOURCES.md#vllm-kv-events; SGLang emits the same).
const (
	Stored  EventKind = "stored"  // Hashes were cached, a chain hanging under Parent
	Removed EventKind = "removed" // Hashes were evicted
	Cleared EventKind = "cleared" // the worker's whole cache was reset
)

// Event is one KV event. For Stored, Hashes is a chain: Hashes[0]'s parent is
// Parent (RootHash for a sequence's first block), Hashes[i]'s is Hashes[i−1].
type Event struct {
	Kind   EventKind
	Hashes []uint64
	Parent uint64
}

// ErrUnknownParent is returned when a Stored event hangs under a block the
// worker is not known to cache; like Dynamo's indexer, the event is dropped.
var ErrUnknownParent = errors.New("router: stored event under an unknown parent block")

// Indexer is what a cache-aware policy asks of the router's view of the
// workers' caches.
type Indexer interface {
	// Overlap returns, per worker, the number of leading blocks of hashes
	// that worker caches (workers with none are absent).
	Overlap(hashes []uint64) map[int]int
	// Blocks is the number of blocks the worker caches (Dynamo's tree size).
	Blocks(worker int) int
}

// Index is Dynamo's global KV indexer keyed by chain hashes: for every cached
// block, the workers holding it. Dynamo keys its tree by a per-block content
// hash and walks parent to child; a chain hash already encodes the prefix, so
// here the tree is a map from hash to node and each node remembers its
// parent for drawing.
//
// One difference from Dynamo, deliberate: a worker's stores of a hash are
// counted, and the block stays indexed until as many removals have arrived.
// vLLM does not merge identical blocks (docs/SOURCES.md#vllm-prefix-caching), so two copies can be
// stored and one evicted; Dynamo would then forget a block the worker still
// holds.
type Index struct {
	nodes   map[uint64]*blockNode
	workers map[int]map[uint64]int // worker → hash → copies
}

type blockNode struct {
	parent  uint64
	workers []int // sorted ids of the workers holding the block
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{nodes: map[uint64]*blockNode{}, workers: map[int]map[uint64]int{}}
}

// Apply folds one of worker's KV events into the index. A Stored event whose
// Parent is neither RootHash nor a block the worker caches is dropped with
// ErrUnknownParent. Removing a block the worker does not cache is a no-op.
func (x *Index) Apply(worker int, e Event) error {
	switch e.Kind {
	case Stored:
		if e.Parent != RootHash && x.workers[worker][e.Parent] == 0 {
			return ErrUnknownParent
		}
		parent := e.Parent
		for _, h := range e.Hashes {
			x.add(worker, h, parent)
			parent = h
		}
	case Removed:
		for _, h := range e.Hashes {
			x.drop(worker, h, 1)
		}
	case Cleared:
		x.RemoveWorker(worker)
	default:
		return errors.New("router: unknown event kind " + string(e.Kind))
	}
	return nil
}

// RemoveWorker forgets every block of worker (a worker leaving the pool).
func (x *Index) RemoveWorker(worker int) {
	for h, c := range x.workers[worker] {
		x.drop(worker, h, c)
	}
	delete(x.workers, worker)
}

// add records one more copy of h on worker.
func (x *Index) add(worker int, h, parent uint64) {
	m := x.workers[worker]
	if m == nil {
		m = map[uint64]int{}
		x.workers[worker] = m
	}
	m[h]++
	if m[h] > 1 {
		return
	}
	n := x.nodes[h]
	if n == nil {
		n = &blockNode{parent: parent}
		x.nodes[h] = n
	}
	i, _ := slices.BinarySearch(n.workers, worker)
	n.workers = slices.Insert(n.workers, i, worker)
}

// drop removes up to k copies of h from worker.
func (x *Index) drop(worker int, h uint64, k int) {
	m := x.workers[worker]
	c := m[h]
	if c == 0 {
		return
	}
	if c > k {
		m[h] = c - k
		return
	}
	delete(m, h)
	n := x.nodes[h]
	if i, ok := slices.BinarySearch(n.workers, worker); ok {
		n.workers = slices.Delete(n.workers, i, i+1)
	}
	if len(n.workers) == 0 {
		delete(x.nodes, h)
	}
}

// Overlap walks hashes from the first block and counts, per worker, the
// leading blocks it caches; it stops at the first block no remaining worker
// holds (Dynamo find_matches). A worker's count k means blocks 0..k−1 are
// cached there and block k is not.
func (x *Index) Overlap(hashes []uint64) map[int]int {
	scores := map[int]int{}
	for i, h := range hashes {
		n := x.nodes[h]
		if n == nil {
			break
		}
		advanced := false
		for _, w := range n.workers {
			if scores[w] == i {
				scores[w] = i + 1
				advanced = true
			}
		}
		if !advanced {
			break
		}
	}
	return scores
}

// Blocks is the number of distinct blocks worker caches.
func (x *Index) Blocks(worker int) int { return len(x.workers[worker]) }

// Has reports whether worker caches the block h.
func (x *Index) Has(worker int, h uint64) bool { return x.workers[worker][h] > 0 }

// Workers returns the ids of workers caching at least one block, ascending.
func (x *Index) Workers() []int {
	var out []int
	for w, m := range x.workers {
		if len(m) > 0 {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// Size is the number of distinct blocks cached anywhere.
func (x *Index) Size() int { return len(x.nodes) }
