package allocator

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// handles behaves as a map from id to handle, for ids on both sides of
// denseIDs and negative ones, over random sets, replacements and deletions.
func TestHandlesMatchAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	ids := []int{0, 1, 63, 64, 65, 1000, denseIDs - 1, denseIDs, denseIDs + 5, -1, -denseIDs, 1 << 40}
	var m handles[*int]
	want := map[int]*int{}
	for op := range 5000 {
		id := ids[r.IntN(len(ids))]
		if r.IntN(8) == 0 {
			id = r.IntN(3000)
		}
		switch r.IntN(3) {
		case 0, 1:
			v := new(int)
			*v = op
			m.set(id, v)
			want[id] = v
		case 2:
			m.del(id)
			delete(want, id)
		}
		if m.len() != len(want) {
			t.Fatalf("op %d: len %d, want %d", op, m.len(), len(want))
		}
		for _, id := range ids {
			if m.get(id) != want[id] {
				t.Fatalf("op %d: get(%d) = %v, want %v", op, id, m.get(id), want[id])
			}
		}
		got := maps.Collect(m.all())
		if !maps.Equal(got, want) {
			t.Fatalf("op %d: all yields %v, want %v", op, got, want)
		}
	}
}

// Ids with gaps grow the slice by doubling, never past denseIDs: an id at
// or above it stays in the map and is found there (the slice once grew to
// twice 700,000 and hid 1,100,000 from get and del).
func TestHandlesSliceStopsAtDenseIDs(t *testing.T) {
	var m handles[*int]
	ids := []int{600_000, 700_000, 1_100_000, denseIDs - 1, denseIDs}
	for _, id := range ids {
		v := id
		m.set(id, &v)
	}
	if len(m.dense) > denseIDs {
		t.Fatalf("the slice grew to %d, past denseIDs", len(m.dense))
	}
	for _, id := range ids {
		if h := m.get(id); h == nil || *h != id {
			t.Fatalf("get(%d) = %v", id, h)
		}
	}
	m.del(1_100_000)
	if m.get(1_100_000) != nil || m.len() != len(ids)-1 {
		t.Fatalf("after del(1100000): get %v, len %d, want nil and %d", m.get(1_100_000), m.len(), len(ids)-1)
	}
}
