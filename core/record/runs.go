package record

import (
	"cmp"
	"slices"

	"github.com/inferlab/inferlab/core/allocator"
)

// RunLog is how a contiguous pool's reservations changed while a History
// served it (History.LogRuns): each run taken, with its tokens at the end
// of that tick, and each run freed, with its tick. A resident run gains
// one token per tick: a request that has stored its last leaves at the
// next tick, freeing its run, and one whose run is full is preempted,
// freeing it. So the runs at any tick follow from the log (Replay), and
// the pool is served once, not again for the pictures.
type RunLog struct {
	pool   *allocator.Contiguous
	events []runEvent // in tick order
}

// runEvent is a run taken at tick (Run.Tokens as the tick ended), or, with
// freed, request Run.Req's run freed at tick.
type runEvent struct {
	tick  int
	freed bool
	run   allocator.Run
}

// Len is the number of changes logged: a replay's work.
func (l *RunLog) Len() int { return len(l.events) }

// note logs tick t's changes to the runs of the pool, which has just
// served it (the tick's record is r): the finished and preempted
// requests' runs are gone, the admitted ones' that are still held are
// new.
func (l *RunLog) note(t int, h *History, r *tickRecord) {
	adm, fin, pre := h.lists(r)
	for _, ids := range [][]int{fin, pre} {
		for _, id := range ids {
			l.events = append(l.events, runEvent{tick: t, freed: true, run: allocator.Run{Req: id}})
		}
	}
	for _, id := range adm {
		if run, ok := l.pool.RunOf(id); ok {
			l.events = append(l.events, runEvent{tick: t, run: run})
		}
	}
}

// Replay reads a RunLog forward.
type Replay struct {
	log  *RunLog
	next int        // events[:next] are applied
	live []runEvent // the runs held, in no order
	// pos[req] is 1 + req's index in live, 0 when it holds no run (request
	// ids are indices): a lookup without a map, which hashes in software
	// in WebAssembly.
	pos []int32
}

// Replay starts a replay of the log at its first tick.
func (l *RunLog) Replay() *Replay { return &Replay{log: l} }

// At returns the runs at the end of tick t as Contiguous.Runs would have:
// in address order, nil when there are none. It must be asked for ticks in
// ascending order, so that every change is applied once.
func (r *Replay) At(t int) []allocator.Run {
	for ; r.next < len(r.log.events) && r.log.events[r.next].tick <= t; r.next++ {
		r.apply(&r.log.events[r.next])
	}
	if len(r.live) == 0 {
		return nil
	}
	out := make([]allocator.Run, 0, len(r.live))
	for _, e := range r.live {
		run := e.run
		run.Tokens += t - e.tick
		out = append(out, run)
	}
	slices.SortFunc(out, func(a, b allocator.Run) int { return cmp.Or(a.Start-b.Start, a.Req-b.Req) })
	return out
}

// apply takes e's run into live, or drops it when e frees it.
func (r *Replay) apply(e *runEvent) {
	req := e.run.Req
	if req >= len(r.pos) {
		r.pos = slices.Grow(r.pos, req+1-len(r.pos))[:req+1]
	}
	i := int(r.pos[req]) - 1
	switch {
	case !e.freed && i >= 0:
		r.live[i] = *e
	case !e.freed:
		r.live = append(r.live, *e)
		r.pos[req] = int32(len(r.live))
	case i >= 0: // freed: the last run moves into its place
		last := r.live[len(r.live)-1]
		r.live[i] = last
		r.pos[last.run.Req] = int32(i + 1)
		r.live = r.live[:len(r.live)-1]
		r.pos[req] = 0
	}
}
