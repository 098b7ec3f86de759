package radixcache

import (
	"errors"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/internal/testinput"
)

// tok turns "abcd" into token ids, one per letter, for readable cases.
var tok = testinput.Letters

func mustCheck(t *testing.T, tr *Tree) {
	t.Helper()
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
}

// edges lists the tree as "parentKey>key" strings in Walk order.
func edges(tr *Tree) []string {
	keys := map[int]string{}
	var out []string
	tr.Walk(func(v NodeView) bool {
		k := ""
		for _, id := range v.Key {
			k += string(rune(id))
		}
		keys[v.ID] = k
		if v.Parent >= 0 {
			out = append(out, keys[v.Parent]+">"+k)
		}
		return true
	})
	return out
}

func TestMatchSplits(t *testing.T) {
	tr := New(1)
	if got := tr.Insert(tok("abcd")); got != 0 {
		t.Fatalf("first insert found %d tokens", got)
	}
	tr.Events()
	n, node := tr.Match(tok("abxy"))
	if n != 2 || node.Len() != 2 {
		t.Fatalf("match abxy = %d tokens, node of %d; want 2, 2", n, node.Len())
	}
	if got, want := edges(tr), []string{">ab", "ab>cd"}; !slices.Equal(got, want) {
		t.Fatalf("tree %v, want %v", got, want)
	}
	ev := tr.Events()
	if len(ev) != 2 || ev[0].Kind != Split || ev[0].Len != 2 || ev[0].Node != node.ID() || ev[1].Kind != Matched {
		t.Fatalf("events %+v, want split at 2 then matched", ev)
	}
	if tr.TotalSize() != 4 || tr.Nodes() != 3 {
		t.Fatalf("size %d nodes %d after split, want 4 and 3", tr.TotalSize(), tr.Nodes())
	}
	mustCheck(t, tr)
}

func TestInsertReturnsExisting(t *testing.T) {
	tr := New(1)
	for _, tc := range []struct {
		seq            string
		existing, size int
	}{
		{"abcd", 0, 4},
		{"abcd", 4, 4},   // de-duplicated: nothing new
		{"abxy", 2, 6},   // splits abcd at 2
		{"ab", 2, 6},     // already a node
		{"abcdef", 4, 8}, // extends a leaf
		{"zz", 0, 10},
		{"", 0, 10},
	} {
		if got := tr.Insert(tok(tc.seq)); got != tc.existing || tr.TotalSize() != tc.size {
			t.Errorf("insert %q: existing %d size %d, want %d and %d", tc.seq, got, tr.TotalSize(), tc.existing, tc.size)
		}
		mustCheck(t, tr)
	}
	want := []string{">ab", "ab>cd", "cd>ef", "ab>xy", ">zz"}
	if got := edges(tr); !slices.Equal(got, want) {
		t.Fatalf("tree %v, want %v", got, want)
	}
}

func TestMatchLengths(t *testing.T) {
	tr := New(1)
	for _, s := range []string{"hello world", "hello there", "help"} {
		tr.Insert(tok(s))
	}
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"hello world", 11},
		{"hello world!", 11},
		{"hello", 5},
		{"hel", 3},
		{"helpful", 4},
		{"hex", 2},
		{"goodbye", 0},
		{"", 0},
	} {
		if got, _ := tr.Match(tok(tc.q)); got != tc.want {
			t.Errorf("match %q = %d, want %d", tc.q, got, tc.want)
		}
		mustCheck(t, tr)
	}
}

func TestPagedKeys(t *testing.T) {
	tr := New(2)
	if got := tr.Insert([]int{1, 2, 3, 4, 5}); got != 0 || tr.TotalSize() != 4 {
		t.Fatalf("insert of 5 tokens at page 2: existing %d size %d, want 0 and 4 (tail page dropped)", got, tr.TotalSize())
	}
	// Same first token, different first page: a separate child of the root.
	tr.Insert([]int{1, 3, 5, 7})
	if len(tr.Root().children) != 2 {
		t.Fatalf("root has %d children, want 2 (pages [1 2] and [1 3])", len(tr.Root().children))
	}
	for _, tc := range []struct {
		q    []int
		want int
	}{
		{[]int{1, 2, 3, 4}, 4},
		{[]int{1, 2, 3, 9}, 2}, // second page differs in its last token: whole page misses
		{[]int{1, 2, 3}, 2},    // truncated to one page
		{[]int{1, 9}, 0},
		{[]int{1, 3, 5, 7, 9}, 4},
	} {
		if got, _ := tr.Match(tc.q); got != tc.want {
			t.Errorf("match %v = %d, want %d", tc.q, got, tc.want)
		}
		mustCheck(t, tr)
	}
}

