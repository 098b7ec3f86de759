package allocator

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// poolIDs numbers the pools, so that a Request records which one holds it
// in a word without a pointer (no write barrier, nothing to scan).
var poolIDs atomic.Uint64

// KVPool is KV-cache memory as a serving loop uses it, however it is laid
// out (as BLIS's KVStore is, github.com/inference-sim/inference-sim,
// sim/kv_store.go): AllocateSlots admits a request or gives a resident one
// room for more tokens, all or nothing; Free releases a request's memory;
// Usage reports how the slots are used. Paged and Contiguous satisfy it, so
// one loop (core/scheduler's Loop) can serve the same stream with either.
// What only some pools can do is asked for as an optional interface
// (BatchAllocator, UsageWriter, Quiet), the way net/http's handlers ask a
// ResponseWriter for http.Flusher.
type KVPool interface {
	// AllocateSlots is vLLM v1's KVCacheManager.allocate_slots(request,
	// num_new_tokens): room for n more tokens of r, admitting r first
	// (with r.Computed, and r.Final sizing its memory) if the pool does
	// not hold it. It returns nil, or a *NoSpaceError (ErrNoSpace) with
	// the shortfall and nothing changed, or another error for a call that
	// is wrong.
	AllocateSlots(r *Request, n int) error
	// Free releases r's memory; r may be admitted again.
	Free(r *Request) error
	Usage() Usage
}

var (
	_ KVPool = (*Paged)(nil)
	_ KVPool = (*Contiguous)(nil)
)

// UsageWriter is a pool that writes its Usage into the caller's, field by
// field: a serving loop that keeps one Tick spares a copy of it per tick
// (in WebAssembly a struct over 16 bytes moves with a bulk memory copy).
// Paged and Contiguous implement it.
type UsageWriter interface {
	UsageInto(u *Usage)
}

// Quiet is a pool that can say, without changing anything, how many
// tokens AllocateSlots will store for its resident requests with nothing
// else happening, and whether the admission it refused last would be
// refused again: what a serving loop needs to run at once the ticks in
// which every running request stores a token and nothing else changes
// (scheduler.Loop.StepQuiet). Contiguous implements it: a request that
// reserved its whole run spends most of its life in such ticks.
type Quiet interface {
	// Room is the most tokens AllocateSlots stores for each of reqs with
	// no memory taken and nothing logged (the fewest any of them can),
	// reqs being every request the pool holds: 0 when it holds others
	// too, or while the event log is on.
	Room(reqs []*Request) int
	// StillRefuses reports whether admitting r would be refused again,
	// known without a search: a refusal measured the free memory and
	// none has been taken or freed since.
	StillRefuses(r *Request) bool
}

// BatchAllocator is a pool that makes many requests' AllocateSlots calls
// in one: a serving loop in which every running request stores tokens at
// every step hands it the running list instead of calling AllocateSlots
// for each, as io.Copy hands its reader to an io.WriterTo. Paged and
// Contiguous implement it.
type BatchAllocator interface {
	// AllocateBatch is AllocateSlots(r, n) for each r of reqs in order,
	// until one fails: it returns how many succeeded, and the error of the
	// one that did not (len(reqs) and nil when all did). A caller that
	// preempts on a shortfall does so and goes on from there.
	AllocateBatch(reqs []*Request, n int) (int, error)
}

var (
	_ UsageWriter    = (*Paged)(nil)
	_ UsageWriter    = (*Contiguous)(nil)
	_ Quiet          = (*Contiguous)(nil)
	_ BatchAllocator = (*Paged)(nil)
	_ BatchAllocator = (*Contiguous)(nil)
)

// countBatch is the start of AllocateBatch's walk: the fast path of
// AllocateSlots for each request (Request.slack) while it holds. It
// returns how many it served and the tokens they stored, for the pool to
// add to its total.
func countBatch(reqs []*Request, n int) (served, stored int) {
	for i, r := range reqs {
		if uint(n) >= uint(r.slack) {
			return i, stored
		}
		r.slack -= n
		stored += n
	}
	return len(reqs), stored
}

