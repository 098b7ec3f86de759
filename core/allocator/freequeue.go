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

// order lists the queue from head to tail (for tests and scenes).
func (q *freeQueue) order() []int {
	out := make([]int, 0, q.n)
	for b := q.head; b >= 0; b = q.links[b].next {
		out = append(out, int(b))
	}
	return out
}
