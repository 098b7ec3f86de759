// Package record keeps what a serving loop did, tick by tick, so that a
// lesson can narrate a run after it ends: History holds one loop's ticks
// (core/scheduler's Loop.StepInto and Loop.StepQuiet) in a few dozen bytes
// each, with the sums behind a run's figures; RunLog keeps how a
// contiguous pool's reservations changed, so that its runs at any tick can
// be drawn without serving the stream again; Pick chooses the ticks worth
// showing as steps.
//
// Nothing here is a figure of its own: every number is one the loop
// reported, kept or summed. A long stream runs for hundreds of thousands
// of ticks in the browser, so the records are small and written in place,
// the history grows in fixed chunks rather than by copying, and the walks
// over it read only the ticks in which something happened (History.Busy).
package record

import (
	"errors"
	"slices"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/scheduler"
)

// History is one serving loop's ticks and the sums behind its figures.
// Serve fills it from a loop; Record and RecordQuiet add ticks one at a
// time. Its zero value is an empty history; set Pool (and Waiting, and
// LogRuns) before the first tick.
type History struct {
	// Pool is the slots a tick's utilisation is a share of (At, and
	// UtilizationAt): the pool as the lesson sized it, which a paged pool
	// of whole blocks may hold a few slots less of.
	Pool   int
	ticks  tickLog
	ids    []int // the ticks' request lists, end to end
	shorts []allocator.NoSpaceError
	// busy lists, in order, the ticks that admitted, finished or
	// preempted a request, took a block while decoding or reused a hole,
	// or whose blocked head or shortfall differs from the tick before
	// (and the first): the only ones the walks over ticks (Window,
	// Queues, Pick) need to read, since a tick that is none of these
	// repeats what the one before it showed. Most of a contiguous pool's
	// ticks are not.
	busy []int32
	// last is the tick Serve has the loop write, kept here so that no
	// tick is copied on its way into the record.
	last                  scheduler.Tick
	maxResident, peakTick int
	preemptions           int
	reuses                int   // Usage.HoleReuses at the last tick
	work                  int64 // ticks plus request-ticks
	sums                  Sums
	// Waiting, when set, is a figure of the pool's layout that the
	// history sums over the ticks in which requests wait (Sums.Extra),
	// such as a contiguous pool's free slots no request can use. It is
	// read after each busy tick (Busy), the ticks that can change a
	// layout, and taken as unchanged over the others: in WebAssembly a
	// call at every tick of a long stream costs more than its figure.
	Waiting func() int
	extra   int // Waiting's figure as last read
	runs    *RunLog
}

// Sums are a history's totals over the ticks in which requests were still
// waiting (the pool was the bottleneck), and the first: a run's waste and
// utilisation are ratios of them.
type Sums struct {
	Stored, Reserved, Pool, Resident int64
	Extra                            int64 // History.Waiting's figure
}

// Tick is one recorded tick as a narration reads it: what the loop
// reported, and whether a run went into a hole a finished request left
// (a contiguous pool's first fit).
type Tick struct {
	scheduler.Tick
	HoleReuse bool
}

// tickRecord is one tick, kept small: a long stream runs for hundreds of
// thousands of ticks. Its request lists live in the history's ids, its
// shortfall in shorts.
type tickRecord struct {
	resident, stored, reserved, waiting int32
	blocked, short                      int32 // -1: none
	decodeTaken                         int32
	at, nAdm, nFin, nPre                int32 // ids[at:] holds the admitted, then the finished, then the preempted
	holeReuse                           bool
}

// ErrEndless is Serve's error for a loop that did not finish within the
// ticks it was given: a bug, not a long run.
var ErrEndless = errors.New("record: the stream did not finish in the ticks allowed; this is a bug")

// LogRuns makes Serve keep how c's reservations change (RunLog), c being
// the pool of the loop it serves.
func (h *History) LogRuns(c *allocator.Contiguous) *RunLog {
	h.runs = &RunLog{pool: c}
	return h.runs
}

// Serve runs l to the end, at most maxTicks ticks, recording each: the
// ticks in which nothing happens but every running request storing a token
// are run and recorded at once where the pool allows (Loop.StepQuiet).
func (h *History) Serve(l *scheduler.Loop, maxTicks int) error {
	quiet := l.RunsQuiet()
	for !l.Done() {
		t := h.ticks.len() // the tick about to run: every tick is recorded
		if t >= maxTicks {
			return ErrEndless
		}
		if quiet {
			if n := l.StepQuiet(maxTicks-t, &h.last); n > 0 {
				h.RecordQuiet(&h.last, n)
				continue
			}
		}
		if err := l.StepInto(&h.last); err != nil {
			return err
		}
		h.Record(&h.last)
		if r := h.ticks.at(t); h.runs != nil && r.nAdm+r.nFin+r.nPre > 0 {
			h.runs.note(t, h, r)
		}
	}
	return nil
}