// NoSpaceError is ErrNoSpace with its figures, in token slots: what the
// allocation needed, what was free, and the largest run of free slots. In
// a contiguous pool Largest < Need ≤ Free is external fragmentation; in the
// paged pool any free block serves, so Largest is Free. A pool returns it
// unwrapped, and never changes one it has returned.
type NoSpaceError struct {
	Need, Free, Largest int
}

// shortfalls hands out a pool's refusals for want of room: the same
// *NoSpaceError while the figures repeat (a serving loop retries its
// blocked admission at every tick, and an error made per refusal would be
// an allocation each), a new one, made 64 at a time, when they change.
type shortfalls struct {
	last *NoSpaceError
	slab []NoSpaceError
}

// of is the refusal with these figures: most often the last one, found
// inline.
func (s *shortfalls) of(need, free, largest int) error {
	if l := s.last; l != nil && l.Need == need && l.Free == free && l.Largest == largest {
		return l
	}
	return s.add(need, free, largest)
}

// add makes the refusal with new figures.
func (s *shortfalls) add(need, free, largest int) error {
	if len(s.slab) == 0 {
		s.slab = make([]NoSpaceError, 64)
	}
	e := &s.slab[0]
	s.slab = s.slab[1:]
	e.Need, e.Free, e.Largest = need, free, largest
	s.last = e
	return e
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("%v: need %d slots, %d free, the largest free run holds %d", ErrNoSpace, e.Need, e.Free, e.Largest)
}

// Is makes errors.Is(err, ErrNoSpace) hold.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

// ReservePolicy names how a contiguous pool sizes a request's run.
type ReservePolicy string

// The reservation policies of the vLLM paper's baselines (Kwon et al.,
// SOSP'23, §6.1: "Orca (Max) always reserves the space up to the maximum
// sequence length of the model", "Orca (Pow2) over-reserves the space for
// outputs by at most 2×. For example, if the true output length is 25, it
// reserves 32 positions for outputs", "Orca (Oracle) ... has the knowledge
// of the lengths of the outputs that will be actually generated").
const (
	ReserveMax   ReservePolicy = "max"   // the model's max context (FasterTransformer, Orca-Max)
	ReservePow2  ReservePolicy = "pow2"  // the prompt and the next power of two of the outputs, at most max (Orca-Pow2)
	ReserveExact ReservePolicy = "exact" // the final length, known in advance (Orca-Oracle)
)

// Placement names where a contiguous pool puts a run.
type Placement string

// The placements: first fit over the holes between runs, or a binary
// buddy allocator, which the vLLM paper's Orca baselines take their KV
// memory from ("the memory addresses for the KV cache are allocated by a
// buddy allocator", §6.1).
const (
	FirstFit Placement = ""      // the lowest address where the run fits
	Buddy    Placement = "buddy" // a power-of-two block aligned to its size (buddy.go)
)

// Reservation is a contiguous pool's sizing rule and placement.
type Reservation struct {
	Policy     ReservePolicy
	MaxContext int // what ReserveMax reserves and ReservePow2 is capped at
	Placement  Placement
}

// Slots is the run reserved for a request of prompt tokens that will hold
// final tokens (prompt and outputs).
func (r Reservation) Slots(prompt, final int) int {
	switch r.Policy {
	case ReserveExact:
		return max(1, final)
	case ReservePow2:
		prompt = min(max(prompt, 0), final)
		outputs := 0
		if out := final - prompt; out > 0 {
			outputs = 1 << bits.Len(uint(out-1))
		}
		return min(r.MaxContext, max(1, prompt+outputs))
	}
	return r.MaxContext
}

func (r Reservation) validate() error {
	if r.Placement != FirstFit && r.Placement != Buddy {
		return fmt.Errorf("allocator: placement %q, want first fit (\"\") or %q", r.Placement, Buddy)
	}
	switch r.Policy {
	case ReserveExact:
		return nil
	case ReserveMax, ReservePow2:
		if r.MaxContext < 1 {
			return fmt.Errorf("allocator: MaxContext = %d with reservation %q, want ≥ 1", r.MaxContext, r.Policy)
		}
		return nil
	}
	return fmt.Errorf("allocator: reservation policy %q, want max, pow2 or exact", r.Policy)
}
