package allocator

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// A refusal for want of room is a *NoSpaceError carrying the figures, the
// same one while they repeat and a new one when they change, and a refused
// call allocates nothing: a serving loop retries its blocked head at every
// tick.
func TestShortfallIsInterned(t *testing.T) {
	paged, _ := NewPaged(4, 16) // 64 slots
	contig, _ := NewContiguous(64, exact)
	for name, p := range map[string]KVPool{"paged": paged, "contiguous": contig} {
		rs := reqSet{}
		if err := rs.admit(p, 1, 40, 40); err != nil {
			t.Fatalf("%s: admitting 40 of 64 slots: %v", name, err)
		}
		big := rs.get(2)
		big.Final = 30
		first := p.AllocateSlots(big, 30)
		var short *NoSpaceError
		if !errors.As(first, &short) || !errors.Is(first, ErrNoSpace) || short.Need == 0 {
			t.Fatalf("%s: 30 more slots: %v; want a shortfall", name, first)
		}
		if again := p.AllocateSlots(big, 30); again != first {
			t.Errorf("%s: the same refusal twice gave %p then %p", name, first, again)
		}
		if n := testing.AllocsPerRun(100, func() { _ = p.AllocateSlots(big, 30) }); n != 0 {
			t.Errorf("%s: a refused AllocateSlots allocated %v times", name, n)
		}
		if err := rs.free(p, 1); err != nil {
			t.Fatal(err)
		}
		if err := rs.admit(p, 3, 50, 50); err != nil {
			t.Fatal(err)
		}
		if other := p.AllocateSlots(big, 30); other == first || *short != *first.(*NoSpaceError) {
			t.Errorf("%s: new figures %v came as the old error %v, or changed it", name, other, first)
		}
		if _, ok, err := shortOf(p.AllocateSlots(rs.get(4), -1)); ok || err == nil {
			t.Errorf("%s: -1 tokens: ok %v, err %v; want an error", name, ok, err)
		}
	}
}

// twinPools are two pools served the same operations, one with the event
// log on (every AllocateSlots takes the general path) and one with it off
// (most take the fast path): they must stay identical but for the log.
type twinPools struct {
	t                testing.TB
	general, fast    KVPool
	genReqs, fastReq reqSet
}

func (w *twinPools) both(what string, op func(p KVPool, rs reqSet) error) {
	w.t.Helper()
	a, b := op(w.general, w.genReqs), op(w.fast, w.fastReq)
	sa, oka, erra := shortOf(a)
	sb, okb, errb := shortOf(b)
	if oka != okb || sa != sb || (erra == nil) != (errb == nil) {
		w.t.Fatalf("%s: general path %v, fast path %v", what, a, b)
	}
	if w.general.Usage() != w.fast.Usage() {
		w.t.Fatalf("%s: usage %+v (general) vs %+v (fast)", what, w.general.Usage(), w.fast.Usage())
	}
	switch g := w.general.(type) {
	case *Paged:
		f := w.fast.(*Paged)
		n := g.NumBlocks()
		ownA, usedA, ownB, usedB := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
		g.Occupancy(ownA, usedA)
		f.Occupancy(ownB, usedB)
		if !slices.Equal(ownA, ownB) || !slices.Equal(usedA, usedB) || !slices.Equal(g.FreeOrder(), f.FreeOrder()) {
			w.t.Fatalf("%s: blocks differ: owners %v vs %v, used %v vs %v", what, ownA, ownB, usedA, usedB)
		}
		for _, p := range []*Paged{g, f} {
			if err := p.Check(); err != nil {
				w.t.Fatalf("%s: %v", what, err)
			}
		}
	case *Contiguous:
		if f := w.fast.(*Contiguous); !slices.Equal(g.Runs(), f.Runs()) {
			w.t.Fatalf("%s: runs %v vs %v", what, g.Runs(), f.Runs())
		}
	}
}

