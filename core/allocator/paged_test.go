package allocator

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/kvhash"
)

// admitIDs admits r with prompt ids as the scheduler does: one lookup of
// the cached prefix, then an allocation that takes its result. It returns
// the prompt tokens found in the cache.
func admitIDs(p *Paged, r *Request, ids []int, extra string) (int, error) {
	hits, hit := p.ComputedBlocks(kvhash.Extend(nil, ids, p.BlockSize(), extra), len(ids))
	r.TokenIDs, r.Computed, r.Extra = ids, hits, extra
	if err := p.AllocateSlots(r, len(ids)-hit); err != nil {
		return 0, err
	}
	return hit, nil
}

// lookup is the hit blocks of a request with token ids.
func lookup(p *Paged, ids []int, extra string) []int {
	hits, _ := p.ComputedBlocks(kvhash.Extend(nil, ids, p.BlockSize(), extra), len(ids))
	return hits
}

// checkPaged runs the invariant checker and the waste bound.
func checkPaged(t *testing.T, p *Paged) {
	t.Helper()
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	owners, used := make([]int, p.NumBlocks()), make([]int, p.NumBlocks())
	p.Occupancy(owners, used)
	for i, b := range p.Snapshot() {
		if owners[i] != b.Owner || used[i] != b.Used {
			t.Fatalf("block %d: Occupancy says owner %d, %d used; Snapshot %+v", i, owners[i], used[i], b)
		}
	}
	u := p.Usage()
	if u.Reserved-u.Stored > u.Resident*(p.BlockSize()-1) {
		t.Fatalf("waste %d slots exceeds (B-1) per request (%d requests, B=%d)", u.Reserved-u.Stored, u.Resident, p.BlockSize())
	}
}

// fingerprint captures everything an all-or-nothing failure must leave
// unchanged.
func fingerprint(p *Paged) string {
	var b strings.Builder
	fmt.Fprint(&b, p.Snapshot(), p.FreeOrder(), p.Stats(), p.Copies())
	for _, r := range p.Requests() {
		fmt.Fprint(&b, r, p.Table(r), p.Tokens(r))
	}
	return b.String()
}

// runPagedOps applies operations decoded from ops (admit with token ids from
// a small alphabet so prefixes repeat, append, fork, free) to a pool with
// prefix caching and checks the invariants after each one. A failed
// allocation must change nothing.
func runPagedOps(t *testing.T, numBlocks, blockSize int, caching bool, ops []byte) {
	p, err := NewPaged(numBlocks, blockSize)
	if err != nil {
		t.Fatal(err)
	}
	if caching {
		p.EnablePrefixCaching()
	}
	if len(ops) > 0 && ops[0]%2 == 1 {
		p.DisableEvents() // the paths that skip the log (Append, grow's batch take)
	}
	tokens := func(seed, n int) []int {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = (seed*7 + i/3) % 5 // long shared runs for small seeds
		}
		return ids
	}
	rs := reqSet{}
	for i := 0; i+2 < len(ops); i += 3 {
		op, a, c := ops[i]%6, int(ops[i+1]), int(ops[i+2])
		req := a % 8
		before := fingerprint(p)
		switch op {
		case 0:
			if r := rs.get(req); r.owner == 0 {
				_, err = admitIDs(p, r, tokens(c%3, 1+c%70), []string{"", "tenant-a"}[a%2])
			} else {
				err = rs.store(p, req, 1+c%70, tokens(c%3, 1+c%70))
			}
		case 1:
			ids := tokens(c, c%40)
			err = rs.store(p, req, len(ids), ids)
		case 2:
			err = rs.free(p, req)
		case 3:
			err = p.Fork(rs.get(req), rs.get(c%8))
		case 4:
			err = rs.store(p, req, c, nil)
		case 5: // a count only: the fast path while it has room
			err = p.AllocateSlots(rs.get(req), c%20)
		}
		if errors.Is(err, ErrNoSpace) && fingerprint(p) != before {
			t.Fatalf("op %d failed with ErrNoSpace but changed the pool", op)
		}
		p.Events()
		checkPaged(t, p)
	}
}

func TestPagedInvariantsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 400; trial++ {
		ops := make([]byte, 600)
		for i := range ops {
			ops[i] = byte(r.IntN(256))
		}
		runPagedOps(t, 1+r.IntN(64), 1+r.IntN(32), trial%2 == 0, ops)
	}
}

func FuzzPagedOps(f *testing.F) {
	f.Add(uint8(16), uint8(4), true, []byte{0, 17, 1, 0, 3, 30, 1, 0, 3, 2, 1, 2, 0, 200, 2, 3, 0, 9})
	f.Add(uint8(1), uint8(1), false, []byte{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 0, 0})
	f.Add(uint8(64), uint8(16), true, []byte{0, 255, 0, 0, 254, 0, 1, 39, 39, 3, 0, 5, 5, 5, 5, 2, 255, 0, 0, 9, 3})
	f.Fuzz(func(t *testing.T, blocks, size uint8, caching bool, ops []byte) {
		runPagedOps(t, 1+int(blocks)%128, 1+int(size)%64, caching, ops)
	})
}

func TestPagedOnDemandAndTailFirstFree(t *testing.T) {
	p, _ := NewPaged(8, 4)
	rs := reqSet{}
	if err := rs.store(p, 0, 5, nil); err != nil { // 5 tokens → 2 blocks
		t.Fatal(err)
	}
	if got := p.Table(0); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("table after admit = %v, want [0 1] (head of the free queue)", got)
	}
	for i := 0; i < 3; i++ { // tokens 6..8 fit in block 1
		if err := rs.store(p, 0, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p.Table(0)); n != 2 {
		t.Fatalf("8 tokens in blocks of 4 hold %d blocks, want 2", n)
	}
	_ = rs.store(p, 0, 1, nil) // token 9 opens block 2
	if got := p.Table(0); len(got) != 3 || got[2] != 2 {
		t.Fatalf("table = %v, want a third block 2", got)
	}
	_ = rs.free(p, 0)
	// free queue: 3..7 then the freed blocks tail first: 2, 1, 0
	want := []int{3, 4, 5, 6, 7, 2, 1, 0}
	got := p.FreeOrder()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("free queue = %v, want %v", got, want)
		}
	}
}

func TestPagedAllOrNothing(t *testing.T) {
	p, _ := NewPaged(4, 16)
	rs := reqSet{}
	_ = rs.store(p, 0, 40, nil) // 3 blocks
	if err := rs.store(p, 1, 20, nil); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("admit needing 2 of 1 free blocks: err = %v", err)
	}
	if p.Table(1) != nil || p.FreeBlocks() != 1 {
		t.Fatalf("failed admit left state behind")
	}
	if err := rs.store(p, 0, 30, nil); !errors.Is(err, ErrNoSpace) { // 70 tokens need 5 blocks
		t.Fatalf("append past the pool: err = %v", err)
	}
	if p.Tokens(0) != 40 || len(p.Table(0)) != 3 {
		t.Fatalf("failed append changed the request: %d tokens, %d blocks", p.Tokens(0), len(p.Table(0)))
	}
}

func TestPagedWasteBound(t *testing.T) {
	// Waste per request is B-1 at most and (B - L mod B) mod B exactly.
	for _, tc := range []struct{ b, tokens, waste int }{
		{16, 16, 0}, {16, 17, 15}, {16, 31, 1}, {16, 1024, 0}, {16, 1025, 15}, {1, 77, 0}, {32, 100, 28},
	} {
		p, _ := NewPaged(1000, tc.b)
		_ = p.AllocateSlots(&Request{ID: 0}, tc.tokens)
		u := p.Usage()
		if got := u.Reserved - u.Stored; got != tc.waste {
			t.Errorf("B=%d L=%d: waste %d slots, want %d", tc.b, tc.tokens, got, tc.waste)
		}
	}
}

