package allocator

import (
	"fmt"
	"math/bits"
)

// KVPool is KV-cache memory as a serving loop uses it, however it is laid
// out (BLIS's KVStore): AllocateSlots admits a request or gives a resident
// one room for more tokens, all or nothing; Free releases a request's
// memory; Usage reports how the slots are used. Paged and Contiguous
// satisfy it, so one loop (core/scheduler's Loop) can serve the same stream
// with either.
type KVPool interface {
	AllocateSlots(req int, s Slots) error
	Free(req int) error
	Usage() Usage
}

var (
	_ KVPool = (*Paged)(nil)
	_ KVPool = (*Contiguous)(nil)
)

// Slots is what one AllocateSlots call asks for beyond the request: vLLM's
// allocate_slots(request, num_new_tokens, num_new_computed_tokens,
// new_computed_blocks), with the request's extra hash key and, for a
// contiguous pool, its final length.
type Slots struct {
	// New is num_new_tokens: the tokens to make room for beyond those the
	// request holds (at admission, beyond the computed blocks).
	New int
	// IDs are those tokens' ids when known (len(IDs) == New); prefix
	// caching hashes the full blocks they complete. Nil means unknown ids,
	// whose blocks are never hashed.
	IDs []int
	// Computed is new_computed_blocks: what ComputedBlocks found for a
	// request being admitted (num_new_computed_tokens is their B·len).
	// Only at admission; a contiguous pool has no prefix cache and takes
	// none.
	Computed []int
	// Extra is the prefix cache's extra hash key (tenant, LoRA id), set at
	// admission.
	Extra string
	// Final is the most tokens the request will ever hold (prompt +
	// output). A contiguous pool reserves its run from it at admission; the
	// paged pool still allocates blocks on demand and only sizes the block
	// table's memory by it (0: unknown).
	Final int
}

// NoSpaceError is ErrNoSpace with its figures, in token slots: what the
// allocation needed, what was free, and the largest run of free slots. In
// a contiguous pool Largest < Need ≤ Free is external fragmentation; in the
// paged pool any free block serves, so Largest is Free.
type NoSpaceError struct {
	Need, Free, Largest int
}

// TryPool is implemented by both pools: TryAllocateSlots is AllocateSlots
// that reports a lack of room as a value (short, with ok false and err nil)
// instead of a *NoSpaceError, so that a serving loop retrying a blocked
// admission on every tick allocates nothing (in WebAssembly an allocation
// costs far more than the check).
type TryPool interface {
	TryAllocateSlots(req int, s Slots) (short NoSpaceError, ok bool, err error)
}

var (
	_ TryPool = (*Paged)(nil)
	_ TryPool = (*Contiguous)(nil)
)

// errShort is what the pools' internals return for a lack of room, the
// shortfall kept in the pool; the exported methods turn it into a
// *NoSpaceError or, in TryAllocateSlots, return the value.
var errShort error = shortfall{}

// shortfall is errShort's type. public and try find it by a type
// assertion, which compares one word: comparing two error values of the
// same dynamic type, as err == errShort did, calls the runtime's
// interface equality, once for every refused admission.
type shortfall struct{}

func (shortfall) Error() string { return "allocator: no space" }

// isShort reports whether err is errShort.
func isShort(err error) bool {
	_, ok := err.(shortfall)
	return ok
}

// public is err as the exported methods return it: errShort becomes a
// *NoSpaceError holding short.
func public(err error, short NoSpaceError) error {
	if isShort(err) {
		e := short // a copy made only here: short itself stays on the stack
		return &e
	}
	return err
}

// try is err as TryAllocateSlots returns it.
func try(err error, short NoSpaceError) (NoSpaceError, bool, error) {
	if isShort(err) {
		return short, false, nil
	}
	return NoSpaceError{}, err == nil, err
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("%v: need %d slots, %d free, the largest free run holds %d", ErrNoSpace, e.Need, e.Free, e.Largest)
}

// Is makes errors.Is(err, ErrNoSpace) hold.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

// ReservePolicy names how a contiguous pool sizes a request's run.
type ReservePolicy string

// The reservation policies of the vLLM paper's baselines (Kwon et al.,
// SOSP'23, §6.1).
const (
	ReserveMax   ReservePolicy = "max"   // the model's max context (FasterTransformer, Orca-Max)
	ReservePow2  ReservePolicy = "pow2"  // the next power of two of the final length, at most max (Orca-Pow2)
	ReserveExact ReservePolicy = "exact" // the final length, known in advance (Orca-Oracle)
)

// Reservation is a contiguous pool's sizing rule.
type Reservation struct {
	Policy     ReservePolicy
	MaxContext int // what ReserveMax reserves and ReservePow2 is capped at
}

// Slots is the run reserved for a request that will hold final tokens.
func (r Reservation) Slots(final int) int {
	switch r.Policy {
	case ReserveExact:
		return max(1, final)
	case ReservePow2:
		return min(r.MaxContext, 1<<bits.Len(uint(max(1, final)-1)))
	}
	return r.MaxContext
}

func (r Reservation) validate() error {
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