func TestEvictLRU(t *testing.T) {
	tr := New(1)
	tr.Insert(tok("aaa")) // tick 1
	tr.Insert(tok("bb"))  // tick 2
	tr.Insert(tok("c"))   // tick 3
	tr.Match(tok("aaa"))  // tick 4: a is now the most recent
	tr.Events()
	var order []int
	for _, want := range []int{2, 1, 3} {
		if got := tr.Evict(1); got != want {
			t.Fatalf("evict(1) freed %d tokens, want %d (leaves go whole, LRU first)", got, want)
		}
		for _, e := range tr.Events() {
			order = append(order, e.Len)
		}
		mustCheck(t, tr)
	}
	if !slices.Equal(order, []int{2, 1, 3}) || tr.TotalSize() != 0 || tr.Nodes() != 1 {
		t.Fatalf("evicted %v, size %d, nodes %d; want bb, c, aaa then empty", order, tr.TotalSize(), tr.Nodes())
	}
	if got := tr.Evict(5); got != 0 {
		t.Fatalf("evict on empty tree freed %d", got)
	}
}

func TestEvictPushesParent(t *testing.T) {
	tr := New(1)
	tr.Insert(tok("abc"))
	tr.Insert(tok("abd")) // ab > {c, d}
	tr.Insert(tok("x"))
	tr.Match(tok("x"))
	// c and d go (oldest leaves), then ab becomes a leaf older than x.
	if got := tr.Evict(3); got != 4 {
		t.Fatalf("evict(3) freed %d, want 4 (c, d, then their parent ab)", got)
	}
	if got := edges(tr); !slices.Equal(got, []string{">x"}) {
		t.Fatalf("tree %v, want only x", got)
	}
	mustCheck(t, tr)
}

func TestLockProtects(t *testing.T) {
	tr := New(1)
	tr.Insert(tok("abcd"))
	tr.Insert(tok("xyz"))
	_, node := tr.Match(tok("abcd"))
	if err := tr.Lock(node); err != nil {
		t.Fatal(err)
	}
	if tr.EvictableSize() != 3 || tr.ProtectedSize() != 4 {
		t.Fatalf("evictable %d protected %d, want 3 and 4", tr.EvictableSize(), tr.ProtectedSize())
	}
	// A lookup that splits the locked node keeps both halves locked.
	if n, mid := tr.Match(tok("abzz")); n != 2 || mid.LockRef() != 1 {
		t.Fatalf("split of a locked node: match %d, lock %d; want 2 and 1", n, mid.LockRef())
	}
	mustCheck(t, tr)
	if got := tr.Evict(100); got != 3 {
		t.Fatalf("evict(100) freed %d, want 3 (only the unlocked leaf)", got)
	}
	if tr.EvictableSize() != 0 || tr.ProtectedSize() != 4 {
		t.Fatalf("after evict: evictable %d protected %d", tr.EvictableSize(), tr.ProtectedSize())
	}
	if err := tr.Unlock(node); err != nil {
		t.Fatal(err)
	}
	if err := tr.Unlock(node); !errors.Is(err, ErrNotLocked) {
		t.Fatalf("second unlock: %v, want ErrNotLocked", err)
	}
	mustCheck(t, tr)
	if got := tr.Evict(100); got != 4 {
		t.Fatalf("evict after unlock freed %d, want 4", got)
	}
	if err := tr.Lock(node); !errors.Is(err, ErrEvicted) {
		t.Fatalf("lock of evicted node: %v, want ErrEvicted", err)
	}
	mustCheck(t, tr)
}

func TestNestedLocks(t *testing.T) {
	tr := New(1)
	tr.Insert(tok("abcd"))
	tr.Insert(tok("abxy"))
	_, n1 := tr.Match(tok("abcd"))
	_, n2 := tr.Match(tok("abxy"))
	_, ab := tr.Match(tok("ab"))
	for _, n := range []*Node{n1, n2, ab} {
		if err := tr.Lock(n); err != nil {
			t.Fatal(err)
		}
	}
	if ab.LockRef() != 3 || tr.ProtectedSize() != 6 {
		t.Fatalf("ab lock %d protected %d, want 3 and 6", ab.LockRef(), tr.ProtectedSize())
	}
	mustCheck(t, tr)
	tr.Unlock(n1)
	if tr.EvictableSize() != 2 || ab.LockRef() != 2 {
		t.Fatalf("after one unlock: evictable %d, ab lock %d", tr.EvictableSize(), ab.LockRef())
	}
	mustCheck(t, tr)
}

func TestSnapshot(t *testing.T) {
	tr := New(1)
	tr.Insert(tok("abcd"))
	tr.Match(tok("abxy"))
	s := tr.Snapshot()
	if len(s) != 3 {
		t.Fatalf("%d views, want 3", len(s))
	}
	root, ab, cd := s[0], s[1], s[2]
	if root.Parent != -1 || !slices.Equal(root.Children, []int{ab.ID}) || ab.Depth != 1 || cd.Prefix != 2 ||
		!slices.Equal(cd.Key, tok("cd")) || ab.LastAccess != 2 || cd.LastAccess != 2 {
		t.Fatalf("snapshot %+v", s)
	}
	s[1].Key[0] = 0 // a copy: the tree is unchanged
	mustCheck(t, tr)
	if got, _ := tr.Match(tok("ab")); got != 2 {
		t.Fatal("snapshot aliases the tree's keys")
	}
}
