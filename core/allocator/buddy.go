package allocator

import (
	"math/bits"
	"slices"
)

// buddy is a binary buddy allocator's free lists over a pool of slots
// (Knuth, TAOCP vol. 1 §2.5; the allocator the vLLM paper's Orca baselines
// take KV memory from). Every block holds 2^k slots and starts at a
// multiple of 2^k. The pool is first cut, from address 0 up, into the
// largest such blocks that fit, so a pool that is not a power of two
// leaves smaller blocks at its end. A request takes the lowest-addressed
// free block of the smallest order that holds it, splitting a larger one
// in halves as needed (the upper halves become free); a freed block merges
// with its buddy (the other half of the block both were split from) while
// that one is free, order by order.
type buddy struct {
	free [][]int // free[k]: the starts of the free blocks of 2^k slots, ascending
}

func newBuddy(pool int) *buddy {
	b := &buddy{free: make([][]int, bits.Len(uint(pool)))}
	for at := 0; at < pool; {
		k := bits.Len(uint(pool-at)) - 1 // the largest block that fits
		if at > 0 {
			k = min(k, bits.TrailingZeros(uint(at))) // and is aligned
		}
		b.add(k, at)
		at += 1 << k
	}
	return b
}

// order is the smallest k with 2^k ≥ slots.
func order(slots int) int { return bits.Len(uint(max(slots, 1) - 1)) }

func (b *buddy) add(k, start int) {
	i, _ := slices.BinarySearch(b.free[k], start)
	b.free[k] = slices.Insert(b.free[k], i, start)
}

// take removes a free block of 2^k slots, splitting a larger one if need
// be, and returns its start; ok is false when no free block is that large.
func (b *buddy) take(k int) (start int, ok bool) {
	j := k
	for j < len(b.free) && len(b.free[j]) == 0 {
		j++
	}
	if j >= len(b.free) {
		return 0, false
	}
	start = b.free[j][0]
	b.free[j] = slices.Delete(b.free[j], 0, 1)
	for j > k {
		j--
		b.add(j, start+1<<j)
	}
	return start, true
}

// give frees the block of 2^k slots at start, merging it with free
// buddies.
func (b *buddy) give(start, k int) {
	for k+1 < len(b.free) {
		mate := start ^ 1<<k
		i, found := slices.BinarySearch(b.free[k], mate)
		if !found {
			break
		}
		b.free[k] = slices.Delete(b.free[k], i, i+1)
		start = min(start, mate)
		k++
	}
	b.add(k, start)
}

// largest is the size of the largest free block (0 when none).
func (b *buddy) largest() int {
	for k := len(b.free) - 1; k >= 0; k-- {
		if len(b.free[k]) > 0 {
			return 1 << k
		}
	}
	return 0
}

// below is the free slots in blocks smaller than 2^k: what a request of
// 2^k slots cannot use.
func (b *buddy) below(k int) int {
	n := 0
	for j := 0; j < min(k, len(b.free)); j++ {
		n += len(b.free[j]) << j
	}
	return n
}
