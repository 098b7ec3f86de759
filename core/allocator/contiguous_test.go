package allocator

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestContiguousFirstFitReusesHoles(t *testing.T) {
	c, _ := NewContiguous(400)
	for req, n := range []int{100, 100, 100} {
		if err := c.Admit(req, 100, n/2); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Free(1) // hole [100,200)
	if err := c.Admit(3, 50, 10); err != nil {
		t.Fatal(err)
	}
	if r := c.Runs()[1]; r.Req != 3 || r.Start != 100 {
		t.Fatalf("first fit put request 3 at %+v, want start 100 (the hole)", r)
	}
	// Holes now: [150,200) 50 slots and [300,400) 100 slots.
	if err := c.Admit(4, 60, 0); err != nil {
		t.Fatal(err)
	}
	if r := c.Runs()[3]; r.Req != 4 || r.Start != 300 {
		t.Fatalf("request 4 at %+v, want start 300 (the first hole that fits)", r)
	}
	// 90 slots free (50 + 40) but no hole of 60: external fragmentation.
	if err := c.Admit(5, 60, 0); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("admit with 90 free slots in holes of 50 and 40: err = %v", err)
	}
	if got := c.Unusable(60); got != 90 {
		t.Fatalf("unusable for 60-slot requests = %d, want 90", got)
	}
	if got := c.Unusable(40); got != 10 {
		t.Fatalf("unusable for 40-slot requests = %d, want 10 (50 mod 40 + 40 mod 40)", got)
	}
}

func TestContiguousAppendStaysInsideRun(t *testing.T) {
	c, _ := NewContiguous(100)
	_ = c.Admit(0, 10, 8)
	if err := c.Append(0, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(0, 1); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("append past the reservation: err = %v", err)
	}
	if u := c.Usage(); u.Stored != 10 || u.Reserved != 10 || u.Waste() != 0 {
		t.Fatalf("usage %+v, want 10 stored of 10 reserved", u)
	}
}

// TestContiguousConservation: reserved + free slots always equal the pool and
// runs never overlap, across random operation sequences.
func TestContiguousConservation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		c, _ := NewContiguous(1 + r.IntN(2000))
		for op := 0; op < 300; op++ {
			req := r.IntN(10)
			switch r.IntN(3) {
			case 0:
				res := 1 + r.IntN(300)
				_ = c.Admit(req, res, r.IntN(res+1))
			case 1:
				_ = c.Append(req, r.IntN(5))
			case 2:
				_ = c.Free(req)
			}
			free := 0
			for _, h := range c.Holes() {
				free += h.Len
			}
			u := c.Usage()
			if u.Reserved+free != c.PoolTokens() {
				t.Fatalf("reserved %d + free %d != pool %d", u.Reserved, free, c.PoolTokens())
			}
			end := 0
			for _, run := range c.Runs() {
				if run.Start < end || run.Tokens > run.Len {
					t.Fatalf("bad run %+v after end %d", run, end)
				}
				end = run.Start + run.Len
			}
		}
	}
}
