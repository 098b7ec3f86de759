package router

import (
	"slices"
	"testing"
)

func TestRoundRobin(t *testing.T) {
	ws := []WorkerState{{ID: 4}, {ID: 9}, {ID: 2}}
	r := NewRoundRobin()
	var got []int
	for range 7 {
		got = append(got, r.Route(Request{}, ws).Worker)
	}
	if want := []int{4, 9, 2, 4, 9, 2, 4}; !slices.Equal(got, want) {
		t.Fatalf("round robin %v, want %v", got, want)
	}
	if d := r.Route(Request{}, nil); d.Worker != -1 {
		t.Fatal("round robin with no workers")
	}
}

func TestRandomSeeded(t *testing.T) {
	ws := []WorkerState{{ID: 0}, {ID: 1}, {ID: 2}, {ID: 3}}
	draw := func(seed uint64) []int {
		r := NewRandom(seed)
		var out []int
		for range 100 {
			out = append(out, r.Route(Request{}, ws).Worker)
		}
		return out
	}
	a := draw(42)
	if !slices.Equal(a, draw(42)) {
		t.Fatal("same seed, different draws")
	}
	if slices.Equal(a, draw(43)) {
		t.Fatal("different seeds, same draws")
	}
	for _, w := range ws {
		if !slices.Contains(a, w.ID) {
			t.Fatalf("worker %d never drawn in 100", w.ID)
		}
	}
}

func TestLeastLoaded(t *testing.T) {
	for _, tc := range []struct {
		ws   []WorkerState
		want int
	}{
		{[]WorkerState{{ID: 0, Running: 3}, {ID: 1, Running: 1, Waiting: 1}, {ID: 2, Running: 4}}, 1},
		{[]WorkerState{{ID: 5, Running: 2}, {ID: 3, Running: 2}, {ID: 4, Waiting: 3}}, 3}, // tie → lowest id
		{[]WorkerState{{ID: 7}}, 7},
	} {
		if d := (LeastLoaded{}).Route(Request{}, tc.ws); d.Worker != tc.want {
			t.Errorf("%+v: chose %d, want %d", tc.ws, d.Worker, tc.want)
		}
	}
}

func TestActiveLoad(t *testing.T) {
	l := NewActiveLoad(16)
	h := chain(1, 2, 3)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.Add(0, Request{ID: 1, Tokens: 48, Hashes: h}, 1))     // 32 tokens to prefill
	must(l.Add(0, Request{ID: 2, Tokens: 40, Hashes: h[:2]}, 0)) // 40, shares two blocks
	must(l.Add(1, Request{ID: 3, Tokens: 10, Hashes: nil}, 5))   // fully cached: 0
	if err := l.Add(1, Request{ID: 3}, 0); err == nil {
		t.Fatal("request added twice")
	}
	if l.Tokens(0) != 72 || l.Blocks(0) != 3 || l.Requests(0) != 2 || l.Tokens(1) != 0 {
		t.Fatalf("worker 0: %d tokens %d blocks %d requests", l.Tokens(0), l.Blocks(0), l.Requests(0))
	}
	ws := []WorkerState{{ID: 0}, {ID: 1}, {ID: 2}}
	l.Fill(ws)
	if ws[0].ActiveTokens != 72 || ws[0].ActiveBlocks != 3 || ws[0].ActiveHashes[h[0]] != 2 || ws[2].ActiveBlocks != 0 {
		t.Fatalf("fill %+v", ws)
	}
	must(l.Check())
	must(l.PrefillDone(1))
	must(l.PrefillDone(1)) // idempotent
	if l.Tokens(0) != 40 {
		t.Fatalf("after first token of request 1: %d tokens, want 40", l.Tokens(0))
	}
	must(l.Free(2)) // never marked: its prefill leaves too
	if l.Tokens(0) != 0 || l.Blocks(0) != 3 {
		t.Fatalf("after freeing 2: %d tokens %d blocks", l.Tokens(0), l.Blocks(0))
	}
	must(l.Free(1))
	must(l.Free(3))
	for w := range 2 {
		if l.Tokens(w) != 0 || l.Blocks(w) != 0 || l.Requests(w) != 0 {
			t.Fatalf("worker %d not back to zero after every request finished", w)
		}
	}
	if err := l.Free(3); err == nil {
		t.Fatal("freed twice")
	}
	must(l.Check())
}
