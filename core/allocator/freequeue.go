package allocator

// freeQueue is vLLM's FreeKVCacheBlockQueue: a doubly linked list of the
// blocks nobody references, threaded through per-block links so that taking
// from the head, appending at the tail and unlinking from the middle (a
// prefix-cache hit reviving a free block) are all O(1).
type freeQueue struct {
	prev, next []int // -1 ends the list
	in         []bool
	head, tail int
	n          int
}

func newFreeQueue(blocks int) *freeQueue {
	q := &freeQueue{prev: make([]int, blocks), next: make([]int, blocks), in: make([]bool, blocks), head: -1, tail: -1}
	for b := 0; b < blocks; b++ { // initial order is by block id, as in vLLM
		q.pushBack(b)
	}
	return q
}

func (q *freeQueue) len() int { return q.n }

func (q *freeQueue) pushBack(b int) {
	q.prev[b], q.next[b] = q.tail, -1
	if q.tail >= 0 {
		q.next[q.tail] = b
	} else {
		q.head = b
	}
	q.tail = b
	q.in[b] = true
	q.n++
}

func (q *freeQueue) remove(b int) {
	p, n := q.prev[b], q.next[b]
	if p >= 0 {
		q.next[p] = n
	} else {
		q.head = n
	}
	if n >= 0 {
		q.prev[n] = p
	} else {
		q.tail = p
	}
	q.prev[b], q.next[b] = -1, -1
	q.in[b] = false
	q.n--
}

func (q *freeQueue) popFront() int {
	b := q.head
	q.remove(b)
	return b
}

// order lists the queue from head to tail (for tests and scenes).
func (q *freeQueue) order() []int {
	out := make([]int, 0, q.n)
	for b := q.head; b >= 0; b = q.next[b] {
		out = append(out, b)
	}
	return out
}
