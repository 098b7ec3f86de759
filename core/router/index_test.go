package router

import (
	"errors"
	"maps"
	"testing"
)

// chain returns the chain hashes of n one-token blocks with token ids ids.
func chain(ids ...int) []uint64 { return BlockHashes(ids, 1, "") }

func TestIndexOverlap(t *testing.T) {
	x := NewIndex()
	a := chain(1, 2, 3, 4)
	b := chain(1, 2, 7)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(x.Apply(0, Event{Kind: Stored, Hashes: a, Parent: RootHash}))
	must(x.Apply(1, Event{Kind: Stored, Hashes: a[:2], Parent: RootHash}))
	must(x.Apply(1, Event{Kind: Stored, Hashes: b[2:], Parent: b[1]}))
	must(x.Apply(2, Event{Kind: Stored, Hashes: a[:1], Parent: RootHash}))
	for _, tc := range []struct {
		name string
		q    []uint64
		want map[int]int
	}{
		{"a", a, map[int]int{0: 4, 1: 2, 2: 1}},
		{"b", b, map[int]int{0: 2, 1: 3, 2: 1}},
		{"a prefix", a[:3], map[int]int{0: 3, 1: 2, 2: 1}},
		{"unknown", chain(9, 9), map[int]int{}},
	} {
		if got := x.Overlap(tc.q); !maps.Equal(got, tc.want) {
			t.Errorf("%s: overlap %v, want %v", tc.name, got, tc.want)
		}
	}
	if x.Blocks(0) != 4 || x.Blocks(1) != 3 || x.Blocks(2) != 1 || x.Size() != 5 {
		t.Fatalf("blocks %d %d %d size %d", x.Blocks(0), x.Blocks(1), x.Blocks(2), x.Size())
	}
	// Removing block 1 from worker 0 cuts its overlap at 1, though it still
	// holds blocks 2 and 3: overlap counts leading blocks only.
	must(x.Apply(0, Event{Kind: Removed, Hashes: a[1:2]}))
	if got := x.Overlap(a); got[0] != 1 {
		t.Fatalf("after removing block 1 on worker 0, overlap %v, want 0:1", got)
	}
	must(x.Apply(1, Event{Kind: Cleared}))
	if got := x.Overlap(b); !maps.Equal(got, map[int]int{0: 1, 2: 1}) || x.Blocks(1) != 0 {
		t.Fatalf("after clearing worker 1, overlap %v blocks %d", got, x.Blocks(1))
	}
	if err := x.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestIndexUnknownParent(t *testing.T) {
	x := NewIndex()
	a := chain(1, 2, 3)
	if err := x.Apply(0, Event{Kind: Stored, Hashes: a[1:], Parent: a[0]}); !errors.Is(err, ErrUnknownParent) {
		t.Fatalf("store under an unknown parent: %v, want ErrUnknownParent", err)
	}
	if x.Size() != 0 {
		t.Fatal("dropped event changed the index")
	}
	// Another worker's copy of the parent does not count.
	x.Apply(1, Event{Kind: Stored, Hashes: a[:1], Parent: RootHash})
	if err := x.Apply(0, Event{Kind: Stored, Hashes: a[1:], Parent: a[0]}); !errors.Is(err, ErrUnknownParent) {
		t.Fatalf("store under another worker's block: %v", err)
	}
}

func TestIndexCopies(t *testing.T) {
	// vLLM may cache the same block twice (it does not merge); one removal
	// leaves the other copy indexed.
	x := NewIndex()
	a := chain(5, 6)
	x.Apply(0, Event{Kind: Stored, Hashes: a, Parent: RootHash})
	x.Apply(0, Event{Kind: Stored, Hashes: a, Parent: RootHash})
	x.Apply(0, Event{Kind: Removed, Hashes: a})
	if got := x.Overlap(a); got[0] != 2 {
		t.Fatalf("after removing one of two copies, overlap %v", got)
	}
	x.Apply(0, Event{Kind: Removed, Hashes: a})
	if got := x.Overlap(a); len(got) != 0 || x.Size() != 0 {
		t.Fatalf("after removing both copies, overlap %v size %d", got, x.Size())
	}
	if err := x.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestIndexSnapshot(t *testing.T) {
	x := NewIndex()
	a, b := chain(1, 2), chain(1, 3)
	x.Apply(0, Event{Kind: Stored, Hashes: a, Parent: RootHash})
	x.Apply(1, Event{Kind: Stored, Hashes: b, Parent: RootHash})
	s := x.Snapshot()
	if len(s) != 3 || s[0].Hash != a[0] || s[0].Depth != 0 || len(s[0].Workers) != 2 ||
		s[1].Depth != 1 || s[2].Depth != 1 || s[1].Parent != a[0] {
		t.Fatalf("snapshot %+v", s)
	}
}

func TestApproxTTL(t *testing.T) {
	a := NewApproxIndex(10)
	h := chain(1, 2, 3)
	a.Record(0, h, 0)
	a.Record(1, h[:1], 5)
	if got := a.Overlap(h); !maps.Equal(got, map[int]int{0: 3, 1: 1}) {
		t.Fatalf("overlap %v", got)
	}
	a.Advance(9.5)
	if a.Entries() != 4 {
		t.Fatalf("%d entries before expiry, want 4", a.Entries())
	}
	a.Record(0, h[:2], 9.5) // refreshes blocks 0 and 1 on worker 0
	a.Advance(10)           // block 2 on worker 0 expires
	if got := a.Overlap(h); !maps.Equal(got, map[int]int{0: 2, 1: 1}) {
		t.Fatalf("after expiry at 10: overlap %v", got)
	}
	a.Advance(15) // worker 1's entry expires
	a.Advance(3)  // time does not go back
	if got := a.Overlap(h); !maps.Equal(got, map[int]int{0: 2}) || a.Blocks(1) != 0 {
		t.Fatalf("after 15: overlap %v", got)
	}
	a.Advance(19.5)
	if a.Entries() != 0 || len(a.Overlap(h)) != 0 {
		t.Fatalf("everything should have expired, %d entries left", a.Entries())
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestApproxPrune(t *testing.T) {
	a := NewApproxIndex(0)
	if a.TTL != 120 || a.MaxTreeSize != 1<<20 || a.PruneTargetRatio != 0.8 {
		t.Fatalf("defaults %g %d %g", a.TTL, a.MaxTreeSize, a.PruneTargetRatio)
	}
	a.MaxTreeSize = 10
	a.Record(0, chain(1, 2, 3, 4, 5, 6), 0)
	a.Record(1, chain(1, 2, 3, 4, 5), 1) // 11 entries > 10: prune to 8
	if a.Entries() != 8 {
		t.Fatalf("%d entries after pruning, want 8", a.Entries())
	}
	// The oldest request lost its tail first.
	if got := a.Overlap(chain(1, 2, 3, 4, 5, 6)); !maps.Equal(got, map[int]int{0: 3, 1: 5}) {
		t.Fatalf("overlap after prune %v", got)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
}
