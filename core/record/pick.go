package record

import (
	"math"
	"slices"

	"github.com/inferlab/inferlab/core/allocator"
)

// Pick chooses the ticks a narration of several loops serving one stream
// shows as steps, no more than most of them: every tick where something happens
// for the first time in one of them (the first block taken while
// decoding, the first request finished, each request's first refusal at
// the head of the queue, the queue emptying) or in any (the first refusal
// for external fragmentation, the first hole reused, the first
// preemption), the first tick, each loop's last tick and fullest one; then
// busy ticks, evenly spaced, up to most. Each step narrates everything since
// the one before, so the ticks between are grouped into it. Past most, the
// first events and the end are kept.
func Pick(most int, hs ...*History) []int {
	// Only busy ticks can show something for the first time or be busy
	// themselves (History.busy).
	lists := make([][]int32, len(hs))
	for i, h := range hs {
		lists[i] = h.busy
	}
	return pick(most, hs, lists)
}

// picker remembers which events have been seen, to mark the tick where
// each first happens.
type picker struct {
	special []int     // distinct ticks, in the order marked: a dozen or two, searched in place (a map hashes in software in WebAssembly)
	seen    [][4]bool // per loop: a decode took a block, a request finished, a new request was blocked, the queue emptied
	shared  [3]bool   // any loop: external fragmentation, a hole reused, a preemption
	blocked [][]bool  // per loop, by request id: already seen blocked at the queue head
}

// note marks tick t of loop i (h), record r, special where something
// happens there for the first time, and reports whether anything happened.
// It reads the record itself: it is called for every busy tick of every
// loop.
func (p *picker) note(i, t int, r *tickRecord, h *History) bool {
	newBlock := false
	if b := int(r.blocked); b >= 0 {
		if b >= len(p.blocked[i]) {
			p.blocked[i] = slices.Grow(p.blocked[i], b+1-len(p.blocked[i]))[:b+1]
		}
		newBlock = !p.blocked[i][b]
		p.blocked[i][b] = true
	}
	// Written out, not looped over arrays: this runs for every tick, and
	// in WebAssembly each branch taken is a trip through a dispatch table.
	seen := &p.seen[i]
	p.first(&seen[0], r.decodeTaken > 0, t)
	p.first(&seen[1], r.nFin > 0, t)
	p.first(&seen[2], newBlock, t)
	p.first(&seen[3], r.waiting == 0 && r.nAdm > 0, t) // the queue emptied
	p.first(&p.shared[0], r.short >= 0 && Fragmented(&h.shorts[r.short]), t)
	p.first(&p.shared[1], r.holeReuse, t)
	p.first(&p.shared[2], r.nPre > 0, t)
	return newBlock || r.nAdm+r.nFin+r.nPre > 0
}

// first marks tick t special when an event happened there that *seen says
// had not happened before.
func (p *picker) first(seen *bool, happened bool, t int) {
	if happened && !*seen {
		*seen = true
		p.mark(t)
	}
}

// mark makes tick t special.
func (p *picker) mark(t int) {
	if !slices.Contains(p.special, t) {
		p.special = append(p.special, t)
	}
}

// Fragmented reports whether a refusal had enough slots free, only not in
// one run: external fragmentation.
func Fragmented(s *allocator.NoSpaceError) bool { return s.Free >= s.Need }

// pick is Pick noting only the ticks lists[i] lists for history i
// (ascending), walked in tick order.
func pick(most int, hs []*History, lists [][]int32) []int {
	p := picker{seen: make([][4]bool, len(hs)), blocked: make([][]bool, len(hs))}
	n := 0
	p.mark(0)
	for _, h := range hs {
		n = max(n, h.ticks.len())
		p.mark(h.ticks.len() - 1)
	}
	for _, h := range hs {
		p.mark(h.peakTick)
	}
	var others []int
	next := make([]int, len(lists)) // lists[i][next[i]] is history i's next tick
	for {
		t := math.MaxInt
		for i, l := range lists {
			if next[i] < len(l) {
				t = min(t, int(l[next[i]]))
			}
		}
		if t == math.MaxInt {
			break
		}
		busy := false
		for i, l := range lists {
			if next[i] < len(l) && int(l[next[i]]) == t {
				if p.note(i, t, hs[i].ticks.at(t), hs[i]) {
					busy = true
				}
				next[i]++
			}
		}
		if busy && !slices.Contains(p.special, t) {
			others = append(others, t)
		}
	}
	var out []int
	for _, t := range p.special {
		if t >= 0 && t < n {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	if len(out) > most { // keep the first events and the end
		out = append(out[:most-1], out[len(out)-1])
	}
	room := most - len(out)
	if room > 0 && len(others) > 0 {
		if len(others) <= room {
			out = append(out, others...)
		} else {
			for i := 0; i < room; i++ {
				out = append(out, others[(2*i+1)*len(others)/(2*room)])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
