package allocator

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// exact reserves what the test gives as Final: the run lengths below.
var exact = Reservation{Policy: ReserveExact}

func TestContiguousFirstFitReusesHoles(t *testing.T) {
	c, _ := NewContiguous(400, exact)
	rs := reqSet{}
	for req, n := range []int{100, 100, 100} {
		if err := rs.admit(c, req, n/2, 100); err != nil {
			t.Fatal(err)
		}
	}
	_ = rs.free(c, 1) // hole [100,200)
	if err := rs.admit(c, 3, 10, 50); err != nil {
		t.Fatal(err)
	}
	if r := c.Runs()[1]; r.Req != 3 || r.Start != 100 {
		t.Fatalf("first fit put request 3 at %+v, want start 100 (the hole)", r)
	}
	// Holes now: [150,200) 50 slots and [300,400) 100 slots.
	if err := rs.admit(c, 4, 0, 60); err != nil {
		t.Fatal(err)
	}
	if r := c.Runs()[3]; r.Req != 4 || r.Start != 300 {
		t.Fatalf("request 4 at %+v, want start 300 (the first hole that fits)", r)
	}
	// 90 slots free (50 + 40) but no hole of 60: external fragmentation.
	if err := rs.admit(c, 5, 0, 60); !errors.Is(err, ErrNoSpace) {
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
	c, _ := NewContiguous(100, exact)
	rs := reqSet{}
	_ = rs.admit(c, 0, 8, 10)
	if err := rs.store(c, 0, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := rs.store(c, 0, 1, nil); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("append past the reservation: err = %v", err)
	}
	if u := c.Usage(); u.Stored != 10 || u.Reserved != 10 || u.Waste() != 0 {
		t.Fatalf("usage %+v, want 10 stored of 10 reserved", u)
	}
}

// A Request grows its run with the event log on and off (the fast path:
// counting only, while nothing is logged), stops at the run's end, and
// once freed is admitted again rather than grown.
func TestContiguousRequestHandle(t *testing.T) {
	for _, events := range []bool{true, false} {
		c, _ := NewContiguous(100, exact)
		rs := reqSet{}
		if !events {
			c.DisableEvents()
		}
		_ = rs.admit(c, 0, 8, 10)
		_ = rs.admit(c, 1, 1, 5)
		r := rs.get(0)
		c.Events()
		if err := c.AllocateSlots(r, 2); err != nil {
			t.Fatal(err)
		}
		if events && len(c.Events()) != 1 {
			t.Error("growing logged no Appended event")
		}
		if room := max(r.slack-1, 0); room != 0 {
			t.Errorf("a full run has room for %d", room)
		}
		var short *NoSpaceError
		if err := c.AllocateSlots(r, 1); !errors.As(err, &short) || short.Need != 1 || short.Free != 0 {
			t.Fatalf("growing a full run: err = %v", err)
		}
		if run, _ := c.RunOf(0); run.Tokens != 10 || c.Usage().Stored != 11 {
			t.Fatalf("run %+v, usage %+v; want 10 tokens in the run, 11 stored", run, c.Usage())
		}
		if err := c.AllocateSlots(rs.get(1), -1); err == nil {
			t.Error("a run took -1 tokens")
		}
		_ = rs.free(c, 0)
		if err := c.Free(r); err == nil {
			t.Error("a run was freed twice")
		}
		if run := c.Runs(); len(run) != 1 || run[0].Req != 1 || run[0].Start != 10 {
			t.Errorf("runs after freeing 0: %+v", run)
		}
		r.Final = 4
		if err := c.AllocateSlots(r, 3); err != nil || len(c.Runs()) != 2 {
			t.Errorf("admitting the freed request again: %v, runs %+v", err, c.Runs())
		}
	}
}

// TestContiguousConservation: reserved + free slots always equal the pool,
// runs never overlap and each resident request holds exactly one, across
// random operation sequences.
func TestContiguousConservation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		ops := make([]byte, 900)
		for i := range ops {
			ops[i] = byte(r.IntN(256))
		}
		runContiguousOps(t, 1+r.IntN(2000), ops)
	}
}

func FuzzContiguousOps(f *testing.F) {
	f.Add(uint16(100), []byte{0, 1, 60, 0, 2, 60, 0, 3, 60, 0, 3, 10, 2, 1, 0, 0, 3, 60, 1, 0, 4})
	f.Add(uint16(1), []byte{0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 0, 0})
	f.Add(uint16(2000), []byte{0, 5, 255, 0, 6, 255, 2, 5, 0, 0, 6, 255, 1, 6, 3, 0, 7, 1})
	f.Fuzz(func(t *testing.T, pool uint16, ops []byte) {
		runContiguousOps(t, 1+int(pool)%4096, ops)
	})
}

