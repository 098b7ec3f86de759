package record

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/scheduler"
)

// A tick log returns every record written into it, across its chunks,
// each full at tickChunk records, the first grown to it and the others
// made whole; a new record is zero.
func TestTickLog(t *testing.T) {
	var l tickLog
	const n = 3*tickChunk + 5
	for i := range n {
		r := l.next()
		if *r != (tickRecord{}) {
			t.Fatalf("record %d starts as %+v", i, *r)
		}
		r.stored, r.at = int32(i), int32(-i)
	}
	if l.len() != n || len(l.chunks) != 4 {
		t.Fatalf("%d records in %d chunks, want %d in 4", l.len(), len(l.chunks), n)
	}
	for i := range n {
		if r := l.at(i); r.stored != int32(i) || r.at != int32(-i) {
			t.Fatalf("record %d is %+v", i, *r)
		}
	}
	for k, c := range l.chunks[:3] {
		if len(c) != tickChunk || (k > 0 && cap(c) != tickChunk) {
			t.Errorf("chunk %d holds %d records in room for %d, want %d", k, len(c), cap(c), tickChunk)
		}
	}
	// Single records and runs of copies mixed from the start, as a
	// contiguous pool's history is written: every chunk but the last
	// holds exactly tickChunk records, whatever the first grew to.
	var mixed tickLog
	for i := 0; mixed.len() < 3*tickChunk; i++ {
		if i%2 == 0 {
			r := mixed.next()
			r.stored = int32(mixed.len() - 1)
			continue
		}
		for m := 1 + i*37%900; m > 0; {
			recs := mixed.appendCopies(tickRecord{}, m)
			for j := range recs {
				recs[j].stored = int32(mixed.len() - len(recs) + j)
			}
			m -= len(recs)
		}
	}
	for k, c := range mixed.chunks[:len(mixed.chunks)-1] {
		if len(c) != tickChunk {
			t.Fatalf("chunk %d of %d holds %d records, want %d", k, len(mixed.chunks), len(c), tickChunk)
		}
	}
	for i := range mixed.len() {
		if r := mixed.at(i); r.stored != int32(i) {
			t.Fatalf("mixed record %d is %+v", i, *r)
		}
	}
	// Runs of copies, as quiet ticks are recorded, fill a chunk to its
	// end and go on in the next.
	for m := n; l.len() < n+2*tickChunk+7; {
		recs := l.appendCopies(tickRecord{at: 7}, n+2*tickChunk+7-l.len())
		for i := range recs {
			recs[i].stored = int32(m + i)
		}
		m += len(recs)
	}
	for i := range l.len() {
		if r := l.at(i); (i < n && r.stored != int32(i)) || (i >= n && (r.stored != int32(i) || r.at != 7)) {
			t.Fatalf("record %d is %+v", i, *r)
		}
	}
}

// setup is a stream served by a contiguous pool, as the garage lesson
// serves one: requests 0…n−1 queued in order, prompts and outputs drawn
// from ranges, runs reserved by a policy.
type setup struct {
	pool    int
	reserve allocator.Reservation
	reqs    []scheduler.LoopRequest
}

func randomSetup(r *rand.Rand, trial int) setup {
	pmin := 1 + r.IntN(300)
	pmax := pmin + r.IntN(300)
	omin := r.IntN(3) * r.IntN(40)
	omax := omin + r.IntN(80)
	mc := 16 * ((pmax + omax + r.IntN(400) + 15) / 16)
	s := setup{pool: 256 * (1 + (mc*(1+r.IntN(6)))/256),
		reserve: allocator.Reservation{Policy: []allocator.ReservePolicy{allocator.ReserveMax, allocator.ReservePow2, allocator.ReserveExact}[trial%3], MaxContext: mc}}
	for i := range 1 + r.IntN(60) {
		s.reqs = append(s.reqs, scheduler.LoopRequest{ID: i, Prompt: pmin + r.IntN(pmax-pmin+1), Output: omin + r.IntN(omax-omin+1)})
	}
	return s
}

// serve serves s's stream on a new contiguous pool into a history, the
// quiet ticks at once (Serve) or every tick one by one (StepInto and
// Record, as a loop without StepQuiet would be recorded).
func (s setup) serve(t testing.TB, quiet bool) (*History, *allocator.Contiguous) {
	t.Helper()
	c, err := allocator.NewContiguous(s.pool, s.reserve)
	if err != nil {
		t.Fatal(err)
	}
	c.DisableEvents()
	l, err := scheduler.NewLoop(c, s.reqs)
	if err != nil {
		t.Fatal(err)
	}
	h := &History{Pool: s.pool, Waiting: func() int { return c.Unusable(s.reserve.MaxContext) }}
	if quiet {
		h.LogRuns(c)
		if err := h.Serve(l, 1<<22); err != nil {
			t.Fatal(err)
		}
		return h, c
	}
	var every int64 // Waiting's figure read after every tick that counts
	for k := 0; !l.Done(); k++ {
		if err := l.StepInto(&h.last); err != nil {
			t.Fatal(err)
		}
		h.Record(&h.last)
		if h.last.Waiting > 0 || k == 0 {
			every += int64(c.Unusable(s.reserve.MaxContext))
		}
	}
	if h.sums.Extra != every {
		t.Fatalf("Waiting's figure read on busy ticks sums to %d, read at every tick %d", h.sums.Extra, every)
	}
	return h, c
}