// Record appends tick t.
func (h *History) Record(t *scheduler.Tick) {
	u := &t.Usage
	// The record is written in place, field by field: a tickRecord made
	// apart and then stored is a zeroing and a copy, bulk memory
	// operations in WebAssembly (see scheduler.Loop.StepInto).
	r := h.ticks.next()
	r.resident, r.stored, r.reserved, r.waiting = int32(u.Resident), int32(u.Stored), int32(u.Reserved), int32(t.Waiting)
	r.blocked, r.short, r.decodeTaken, r.holeReuse = int32(t.Blocked), -1, int32(t.DecodeTaken), u.HoleReuses > h.reuses
	r.at, r.nAdm, r.nFin, r.nPre = int32(len(h.ids)), int32(len(t.Admitted)), int32(len(t.Finished)), int32(len(t.Preempted))
	// Most ticks' lists are all empty, and a slice appended whole is a
	// copy call even when empty.
	lists := r.nAdm+r.nFin+r.nPre > 0
	if lists {
		h.ids = appendIDs(appendIDs(appendIDs(h.ids, t.Admitted), t.Finished), t.Preempted)
	}
	if t.Shortfall != nil {
		if n := len(h.shorts); n == 0 || h.shorts[n-1] != *t.Shortfall {
			h.shorts = append(h.shorts, *t.Shortfall)
		}
		r.short = int32(len(h.shorts) - 1)
	}
	n := h.ticks.len() - 1 // r's tick
	busy := lists || r.decodeTaken > 0 || r.holeReuse || n == 0
	if !busy {
		prev := h.ticks.at(n - 1)
		busy = r.blocked != prev.blocked || r.short != prev.short
	}
	if busy {
		h.busy = append(h.busy, int32(n))
		if h.Waiting != nil {
			h.extra = h.Waiting()
		}
	}
	h.reuses = u.HoleReuses
	h.preemptions += len(t.Preempted)
	h.work += 1 + int64(u.Resident)
	if u.Resident > h.maxResident {
		h.maxResident, h.peakTick = u.Resident, n
	}
	if t.Waiting > 0 || n == 0 {
		h.sums.Stored += int64(u.Stored)
		h.sums.Reserved += int64(u.Reserved)
		h.sums.Pool += int64(u.Pool)
		h.sums.Resident += int64(u.Resident)
		h.sums.Extra += int64(h.extra)
	}
}

// RecordQuiet records the n quiet ticks Loop.StepQuiet ran, *t the last of
// them: what n calls of Record would, with what a quiet tick leaves as it
// was (everything but the tokens stored) worked out once. They admit,
// finish and preempt nobody, take no block and reuse no hole, and leave
// the pool's layout, so History.Waiting's figure, as it was.
func (h *History) RecordQuiet(t *scheduler.Tick, n int) {
	last, resident := t.Usage.Stored, t.Usage.Resident
	t.Usage.Stored = last - (n-1)*resident
	h.Record(t) // the first of them, every field as Record writes it
	t.Usage.Stored = last
	first := *h.ticks.at(h.ticks.len() - 1)
	first.holeReuse = false // Record has caught up with the pool's count
	// The others, tick j of n storing last − (n−j)·resident tokens, copied
	// from the first a chunk at a time.
	for j := 2; j <= n; {
		recs := h.ticks.appendCopies(first, n-j+1)
		for i := range recs {
			recs[i].stored = int32(last - (n-j-i)*resident)
		}
		j += len(recs)
	}
	m := int64(n - 1)
	h.work += m * (1 + int64(resident))
	if t.Waiting > 0 { // the sums count a tick while requests wait
		// Σ_{j=2..n} (last − (n−j)·resident), an arithmetic series.
		h.sums.Stored += m*int64(last) - int64(resident)*m*(m-1)/2
		h.sums.Reserved += m * int64(t.Usage.Reserved)
		h.sums.Pool += m * int64(t.Usage.Pool)
		h.sums.Resident += m * int64(resident)
		h.sums.Extra += m * int64(h.extra)
	}
}

// Len is the number of ticks recorded.
func (h *History) Len() int { return h.ticks.len() }

// Busy lists the ticks in which something happened, ascending (see
// History.busy): read only.
func (h *History) Busy() []int32 { return h.busy }

// MaxResident is the most requests resident at once, first reached at
// PeakTick.
func (h *History) MaxResident() int { return h.maxResident }

// PeakTick is the first tick with MaxResident requests resident.
func (h *History) PeakTick() int { return h.peakTick }

// Preemptions counts the requests preempted.
func (h *History) Preemptions() int { return h.preemptions }

// Work is the ticks recorded plus the request-ticks (a resident request
// storing a token): what serving the stream cost, for a lesson's
// Script.Work.
func (h *History) Work() int64 { return h.work }

// Sums are the totals over the ticks in which requests waited.
func (h *History) Sums() Sums { return h.sums }

