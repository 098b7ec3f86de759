package allocator

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TryAllocateSlots reports the same shortfall AllocateSlots returns as an
// error, as a value and without allocating; room and bad requests behave as
// in AllocateSlots.
func TestTryAllocateSlots(t *testing.T) {
	paged, err := NewPaged(4, 16) // 64 slots
	if err != nil {
		t.Fatal(err)
	}
	contig, err := NewContiguous(64, exact)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]interface {
		KVPool
		TryPool
	}{"paged": paged, "contiguous": contig} {
		if _, ok, err := p.TryAllocateSlots(1, Slots{New: 40, Final: 40}); !ok || err != nil {
			t.Fatalf("%s: admitting 40 of 64 slots: ok %v, %v", name, ok, err)
		}
		big := Slots{New: 30, Final: 30}
		short, ok, err := p.TryAllocateSlots(2, big)
		if ok || err != nil || short.Need == 0 {
			t.Errorf("%s: 30 more slots: short %+v, ok %v, err %v; want a shortfall", name, short, ok, err)
		}
		var want *NoSpaceError
		if err := p.AllocateSlots(2, big); !errors.As(err, &want) || *want != short || !errors.Is(err, ErrNoSpace) {
			t.Errorf("%s: AllocateSlots = %v; want the shortfall %+v", name, err, short)
		}
		if n := testing.AllocsPerRun(100, func() { p.TryAllocateSlots(2, big) }); n != 0 {
			t.Errorf("%s: a refused TryAllocateSlots allocated %v times", name, n)
		}
		if _, ok, err := p.TryAllocateSlots(3, Slots{New: -1}); ok || err == nil {
			t.Errorf("%s: New = -1: ok %v, err %v; want an error", name, ok, err)
		}
	}
	// The paged pool's handle path reports the same error type.
	s := paged.Seq(1)
	if err := paged.GrowSeq(s, 100, nil); !errors.Is(err, ErrNoSpace) {
		t.Errorf("GrowSeq past the pool: %v", err)
	}
}

