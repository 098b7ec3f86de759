package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The ring queue behaves as a slice with prepend, append and pop at the
// head, across wrap-arounds and growth.
func TestQueueMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var q queue[int]
	var want []int
	for op := 0; op < 20000; op++ {
		switch k := r.IntN(5); {
		case k < 2:
			q.pushBack(op)
			want = append(want, op)
		case k == 2:
			q.pushFront(op)
			want = append([]int{op}, want...)
		case len(want) > 0:
			if got := q.popFront(); got != want[0] {
				t.Fatalf("op %d: popped %d, want %d", op, got, want[0])
			}
			want = want[1:]
		}
		got := make([]int, q.len())
		for i := range got {
			got[i] = q.at(i)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("op %d: queue %v, want %v", op, got, want)
		}
	}
}
