package kvhash

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"
)

// A block's hash changes with its parent, any token and the extra key, and
// with nothing else.
func TestChain(t *testing.T) {
	a := Chain(Root, []int{1, 2, 3, 4}, "")
	for _, tc := range []struct {
		name   string
		h      uint64
		differ bool
	}{
		{"same parent, tokens and key", Chain(Root, []int{1, 2, 3, 4}, ""), false},
		{"same tokens after another parent", Chain(a, []int{1, 2, 3, 4}, ""), true},
		{"one token differs", Chain(Root, []int{1, 2, 3, 5}, ""), true},
		{"another tenant or LoRA", Chain(Root, []int{1, 2, 3, 4}, "lora-7"), true},
		{"a key that moves a token into it", Chain(Root, []int{1, 2, 3}, "\x04"), true},
	} {
		if (tc.h != a) != tc.differ {
			t.Errorf("%s: differ = %v, want %v", tc.name, tc.h != a, tc.differ)
		}
	}
}

// Extending piece by piece gives what hashing at once gives; a partial
// block has no hash; equal prefixes share their hashes up to the first
// block that differs.
func TestExtend(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		bs := 1 + rng.IntN(8)
		ids := make([]int, rng.IntN(60))
		for i := range ids {
			ids[i] = rng.IntN(5)
		}
		whole := Extend(nil, ids, bs, "x")
		if len(whole) != len(ids)/bs {
			t.Fatalf("%d ids in blocks of %d: %d hashes", len(ids), bs, len(whole))
		}
		var inc []uint64
		for cut := 0; cut <= len(ids); cut += 1 + rng.IntN(bs+2) {
			inc = Extend(inc, ids[:cut], bs, "x")
		}
		inc = Extend(inc, ids, bs, "x")
		if !slices.Equal(inc, whole) {
			t.Fatalf("piece by piece %x, at once %x", inc, whole)
		}
		if len(ids) > bs {
			other := slices.Clone(ids)
			k := rng.IntN(len(ids))
			other[k]++
			h := Extend(nil, other, bs, "x")
			for i := range whole {
				if same := h[i] == whole[i]; same != (i < k/bs) {
					t.Fatalf("token %d changed: block %d's hash same = %v", k, i, same)
				}
			}
		}
	}
	if got := Extend([]uint64{7}, []int{1, 2, 3}, 0, ""); !slices.Equal(got, []uint64{7}) {
		t.Errorf("block size 0: %v, want the hashes given", got)
	}
}

// TestChainIsFNV: Chain is hash/fnv's FNV-1a over the parent, the extra
// key's length, the key and each id as 8 little-endian bytes.
func TestChainIsFNV(t *testing.T) {
	ref := func(parent uint64, ids []int, extra string) uint64 {
		h := fnv.New64a()
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], parent)
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(len(extra)))
		h.Write(buf[:])
		h.Write([]byte(extra))
		for _, id := range ids {
			binary.LittleEndian.PutUint64(buf[:], uint64(id))
			h.Write(buf[:])
		}
		return h.Sum64()
	}
	for _, c := range []struct {
		parent uint64
		ids    []int
		extra  string
	}{
		{Root, nil, ""},
		{Root, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, ""},
		{0xdeadbeef, []int{-1, 1 << 40, 31999, 0}, "tenant-a"},
		{^uint64(0), []int{128255}, "lora:adapter/7"},
	} {
		if got, want := Chain(c.parent, c.ids, c.extra), ref(c.parent, c.ids, c.extra); got != want {
			t.Errorf("Chain(%#x, %v, %q) = %#x, FNV-1a gives %#x", c.parent, c.ids, c.extra, got, want)
		}
	}
}
