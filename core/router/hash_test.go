package router_test

import (
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/allocator"
	"github.com/inferlab/inferlab/core/kvhash"
	"github.com/inferlab/inferlab/core/router"
)

// TestHashesMatchAllocator feeds the allocator's KV events to an Index and
// checks that BlockHashes computes the very hashes the allocator publishes,
// and that the index then agrees with the allocator's own prefix lookup.
func TestHashesMatchAllocator(t *testing.T) {
	const b = 4
	p, err := allocator.NewPaged(12, b)
	if err != nil {
		t.Fatal(err)
	}
	p.EnablePrefixCaching()
	x := router.NewIndex()
	removed := 0
	apply := func() (stored []uint64) {
		for _, e := range p.Events() {
			switch e.Kind {
			case allocator.Stored:
				stored = append(stored, e.Hash)
				if err := x.Apply(7, router.Event{Kind: router.Stored, Hashes: []uint64{e.Hash}, Parent: e.Parent}); err != nil {
					t.Fatal(err)
				}
			case allocator.Removed:
				removed++
				x.Apply(7, router.Event{Kind: router.Removed, Hashes: []uint64{e.Hash}})
			}
		}
		return stored
	}
	ids := func(start, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = start + i
		}
		return out
	}
	prompts := []struct {
		ids   []int
		extra string
	}{
		{ids(100, 10), ""},
		{append(ids(100, 8), 5, 5, 5, 5, 5), ""},
		{ids(100, 12), "lora-1"},
		{ids(500, 17), ""},
		{ids(900, 20), ""}, // evicts cached blocks to make room
	}
	for req, pr := range prompts {
		hits, hit := p.ComputedBlocks(kvhash.Extend(nil, pr.ids, b, pr.extra), len(pr.ids))
		r := &allocator.Request{ID: req, TokenIDs: pr.ids, Computed: hits, Extra: pr.extra}
		if err := p.AllocateSlots(r, len(pr.ids)-hit); err != nil {
			t.Fatal(err)
		}
		stored := apply()
		all := router.BlockHashes(pr.ids, b, pr.extra)
		if want := all[hit/b:]; !slices.Equal(stored, want) {
			t.Fatalf("request %d: allocator stored %x, BlockHashes gives %x", req, stored, want)
		}
		if err := p.Free(r); err != nil {
			t.Fatal(err)
		}
		apply()
		if err := x.Check(); err != nil {
			t.Fatal(err)
		}
		// Index overlap = the allocator's hit count for the same prompt plus
		// one token (the lookup never covers the last token).
		for _, q := range prompts {
			probe := append(slices.Clone(q.ids), 0)
			hits, _ := p.ComputedBlocks(kvhash.Extend(nil, probe, b, q.extra), len(probe))
			want := len(hits)
			if got := x.Overlap(router.BlockHashes(q.ids, b, q.extra))[7]; got != want {
				t.Fatalf("after request %d: index overlap %d, allocator lookup %d", req, got, want)
			}
		}
	}
	if removed == 0 {
		t.Fatal("no cached block was evicted; the case does not exercise removals")
	}
}
