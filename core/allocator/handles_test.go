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
