package radixcache

// EventKind names what happened to a Tree.
type EventKind string

// Events recorded in a Tree's log, for a lesson's narration.
const (
	Matched  EventKind = "matched"  // a lookup ended at Node after Len tokens
	Inserted EventKind = "inserted" // a new leaf Node of Len tokens was hung under Parent
	Split    EventKind = "split"    // Child was cut after Len tokens; Node holds that first part
	Evicted  EventKind = "evicted"  // leaf Node and its Len tokens left the tree
	Locked   EventKind = "locked"   // a lock chain was taken from Node to the root
	Unlocked EventKind = "unlocked" // a lock chain from Node was released
)

// Event is one entry of a Tree's log. Node ids are those of
// NodeView, so a renderer can highlight what changed.
type Event struct {
	Kind   EventKind
	Node   int
	Parent int // Node's parent (-1 for the root)
	Child  int // split: the node that was cut, now Node's only child
	Len    int // tokens: matched, inserted, split point or evicted
}

// eventLog is the event log a Tree embeds.
type eventLog struct {
	events []Event
	off    bool
}

func (l *eventLog) record(e Event) {
	if !l.off {
		l.events = append(l.events, e)
	}
}

// DisableEvents stops recording events (simulations at benchmark scale).
func (l *eventLog) DisableEvents() { l.off, l.events = true, nil }

// Events returns the events recorded since the last call and clears the log.
func (l *eventLog) Events() []Event {
	e := l.events
	l.events = nil
	return e
}
