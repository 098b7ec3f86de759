package allocator

// freeQueue is vLLM's FreeKVCacheBlockQueue: a doubly linked list of the
// blocks nobody references, threaded through per-block links so that taking
// from the head, appending at the tail and unlinking from the middle (a
// prefix-cache hit reviving a free block) are all O(1). A block's two links
// sit side by side, 8 bytes in all, so that an update touches one cache line.
type freeQueue struct {
	links      []link
	head, tail int32 // -1: empty
	n          int
}

type link struct{ prev, next int32 } // -1 ends the list

func newFreeQueue(blocks int) *freeQueue {
	q := &freeQueue{links: make([]link, blocks), head: -1, tail: -1}
	for b := 0; b < blocks; b++ { // initial order is by block id, as in vLLM
		q.pushBack(b)
	}
	return q
}

func (q *freeQueue) len() int { return q.n }

func (q *freeQueue) pushBack(b int) {
	q.links[b] = link{prev: q.tail, next: -1}
	if q.tail >= 0 {
		q.links[q.tail].next = int32(b)
	} else {
		q.head = int32(b)
	}
	q.tail = int32(b)
	q.n++
}

func (q *freeQueue) remove(b int) {
	l := q.links[b]
	if l.prev >= 0 {
		q.links[l.prev].next = l.next
	} else {
		q.head = l.next
	}
	if l.next >= 0 {
		q.links[l.next].prev = l.prev
	} else {
		q.tail = l.prev
	}
	q.links[b] = link{-1, -1}
	q.n--
}

func (q *freeQueue) popFront() int {
	b := int(q.head)
	q.remove(b)
	return b
}

// takeFront removes the first n blocks (n ≤ len()), in order, appends
// them to dst, and sets their reference counts to one. It is n popFronts
// with one branch per block: in WebAssembly every branch taken is a trip
// through the function's dispatch table, and an admission takes tens of
// blocks.
func (q *freeQueue) takeFront(dst []int, n int, refs []int32) []int {
	b := q.head
	for range n {
		next := q.links[b].next
		q.links[b] = link{-1, -1}
		refs[b] = 1
		dst = append(dst, int(b))
		b = next
	}
	q.head = b
	if b >= 0 {
		q.links[b].prev = -1
	} else {
		q.tail = -1
	}
	q.n -= n
	return dst
}

// pushBackReversed is pushBack of blocks from last to first, setting
// their reference counts to zero, with one branch per block (see
// takeFront): how a request's blocks return when it is freed. Each block
// is linked to both its neighbours, which the list names, in one store.
func (q *freeQueue) pushBackReversed(blocks []int, refs []int32) {
	n := len(blocks)
	if n == 0 {
		return
	}
	last := blocks[n-1]
	refs[last] = 0
	q.pushBack(last) // links last after the old tail, its next still -1
	if n == 1 {
		return
	}
	q.links[last].next = int32(blocks[n-2])
	for i := n - 2; i > 0; i-- {
		b := blocks[i]
		refs[b] = 0
		q.links[b] = link{prev: int32(blocks[i+1]), next: int32(blocks[i-1])}
	}
	first := blocks[0]
	refs[first] = 0
	q.links[first] = link{prev: int32(blocks[1]), next: -1}
	q.tail = int32(first)
	q.n += n - 1
}

// order lists the queue from head to tail (for tests and scenes).
func (q *freeQueue) order() []int {
	out := make([]int, 0, q.n)
	for b := q.head; b >= 0; b = q.links[b].next {
		out = append(out, int(b))
	}
	return out
}
