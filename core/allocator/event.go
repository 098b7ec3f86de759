package allocator

import "errors"

// ErrNoSpace is returned when an allocation cannot be satisfied. The
// allocator is unchanged when it is returned.
var ErrNoSpace = errors.New("allocator: not enough free memory")

// EventKind names what happened to the memory.
type EventKind string

// Events recorded in an allocator's log.
const (
	Admitted  EventKind = "admitted"  // a request entered the pool
	Appended  EventKind = "appended"  // tokens were written into slots it already held
	Allocated EventKind = "allocated" // a block (paged) or a run (contiguous) was handed out
	Freed     EventKind = "freed"     // a block or a run went back to the pool
	Rejected  EventKind = "rejected"  // an allocation failed; nothing changed
	Hit       EventKind = "hit"       // a cached block was reused by a new request (prefix cache)
	Copied    EventKind = "copied"    // copy-on-write: From's contents were copied into Block
	Stored    EventKind = "stored"    // a full block was registered in the prefix cache (vLLM BlockStored)
	Removed   EventKind = "removed"   // a cached block was evicted as its slot was reused (vLLM BlockRemoved)
)

// Event is one entry of the log a lesson builds its steps from. For the
// paged pool Block is the physical block; for the contiguous pool Start and
// Len give the run of slots.
type Event struct {
	Kind   EventKind
	Req    int
	Block  int
	Start  int
	Len    int
	Tokens int // tokens involved (admitted prompt, appended count)
	From   int // source block of a copy
	Hash   uint64
	Parent uint64 // parent hash of a stored block
}

// Usage is a snapshot of how a pool's slots are used.
type Usage struct {
	Resident int // requests holding memory
	Stored   int // token slots holding a token
	Reserved int // slots handed to requests (used or not)
	Pool     int // slots in the pool
	// Counters since the pool was made:
	Taken      int // allocations: blocks (paged, copies included) or runs (contiguous) handed out
	HoleReuses int // contiguous: runs placed below the last reservation, in a hole a freed run left (first fit); paged: 0
}

// Waste is the reserved-but-unused share of reserved slots, in [0,1]
// (internal fragmentation).
func (u Usage) Waste() float64 {
	if u.Reserved == 0 {
		return 0
	}
	return float64(u.Reserved-u.Stored) / float64(u.Reserved)
}

// Utilization is the share of the pool that holds tokens, in [0,1].
func (u Usage) Utilization() float64 {
	if u.Pool == 0 {
		return 0
	}
	return float64(u.Stored) / float64(u.Pool)
}

// log is the event log both allocators embed.
type log struct {
	events []Event
	off    bool
}

// logging reports whether events are recorded. Callers test it before
// they build an event: an Event is too big to build for nothing in
// WebAssembly, where Go zeroes it with memory.fill and passes a copy of it
// with memory.copy.
func (l *log) logging() bool { return !l.off }

// record appends e; the caller has checked logging.
func (l *log) record(e Event) { l.events = append(l.events, e) }

// DisableEvents stops recording events; a simulation that never reads them
// (the scheduler at benchmark scale) saves the memory and time.
func (l *log) DisableEvents() { l.off, l.events = true, nil }

// Events returns the events recorded since the last call and clears the
// log. The log keeps its buffer, so a simulation draining it every step
// does not regrow it.
func (l *log) Events() []Event {
	if len(l.events) == 0 {
		return nil
	}
	e := append([]Event(nil), l.events...)
	l.events = l.events[:0]
	return e
}

// Drain calls fn on each event recorded since the last drain, in order, and
// clears the log without copying it.
func (l *log) Drain(fn func(Event)) {
	for _, e := range l.events {
		fn(e)
	}
	l.events = l.events[:0]
}