// Waste is the share of reserved slots left empty over the ticks in which
// requests waited.
func (h *History) Waste() float64 { return ratio(h.sums.Reserved-h.sums.Stored, h.sums.Reserved) }

// Utilization is the share of the pool's slots holding tokens over the
// ticks in which requests waited.
func (h *History) Utilization() float64 { return ratio(h.sums.Stored, h.sums.Pool) }

// UtilizationAt is the share of the pool's slots holding tokens at tick t
// (< Len()).
func (h *History) UtilizationAt(t int) float64 {
	return allocator.Usage{Stored: int(h.ticks.at(t).stored), Pool: h.Pool}.Utilization()
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// lists returns the requests a tick record admitted, finished and
// preempted: views of the history, read only. The walks over every tick
// read them, and the record's own fields, rather than build At's Tick for
// each.
func (h *History) lists(r *tickRecord) (adm, fin, pre []int) {
	l := h.ids[r.at : r.at+r.nAdm+r.nFin+r.nPre]
	return l[:r.nAdm:r.nAdm], l[r.nAdm : r.nAdm+r.nFin : r.nAdm+r.nFin], l[r.nAdm+r.nFin:]
}

// At returns tick t as the narration reads it (its lists and shortfall
// are views of the history, read only; its Usage is the tick's but for the
// counters since the pool was made, Taken and HoleReuses, which are not
// kept: HoleReuse says whether this tick reused a hole), or the final idle
// state and false after the run ended.
func (h *History) At(t int) (Tick, bool) {
	if t >= h.ticks.len() {
		return Tick{Tick: scheduler.Tick{Blocked: -1}}, false
	}
	r := h.ticks.at(t)
	adm, fin, pre := h.lists(r)
	g := Tick{HoleReuse: r.holeReuse, Tick: scheduler.Tick{
		Admitted: adm, Finished: fin, Preempted: pre,
		Blocked: int(r.blocked), DecodeTaken: int(r.decodeTaken), Waiting: int(r.waiting),
		Usage: allocator.Usage{Resident: int(r.resident), Stored: int(r.stored), Reserved: int(r.reserved), Pool: h.Pool}}}
	for _, l := range []*[]int{&g.Admitted, &g.Finished, &g.Preempted} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if r.short >= 0 {
		g.Shortfall = &h.shorts[r.short] // read only: the history is complete
	}
	return g, true
}

// Window is a history's ticks over (from, to] summed for one step of a
// narration.
type Window struct {
	Admitted, Finished, Preempted []int
	DecodeBlocks                  int  // blocks taken while decoding
	HoleReuse                     bool // a run went into a hole a finished request left
	Last                          Tick // tick to, or the last one recorded
	Active                        bool // the loop still had work in the window
}

// Window sums the ticks over (from, to].
func (h *History) Window(from, to int) Window {
	w := Window{Active: from+1 <= to && from+1 < h.ticks.len()}
	// Only busy ticks add to the sums.
	i, _ := slices.BinarySearch(h.busy, int32(from+1))
	for ; i < len(h.busy) && int(h.busy[i]) <= to; i++ {
		r := h.ticks.at(int(h.busy[i]))
		adm, fin, pre := h.lists(r)
		w.Admitted = appendIDs(w.Admitted, adm)
		w.Finished = appendIDs(w.Finished, fin)
		w.Preempted = appendIDs(w.Preempted, pre)
		w.DecodeBlocks += int(r.decodeTaken)
		w.HoleReuse = w.HoleReuse || r.holeReuse
	}
	w.Last, _ = h.At(min(to, h.ticks.len()-1))
	return w
}

// Line is a waiting line at one tick: its first requests, and how many
// wait in all.
type Line struct {
	Head []int
	N    int
}

// Queues replays the loop's admissions (from the head) and preemptions
// (back to the head) and returns its waiting line after each of ticks
// (ascending), n requests with ids 0…n−1 queued in order at the start, at
// most shown of each line listed.
func (h *History) Queues(n int, ticks []int, shown int) []Line {
	line := make([]int, n)
	for i := range line {
		line[i] = i
	}
	out := make([]Line, 0, len(ticks))
	busy := h.busy // only busy ticks change the line
	for _, t := range ticks {
		for ; len(busy) > 0 && int(busy[0]) <= t; busy = busy[1:] {
			adm, _, pre := h.lists(h.ticks.at(int(busy[0])))
			line = line[len(adm):] // admitted in order from the head
			for _, id := range pre {
				line = append([]int{id}, line...)
			}
		}
		out = append(out, Line{Head: slices.Clone(line[:min(len(line), shown)]), N: len(line)})
	}
	return out
}

// appendIDs is append(dst, src...) that makes no copy call when src is
// empty or one id, as most of a tick's lists are (in WebAssembly the copy
// is a call to the runtime's memmove).
func appendIDs(dst, src []int) []int {
	switch len(src) {
	case 0:
		return dst
	case 1:
		return append(dst, src[0])
	}
	return append(dst, src...)
}