// Taken counts blocks handed out: new blocks and copy-on-write copies, not
// prefix-cache hits, and never goes down when blocks are freed.
func TestPagedTaken(t *testing.T) {
	p, err := NewPaged(32, 16)
	if err != nil {
		t.Fatal(err)
	}
	rs := reqSet{}
	p.DisableEvents() // Taken must not depend on the event log
	steps := []struct {
		what string
		do   func() error
		want int
	}{
		{"admit 40 tokens", func() error { return rs.store(p, 1, 40, nil) }, 3},
		{"append 8 (fills block 3)", func() error { return rs.store(p, 1, 8, nil) }, 3},
		{"append 1 (crosses into block 4)", func() error { return rs.store(p, 1, 1, nil) }, 4},
		{"fork: shares, takes nothing", func() error { return p.Fork(rs.get(1), rs.get(2)) }, 4},
		{"child appends into the shared partial block: one copy", func() error { return rs.store(p, 2, 1, nil) }, 5},
		{"free the parent", func() error { return rs.free(p, 1) }, 5},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if got := p.Taken(); got != s.want {
			t.Errorf("after %s: Taken = %d, want %d", s.what, got, s.want)
		}
	}

	c, _ := NewPaged(32, 4)
	c.EnablePrefixCaching()
	ids := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if _, err := admitIDs(c, &Request{ID: 1}, ids, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := admitIDs(c, &Request{ID: 2}, ids, ""); err != nil {
		t.Fatal(err)
	}
	// The second request hits the 2 full cached blocks and takes 1 for its tail.
	if got := c.Taken(); got != 3+1 {
		t.Errorf("prefix caching: Taken = %d, want 4 (3 blocks, then 1 beside 2 hits)", got)
	}
}

// A Request is its own handle: it grows without a lookup by id, a freed
// one is refused rather than corrupting the pool, and it may be admitted
// again.
func TestRequestHandle(t *testing.T) {
	p, _ := NewPaged(8, 4)
	r := &Request{ID: 3, Final: 20}
	if err := p.AllocateSlots(r, 5); err != nil {
		t.Fatal(err)
	}
	if err := p.AllocateSlots(&Request{ID: 3}, 1); err == nil {
		t.Fatal("a second Request with a resident request's id was admitted")
	}
	if err := p.AllocateSlots(r, 4); err != nil || p.Tokens(3) != 9 || len(p.Table(3)) != 3 {
		t.Fatalf("growing: %v, %d tokens in %d blocks", err, p.Tokens(3), len(p.Table(3)))
	}
	if err := p.Free(r); err != nil {
		t.Fatal(err)
	}
	if err := p.Free(r); err == nil {
		t.Fatal("a request was freed twice")
	}
	other, _ := NewContiguous(64, exact)
	if err := other.AllocateSlots(r, 2); err != nil {
		t.Fatal(err)
	}
	if err := p.AllocateSlots(r, 1); err == nil || errors.Is(err, ErrNoSpace) {
		t.Fatalf("a request resident in another pool grew here: %v", err)
	}
	if err := other.Free(r); err != nil {
		t.Fatal(err)
	}
	if err := p.AllocateSlots(r, 3); err != nil || p.Tokens(3) != 3 {
		t.Fatalf("admitted again: %v, %d tokens", err, p.Tokens(3))
	}
	if err := p.Check(); err != nil || p.FreeBlocks() != 7 {
		t.Fatalf("after the handle's life: %v, %d free", err, p.FreeBlocks())
	}
}

// AllocateSlots' fast path is the whole of its common case, so it must stay
// small enough for the compiler to inline into a serving loop: the build's
// inlining report says whether it is (a body of cost 80 at most).
func TestAllocateSlotsInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package with the compiler's inlining report")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, m := range []string{"(*Paged).AllocateSlots", "(*Contiguous).AllocateSlots"} {
		if !strings.Contains(string(out), "can inline "+m) {
			t.Errorf("%s is no longer inlined: keep its fast path to a count (Request.slack)", m)
		}
	}
}