// sameHistory fails unless two histories of a loop hold the same ticks,
// lists and sums.
func sameHistory(t *testing.T, name string, got, want *History) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d ticks, want %d", name, got.Len(), want.Len())
	}
	for i := range want.Len() {
		if *got.ticks.at(i) != *want.ticks.at(i) {
			t.Fatalf("%s: tick %d is %+v, want %+v", name, i, *got.ticks.at(i), *want.ticks.at(i))
		}
	}
	type figures struct {
		maxResident, peakTick, preemptions, reuses int
		work                                       int64
		sums                                       Sums
	}
	of := func(h *History) figures {
		return figures{h.maxResident, h.peakTick, h.preemptions, h.reuses, h.work, h.sums}
	}
	if !slices.Equal(got.ids, want.ids) || !slices.Equal(got.shorts, want.shorts) || !slices.Equal(got.busy, want.busy) || of(got) != of(want) {
		t.Fatalf("%s: history %+v (%d ids, %d shortfalls, %d busy ticks), want %+v (%d, %d, %d)", name,
			of(got), len(got.ids), len(got.shorts), len(got.busy), of(want), len(want.ids), len(want.shorts), len(want.busy))
	}
}

// samePick fails unless the ticks picked from the busy ticks are those
// picked by noting every tick.
func samePick(t *testing.T, name string, hs ...*History) {
	t.Helper()
	every := make([][]int32, len(hs))
	for i, h := range hs {
		for k := range h.Len() {
			every[i] = append(every[i], int32(k))
		}
	}
	if got, want := Pick(18, hs...), pick(18, hs, every); !slices.Equal(got, want) {
		t.Fatalf("%s: steps %v from the busy ticks, %v from every tick", name, got, want)
	}
}

// The quiet ticks a contiguous pool's loop runs at once are recorded as
// the ticks they are: the history equals the one recorded tick by tick,
// and the ticks picked from its busy ticks are those picked from all, for
// random streams of every reservation policy, outputs from none to many.
// The runs logged on the way are the pool's runs at every tick of a
// second serve.
func TestQuietTicksAreTicks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	checked, unchanged := 0, 0
	for trial := range 60 {
		s := randomSetup(r, trial)
		name := fmt.Sprintf("trial %d: %+v", trial, s.reserve)
		quiet, _ := s.serve(t, true)
		one, _ := s.serve(t, false)
		sameHistory(t, name, quiet, one)
		samePick(t, name, quiet)
		c, err := allocator.NewContiguous(s.pool, s.reserve)
		if err != nil {
			t.Fatal(err)
		}
		c.DisableEvents()
		l, _ := scheduler.NewLoop(c, s.reqs)
		replay := quiet.runs.Replay()
		for tick := 0; !l.Done(); tick++ {
			step, err := l.Step()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := replay.At(tick), c.Runs(); !slices.Equal(got, want) {
				t.Fatalf("%s tick %d: logged runs %v, the pool has %v", name, tick, got, want)
			}
			if len(step.Admitted)+len(step.Finished)+len(step.Preempted) == 0 {
				unchanged++
			}
			checked++
		}
		if end := quiet.Len(); replay.At(end+5) != nil {
			t.Fatalf("%s: runs after the last tick: %v", name, replay.At(end+5))
		}
	}
	if unchanged == 0 || unchanged == checked {
		t.Errorf("%d of %d ticks left the runs unchanged: the test never tried both kinds", unchanged, checked)
	}
}

// A long stream's history (12k ticks across chunks, most of them quiet and
// recorded as batches) is the one recorded tick by tick.
func TestLongStream(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := setup{pool: 32768, reserve: allocator.Reservation{Policy: allocator.ReserveMax, MaxContext: 8192}}
	for i := range 1000 {
		s.reqs = append(s.reqs, scheduler.LoopRequest{ID: i, Prompt: 512 + r.IntN(1025), Output: 32 + r.IntN(33)})
	}
	quiet, _ := s.serve(t, true)
	one, _ := s.serve(t, false)
	if one.Len() <= 2*tickChunk {
		t.Fatalf("only %d ticks: the stream no longer spans chunks", one.Len())
	}
	sameHistory(t, "1000 requests", quiet, one)
	samePick(t, "1000 requests", quiet)
}

