package allocator

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/kvhash"
)

func seqIDs(start, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = start + i
	}
	return ids
}

func cachingPool(t *testing.T, blocks, b int) *Paged {
	t.Helper()
	p, err := NewPaged(blocks, b)
	if err != nil {
		t.Fatal(err)
	}
	p.EnablePrefixCaching()
	return p
}

func TestPrefixLookup(t *testing.T) {
	const b = 4
	p := cachingPool(t, 32, b)
	rs := reqSet{}
	prompt := seqIDs(100, 10) // blocks [100..103] [104..107], partial [108 109]
	if hit, _ := admitIDs(p, rs.get(0), prompt, ""); hit != 0 {
		t.Fatalf("first request hit %d tokens in an empty cache", hit)
	}
	shared := append(seqIDs(100, 8), 7, 7, 7, 7, 7)       // same two full blocks, then different
	diverged := append(seqIDs(100, 4), seqIDs(900, 8)...) // block 1 differs
	early := append([]int{0}, seqIDs(101, 11)...)         // differs at token 0
	for _, tc := range []struct {
		name  string
		ids   []int
		extra string
		want  int // blocks hit
	}{
		{"two shared full blocks", shared, "", 2},
		{"stops at the first miss", diverged, "", 1},
		{"an early difference shares nothing", early, "", 0},
		{"another tenant shares nothing", shared, "tenant-b", 0},
		{"exactly the cached blocks: the last block is recomputed", seqIDs(100, 8), "", 1},
		{"one token past the cached blocks hits both", seqIDs(100, 9), "", 2},
		{"the partial block is never cached", seqIDs(100, 10), "", 2},
	} {
		if got := len(lookup(p, tc.ids, tc.extra)); got != tc.want {
			t.Errorf("%s: %d blocks hit, want %d", tc.name, got, tc.want)
		}
	}
	hit, err := admitIDs(p, rs.get(1), shared, "")
	if err != nil || hit != 2*b {
		t.Fatalf("admit shared: hit %d tokens (err %v), want %d", hit, err, 2*b)
	}
	t0, t1 := p.Table(0), p.Table(1)
	if t0[0] != t1[0] || t0[1] != t1[1] || t0[2] == t1[2] || p.Refs(t0[0]) != 2 {
		t.Fatalf("tables %v and %v should share exactly two blocks with ref count 2", t0, t1)
	}
	if s := p.Stats(); s.QueryTokens != 10+13 || s.HitTokens != 8 {
		t.Fatalf("stats %+v, want 23 queried, 8 hit", s)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

// Freed hashed blocks stay cached in LRU order and are evicted only when
// their slot is reused; a request's blocks are freed tail first.
func TestPrefixEvictionOnReuse(t *testing.T) {
	const b = 4
	p := cachingPool(t, 4, b)
	rs := reqSet{}
	_, _ = admitIDs(p, rs.get(0), seqIDs(0, 13), "") // blocks 0,1,2 full + block 3 partial
	_ = rs.free(p, 0)
	if got, want := p.FreeOrder(), []int{3, 2, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("free queue %v, want %v (tail first)", got, want)
	}
	for blk := 0; blk < 3; blk++ {
		if !p.Cached(blk) {
			t.Fatalf("block %d lost its hash when freed", blk)
		}
	}
	p.Events()
	// A 9-token request that shares nothing needs 3 blocks: it reuses the
	// unhashed block 3, then evicts 2 and 1 (deepest first); block 0, the
	// shared head of the chain, survives.
	if _, err := admitIDs(p, rs.get(1), seqIDs(500, 9), ""); err != nil {
		t.Fatal(err)
	}
	var removed []int
	for _, e := range p.Events() {
		if e.Kind == Removed {
			removed = append(removed, e.Block)
		}
	}
	if !slices.Equal(removed, []int{2, 1}) {
		t.Fatalf("evicted %v, want [2 1]", removed)
	}
	if !p.Cached(0) || len(lookup(p, seqIDs(0, 13), "")) != 1 {
		t.Fatalf("the chain head should still hit after deeper blocks were evicted")
	}
	// Reviving the cached free block takes it out of the free queue.
	_ = rs.free(p, 1)
	hit, err := admitIDs(p, rs.get(2), seqIDs(0, 6), "")
	if err != nil || hit != 4 || p.Refs(0) != 1 || slices.Contains(p.FreeOrder(), 0) {
		t.Fatalf("revive: hit %d err %v refs %d free %v", hit, err, p.Refs(0), p.FreeOrder())
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

// A cached free block counts against free capacity when a hit revives it.
func TestPrefixHitNeedsFreeCapacity(t *testing.T) {
	p := cachingPool(t, 3, 4)
	rs := reqSet{}
	_, _ = admitIDs(p, rs.get(0), seqIDs(0, 9), "") // 3 blocks, 2 hashed
	_ = rs.free(p, 0)
	_ = rs.store(p, 1, 4, nil) // takes block 2 (unhashed, head of queue after tail-first free)
	// 9 tokens: 2 hits (both free) + 1 new block = 3 blocks of free capacity, only 2 left.
	if _, err := admitIDs(p, rs.get(2), seqIDs(0, 9), ""); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want ErrNoSpace", err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestStoredEventsCarryTheChain(t *testing.T) {
	p := cachingPool(t, 8, 2)
	rs := reqSet{}
	_, _ = admitIDs(p, rs.get(0), seqIDs(0, 5), "")
	var stored []Event
	for _, e := range p.Events() {
		if e.Kind == Stored {
			stored = append(stored, e)
		}
	}
	if len(stored) != 2 || stored[0].Parent != kvhash.Root || stored[1].Parent != stored[0].Hash {
		t.Fatalf("stored events %+v: want two, chained from the root", stored)
	}
}

func TestCopyOnWrite(t *testing.T) {
	p, _ := NewPaged(16, 4)
	rs := reqSet{}
	_ = rs.store(p, 0, 6, nil) // blocks 0 (full), 1 (2 of 4)
	_ = p.Fork(rs.get(0), rs.get(1))
	if p.Refs(0) != 2 || p.Refs(1) != 2 {
		t.Fatalf("after fork refs = %d, %d; want 2, 2", p.Refs(0), p.Refs(1))
	}
	p.Events()
	_ = rs.store(p, 1, 1, nil) // the child writes into the shared partial block: copy
	ev := p.Events()
	if len(ev) < 2 || ev[1].Kind != Copied || ev[1].From != 1 {
		t.Fatalf("events %+v: want allocated then copied from block 1", ev)
	}
	if tbl := p.Table(1); tbl[0] != 0 || tbl[1] == 1 || p.Refs(1) != 1 || p.Copies() != 1 {
		t.Fatalf("child table %v refs(1) %d copies %d", tbl, p.Refs(1), p.Copies())
	}
	_ = rs.store(p, 0, 1, nil) // the parent now owns block 1 alone: write in place
	if p.Copies() != 1 || p.Table(0)[1] != 1 {
		t.Fatalf("the parent copied a block it no longer shares")
	}
	inUse, unshared := p.Sharing()
	if inUse != 3 || unshared != 4 {
		t.Fatalf("sharing %d in use vs %d unshared, want 3 vs 4", inUse, unshared)
	}
	_ = rs.free(p, 0)
	if p.Refs(0) != 1 || p.FreeBlocks() != 14 {
		t.Fatalf("freeing the parent: refs(0) %d free %d, want 1 and 14", p.Refs(0), p.FreeBlocks())
	}
}

func TestTranslate(t *testing.T) {
	const sEntry = 131072 // Llama-3.1-8B, BF16
	p, _ := NewPaged(8, 16)
	rs := reqSet{}
	_ = rs.store(p, 9, 10, nil) // takes block 0, so request 1's blocks are not at 0
	_ = rs.store(p, 1, 40, nil) // blocks 1, 2, 3
	_ = rs.free(p, 9)           // block 0 to the tail
	_ = rs.store(p, 1, 30, nil) // 70 tokens: blocks 1, 2, 3, 4, 5
	for _, tc := range []struct {
		t, logical, offset, physical int
	}{
		{0, 0, 0, 1}, {15, 0, 15, 1}, {16, 1, 0, 2}, {17, 1, 1, 2}, {47, 2, 15, 3}, {48, 3, 0, 4}, {69, 4, 5, 5},
	} {
		a, err := p.Translate(1, tc.t, sEntry)
		if err != nil {
			t.Fatal(err)
		}
		want := int64(tc.physical)*16*sEntry + int64(tc.offset)*sEntry
		if a.Logical != tc.logical || a.Offset != tc.offset || a.Physical != tc.physical || a.Byte != want {
			t.Errorf("token %d: %+v, want logical %d offset %d physical %d byte %d", tc.t, a, tc.logical, tc.offset, tc.physical, want)
		}
	}
	for _, bad := range []int{-1, 70, 1000} {
		if _, err := p.Translate(1, bad, sEntry); err == nil {
			t.Errorf("token %d outside a 70-token sequence gave no error", bad)
		}
	}
}

// kvhash.Extend extended piece by piece equals hashing at once; the lookup
// reads no hash past the block before the last token's, so hashes of every
// full block find what hashes of those blocks alone find; and an admission
// with the lookup's result holds exactly those blocks.
func TestBlockHashesMatchLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := 0; trial < 200; trial++ {
		bs := 1 + rng.IntN(8)
		p, err := NewPaged(256, bs)
		rs := reqSet{}
		if err != nil {
			t.Fatal(err)
		}
		p.EnablePrefixCaching()
		// A cached prompt, then a new one sharing a random part of it.
		base := make([]int, 1+rng.IntN(60))
		for i := range base {
			base[i] = rng.IntN(4)
		}
		if _, err := admitIDs(p, rs.get(1), base, ""); err != nil {
			t.Fatal(err)
		}
		ids := append(append([]int(nil), base[:rng.IntN(len(base)+1)]...), make([]int, rng.IntN(20))...)
		if len(ids) == 0 {
			ids = []int{0}
		}
		var inc []uint64
		for cut := 0; cut <= len(ids); cut += 1 + rng.IntN(bs+2) {
			inc = kvhash.Extend(inc, ids[:cut], bs, "")
		}
		inc = kvhash.Extend(inc, ids, bs, "")
		whole := kvhash.Extend(nil, ids, bs, "")
		if !slices.Equal(inc, whole) || len(whole) != len(ids)/bs {
			t.Fatalf("trial %d: incremental hashes %v, at once %v (%d tokens, B=%d)", trial, inc, whole, len(ids), bs)
		}
		full := (len(ids) - 1) / bs
		want, wantTokens := p.ComputedBlocks(kvhash.Extend(nil, ids[:full*bs], bs, ""), len(ids))
		got, gotTokens := p.ComputedBlocks(whole, len(ids))
		if !slices.Equal(got, want) || gotTokens != wantTokens || gotTokens != len(got)*bs || gotTokens >= len(ids) {
			t.Fatalf("trial %d: all hashes hit %v (%d tokens), hashes before the last token's block %v (%d)", trial, got, gotTokens, want, wantTokens)
		}
		hit, err := admitIDs(p, rs.get(2), ids, "")
		if err != nil || hit != wantTokens || !slices.Equal(p.Table(2)[:len(want)], want) {
			t.Fatalf("trial %d: admission hit %d tokens (%v), table %v, lookup %v", trial, hit, err, p.Table(2), want)
		}
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// AllocateSlots refuses what vLLM's caller never passes: computed blocks for
// a resident request, blocks not in the cache, a negative count; none of
// it changes the pool.
func TestAllocateSlotsRefusesMisuse(t *testing.T) {
	p := cachingPool(t, 16, 4)
	rs := reqSet{}
	if _, err := admitIDs(p, rs.get(0), seqIDs(0, 9), ""); err != nil {
		t.Fatal(err)
	}
	hits := lookup(p, seqIDs(0, 9), "")
	before := fingerprint(p)
	for _, tc := range []struct {
		name     string
		req, n   int
		computed []int
	}{
		{"computed blocks for a resident request", 0, 1, hits},
		{"a block not in the cache", 1, 1, []int{15}},
		{"a block outside the pool", 1, 1, []int{99}},
		{"a negative count", 1, -1, nil},
		{"a negative count for a resident request", 0, -1, nil},
	} {
		r := rs.get(tc.req)
		r.Computed = tc.computed
		if err := p.AllocateSlots(r, tc.n); err == nil || errors.Is(err, ErrNoSpace) {
			t.Errorf("%s: err = %v, want a usage error", tc.name, err)
		}
		r.Computed = nil
		if fingerprint(p) != before {
			t.Fatalf("%s changed the pool", tc.name)
		}
	}
}

// KV held ahead of its request (Hold) is filed apart under the request's
// own id: the request, admitted while the hold stands, finds the held full
// blocks cached (all but the one holding its last token) and shares them;
// freeing the hold then leaves them with the request alone, and the hold's
// last block free with its hash. A second hold for the same id, or a hold
// of a request that holds memory, is refused.
func TestHoldIsFoundByItsRequest(t *testing.T) {
	p, _ := NewPaged(16, 4)
	p.EnablePrefixCaching()
	ids := benchPrompt(3, 10) // 2 full blocks and a partial one
	hold := &Request{ID: 7, TokenIDs: ids}
	if err := p.Hold(hold, len(ids)); err != nil {
		t.Fatal(err)
	}
	if err := p.Hold(&Request{ID: 7, TokenIDs: ids}, 1); err == nil {
		t.Fatal("a second hold for request 7 was accepted")
	}
	if err := p.Hold(hold, 1); err == nil {
		t.Fatal("a hold that holds memory was held again")
	}
	if got := p.Requests(); len(got) != 0 || p.Tokens(7) != 0 || p.Usage().Resident != 1 {
		t.Fatalf("with only a hold: requests %v, request 7's tokens %d, %d resident; want none, 0, 1", got, p.Tokens(7), p.Usage().Resident)
	}
	r := &Request{ID: 7}
	hit, err := admitIDs(p, r, ids, "")
	if err != nil || hit != 8 {
		t.Fatalf("request 7 beside its hold: %d tokens hit, %v; want the 8 of the 2 full blocks", hit, err)
	}
	held := hold.blocks
	if tbl := p.Table(7); tbl[0] != held[0] || tbl[1] != held[1] || p.Refs(held[0]) != 2 {
		t.Fatalf("request 7's table %v, the hold's %v: want the full blocks shared", tbl, held)
	}
	checkPaged(t, p)
	if err := p.Free(hold); err != nil {
		t.Fatal(err)
	}
	if p.Refs(held[0]) != 1 || p.Refs(held[2]) != 0 || p.Usage().Resident != 1 || p.Tokens(7) != 10 {
		t.Fatalf("after the hold's release: refs %d and %d, %d resident, request 7 has %d tokens; want 1, 0, 1, 10",
			p.Refs(held[0]), p.Refs(held[2]), p.Usage().Resident, p.Tokens(7))
	}
	checkPaged(t, p)
}