// The fast path is the general path: random admissions (some refused),
// stores that fit and stores that need a block or fail, forks and frees,
// through the log-free pool and the logged one, leave both in the same
// state after every operation; and so does a store for every resident
// request at once, AllocateBatch in the log-free pool against
// AllocateSlots for each in the other, stopping at the same refusal.
func TestFastPathIsTheGeneralPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, kind := range []string{"paged", "contiguous"} {
		var w twinPools
		switch kind {
		case "paged":
			g, _ := NewPaged(40, 4)
			f, _ := NewPaged(40, 4)
			f.DisableEvents()
			w = twinPools{t: t, general: g, fast: f}
		default:
			bay := Reservation{Policy: ReserveMax, MaxContext: 48}
			g, _ := NewContiguous(300, bay)
			f, _ := NewContiguous(300, bay)
			f.DisableEvents()
			w = twinPools{t: t, general: g, fast: f}
		}
		w.genReqs, w.fastReq = reqSet{}, reqSet{}
		var resident []int
		refused, stored, batches := 0, 0, 0
		for step := range 3000 {
			what := kind + " step " + strconv.Itoa(step)
			switch op := r.IntN(5); {
			case op == 0 || len(resident) == 0: // admit a new request
				req, now := 1000+step, r.IntN(52)
				final := now + r.IntN(30)
				w.both(what+": admit", func(p KVPool, rs reqSet) error { return rs.admit(p, req, now, final) })
				if w.fast.Usage().Resident > len(resident) {
					resident = append(resident, req)
				} else {
					refused++
				}
			case op == 1: // store tokens for a resident request
				req, k := resident[r.IntN(len(resident))], r.IntN(9)
				w.both(what+": store", func(p KVPool, rs reqSet) error { return rs.store(p, req, k, nil) })
				stored++
			case op == 4: // a store for every resident request, in admission order
				k := 1 + r.IntN(3)
				w.both(what+": batch", func(p KVPool, rs reqSet) error {
					reqs := make([]*Request, len(resident))
					for i, id := range resident {
						reqs[i] = rs.get(id)
					}
					if p == w.fast {
						done, err := p.(BatchAllocator).AllocateBatch(reqs, k)
						if (err == nil) != (done == len(reqs)) {
							t.Fatalf("%s: AllocateBatch made %d of %d with error %v", what, done, len(reqs), err)
						}
						return err
					}
					for _, q := range reqs {
						if err := p.AllocateSlots(q, k); err != nil {
							return err
						}
					}
					return nil
				})
				batches++
			case op == 2 && kind == "paged" && r.IntN(4) == 0: // fork one
				parent, child := resident[r.IntN(len(resident))], 5000+step
				w.both(what+": fork", func(p KVPool, rs reqSet) error { return p.(*Paged).Fork(rs.get(parent), rs.get(child)) })
				resident = append(resident, child)
			default: // free one
				i := r.IntN(len(resident))
				w.both(what+": free", func(p KVPool, rs reqSet) error { return rs.free(p, resident[i]) })
				resident = append(resident[:i], resident[i+1:]...)
			}
		}
		if refused == 0 || stored == 0 || batches == 0 {
			t.Errorf("%s: %d refusals, %d stores, %d batches: the walk did not try every operation", kind, refused, stored, batches)
		}
	}
}

// The fast path is open exactly where it may be: in a pool that neither
// logs nor hashes, for the slots left in a last block the request holds
// alone, after an admission and after a call that took a new block; it is
// closed while the pool logs, and for a parent whose partial last block a
// fork shares.
func TestFastPathOpensForTheLastBlock(t *testing.T) {
	p, _ := NewPaged(8, 4)
	p.DisableEvents()
	r := &Request{ID: 1}
	for _, step := range []struct{ n, room int }{{5, 3}, {3, 0}, {1, 3}, {0, 3}} {
		if err := p.AllocateSlots(r, step.n); err != nil {
			t.Fatal(err)
		}
		if r.slack != step.room+1 {
			t.Fatalf("after %d more tokens (%d stored): fast path open for %d tokens, want %d", step.n, r.tokens(), r.slack-1, step.room)
		}
	}
	child := &Request{ID: 2}
	if err := p.Fork(r, child); err != nil {
		t.Fatal(err)
	}
	if err := p.AllocateSlots(r, 1); err != nil || r.slack != 3 {
		t.Fatalf("the parent's first token after a fork copies its last block: err %v, fast path %d, want 2", err, r.slack-1)
	}
	logged, _ := NewPaged(8, 4)
	q := &Request{ID: 1}
	if err := logged.AllocateSlots(q, 5); err != nil || q.slack != 0 {
		t.Fatalf("a pool that logs: err %v, fast path %d, want closed", err, q.slack-1)
	}
}
