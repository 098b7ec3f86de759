package router

// TreeEventKind names what happened to a RadixTree.
type TreeEventKind string

// Events recorded in a RadixTree's log, for a lesson's narration.
const (
	TreeMatched  TreeEventKind = "matched"  // a lookup ended at Node after Len tokens
	TreeInserted TreeEventKind = "inserted" // a new leaf Node of Len tokens was hung under Parent
	TreeSplit    TreeEventKind = "split"    // Child was cut after Len tokens; Node holds that first part
	TreeEvicted  TreeEventKind = "evicted"  // leaf Node and its Len tokens left the tree
	TreeLocked   TreeEventKind = "locked"   // a lock chain was taken from Node to the root
	TreeUnlocked TreeEventKind = "unlocked" // a lock chain from Node was released
)

// TreeEvent is one entry of a RadixTree's log. Node ids are those of
// NodeView, so a renderer can highlight what changed.
type TreeEvent struct {
	Kind   TreeEventKind
	Node   int
	Parent int // Node's parent (-1 for the root)
	Child  int // split: the node that was cut, now Node's only child
	Len    int // tokens: matched, inserted, split point or evicted
}

// treeLog is the event log a RadixTree embeds.
type treeLog struct {
	events []TreeEvent
	off    bool
}

func (l *treeLog) record(e TreeEvent) {
	if !l.off {
		l.events = append(l.events, e)
	}
}

// DisableEvents stops recording events (simulations at benchmark scale).
func (l *treeLog) DisableEvents() { l.off, l.events = true, nil }

// Events returns the events recorded since the last call and clears the log.
func (l *treeLog) Events() []TreeEvent {
	e := l.events
	l.events = nil
	return e
}
