package router

import (
	"cmp"
	"fmt"
	"slices"
)

// BlockView is a copy of one indexed block for drawing.
type BlockView struct {
	Hash    uint64
	Parent  uint64 // RootHash for a first block
	Depth   int    // blocks above it that are indexed too
	Workers []int  // ascending
}

// Snapshot returns every indexed block, parents before children and
// siblings by hash. A block whose parent is not indexed (evicted before it)
// starts a new tree at depth 0.
func (x *Index) Snapshot() []BlockView {
	kids := map[uint64][]uint64{}
	var roots []uint64
	for h, n := range x.nodes {
		if _, ok := x.nodes[n.parent]; ok && n.parent != RootHash {
			kids[n.parent] = append(kids[n.parent], h)
		} else {
			roots = append(roots, h)
		}
	}
	slices.Sort(roots)
	var out []BlockView
	var walk func(h uint64, depth int)
	walk = func(h uint64, depth int) {
		n := x.nodes[h]
		out = append(out, BlockView{Hash: h, Parent: n.parent, Depth: depth, Workers: slices.Clone(n.workers)})
		ks := kids[h]
		slices.SortFunc(ks, cmp.Compare)
		for _, k := range ks {
			walk(k, depth+1)
		}
	}
	for _, h := range roots {
		walk(h, 0)
	}
	return out
}

// Check verifies that the hash → workers map and the per-worker copy counts
// describe the same sets: every node has at least one worker, listed once
// and in order, each of which counts a copy of the block; every counted copy
// appears in its node.
func (x *Index) Check() error {
	for h, n := range x.nodes {
		if len(n.workers) == 0 {
			return fmt.Errorf("router: block %#x indexed with no worker", h)
		}
		for i, w := range n.workers {
			if i > 0 && n.workers[i-1] >= w {
				return fmt.Errorf("router: block %#x workers not strictly ascending: %v", h, n.workers)
			}
			if x.workers[w][h] <= 0 {
				return fmt.Errorf("router: block %#x lists worker %d, which holds no copy", h, w)
			}
		}
	}
	for w, m := range x.workers {
		for h, c := range m {
			if c <= 0 {
				return fmt.Errorf("router: worker %d holds %d copies of %#x", w, c, h)
			}
			n := x.nodes[h]
			if n == nil {
				return fmt.Errorf("router: worker %d holds %#x, which is not indexed", w, h)
			}
			if _, ok := slices.BinarySearch(n.workers, w); !ok {
				return fmt.Errorf("router: worker %d holds %#x but is not listed on it", w, h)
			}
		}
	}
	return nil
}

// CheckOverlap verifies that overlap is monotone (docs/ARCHITECTURE.md#router-invariants)
// for one query: for each worker,
// Overlap's count k means blocks 0..k−1 of hashes are cached there and block
// k is not.
func (x *Index) CheckOverlap(hashes []uint64) error {
	got := x.Overlap(hashes)
	for w, m := range x.workers {
		k := got[w]
		for i := range k {
			if m[hashes[i]] <= 0 {
				return fmt.Errorf("router: worker %d overlap %d but block %d is not cached there", w, k, i)
			}
		}
		if k < len(hashes) && m[hashes[k]] > 0 {
			return fmt.Errorf("router: worker %d overlap %d but block %d is cached there too", w, k, k)
		}
	}
	return nil
}