// runContiguousOps applies operations decoded from ops, three bytes each
// (admit or extend, extend, free; a request id 0–9; a size), to a pool of
// pool slots, and checks the pool after each one. A request refused and
// asked again, or extended by id after a refusal, exercises the pool's
// memory of its last refusal.
func runContiguousOps(t *testing.T, pool int, ops []byte) {
	c, _ := NewContiguous(pool, exact)
	rs := reqSet{}
	for i := 0; i+2 < len(ops); i += 3 {
		req, size := int(ops[i+1])%10, int(ops[i+2])
		switch ops[i] % 3 {
		case 0:
			res := 1 + size
			_ = rs.admit(c, req, size%(res+1), res)
		case 1:
			_ = rs.store(c, req, size%5, nil)
		case 2:
			_ = rs.free(c, req)
		}
		free := 0
		for _, h := range c.Holes() {
			free += h.Len
		}
		// Unusable, remembered between layouts, matches the holes now,
		// for a size asked before (a second call) or a new one.
		for _, k := range []int{1 + size%7, 1 + size%7, 1 + int(ops[i])%5} {
			want := 0
			for _, h := range c.Holes() {
				want += h.Len % k
			}
			if got := c.Unusable(k); got != want {
				t.Fatalf("op %d: Unusable(%d) = %d, the holes %+v leave %d", i/3, k, got, c.Holes(), want)
			}
		}
		u := c.Usage()
		stored, reserved := 0, 0
		seen := map[int]bool{}
		for _, run := range c.Runs() {
			stored += run.Tokens
			reserved += run.Len
			if seen[run.Req] {
				t.Fatalf("op %d: request %d holds two runs: %+v", i/3, run.Req, c.Runs())
			}
			seen[run.Req] = true
			if r := rs.get(run.Req); r.owner != c.id || runOf(r) != run {
				t.Fatalf("op %d: run %+v, but its request holds %+v", i/3, run, runOf(r))
			}
		}
		if u.Stored != stored || u.Reserved != reserved || u.Resident != len(c.Runs()) {
			t.Fatalf("usage %+v, the runs hold %d tokens in %d slots", u, stored, reserved)
		}
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

// The rejection carries its figures: 90 slots free in holes of 50 and 40 do
// not hold a 60-slot run. A run placed in a hole below the last reservation
// counts as a hole reuse; one placed at the end does not.
func TestContiguousNoSpaceFiguresAndHoleReuse(t *testing.T) {
	c, _ := NewContiguous(300, exact)
	rs := reqSet{}
	for req := 0; req < 3; req++ {
		if err := rs.admit(c, req, 1, 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := rs.free(c, 1); err != nil {
		t.Fatal(err)
	}
	if u := c.Usage(); u.Taken != 3 || u.HoleReuses != 0 {
		t.Fatalf("usage %+v: want 3 runs taken, no hole reused", u)
	}
	if err := rs.admit(c, 3, 1, 50); err != nil {
		t.Fatal(err)
	}
	if u := c.Usage(); u.Taken != 4 || u.HoleReuses != 1 {
		t.Fatalf("usage %+v: want the 4th run in the hole at 100", u)
	}
	if err := rs.free(c, 2); err != nil { // the end is now 150: run 3 is the last

		t.Fatal(err)
	}
	if err := rs.admit(c, 4, 1, 100); err != nil {
		t.Fatal(err)
	}
	if u := c.Usage(); u.HoleReuses != 1 {
		t.Fatalf("usage %+v: a run placed at the end (150) reuses no hole", u)
	}
	err := rs.admit(c, 5, 1, 60)
	var ns *NoSpaceError
	if !errors.As(err, &ns) || !errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want a *NoSpaceError that is ErrNoSpace", err)
	}
	if *ns != (NoSpaceError{Need: 60, Free: 50, Largest: 50}) {
		t.Fatalf("figures %+v, want need 60, free 50, largest 50", *ns)
	}
}

// Reservation sizes: the vLLM paper's Orca baselines (§6.1). Pow2 keeps
// the prompt and rounds up the outputs alone: "if the true output length
// is 25, it reserves 32 positions for outputs".
func TestReservationSlots(t *testing.T) {
	max2048 := Reservation{Policy: ReserveMax, MaxContext: 2048}
	pow2 := Reservation{Policy: ReservePow2, MaxContext: 2048}
	exact := Reservation{Policy: ReserveExact}
	for _, tc := range []struct {
		r                   Reservation
		prompt, final, want int
	}{
		{max2048, 161, 700, 2048},
		{pow2, 100, 125, 132},   // the paper's example: 25 outputs reserve 32
		{pow2, 600, 700, 728},   // 100 outputs → 128
		{pow2, 0, 700, 1024},    // all outputs
		{pow2, 512, 1024, 1024}, // 512 outputs, a power of two already
		{pow2, 1000, 1600, 2024},
		{pow2, 1500, 2040, 2048}, // capped at the max context
		{Reservation{Policy: ReservePow2, MaxContext: 1500}, 0, 1025, 1500},
		{pow2, 10, 10, 10}, // no outputs
		{pow2, 0, 0, 1},
		{exact, 161, 700, 700},
		{exact, 0, 0, 1},
	} {
		if got := tc.r.Slots(tc.prompt, tc.final); got != tc.want {
			t.Errorf("%+v for %d prompt tokens of %d: %d slots, want %d", tc.r, tc.prompt, tc.final, got, tc.want)
		}
	}
	for _, bad := range []Reservation{{Policy: "some", MaxContext: 10}, {Policy: ReserveMax}, {Policy: ReservePow2, MaxContext: -1}, {Policy: ReserveExact, Placement: "best"}} {
		if _, err := NewContiguous(100, bad); err == nil {
			t.Errorf("NewContiguous accepted %+v", bad)
		}
	}
}

// A refusal's Largest is the largest hole, whether the pool walked its runs
// or reused the holes it measured at the last refusal (no run taken or
// freed since), over random admissions, frees and repeated refusals.
func TestContiguousRefusalLargestHole(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 50; trial++ {
		c, err := NewContiguous(200+r.IntN(800), Reservation{Policy: ReserveExact, MaxContext: 400})
		if err != nil {
			t.Fatal(err)
		}
		rs := reqSet{}
		var resident []int
		refused := -1
		for op := 0; op < 300; op++ {
			if len(resident) > 0 && r.IntN(3) == 0 {
				i := r.IntN(len(resident))
				if err := rs.free(c, resident[i]); err != nil {
					t.Fatal(err)
				}
				resident = append(resident[:i], resident[i+1:]...)
				continue
			}
			if len(resident) > 0 && r.IntN(4) == 0 {
				// A resident request's id grows its run, even right after
				// a refusal, and never takes a second one.
				req := resident[r.IntN(len(resident))]
				before, _ := c.RunOf(req)
				_, ok, err := shortOf(rs.store(c, req, 1, nil))
				after, _ := c.RunOf(req)
				if err != nil || after.Start != before.Start || after.Len != before.Len || len(c.Runs()) != len(resident) ||
					(ok && after.Tokens != before.Tokens+1) || (!ok && after.Tokens != before.Len) {
					t.Fatalf("trial %d op %d: growing resident %d: ok %v, %v; run %+v then %+v, %d runs for %d residents",
						trial, op, req, ok, err, before, after, len(c.Runs()), len(resident))
				}
				continue
			}
			req := op
			if refused >= 0 && r.IntN(3) == 0 {
				req = refused // the blocked head, retried
			}
			final := 1 + r.IntN(400)
			short, ok, err := shortOf(rs.admit(c, req, 1, final))
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				resident = append(resident, req)
				if req == refused {
					refused = -1
				}
				continue
			}
			refused = req
			largest := 0
			for _, h := range c.Holes() {
				largest = max(largest, h.Len)
			}
			if short.Largest != largest || short.Need != final {
				t.Fatalf("trial %d op %d: refused %d slots with %+v; the largest hole is %d", trial, op, final, short, largest)
			}
		}
	}
}

// StillRefuses answers from the last walk of the holes, and only while no
// run has been taken or freed since; Room is what a run can still take
// while nothing is logged.
func TestContiguousStillRefusesAndRoom(t *testing.T) {
	c, _ := NewContiguous(300, exact)
	rs := reqSet{}
	for req := 0; req < 3; req++ {
		if err := rs.admit(c, req, 10*(req+1), 100); err != nil {
			t.Fatal(err)
		}
	}
	all := []*Request{rs.get(0), rs.get(1), rs.get(2)}
	if got := c.Room(all); got != 0 {
		t.Fatalf("Room with the event log on = %d, want 0 (every token is an event)", got)
	}
	c.DisableEvents()
	for _, r := range all {
		if err := c.AllocateSlots(r, 0); err != nil { // a call reopens the fast path
			t.Fatal(err)
		}
	}
	if got := c.Room(all[1:2]); got != 0 {
		t.Fatalf("Room of one request while the pool holds three = %d, want 0", got)
	}
	if got := c.Room(all); got != 70 {
		t.Fatalf("Room of runs of 100 slots holding 10, 20 and 30 tokens = %d, want 70", got)
	}
	if c.StillRefuses(&Request{Final: 50}) {
		t.Fatal("StillRefuses before any refusal measured the holes")
	}
	if err := rs.admit(c, 3, 1, 50); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a 50-slot run in a full pool: %v", err)
	}
	if !c.StillRefuses(&Request{Final: 50}) || !c.StillRefuses(&Request{Final: 1}) {
		t.Fatal("StillRefuses false right after the refusal, with no hole anywhere")
	}
	if err := rs.free(c, 1); err != nil {
		t.Fatal(err)
	}
	if c.StillRefuses(&Request{Final: 50}) {
		t.Fatal("StillRefuses true after a run was freed")
	}
}