// Append stores tokens only where GrowSeq would store them in place and log
// nothing; everywhere else it refuses and changes nothing, and GrowSeq
// (which takes a block, copies or logs) is the way.
func TestPagedAppend(t *testing.T) {
	p, _ := NewPaged(4, 4)
	_ = p.AllocateSlots(0, Slots{New: 2})
	s := p.Seq(0)
	if p.Append(s, 1) {
		t.Fatal("Append with events on (GrowSeq logs an Appended event)")
	}
	p.DisableEvents()
	if !p.Append(s, 2) || p.Tokens(0) != 4 || p.Usage().Stored != 4 {
		t.Fatalf("filling the last block: %d tokens, usage %+v", p.Tokens(0), p.Usage())
	}
	if p.Append(s, 1) || p.Append(s, -1) || p.Append(nil, 0) || p.Tokens(0) != 4 {
		t.Fatal("Append took a token it has no slot for, a negative count or a nil handle")
	}
	_ = p.AllocateSlots(1, Slots{New: 1})
	if err := p.Fork(1, 2); err != nil {
		t.Fatal(err)
	}
	if p.Append(p.Seq(1), 1) { // a shared partial block must be copied first
		t.Fatal("Append wrote into a shared block")
	}
	_ = p.Free(0)
	if p.Append(s, 0) {
		t.Fatal("Append through a freed request's handle")
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	c, _ := NewContiguous(10, exact)
	_ = c.AllocateSlots(0, Slots{New: 1, Final: 3})
	h := c.Hold(0)
	if c.Append(h, 1) {
		t.Fatal("contiguous Append with events on")
	}
	c.DisableEvents()
	if !c.Append(h, 2) || c.Append(h, 1) || c.Usage().Stored != 3 {
		t.Fatalf("contiguous Append: usage %+v, want 3 stored and the run full", c.Usage())
	}
	_ = c.Free(0)
	if c.Append(h, 0) {
		t.Fatal("contiguous Append through a freed request's handle")
	}
}

// TryGrowSeq reports the shortfall GrowSeq returns as an error, and takes
// room as GrowSeq does.
func TestTryGrowSeq(t *testing.T) {
	p, _ := NewPaged(2, 4)
	_ = p.AllocateSlots(0, Slots{New: 6})
	s := p.Seq(0)
	if _, ok, err := p.TryGrowSeq(s, 2, nil); !ok || err != nil || p.Tokens(0) != 8 {
		t.Fatalf("growing into the last block: ok %v, %v, %d tokens", ok, err, p.Tokens(0))
	}
	short, ok, err := p.TryGrowSeq(s, 1, nil)
	var want *NoSpaceError
	if ok || err != nil || !errors.As(p.GrowSeq(s, 1, nil), &want) || short != *want || short.Need != 4 {
		t.Fatalf("a token past the pool: short %+v, ok %v, err %v; GrowSeq says %+v", short, ok, err, want)
	}
	if _, _, err := p.TryGrowSeq(nil, 1, nil); err == nil {
		t.Error("TryGrowSeq(nil) took a token")
	}
}

// Plain is false while events are logged, and while a pool is plain its
// AppendPlain on a live handle does what Append does: two identical pools
// driven by the same random stores, one through each, stay identical.
func TestAppendPlainIsAppend(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pa, _ := NewPaged(64, 4)
	pb, _ := NewPaged(64, 4)
	ca, _ := NewContiguous(256, exact)
	cb, _ := NewContiguous(256, exact)
	if pa.Plain() || ca.Plain() {
		t.Fatal("Plain with events on")
	}
	for _, d := range []interface{ DisableEvents() }{pa, pb, ca, cb} {
		d.DisableEvents()
	}
	for req := range 8 {
		for _, p := range []*Paged{pa, pb} {
			if err := p.AllocateSlots(req, Slots{New: 1 + req}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []*Contiguous{ca, cb} {
			if err := c.AllocateSlots(req, Slots{New: 1, Final: 6 + req}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !pb.Plain() || !cb.Plain() {
		t.Fatal("not Plain with events off and nothing shared")
	}
	fitted := 0
	for range 400 {
		req, n := r.IntN(8), r.IntN(4)
		a, b := pa.Append(pa.Seq(req), n), pb.AppendPlain(pb.Seq(req), n)
		if a != b || pa.Tokens(req) != pb.Tokens(req) || pa.Usage() != pb.Usage() {
			t.Fatalf("paged request %d, %d tokens: Append %v, AppendPlain %v; usage %+v vs %+v", req, n, a, b, pa.Usage(), pb.Usage())
		}
		if !a { // no room: both grow the same way
			for _, p := range []*Paged{pa, pb} {
				_ = p.GrowSeq(p.Seq(req), n, nil)
			}
		}
		a, b = ca.Append(ca.Hold(req), n), cb.AppendPlain(cb.Hold(req), n)
		if a != b || ca.Usage() != cb.Usage() {
			t.Fatalf("contiguous request %d, %d tokens: Append %v, AppendPlain %v; usage %+v vs %+v", req, n, a, b, ca.Usage(), cb.Usage())
		}
		if a {
			fitted++
		}
	}
	if fitted == 0 || fitted == 400 {
		t.Errorf("%d of 400 contiguous stores fitted: the walk never tried both outcomes", fitted)
	}
	for _, p := range []*Paged{pa, pb} {
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// AdmitPlain and GrowPlain do what AllocateSlots and GrowSeq do on a plain
// pool: two pools driven by the same random admissions, stores and frees,
// one through each, hand out the same blocks, refuse the same requests
// with the same shortfall, and stay identical.
func TestAdmitPlainAndGrowPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	general, _ := NewPaged(40, 4)
	plain, _ := NewPaged(40, 4)
	general.DisableEvents()
	plain.DisableEvents()
	n := plain.NumBlocks()
	ownA, usedA, ownB, usedB := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	same := func(what string) {
		t.Helper()
		general.Occupancy(ownA, usedA)
		plain.Occupancy(ownB, usedB)
		if general.Usage() != plain.Usage() || general.Taken() != plain.Taken() {
			t.Fatalf("%s: usage %+v (taken %d) vs %+v (%d)", what, general.Usage(), general.Taken(), plain.Usage(), plain.Taken())
		}
		for b := range n {
			if ownA[b] != ownB[b] || usedA[b] != usedB[b] {
				t.Fatalf("%s: block %d holds request %d (%d tokens) vs %d (%d)", what, b, ownA[b], usedA[b], ownB[b], usedB[b])
			}
		}
	}
	var resident []int
	refused, grown := 0, 0
	for step := range 3000 {
		if !plain.Plain() {
			t.Fatal("the pool stopped being plain")
		}
		switch op := r.IntN(3); {
		case op == 0 || len(resident) == 0: // admit a new request
			req, now := 1000+step, r.IntN(40)
			final := now + r.IntN(30)
			err := general.AllocateSlots(req, Slots{New: now, Final: final})
			s := plain.AdmitPlain(req, now, final)
			var short *NoSpaceError
			switch {
			case err == nil && s != nil:
				resident = append(resident, req)
				if plain.Seq(req) != s {
					t.Fatalf("AdmitPlain(%d) returned a handle that is not Seq(%d)", req, req)
				}
			case errors.As(err, &short) && s == nil:
				refused++
				if *short != plain.Shortfall() {
					t.Fatalf("request %d refused with %+v vs Shortfall %+v", req, *short, plain.Shortfall())
				}
			default:
				t.Fatalf("admitting %d (%d tokens of %d): AllocateSlots %v, AdmitPlain %v", req, now, final, err, s)
			}
		case op == 1: // store tokens for a resident request
			req, k := resident[r.IntN(len(resident))], r.IntN(9)
			errA := general.GrowSeq(general.Seq(req), k, nil)
			ok := plain.GrowPlain(plain.Seq(req), k)
			if ok != (errA == nil) {
				t.Fatalf("growing %d by %d: GrowSeq %v, GrowPlain %v", req, k, errA, ok)
			}
			if ok {
				grown++
			}
		default: // free one
			i := r.IntN(len(resident))
			for _, p := range []*Paged{general, plain} {
				if err := p.Free(resident[i]); err != nil {
					t.Fatal(err)
				}
			}
			resident = append(resident[:i], resident[i+1:]...)
		}
		same("step " + strconv.Itoa(step))
	}
	if refused == 0 || grown == 0 {
		t.Errorf("%d refusals, %d growths: the walk did not try both outcomes", refused, grown)
	}
}

// The contiguous pool's AdmitPlain does what AllocateSlots does for a
// request it does not hold: the same runs in the same holes, the same
// shortfall, and the same error for a request no run can hold.
func TestContiguousAdmitPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	bay := Reservation{Policy: ReserveMax, MaxContext: 48}
	general, _ := NewContiguous(300, bay)
	plain, _ := NewContiguous(300, bay)
	general.DisableEvents()
	plain.DisableEvents()
	var resident []int
	refused, admitted, impossible := 0, 0, 0
	for step := range 2000 {
		if r.IntN(3) > 0 || len(resident) == 0 {
			req, now := step, r.IntN(52) // past the 48-slot run now and then: never fits
			final := now + r.IntN(12)
			err := general.AllocateSlots(req, Slots{New: now, Final: final})
			h, perr := plain.AdmitPlain(req, now, final)
			var short *NoSpaceError
			switch {
			case err == nil && h != nil && perr == nil:
				admitted++
				resident = append(resident, req)
				if plain.Hold(req) != h {
					t.Fatalf("AdmitPlain(%d) returned a handle that is not Hold(%d)", req, req)
				}
			case errors.As(err, &short) && h == nil && perr == nil:
				refused++
				if *short != plain.Shortfall() {
					t.Fatalf("request %d refused with %+v vs Shortfall %+v", req, *short, plain.Shortfall())
				}
			case err != nil && !errors.Is(err, ErrNoSpace) && h == nil && perr != nil && err.Error() == perr.Error():
				impossible++
			default:
				t.Fatalf("admitting %d (%d tokens of %d): AllocateSlots %v, AdmitPlain %v, %v", req, now, final, err, h, perr)
			}
		} else {
			i := r.IntN(len(resident))
			for _, c := range []*Contiguous{general, plain} {
				if err := c.Free(resident[i]); err != nil {
					t.Fatal(err)
				}
			}
			resident = append(resident[:i], resident[i+1:]...)
		}
		if !slices.Equal(general.Runs(), plain.Runs()) || general.Usage() != plain.Usage() {
			t.Fatalf("step %d: runs %v vs %v", step, general.Runs(), plain.Runs())
		}
	}
	if refused == 0 || admitted == 0 || impossible == 0 {
		t.Errorf("%d admitted, %d refused, %d impossible: the walk did not try every outcome", admitted, refused, impossible)
	}
}
