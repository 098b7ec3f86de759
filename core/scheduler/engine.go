package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/hardware"
)

// engine is what one serving engine's scheduler decides; batchLoop is the
// rest. Scheduler implements it for vLLM v1 and TensorRT-LLM (their
// capacity policies, capacityRule), Radix for SGLang.
type engine interface {
	// admissible checks that request id, of prompt and output tokens, can
	// ever be served (it fits the engine's memory alone, and its knobs),
	// and reports whether the engine reads its token ids.
	admissible(id, prompt, output int) (keepIDs bool, err error)
	// form admits, preempts and schedules the step's work (batchLoop.schedule
	// and the running list), recording who was admitted or preempted in st.
	form(st *Step) error
	// settle is called once the batch ran: scheduled tokens become
	// computed, requests sample outputs and finish.
	settle(st *Step) error
	// chunking is a request the engine is prefilling outside the running
	// list (SGLang's chunked request), or nil.
	chunking() *req
	// kvUsage is the share of KV memory that running requests hold.
	kvUsage() float64
	// check verifies the engine's invariants after step st.
	check(st Step) error
	// stuck is the error of a step in which nothing ran, nobody runs and a
	// request waits.
	stuck() error
	// end is the engine's last word on step st, once it is recorded.
	end(st Step) error
}

// batchLoop is the serving loop every engine's scheduler shares: the
// requests in arrival order, the waiting queue and the running list, the
// clock, and the steps with the times of the tokens they made. Each Step
// asks its engine to form the batch, prices it with the Timer, advances the
// clock and asks the engine to settle it; the engine is the only part that
// differs between vLLM, SGLang and TensorRT-LLM.
type batchLoop struct {
	eng   engine
	timer Timer
	// hw prices the steps when timer is a HardwareTimer, called
	// directly: through the interface, HardwareTimer.StepSeconds would
	// copy the model, its receiver, at every step. It remembers the
	// prices of step shapes that recur (hardware.Pricer).
	hw *hardware.Pricer
	// chunks is the step's batch, built as requests are scheduled: what
	// the timer prices, and with RecordWork what the step keeps.
	chunks  []Work
	reqs    []*req       // by arrival order
	byID    map[int]*req // made on first use (byIDs): a run of 10,000 requests rarely asks
	waiting queue[*req]
	running []*req // a window on runBuf (pushRunning, Scheduler.sampleOutputs)
	runBuf  []*req
	clock   float64
	next    int // next request (by arrival) not yet in the waiting queue
	steps   []Step
	// tally sums every step run, kept or not (Summary reads it).
	tally stepTally
	ends  []float64 // the clock at the end of each step that ran
	// CheckInvariants makes Run verify the memory and step invariants
	// after every step (tests turn it on).
	CheckInvariants bool
	// DiscardSteps keeps no step records: Steps() stays empty, and a
	// caller reads each step's figures from Step's or RunEach's record as
	// it ends. The requests' metrics and Summary are unaffected. A capacity
	// search's probes, which need a few sums over their steps, would keep
	// about 180 bytes a step otherwise, a third of their CPU time at two
	// sequences a step.
	DiscardSteps bool
	// RecordWork keeps each step's per-request Work in Steps() (lessons
	// that draw batch composition turn it on); otherwise the batch's
	// buffer is reused, which matters at 10,000 requests.
	RecordWork bool
	lists      [4][]int // scratch for a step's Preempted, Admitted, FirstTokens, Finished
	arena      []int    // where finished steps' lists are kept
	// cur is the step being built, which the engine writes through a
	// pointer: a Step local to Step would move to the heap at every step,
	// handed to the engine through an interface.
	cur Step
}

// start makes the loop for requests (any order; served by arrival, ties
// by ID), served by eng and priced by timer.
func (l *batchLoop) start(eng engine, timer Timer, requests []Request) error {
	l.eng, l.timer = eng, timer
	if ht, ok := timer.(HardwareTimer); ok {
		l.hw = hardware.NewPricer(ht.Model)
	}
	// Served by arrival, ties by ID. The live states sit in one array in
	// that order, so that the running requests, admitted first come first
	// served, are mostly neighbours in memory.
	order := make([]int, len(requests))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := &requests[order[a]], &requests[order[b]]
		if ra.Arrival != rb.Arrival {
			return ra.Arrival < rb.Arrival
		}
		return ra.ID < rb.ID
	})
	slot := make([]int, len(requests))
	for k, i := range order {
		slot[i] = k
	}
	states := make([]req, len(requests))
	kvs := make([]allocator.Request, len(requests))
	for k := range states {
		states[k].kv = &kvs[k]
	}
	ids := make([]int, len(requests))
	for i := range requests {
		ids[i] = requests[i].ID
	}
	dup := firstDuplicate(ids)
	for i, r := range requests {
		if err := l.prepare(r, &states[slot[i]], i == dup); err != nil {
			return err
		}
	}
	l.reqs = make([]*req, len(states))
	for k := range states {
		l.reqs[k] = &states[k]
	}
	return nil
}

