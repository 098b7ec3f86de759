package allocator

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// backward lists the queue from tail to head through the prev links.
func (q *freeQueue) backward() []int {
	var out []int
	for b := q.tail; b >= 0; b = q.links[b].prev {
		out = append(out, int(b))
	}
	return out
}

// takeFront and pushBackReversed, the batch moves of blockPool.takeBlocks
// and freeTable, leave the queue (both ways through it) and the reference
// counts exactly as the popFronts and pushBacks they replace, over random
// sequences that empty the queue, refill it and remove blocks from its
// middle.
func TestFreeQueueBatchMovesMatchSingleOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n := 1 + r.IntN(40)
		batch, single := newFreeQueue(n), newFreeQueue(n)
		refsB, refsS := make([]int32, n), make([]int32, n)
		var held [][]int // tables taken and not yet returned
		for op := range 200 {
			switch k := r.IntN(3); {
			case k == 0 && batch.len() > 0:
				take := r.IntN(batch.len() + 1)
				table := batch.takeFront(nil, take, refsB)
				var want []int
				for range take {
					b := single.popFront()
					refsS[b] = 1
					want = append(want, b)
				}
				if !slices.Equal(table, want) {
					t.Fatalf("trial %d op %d: takeFront(%d) = %v, popFronts %v", trial, op, take, table, want)
				}
				held = append(held, table)
			case k == 1 && len(held) > 0:
				i := r.IntN(len(held))
				table := held[i]
				held = slices.Delete(held, i, i+1)
				batch.pushBackReversed(table, refsB)
				for j := len(table) - 1; j >= 0; j-- {
					refsS[table[j]] = 0
					single.pushBack(table[j])
				}
			case k == 2 && batch.len() > 0:
				// a prefix-cache hit takes a block from the middle
				b := batch.order()[r.IntN(batch.len())]
				batch.remove(b)
				single.remove(b)
				refsB[b], refsS[b] = 1, 1
				held = append(held, []int{b})
			}
			if !slices.Equal(batch.order(), single.order()) || !slices.Equal(batch.backward(), single.backward()) ||
				batch.len() != single.len() || !slices.Equal(refsB, refsS) {
				t.Fatalf("trial %d op %d: batch queue %v (back %v, %d), single %v (back %v, %d); refs %v vs %v", trial, op,
					batch.order(), batch.backward(), batch.len(), single.order(), single.backward(), single.len(), refsB, refsS)
			}
		}
	}
}