// At, Window and Queues read the ticks as the loop reported them: a
// window's lists are its ticks' lists end to end, its last tick is At's,
// and a waiting line replays admissions from its head and preemptions back
// to it, for a paged pool small enough to preempt.
func TestReadingTheTicks(t *testing.T) {
	p, err := allocator.NewPaged(24, 4)
	if err != nil {
		t.Fatal(err)
	}
	p.DisableEvents()
	var reqs []scheduler.LoopRequest
	for i := range 30 {
		reqs = append(reqs, scheduler.LoopRequest{ID: i, Prompt: 3 + i%9, Output: 5 + (i*7)%23})
	}
	l, err := scheduler.NewLoop(p, reqs)
	if err != nil {
		t.Fatal(err)
	}
	h := &History{Pool: 96}
	var ticks []scheduler.Tick
	for !l.Done() {
		tk, err := l.Step()
		if err != nil {
			t.Fatal(err)
		}
		h.Record(&tk)
		tk.Admitted, tk.Finished, tk.Preempted = slices.Clone(tk.Admitted), slices.Clone(tk.Finished), slices.Clone(tk.Preempted)
		ticks = append(ticks, tk)
	}
	if h.Preemptions() == 0 || h.Len() != len(ticks) {
		t.Fatalf("%d preemptions in %d ticks: the stream should preempt", h.Preemptions(), h.Len())
	}
	line := make([]int, len(reqs))
	for i := range line {
		line[i] = i
	}
	var lines [][]int
	for k, want := range ticks {
		got, ok := h.At(k)
		want.Usage.Pool, want.Usage.Taken, want.Usage.HoleReuses = 96, 0, 0 // not kept (At)
		if !ok || fmt.Sprint(got.Tick) != fmt.Sprint(want) {
			t.Fatalf("tick %d: At %+v, the loop reported %+v", k, got.Tick, want)
		}
		if !slices.Equal(want.Admitted, line[:len(want.Admitted)]) { // the loop admits from the head
			t.Fatalf("tick %d admitted %v, the replayed line's head is %v", k, want.Admitted, line[:len(want.Admitted)])
		}
		line = line[len(want.Admitted):]
		for _, id := range want.Preempted { // each back to the head, as the loop sends them
			line = append([]int{id}, line...)
		}
		lines = append(lines, slices.Clone(line))
	}
	all := make([]int, len(ticks))
	for i := range all {
		all[i] = i
	}
	for i, q := range h.Queues(len(reqs), all, 5) {
		if q.N != len(lines[i]) || !slices.Equal(q.Head, lines[i][:min(5, len(lines[i]))]) {
			t.Fatalf("tick %d: waiting line %+v, want %v", i, q, lines[i])
		}
	}
	for _, span := range [][2]int{{-1, 0}, {-1, 7}, {3, 4}, {5, 40}, {10, len(ticks) + 3}} {
		w := h.Window(span[0], span[1])
		var adm, pre []int
		blocks := 0
		for k := span[0] + 1; k <= span[1] && k < len(ticks); k++ {
			adm = append(adm, ticks[k].Admitted...)
			pre = append(pre, ticks[k].Preempted...)
			blocks += ticks[k].DecodeTaken
		}
		last, _ := h.At(min(span[1], len(ticks)-1))
		if !slices.Equal(w.Admitted, adm) || !slices.Equal(w.Preempted, pre) || w.DecodeBlocks != blocks ||
			fmt.Sprint(w.Last) != fmt.Sprint(last) || w.Active != (span[0]+1 < len(ticks)) {
			t.Fatalf("window %v: %+v, want admitted %v, preempted %v, %d blocks", span, w, adm, pre, blocks)
		}
	}
	if _, ok := h.At(len(ticks)); ok {
		t.Error("At past the run reported a tick")
	}
}

// Pick keeps the first tick and each loop's last and fullest, stays within
// its bound, and returns ticks in order, once each.
func TestPick(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 20 {
		a, _ := randomSetup(r, trial).serve(t, true)
		b, _ := randomSetup(r, trial+1).serve(t, true)
		for _, most := range []int{3, 18, 200} {
			got := Pick(most, a, b)
			if len(got) > most || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("trial %d, at most %d: %v", trial, most, got)
			}
			must := []int{0, max(a.Len(), b.Len()) - 1}
			if most >= 18 {
				must = append(must, a.Len()-1, b.Len()-1, a.PeakTick(), b.PeakTick())
			}
			for _, k := range must {
				if !slices.Contains(got, k) {
					t.Fatalf("trial %d, at most %d: %v lacks tick %d (lengths %d, %d; peaks %d, %d)", trial, most, got, k, a.Len(), b.Len(), a.PeakTick(), b.PeakTick())
				}
			}
		}
	}
}