// prepare validates r, whose id an earlier request has if dup, and makes
// its live state in q.
func (l *batchLoop) prepare(r Request, q *req, dup bool) error {
	if r.Prompt < 1 || r.Output < 1 {
		return fmt.Errorf("scheduler: request %d has %d prompt and %d output tokens, want at least 1 of each", r.ID, r.Prompt, r.Output)
	}
	if dup {
		return fmt.Errorf("scheduler: request id %d appears twice", r.ID)
	}
	keepIDs, err := l.eng.admissible(r.ID, r.Prompt, r.Output)
	if err != nil {
		return err
	}
	kv := q.kv
	*q = req{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output, kv: kv}
	kv.ID, kv.Extra, kv.Final = r.ID, r.Extra, r.Prompt+r.Output
	if keepIDs {
		ids := make([]int, 0, r.Prompt+r.Output)
		for i := 0; i < r.Prompt; i++ {
			ids = append(ids, tokenID(r.PromptIDs, i, r.ID, 0))
		}
		for i := 0; i < r.Output; i++ {
			ids = append(ids, tokenID(r.OutputIDs, i, r.ID, 1))
		}
		kv.TokenIDs = ids
	}
	return nil
}

// Add submits a request while the simulation runs. Its arrival time must not
// be earlier than that of a request already submitted that has not arrived
// by the clock. It keeps its arrival even when that is before the clock (it
// came while a step ran): it joins the queue when the step in flight ends,
// after the requests submitted before it, and its latencies count that
// wait, as a real engine's request's do.
func (l *batchLoop) Add(r Request) error {
	if l.next < len(l.reqs) && l.reqs[len(l.reqs)-1].Arrival > max(r.Arrival, l.clock) {
		return fmt.Errorf("scheduler: request %d arrives at %g s, before a request already queued", r.ID, r.Arrival)
	}
	q := &req{kv: new(allocator.Request)}
	_, dup := l.byIDs()[r.ID]
	if err := l.prepare(r, q, dup); err != nil {
		return err
	}
	l.reqs = append(l.reqs, q)
	l.byID[r.ID] = q
	return nil
}

// byIDs is the requests by id, made on first use and kept up to date by
// Add.
func (l *batchLoop) byIDs() map[int]*req {
	if l.byID == nil {
		l.byID = make(map[int]*req, len(l.reqs))
		for _, q := range l.reqs {
			l.byID[q.ID] = q
		}
	}
	return l.byID
}

// tokenID returns ids[i] if given, else an id unique to (request, kind, i)
// and outside any real vocabulary so it never collides with given ids.
func tokenID(ids []int, i, reqID, kind int) int {
	if i < len(ids) {
		return ids[i]
	}
	return -(1 + (reqID*2+kind)<<24 + i)
}

// Clock is the simulated time in seconds.
func (l *batchLoop) Clock() float64 { return l.clock }

// Done reports whether every request has finished.
func (l *batchLoop) Done() bool { return l.next == len(l.reqs) && l.idle() }

// idle reports whether no request arrived waits or runs.
func (l *batchLoop) idle() bool {
	return l.waiting.len() == 0 && len(l.running) == 0 && l.eng.chunking() == nil
}

// Busy reports whether the engine has requests to serve.
func (l *batchLoop) Busy() bool { return l.next < len(l.reqs) || !l.idle() }

// NextArrival is the arrival time of the next submitted request that has
// not arrived yet, or -1.
func (l *batchLoop) NextArrival() float64 {
	if l.next < len(l.reqs) {
		return l.reqs[l.next].Arrival
	}
	return -1
}

// maxSteps guards against a scheduler bug looping forever.
const maxSteps = 50_000_000

// Run steps until every request has finished.
func (l *batchLoop) Run() error { return l.RunEach(nil) }

// RunEach is Run, handing each step's record to each (when not nil) as the
// step ends; an error from each stops the run and is returned.
func (l *batchLoop) RunEach(each func(Step) error) error {
	for !l.Done() {
		if l.tally.steps > maxSteps {
			return errors.New("scheduler: too many steps; this is a bug")
		}
		st, err := l.Step()
		if err != nil {
			return err
		}
		if each != nil {
			if err := each(st); err != nil {
				return err
			}
		}
	}
	return nil
}

