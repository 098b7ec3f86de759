package allocator

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// A pool that is not a power of two is cut into the largest aligned blocks
// from address 0: 15,700 slots (the vLLM paper's OPT-13B on a 40 GB A100)
// are 8,192 + 4,096 + 2,048 + 1,024 + 256 + 64 + 16 + 4.
func TestBuddyCutsThePool(t *testing.T) {
	b := newBuddy(15700)
	want := map[int]int{13: 0, 12: 8192, 11: 12288, 10: 14336, 8: 15360, 6: 15616, 4: 15680, 2: 15696}
	for k, starts := range b.free {
		if at, ok := want[k]; ok != (len(starts) == 1) || ok && starts[0] != at {
			t.Errorf("order %d: free blocks %v, want one at %d (%v)", k, starts, at, ok)
		}
	}
	if b.largest() != 8192 || b.below(12) != 2048+1024+256+64+16+4 {
		t.Errorf("largest %d, below 4096 %d", b.largest(), b.below(12))
	}
}

// A take splits the smallest block that holds it, the lowest first, and
// frees its upper halves; giving back merges buddies into the whole.
func TestBuddySplitAndMerge(t *testing.T) {
	b := newBuddy(16)
	at, ok := b.take(0)
	if !ok || at != 0 {
		t.Fatalf("took %d, %v", at, ok)
	}
	for k, want := range [][]int{{1}, {2}, {4}, {8}, nil} {
		if len(b.free[k]) != len(want) || len(want) == 1 && b.free[k][0] != want[0] {
			t.Errorf("order %d after one take: %v, want %v", k, b.free[k], want)
		}
	}
	second, _ := b.take(2) // the free 4 at 4
	third, _ := b.take(0)  // the free 1 at 1
	if second != 4 || third != 1 {
		t.Errorf("takes at %d and %d, want 4 and 1", second, third)
	}
	for _, g := range [][2]int{{0, 0}, {4, 2}, {1, 0}} {
		b.give(g[0], g[1])
	}
	if len(b.free[4]) != 1 || b.free[4][0] != 0 || b.largest() != 16 {
		t.Errorf("after giving all back: %v", b.free)
	}
	if _, ok := b.take(5); ok {
		t.Error("took 32 slots of 16")
	}
}

// Orca-Max on the paper's 15,700 slots: seven 2,048-slot runs fit, and the
// 1,364 slots left, in blocks smaller than 2,048, are external
// fragmentation (8.7%; Fig. 2 of the vLLM paper shows 8.9%). First fit
// would also fit seven, as the slots allow no more.
func TestBuddyOrcaMax(t *testing.T) {
	c, err := NewContiguous(15700, Reservation{Policy: ReserveMax, MaxContext: 2048, Placement: Buddy})
	if err != nil {
		t.Fatal(err)
	}
	rs := reqSet{}
	admitted := 0
	for id := range 10 {
		rs.get(id).Prompt = 100
		if err := rs.admit(c, id, 100, 400); err == nil {
			admitted++
		} else if !errors.Is(err, ErrNoSpace) {
			t.Fatal(err)
		}
	}
	sh := c.Shares()
	if admitted != 7 || sh.External != 1364 || c.Unusable(2048) != 1364 {
		t.Fatalf("%d admitted, shares %+v, unusable %d", admitted, sh, c.Unusable(2048))
	}
	if sh.Tokens != 700 || sh.Reserved != 7*300 || sh.Internal != 7*(2048-400) || sh.Tokens+sh.Reserved+sh.Internal+sh.External != 15700 {
		t.Errorf("shares %+v", sh)
	}
}

// Oracle in a buddy pool: a run of 300 asked slots takes a block of 512,
// the 212 over counted outside the run's asked slots, as the paper counts
// a buddy allocator's rounding with external fragmentation.
func TestBuddyRoundsTheRun(t *testing.T) {
	c, _ := NewContiguous(1000, Reservation{Policy: ReserveExact, Placement: Buddy})
	rs := reqSet{}
	rs.get(0).Prompt = 200
	if err := rs.admit(c, 0, 200, 300); err != nil {
		t.Fatal(err)
	}
	run, _ := c.RunOf(0)
	if run.Start != 0 || run.Len != 512 || run.Asked != 300 || run.Tokens != 200 {
		t.Errorf("run %+v", run)
	}
	if sh := c.Shares(); sh != (Shares{Tokens: 200, Reserved: 100, Internal: 0, External: 700}) {
		t.Errorf("shares %+v", sh)
	}
	// 1000 = 512 + 256 + 128 + 64 + 32 + 8: the next 300 needs a free 512,
	// and none is left, though 488 slots are.
	rs.get(1).Prompt = 200
	if err := rs.admit(c, 1, 200, 300); !errors.Is(err, ErrNoSpace) || !c.StillRefuses(rs.get(1)) {
		t.Fatalf("second 300-slot run: %v", err)
	}
	if err := rs.free(c, 0); err != nil {
		t.Fatal(err)
	}
	if err := rs.admit(c, 1, 200, 300); err != nil || c.Shares() != (Shares{Tokens: 200, Reserved: 100, External: 700}) {
		t.Fatalf("after the free: %v, %+v", err, c.Shares())
	}
}

// Random admissions, growth and frees in a buddy pool keep its invariants:
// runs are aligned power-of-two blocks that never overlap, the free blocks
// and the runs tile the pool, and the shares add up to it.
func TestBuddyConservation(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for range 100 {
		pool := 1 + r.IntN(3000)
		c, _ := NewContiguous(pool, Reservation{Policy: ReservePow2, MaxContext: 1 + r.IntN(1024), Placement: Buddy})
		rs := reqSet{}
		for op := range 600 {
			id := r.IntN(12)
			switch r.IntN(3) {
			case 0:
				q := rs.get(id)
				if q.owner == c.id {
					break // resident: its final length stays
				}
				final := 1 + r.IntN(700)
				q.Prompt = r.IntN(final + 1)
				_ = rs.admit(c, id, min(q.Prompt, c.Reservation().Slots(q.Prompt, final)), final)
			case 1: // a request never stores past its final length or what it asked
				if q := rs.get(id); q.owner == c.id {
					_ = rs.store(c, id, min(r.IntN(4), q.final-q.tokens()), nil)
				}
			case 2:
				_ = rs.free(c, id)
			}
			covered := make([]int, pool)
			for _, run := range c.Runs() {
				if run.Len&(run.Len-1) != 0 || run.Start%run.Len != 0 || run.Asked > run.Len || run.Tokens > run.Len {
					t.Fatalf("op %d: run %+v is no buddy block", op, run)
				}
				for i := run.Start; i < run.Start+run.Len; i++ {
					covered[i]++
				}
			}
			for k, starts := range c.buddy.free {
				for _, at := range starts {
					for i := at; i < at+1<<k; i++ {
						covered[i]++
					}
				}
			}
			for i, n := range covered {
				if n != 1 {
					t.Fatalf("op %d: slot %d of %d covered %d times", op, i, pool, n)
				}
			}
			sh := c.Shares()
			if sh.Tokens != c.Usage().Stored || sh.Tokens+sh.Reserved+sh.Internal+sh.External != pool || sh.Reserved < 0 || sh.Internal < 0 || sh.External < 0 {
				t.Fatalf("op %d: shares %+v of %d", op, sh, pool)
			}
		}
	}
}
