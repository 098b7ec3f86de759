package router

import (
	"errors"
	"testing"

	"github.com/inferlab/inferlab/core/internal/testinput"
)

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
		r := testinput.NewBytes(data)
		x := NewIndex()
		m := indexModel{}
		for r.More() {
			kind := []EventKind{Stored, Stored, Removed, Cleared}[r.Next(4)]
			w := r.Next(3)
			path := r.Seq(4)
			hashes := BlockHashes(path, 1, "")
			e := Event{Kind: kind}
			if len(hashes) > 0 {
				s := r.Next(len(hashes))
				end := s + 1 + r.Next(len(hashes)-s)
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
			queries := [][]uint64{hashes, BlockHashes(r.Seq(4), 1, ""), BlockHashes(r.Seq(4), 1, "")}
			for _, q := range queries {
				if err := x.CheckOverlap(q); err != nil {
					t.Fatal(err)
				}
				got := x.Overlap(q)
				for worker := range 3 {
					if want := m.overlap(worker, q); got[worker] != want {
						t.Fatalf("overlap of worker %d = %d, brute force %d", worker, got[worker], want)
					}
					// Monotone: if block i matches for a worker, so do blocks 0..i−1, so every counted block is there.
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
