package router

import (
	"errors"
	"testing"
)

// bytesIn hands out fuzz input one small number at a time.
type bytesIn struct {
	b []byte
	i int
}

func (r *bytesIn) more() bool { return r.i < len(r.b) }

func (r *bytesIn) next(n int) int {
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i]) % n
	r.i++
	return v
}

// seq reads up to max tokens from a three-letter alphabet, so prefixes are
// often shared.
func (r *bytesIn) seq(max int) []int {
	s := make([]int, r.next(max+1))
	for i := range s {
		s[i] = r.next(3)
	}
	return s
}

// longest is the brute-force match: the longest page-aligned common prefix
// of key with any cached sequence.
func longest(tr *RadixTree, key []int) int {
	best := 0
	for _, s := range tr.Sequences() {
		best = max(best, tr.common(s, key))
	}
	return min(best, len(key)/tr.pageSize*tr.pageSize)
}

func FuzzRadix(f *testing.F) {
	f.Add([]byte{0, 0, 4, 0, 1, 2, 0, 1, 4, 0, 1, 2, 2, 2, 3, 4, 9})
	f.Add([]byte{1, 0, 6, 0, 0, 1, 1, 2, 2, 1, 6, 0, 0, 1, 1, 0, 0, 2, 3, 4, 1})
	f.Add([]byte{2, 0, 9, 1, 1, 1, 2, 2, 2, 0, 0, 0, 1, 9, 1, 1, 1, 2, 2, 2, 2, 4, 3, 4, 20})
	f.Add([]byte{0, 0, 3, 1, 2, 0, 2, 2, 2, 0, 3, 1, 2, 2, 1, 3, 1, 2, 0, 4, 50, 3, 4, 50})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesIn{b: data}
		tr := NewRadixTree(1 + r.next(3))
		var last *Node
		var held []*Node
		for r.more() {
			switch r.next(5) {
			case 0: // insert
				key := r.seq(12)
				want := longest(tr, key)
				before := tr.TotalSize()
				if got := tr.Insert(key); got != want {
					t.Fatalf("insert %v found %d cached, brute force %d", key, got, want)
				}
				if grew := tr.TotalSize() - before; grew != len(key)/tr.pageSize*tr.pageSize-want {
					t.Fatalf("insert %v grew the cache by %d", key, grew)
				}
			case 1: // match
				key := r.seq(12)
				want := longest(tr, key)
				before := tr.TotalSize()
				got, node := tr.Match(key)
				if got != want || tr.TotalSize() != before {
					t.Fatalf("match %v = %d, brute force %d; size %d → %d", key, got, want, before, tr.TotalSize())
				}
				depth := -1
				tr.Walk(func(v NodeView) bool {
					if v.ID == node.ID() {
						depth = v.Prefix + len(v.Key)
					}
					return true
				})
				if depth != got {
					t.Fatalf("match %v = %d ends at a node %d tokens deep", key, got, depth)
				}
				last = node
			case 2: // lock the last match
				if last == nil {
					continue
				}
				err := tr.Lock(last)
				if last.Evicted() != errors.Is(err, ErrEvicted) || (err != nil && !last.Evicted()) {
					t.Fatalf("lock: %v, evicted %v", err, last.Evicted())
				}
				if err == nil {
					held = append(held, last)
				}
			case 3: // release a lock
				if len(held) == 0 {
					if last != nil && !last.Evicted() && last.LockRef() == 0 && last != tr.Root() {
						if err := tr.Unlock(last); !errors.Is(err, ErrNotLocked) {
							t.Fatalf("unlock of an unlocked node: %v", err)
						}
					}
					continue
				}
				i := r.next(len(held))
				if err := tr.Unlock(held[i]); err != nil {
					t.Fatalf("unlock of a held node: %v", err)
				}
				held = append(held[:i], held[i+1:]...)
			case 4: // evict
				n := r.next(30)
				ev, prot := tr.EvictableSize(), tr.ProtectedSize()
				got := tr.Evict(n)
				if got != ev-tr.EvictableSize() || tr.ProtectedSize() != prot {
					t.Fatalf("evict(%d) freed %d, evictable %d → %d, protected %d → %d",
						n, got, ev, tr.EvictableSize(), prot, tr.ProtectedSize())
				}
				if got < n && tr.EvictableSize() != 0 {
					t.Fatalf("evict(%d) stopped at %d with %d evictable tokens left", n, got, tr.EvictableSize())
				}
				for _, h := range held {
					if h.Evicted() {
						t.Fatalf("locked node %d evicted", h.ID())
					}
				}
			}
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// indexModel is the brute force: per worker, copies of each hash.
type indexModel map[int]map[uint64]int

func (m indexModel) apply(w int, e Event) bool {
	if m[w] == nil {
		m[w] = map[uint64]int{}
	}
	switch e.Kind {
	case Stored:
		if e.Parent != RootHash && m[w][e.Parent] == 0 {
			return false
		}
		for _, h := range e.Hashes {
			m[w][h]++
		}
	case Removed:
		for _, h := range e.Hashes {
			if m[w][h] > 0 {
				m[w][h]--
			}
		}
	case Cleared:
		m[w] = map[uint64]int{}
	}
	return true
}

func (m indexModel) overlap(w int, hashes []uint64) int {
	n := 0
	for n < len(hashes) && m[w][hashes[n]] > 0 {
		n++
	}
	return n
}

func (m indexModel) blocks(w int) int {
	n := 0
	for _, c := range m[w] {
		if c > 0 {
			n++
		}
	}
	return n
}

func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 0, 4, 0, 1, 2, 0, 0, 0, 1, 4, 0, 1, 2, 0, 1, 3})
	f.Add([]byte{0, 1, 3, 1, 1, 1, 0, 0, 2, 3, 1, 1, 1, 1, 1, 1, 0, 2, 2, 1, 1, 2, 0, 0})
	f.Add([]byte{0, 2, 4, 2, 2, 2, 2, 0, 0, 2, 4, 2, 2, 2, 2, 0, 1, 2, 4, 2, 2, 2, 2, 2, 3, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &bytesIn{b: data}
		x := NewIndex()
		m := indexModel{}
		for r.more() {
			kind := []EventKind{Stored, Stored, Removed, Cleared}[r.next(4)]
			w := r.next(3)
			path := r.seq(4)
			hashes := BlockHashes(path, 1, "")
			e := Event{Kind: kind}
			if len(hashes) > 0 {
				s := r.next(len(hashes))
				end := s + 1 + r.next(len(hashes)-s)
				e.Hashes = hashes[s:end]
				e.Parent = RootHash
				if s > 0 {
					e.Parent = hashes[s-1]
				}
			}
			ok := m.apply(w, e)
			err := x.Apply(w, e)
			if ok != (err == nil) || (err != nil && !errors.Is(err, ErrUnknownParent)) {
				t.Fatalf("%s on worker %d: index says %v, model accepts %v", kind, w, err, ok)
			}
			if err := x.Check(); err != nil {
				t.Fatal(err)
			}
			queries := [][]uint64{hashes, BlockHashes(r.seq(4), 1, ""), BlockHashes(r.seq(4), 1, "")}
			for _, q := range queries {
				if err := x.CheckOverlap(q); err != nil {
					t.Fatal(err)
				}
				got := x.Overlap(q)
				for worker := range 3 {
					if want := m.overlap(worker, q); got[worker] != want {
						t.Fatalf("overlap of worker %d = %d, brute force %d", worker, got[worker], want)
					}
					// Monotone (engines.md §7.28): every counted block is there.
					for i := range got[worker] {
						if !x.Has(worker, q[i]) {
							t.Fatalf("worker %d counted block %d it lacks", worker, i)
						}
					}
				}
			}
			for worker := range 3 {
				if x.Blocks(worker) != m.blocks(worker) {
					t.Fatalf("worker %d: %d blocks, brute force %d", worker, x.Blocks(worker), m.blocks(worker))
				}
			}
		}
	})
}
