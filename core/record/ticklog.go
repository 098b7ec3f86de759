package record

import "slices"

// tickLog is one history's tick records, in chunks of tickChunk: a run of
// hundreds of thousands of ticks then neither copies its history as it
// grows nor leaves behind the arrays a doubling slice outgrows (which, in
// WebAssembly, grow the linear memory).
type tickLog struct {
	chunks [][]tickRecord
	n      int
}

const (
	tickChunk  = 4096 // records per chunk (192 KiB), a power of two
	firstChunk = 512  // records the first chunk starts with
)

func (l *tickLog) len() int { return l.n }

// at returns record t < len().
func (l *tickLog) at(t int) *tickRecord { return &l.chunks[t/tickChunk][t%tickChunk] }

// open returns the index of the chunk the next record goes in, with room
// for it. The first chunk starts at firstChunk records and doubles up to
// tickChunk (most streams are short: the garage lesson's defaults run 99
// and 506 ticks); later ones are made whole, so a long stream leaves its
// collector only the first chunk's two or three outgrown copies, which in
// WebAssembly the collector marks on the simulation's own thread.
func (l *tickLog) open() int {
	k := l.n / tickChunk
	if k == len(l.chunks) {
		size := tickChunk
		if k == 0 {
			size = firstChunk
		}
		l.chunks = append(l.chunks, make([]tickRecord, 0, size))
	}
	if c := l.chunks[k]; len(c) == cap(c) { // the first chunk, full below tickChunk
		size := min(2*cap(c), tickChunk)
		// Capped at size exactly: Grow may round up, and at() counts on
		// every chunk but the last holding tickChunk records.
		l.chunks[k] = slices.Grow(c, size-len(c))[:len(c):size]
	}
	return k
}

// next appends a record to the log and returns it, zero, to be filled.
// The last chunk usually has room, and is then extended without a call to
// open.
func (l *tickLog) next() *tickRecord {
	k := len(l.chunks) - 1
	if k < 0 || len(l.chunks[k]) == cap(l.chunks[k]) {
		k = l.open()
	}
	c := l.chunks[k][:len(l.chunks[k])+1]
	l.chunks[k] = c
	l.n++
	return &c[len(c)-1]
}

// appendCopies appends up to m copies of r, as many as the chunk they go
// in holds, and returns them.
func (l *tickLog) appendCopies(r tickRecord, m int) []tickRecord {
	k := l.open()
	c := l.chunks[k]
	m = min(m, cap(c)-len(c))
	recs := c[len(c) : len(c)+m]
	for i := range recs {
		recs[i] = r
	}
	l.chunks[k] = c[:len(c)+m]
	l.n += m
	return recs
}
