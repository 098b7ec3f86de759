package scheduler

// queue is a waiting queue: a ring buffer, so that taking the head and
// putting a preempted request back at the head are O(1) instead of a copy
// of the whole queue.
type queue[T any] struct {
	buf  []T // len(buf) is the capacity, a power of two
	head int
	n    int
}

func (q *queue[T]) len() int { return q.n }

// at returns the i-th element from the head.
func (q *queue[T]) at(i int) T { return q.buf[(q.head+i)&(len(q.buf)-1)] }

func (q *queue[T]) front() T { return q.at(0) }

func (q *queue[T]) grow() {
	if q.n < len(q.buf) {
		return
	}
	buf := make([]T, max(8, 2*len(q.buf)))
	for i := 0; i < q.n; i++ {
		buf[i] = q.at(i)
	}
	q.buf, q.head = buf, 0
}

func (q *queue[T]) pushBack(x T) {
	q.grow()
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = x
	q.n++
}

func (q *queue[T]) pushFront(x T) {
	q.grow()
	q.head = (q.head - 1) & (len(q.buf) - 1)
	q.buf[q.head] = x
	q.n++
}

func (q *queue[T]) popFront() T {
	x := q.buf[q.head]
	var zero T
	q.buf[q.head] = zero
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return x
}
