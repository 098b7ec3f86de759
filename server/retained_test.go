//go:build !wasm

package server

import (
	"runtime"
	"strings"
	"testing"
)

// The documents the server keeps are what it sends: a lesson page, its
// embed and its two data documents hold, after the renders, about the
// bytes of their encodings and no more. The data cut out of a page was
// kept as substrings of the whole page, for the lesson page and for the
// embed, whose data nothing serves: 3.6 MB each for garage, 14 MB over
// the site, on top of the data documents' own copies.
func TestSiteRetainsWhatItServes(t *testing.T) {
	registerRoutes()
	s, err := newSite(fakeWeb(t), "retained-"+t.Name(), "", "") // its own version: rendered afresh
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/lesson/garage", "/embed/garage", "/data/garage.script.txt", "/data/garage.steps.json"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	docs := make([]*doc, len(paths))
	for i, p := range paths {
		if docs[i] = s.doc(nil, p); docs[i] == nil || docs[i].status != 200 {
			t.Fatalf("%s: %+v", p, docs[i])
		}
	}
	// The least of three collections: work of other goroutines still
	// live at one of them (a loaded machine's test run) is not the
	// documents'.
	after.HeapAlloc = ^uint64(0)
	for range 3 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		after.HeapAlloc = min(after.HeapAlloc, m.HeapAlloc)
	}
	held := 0
	seen := map[*variant]bool{}
	for _, d := range docs {
		vs := []variants{d.vars}
		vs = append(vs, d.data...)
		for _, v := range vs {
			for _, x := range v {
				if x != nil && !seen[x] {
					seen[x] = true
					held += len(x.body)
				}
			}
		}
	}
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(held)*5/4 + 1<<20; retained > limit {
		t.Errorf("the garage documents hold %d bytes of encodings; the heap grew by %d, over %d", held, retained, limit)
	}
	runtime.KeepAlive(docs)
}

// brotliBytes' window is the smallest that holds the input, up to 4 MiB
// (a window of 2^w bytes holds 2^w - 16): a larger one found nothing more
// and its hash table cost 32 MB per compression at the best quality.
func TestBrotliWindow(t *testing.T) {
	for n, want := range map[int]int{0: 10, 1000: 10, 1008: 10, 1009: 11, 93222: 17, 715020: 20, 1<<20 - 16: 20, 1<<20 - 15: 21, 4<<20 - 16: 22, 12 << 20: 22} {
		if got := brotliWindow(n); got != want {
			t.Errorf("brotliWindow(%d) = %d, want %d", n, got, want)
		}
	}
	raw := []byte(strings.Repeat("the lab's stylesheet, more or less; ", 3000))
	br, err := brotliBytes(raw, 11)
	if err != nil || !decodes(br, "br", raw) {
		t.Errorf("brotliBytes at a %d-byte window does not decode back: %v", 1<<brotliWindow(len(raw)), err)
	}
}
