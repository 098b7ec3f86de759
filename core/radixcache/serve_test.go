package radixcache

import "testing"

// A request that matched a prefix must not
// evict it to make room for its own new tokens. SGLang locks the matched
// node (PrefillAdder.add_one_req under _lock_node(req.last_node)) and
// admits the request only when its new tokens fit in free plus evictable
// room; evicting the match first would count evicted tokens as reused and,
// re-inserted, push the cache over capacity.
func TestServeKeepsItsMatch(t *testing.T) {
	tr := New(1)
	// A cached sequence of 8 tokens, then one that shares its first 6 and
	// adds 4: the cache holds 10 tokens.
	if _, err := tr.Serve([]int{1, 2, 3, 4, 5, 6, 7, 8}, 10, false); err != nil {
		t.Fatal(err)
	}
	s, err := tr.Serve([]int{1, 2, 3, 4, 5, 6, 9, 9}, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Matched != 6 || s.Inserted != 2 || s.Evicted != 0 || tr.TotalSize() != 10 {
		t.Fatalf("second request: %+v, %d cached", s, tr.TotalSize())
	}
	// A third shares the first 6 and adds 4 more: 4 tokens must go, and
	// only the two unmatched leaves (2 tokens each) may — never the
	// 6-token prefix it matched.
	s, err = tr.Serve([]int{1, 2, 3, 4, 5, 6, 5, 5, 5, 5}, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.Waits || s.Matched != 6 || s.Evicted != 4 || s.Inserted != 4 || tr.TotalSize() != 10 || s.Splits != 0 {
		t.Fatalf("third request: %+v, %d cached", s, tr.TotalSize())
	}
	if n, _ := tr.Match([]int{1, 2, 3, 4, 5, 6, 5, 5, 5, 5}); n != 10 {
		t.Fatalf("the third request's tokens: %d cached, want 10", n)
	}
	if err := tr.Check(); err != nil {
		t.Fatal(err)
	}
}

// A request whose new tokens do not fit even after evicting every unlocked
// leaf waits: nothing is evicted or inserted (SGLang's NO_TOKEN). A held
// request keeps its path locked until Unlock.
func TestServeWaitsAndHolds(t *testing.T) {
	tr := New(1)
	run, err := tr.Serve([]int{1, 2, 3, 4, 5, 6}, 10, true)
	if err != nil || run.Node == nil || tr.ProtectedSize() != 6 {
		t.Fatalf("held request: %+v, %v, protected %d", run, err, tr.ProtectedSize())
	}
	if _, err := tr.Serve([]int{7, 8}, 10, false); err != nil {
		t.Fatal(err)
	}
	// 5 new tokens: 8 cached, 2 evictable, capacity 10 → 3 more than fit.
	s, err := tr.Serve([]int{9, 9, 9, 9, 9}, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Waits || s.Evicted != 0 || s.Inserted != 0 || s.Node != nil || tr.TotalSize() != 8 || tr.EvictableSize() != 2 {
		t.Fatalf("waiting request: %+v, %d cached (%d evictable)", s, tr.TotalSize(), tr.EvictableSize())
	}
	if err := tr.Unlock(run.Node); err != nil {
		t.Fatal(err)
	}
	// Now 3 tokens must go; leaves go whole, least recently used first: the
	// released 6-token path.
	s, err = tr.Serve([]int{9, 9, 9, 9, 9}, 10, false)
	if err != nil || s.Waits || s.Evicted != 6 || tr.TotalSize() != 7 {
		t.Fatalf("after the unlock: %+v, %v, %d cached", s, err, tr.TotalSize())
	}
}

// Serve reports splits and inserts even when the tree's event log is off,
// and leaves the log off and empty.
func TestServeWithEventsOff(t *testing.T) {
	tr := New(1)
	tr.DisableEvents()
	tr.Serve([]int{1, 2, 3, 4}, 100, false)
	s, err := tr.Serve([]int{1, 2, 7}, 100, false)
	if err != nil || s.Splits != 1 || s.Inserted != 1 || len(s.Touched) != 2 {
		t.Fatalf("%+v, %v", s, err)
	}
	if ev := tr.Events(); len(ev) != 0 {
		t.Fatalf("events off, yet %d recorded", len(ev))
	}
}