// Step schedules and runs one step and returns its record. When nothing can
// run, the clock jumps to the next arrival and the returned step is empty.
func (l *batchLoop) Step() (Step, error) {
	l.arrive()
	if l.idle() && l.next < len(l.reqs) {
		l.clock = max(l.clock, l.reqs[l.next].Arrival)
		l.arrive()
	}
	l.cur = Step{Start: l.clock, Preempted: l.lists[0][:0], Admitted: l.lists[1][:0], FirstTokens: l.lists[2][:0], Finished: l.lists[3][:0]}
	st := &l.cur
	l.chunks = l.chunks[:0]
	if err := l.eng.form(st); err != nil {
		return *st, err
	}
	ran, err := l.runBatch(st)
	if err != nil {
		return *st, err
	}
	if err := l.eng.settle(st); err != nil {
		return *st, err
	}
	l.keepLists(st)
	st.Running, st.Waiting = len(l.running), l.waiting.len()
	if l.eng.chunking() != nil {
		st.Running++
	}
	st.KVUsage = l.eng.kvUsage()
	if l.CheckInvariants {
		if err := l.check(*st); err != nil {
			return *st, err
		}
	}
	if !ran && len(l.running) == 0 && (l.waiting.len() > 0 || l.eng.chunking() != nil) {
		return *st, l.eng.stuck()
	}
	l.tally.add(st)
	if !l.DiscardSteps {
		if len(l.steps) == cap(l.steps) {
			// Double, rather than append's 1.25× for large slices, which
			// allocates about five times the final size over a long run.
			// (Growing by len+1 asks for more than twice the capacity,
			// which append then gives exactly.)
			l.steps = slices.Grow(l.steps, len(l.steps)+1)
		}
		l.steps = append(l.steps, *st)
	}
	if err := l.eng.end(*st); err != nil {
		return *st, err
	}
	// The host's turn (Yield), counted in requests handled.
	yield(len(l.running) + 1)
	return *st, nil
}

// check verifies the invariants every engine keeps
// (docs/ARCHITECTURE.md#scheduler-invariants), then the engine's own.
func (l *batchLoop) check(st Step) error {
	for _, r := range l.running {
		if r.tokens.count() != r.generated {
			return fmt.Errorf("request %d recorded %d token times for %d tokens", r.ID, r.tokens.count(), r.generated)
		}
	}
	return l.eng.check(st)
}

// keepLists moves the step's request lists out of the scratch buffers they
// were built in and into the id arena, keeping the grown buffers for the
// next step: a step's lists then cost no allocation of their own.
func (l *batchLoop) keepLists(st *Step) {
	for i, list := range []*[]int{&st.Preempted, &st.Admitted, &st.FirstTokens, &st.Finished} {
		l.lists[i] = *list
		*list = l.keep(*list)
	}
}

// keep copies ids into the arena (nil when there are none); the copy's
// capacity ends at its length, so appending to it never touches a
// neighbour.
func (l *batchLoop) keep(ids []int) []int {
	if len(ids) == 0 {
		return nil
	}
	if cap(l.arena)-len(l.arena) < len(ids) {
		l.arena = make([]int, 0, max(4096, len(ids)))
	}
	start := len(l.arena)
	l.arena = append(l.arena, ids...)
	return l.arena[start:len(l.arena):len(l.arena)]
}

// schedule gives r n tokens in this step and adds them to the batch. The
// batch is built as requests are scheduled, in the order the engine
// schedules them.
func (l *batchLoop) schedule(st *Step, r *req, n int) {
	r.stepN = n
	// A decode computes one token on top of a computed prompt; anything
	// else (a prompt chunk, a recompute after preemption) is prefill.
	w := Work{Req: r.ID, NewTokens: n, Context: r.computed, Prefill: r.computed < r.Prompt || n > 1}
	l.chunks = append(l.chunks, w)
	if w.Prefill {
		st.PrefillTokens += n
	} else {
		st.DecodeTokens += n
	}
}

// runBatch prices the scheduled work and advances the clock; it reports
// whether anything ran. The step keeps a copy of the batch with RecordWork.
func (l *batchLoop) runBatch(st *Step) (bool, error) {
	ran := len(l.chunks) > 0
	if ran {
		if l.hw != nil {
			st.Duration = l.hw.Seconds(hardware.Batch{Seqs: l.chunks})
		} else {
			st.Duration = l.timer.StepSeconds(l.chunks)
		}
		if st.Duration <= 0 {
			return ran, fmt.Errorf("scheduler: timer priced a %d-token step at %g s", st.PrefillTokens+st.DecodeTokens, st.Duration)
		}
	}
	l.clock += st.Duration
	if ran {
		l.ends = append(l.ends, l.clock)
	}
	if l.RecordWork && ran {
		st.Work = slices.Clone(l.chunks)
	}
	return ran, nil
}

// made records an output token of r, made in the step that just ran.
func (l *batchLoop) made(r *req) {
	r.generated++
	r.tokens.add(int32(len(l.ends) - 1))
}

// pushRunning appends r to the running list. When the list's window has
// reached the end of runBuf it moves back to runBuf's start, or to a new
// runBuf twice its length when more than half of it is in use (so a move
// of n pointers comes after at least n appends or finished requests).
func (l *batchLoop) pushRunning(r *req) {
	if n := len(l.running); n == cap(l.running) {
		if 2*n >= len(l.runBuf) {
			l.runBuf = make([]*req, max(2*n, 64))
		}
		// The pointers left behind are to requests l.reqs holds anyway.
		copy(l.runBuf, l.running)
		l.running = l.runBuf[:n]
	}
	l.running = append(l.running, r)
}

// arrive moves requests whose arrival time has come into the waiting queue.
func (l *batchLoop) arrive() {
	for l.next < len(l.reqs) && l.reqs[l.next].Arrival <= l.clock {
		l.waiting.pushBack(l.reqs[l.next])
		l.next++
	}
}
