package radixcache

import (
	"errors"
	"testing"

	"github.com/inferlab/inferlab/core/internal/testinput"
)

// longest is the brute-force match: the longest page-aligned common prefix
// of key with any cached sequence.
func longest(tr *Tree, key []int) int {
	best := 0
	for _, s := range tr.Sequences() {
		best = max(best, tr.common(s, key))
	}
	return min(best, len(key)/tr.pageSize*tr.pageSize)
}

func FuzzRadix(f *testing.F) {
	f.Add([]byte{0, 0, 4, 0, 1, 2, 0, 1, 4, 0, 1, 2, 2, 2, 3, 4, 9})
	f.Add([]byte{1, 0, 6, 0, 0, 1, 1, 2, 2, 1, 6, 0, 0, 1, 1, 0, 0, 2, 3, 4, 1})
	f.Add([]byte{2, 0, 9, 1, 1, 1, 2, 2, 2, 0, 0, 0, 1, 9, 1, 1, 1, 2, 2, 2, 2, 4, 3, 4, 20})
	f.Add([]byte{0, 0, 3, 1, 2, 0, 2, 2, 2, 0, 3, 1, 2, 2, 1, 3, 1, 2, 0, 4, 50, 3, 4, 50})
	f.Add([]byte{0, 5, 6, 0, 0, 1, 1, 2, 2, 20, 1, 5, 5, 0, 0, 1, 1, 2, 7, 0, 5, 8, 0, 0, 1, 2, 2, 2, 1, 2, 9, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := testinput.NewBytes(data)
		z := &radixFuzz{t: t, r: r, tr: New(1 + r.Next(3))}
		ops := []func(){z.insert, z.match, z.lock, z.unlock, z.evict, z.serve}
		for r.More() {
			ops[r.Next(len(ops))]()
			if err := z.tr.Check(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// radixFuzz drives a Tree from fuzz input and checks each operation
// against brute force.
type radixFuzz struct {
	t    *testing.T
	r    *testinput.Bytes
	tr   *Tree
	last *Node   // the node the last match ended at
	held []*Node // nodes locked and not yet released
}

func (z *radixFuzz) insert() {
	key := z.r.Seq(12)
	want := longest(z.tr, key)
	before := z.tr.TotalSize()
	if got := z.tr.Insert(key); got != want {
		z.t.Fatalf("insert %v found %d cached, brute force %d", key, got, want)
	}
	if grew := z.tr.TotalSize() - before; grew != len(key)/z.tr.pageSize*z.tr.pageSize-want {
		z.t.Fatalf("insert %v grew the cache by %d", key, grew)
	}
}

func (z *radixFuzz) match() {
	key := z.r.Seq(12)
	want := longest(z.tr, key)
	before := z.tr.TotalSize()
	got, node := z.tr.Match(key)
	if got != want || z.tr.TotalSize() != before {
		z.t.Fatalf("match %v = %d, brute force %d; size %d → %d", key, got, want, before, z.tr.TotalSize())
	}
	depth := -1
	z.tr.Walk(func(v NodeView) bool {
		if v.ID == node.ID() {
			depth = v.Prefix + len(v.Key)
		}
		return true
	})
	if depth != got {
		z.t.Fatalf("match %v = %d ends at a node %d tokens deep", key, got, depth)
	}
	z.last = node
}

// lock locks the last match.
func (z *radixFuzz) lock() {
	if z.last == nil {
		return
	}
	err := z.tr.Lock(z.last)
	if z.last.Evicted() != errors.Is(err, ErrEvicted) || (err != nil && !z.last.Evicted()) {
		z.t.Fatalf("lock: %v, evicted %v", err, z.last.Evicted())
	}
	if err == nil {
		z.held = append(z.held, z.last)
	}
}

// unlock releases a held lock, or checks that an unlocked node refuses.
func (z *radixFuzz) unlock() {
	if len(z.held) == 0 {
		if l := z.last; l != nil && !l.Evicted() && l.LockRef() == 0 && l != z.tr.Root() {
			if err := z.tr.Unlock(l); !errors.Is(err, ErrNotLocked) {
				z.t.Fatalf("unlock of an unlocked node: %v", err)
			}
		}
		return
	}
	i := z.r.Next(len(z.held))
	if err := z.tr.Unlock(z.held[i]); err != nil {
		z.t.Fatalf("unlock of a held node: %v", err)
	}
	z.held = append(z.held[:i], z.held[i+1:]...)
}

// serve admits a request into a pool of a drawn capacity: admitted, it
// keeps every matched token and ends within the capacity; waiting, it
// changes no size.
func (z *radixFuzz) serve() {
	key := z.r.Seq(12)
	capacity := z.r.Next(40)
	hold := z.r.Next(2) == 1
	want := longest(z.tr, key)
	total, prot := z.tr.TotalSize(), z.tr.ProtectedSize()
	s, err := z.tr.Serve(key, capacity, hold)
	if err != nil {
		z.t.Fatalf("serve %v: %v", key, err)
	}
	if s.Matched != want || s.Tokens != len(key)/z.tr.pageSize*z.tr.pageSize {
		z.t.Fatalf("serve %v matched %d of %d, brute force %d", key, s.Matched, s.Tokens, want)
	}
	if s.Waits {
		if z.tr.TotalSize() != total || z.tr.ProtectedSize() != prot || s.Evicted != 0 || s.Node != nil {
			z.t.Fatalf("serve %v waited but sizes went %d → %d (protected %d → %d), evicted %d", key, total, z.tr.TotalSize(), prot, z.tr.ProtectedSize(), s.Evicted)
		}
		return
	}
	if s.Matched+s.Inserted != s.Tokens || z.tr.TotalSize() > capacity {
		z.t.Fatalf("serve %v into %d: matched %d + inserted %d of %d, %d cached", key, capacity, s.Matched, s.Inserted, s.Tokens, z.tr.TotalSize())
	}
	if hold {
		z.held = append(z.held, s.Node)
	}
	z.last = s.Node
}

func (z *radixFuzz) evict() {
	n := z.r.Next(30)
	ev, prot := z.tr.EvictableSize(), z.tr.ProtectedSize()
	got := z.tr.Evict(n)
	if got != ev-z.tr.EvictableSize() || z.tr.ProtectedSize() != prot {
		z.t.Fatalf("evict(%d) freed %d, evictable %d → %d, protected %d → %d",
			n, got, ev, z.tr.EvictableSize(), prot, z.tr.ProtectedSize())
	}
	if got < n && z.tr.EvictableSize() != 0 {
		z.t.Fatalf("evict(%d) stopped at %d with %d evictable tokens left", n, got, z.tr.EvictableSize())
	}
	for _, h := range z.held {
		if h.Evicted() {
			z.t.Fatalf("locked node %d evicted", h.ID())
		}
	}
}
