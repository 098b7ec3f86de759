//go:build !wasm

package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func do(t *testing.T, h http.Handler, method, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// heavy are in-range knob settings that took the old server minutes and
// gigabytes to prerender, when pages were rendered for their query
// (smart-routing with 600 requests of 32,768-token prompts: 29.6 s,
// 2.1 GiB). The server must never run a simulation whose size a client
// chooses (docs/ARCHITECTURE.md#reliability).
var heavy = []string{
	"/lesson/smart-routing?requests=600&prompt_max=32768&prompt_min=16384",
	"/embed/smart-routing?requests=600&prompt_max=32768&step=3",
	"/lesson/measuring?duration_s=600",
	"/lesson/garage?requests=2000&output_min=100000&output_max=131071",
	"/lesson/sandbox?requests=2000&max_num_seqs=1",
}

// No request chooses what the server simulates: every page renders once per
// process at the defaults, whatever the query, and a path the lab does not
// have renders nothing. The count of renders is the assertion.
func TestQueryNeverRenders(t *testing.T) {
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, p := range heavy { // the first request of each page renders it
		path, _, _ := strings.Cut(p, "?")
		first[path] = body(t, get(t, h, path))
	}
	missing := get(t, h, "/nope", "Accept-Encoding", "gzip")
	if missing.StatusCode != 404 || !strings.Contains(body(t, missing), `id="not-found-home"`) {
		t.Errorf("/nope: %d; want 404 with the not-found page linking home", missing.StatusCode)
	}
	before := renders.Load()
	for i := 0; i < 3; i++ {
		for _, p := range heavy {
			r := get(t, h, p, "Accept-Encoding", "gzip")
			path, _, _ := strings.Cut(p, "?")
			if r.StatusCode != 200 || body(t, r) != first[path] {
				t.Errorf("%s: %d, or not the default page", p, r.StatusCode)
			}
		}
		for _, p := range []string{"/lesson/nosuch", "/lesson/nosuch/", "/embed/x.html", "/nope", "/lesson/garage/x", "/app.js/", "/index.htm"} {
			if r := get(t, h, p); r.StatusCode != 404 {
				t.Errorf("%s: %d, want 404", p, r.StatusCode)
			}
		}
		// Static hosts' addresses of a page get the page itself.
		for _, p := range []string{"/lesson/garage/", "/lesson/garage.html", "/lesson/garage/index.html"} {
			if body(t, get(t, h, p)) != first["/lesson/garage"] {
				t.Errorf("%s is not the page of /lesson/garage", p)
			}
		}
	}
	if n := renders.Load() - before; n != 0 {
		t.Errorf("%d renders after every page was rendered once; want 0", n)
	}
}

// A client that leaves while its page renders gets nothing and costs
// nothing more: the render finishes once and serves the next request.
func TestAbandonedRender(t *testing.T) {
	h, err := New(fakeWeb(t), Options{Version: "abandoned-test"}) // a fresh cache key: nothing rendered yet
	if err != nil {
		t.Fatal(err)
	}
	before := renders.Load()
	for i := 0; i < 5; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequest("GET", "/lesson/smart-routing?requests=600", nil).WithContext(ctx)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req) // returns at once, with or without the page
	}
	if r := get(t, h, "/lesson/smart-routing"); r.StatusCode != 200 {
		t.Fatalf("after abandoned requests: %d", r.StatusCode)
	}
	if n := renders.Load() - before; n != 1 {
		t.Errorf("%d renders for one page requested six times; want 1", n)
	}
}

// GET and HEAD only, on pages too (a POST used to render a page each time).
func TestMethods(t *testing.T) {
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := renders.Load()
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"} {
		for _, p := range []string{"/", "/lesson/garage?requests=2000", "/embed/garage", "/app.js", "/app-worker.js", "/web/lab.js", "/web/app.wasm", "/app.wasm", "/nope"} {
			r := do(t, h, m, p)
			if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d, Allow %q; want 405 and GET, HEAD", m, p, r.StatusCode, r.Header.Get("Allow"))
			}
		}
	}
	if n := renders.Load() - before; n != 0 {
		t.Errorf("refused methods rendered %d pages", n)
	}
	get := do(t, h, "GET", "/lesson/garage", "Accept-Encoding", "gzip")
	head := do(t, h, "HEAD", "/lesson/garage", "Accept-Encoding", "gzip")
	if head.StatusCode != 200 || head.Header.Get("ETag") != get.Header.Get("ETag") || head.Header.Get("Content-Length") != get.Header.Get("Content-Length") {
		t.Errorf("HEAD: %d %v; GET %v", head.StatusCode, head.Header, get.Header)
	}
	if b, _ := io.ReadAll(head.Body); len(b) != 0 {
		t.Errorf("HEAD sent %d bytes of body", len(b))
	}
}

// ETags name the content and the encoding; versioned files are immutable,
// everything else is revalidated; a conditional request gets 304.
func TestCachingHeaders(t *testing.T) {
	web := fakeWeb(t)
	h, err := New(web, Options{})
	if err != nil {
		t.Fatal(err)
	}
	etags := map[string]string{}
	for _, c := range []struct{ path, enc string }{
		{"/", ""}, {"/", "gzip"}, {"/", "br"}, {"/lesson/garage", ""}, {"/lesson/garage", "gzip"}, {"/embed/garage", "gzip"},
		{"/app.js", "gzip"}, {"/app.js", ""}, {"/web/lab.css", "gzip"}, {"/web/lab.css", ""}, {"/web/app.wasm", "gzip"}, {"/web/app.wasm", ""},
	} {
		r := get(t, h, c.path, "Accept-Encoding", c.enc)
		tag := r.Header.Get("ETag")
		if r.StatusCode != 200 || tag == "" || r.Header.Get("Content-Encoding") != c.enc {
			t.Errorf("%s (%q): %d, ETag %q, Content-Encoding %q", c.path, c.enc, r.StatusCode, tag, r.Header.Get("Content-Encoding"))
		}
		if other, dup := etags[tag]; dup {
			t.Errorf("%s (%q) has the ETag of %s", c.path, c.enc, other)
		}
		etags[tag] = c.path + " " + c.enc
		if cc := r.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("%s (%q): Cache-Control %q, want no-cache (no version in the address)", c.path, c.enc, cc)
		}
		if r304 := get(t, h, c.path, "Accept-Encoding", c.enc, "If-None-Match", tag); r304.StatusCode != http.StatusNotModified {
			t.Errorf("%s (%q) If-None-Match its ETag: %d, want 304", c.path, c.enc, r304.StatusCode)
		}
	}
	if r := get(t, h, "/lesson/garage", "Accept-Encoding", "gzip", "If-None-Match", get(t, h, "/lesson/garage").Header.Get("ETag")); r.StatusCode != 200 {
		t.Errorf("the identity ETag revalidated the gzip page: %d", r.StatusCode)
	}

	// The page and app.js name each file by its content hash; those
	// addresses are immutable, a stale or foreign version is not.
	page := body(t, get(t, h, "/"))
	appJS := body(t, get(t, h, "/app.js"))
	for _, name := range []string{"lab.css", "lab.js", "echarts.min.js", "icon.svg", "app.wasm", "sim.wasm", "sim-worker.js", "present.js"} {
		hash, err := fileHash(filepath.Join(web, name))
		if err != nil {
			t.Fatal(err)
		}
		addr := "/web/" + name + "?v=" + hash
		where := page
		if name == "app.wasm" {
			where = appJS
		}
		if name == "sim.wasm" || name == "sim-worker.js" || name == "present.js" {
			// lab.js reads them from meta tags (the simulation worker;
			// present.js, loaded at the first use of the teachers' tools).
			meta := map[string]string{"sim.wasm": "sim-wasm", "sim-worker.js": "sim-worker", "present.js": "present"}[name]
			addr = `<meta name="inferlab:` + meta + `" content="` + addr + `">`
		}
		if !strings.Contains(where, addr) {
			t.Errorf("%s is not asked for as %s", name, addr)
			continue
		}
		for _, enc := range []string{"", "gzip", "br"} {
			url := "/web/" + name + "?v=" + hash
			if r := get(t, h, url, "Accept-Encoding", enc); r.StatusCode != 200 || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
				t.Errorf("%s (%q): %d, Cache-Control %q", url, enc, r.StatusCode, r.Header.Get("Cache-Control"))
			}
		}
		if r := get(t, h, "/web/"+name+"?v=0123456789abcdef"); r.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s with a foreign version: Cache-Control %q", name, r.Header.Get("Cache-Control"))
		}
	}
	if r := get(t, h, "/app.wasm?v=x"); r.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("/app.wasm: Cache-Control %q", r.Header.Get("Cache-Control"))
	}
}

// Strict Accept-Encoding: an element whose q does not parse is no acceptance.
func TestAcceptEncodingStrict(t *testing.T) {
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for hdr, want := range map[string]string{"gzip;q=abc": "", "gzip;q=2": "", "gzip;q=0": "", "br;q=x, gzip": "gzip", "gzip, br": "br", "br;q=0.4, gzip;q=0.5": "gzip", "*": "br"} {
		for _, p := range []string{"/web/app.wasm", "/lesson/garage"} {
			want := want
			if p == "/web/app.wasm" && want == "br" {
				want = "gzip" // no app.wasm.br in this web directory: brotli only from the build
			}
			if r := get(t, h, p, "Accept-Encoding", hdr); r.Header.Get("Content-Encoding") != want {
				t.Errorf("%s with Accept-Encoding %q: Content-Encoding %q, want %q", p, hdr, r.Header.Get("Content-Encoding"), want)
			}
		}
	}
}

// Files only under /web/: a trailing slash is not the file, a directory is
// not listed.
func TestWebFilesOnly(t *testing.T) {
	web := fakeWeb(t)
	os.Mkdir(filepath.Join(web, "sub"), 0o755)
	os.WriteFile(filepath.Join(web, "sub", "x.txt"), []byte("x"), 0o644)
	h, err := New(web, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/web/lab.js/", "/web/app.wasm/", "/web/sub", "/web/sub/", "/web/", "/web"} {
		if r := get(t, h, p); r.StatusCode == 200 {
			t.Errorf("%s: 200", p)
		}
	}
	if r := get(t, h, "/web/sub/x.txt"); r.StatusCode != 200 {
		t.Errorf("/web/sub/x.txt: %d", r.StatusCode)
	}
}

// app.wasm is served brotli from a precompressed sibling that decodes to
// it, and never from one that does not (a stale build).
func TestWasmBrotliSibling(t *testing.T) {
	web := fakeWeb(t)
	raw, err := os.ReadFile(filepath.Join(web, "app.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Compress(filepath.Join(web, "app.wasm"), 5); err != nil {
		t.Fatal(err)
	}
	h, err := New(web, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "/web/app.wasm", "Accept-Encoding", "gzip, deflate, br")
	if r.Header.Get("Content-Encoding") != "br" || body(t, r) != string(raw) {
		t.Fatalf("wasm with a fresh .br: Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
	// A rebuilt wasm whose siblings were not rewritten: gzip computed here.
	raw2 := append(bytes.Clone(raw), "rebuilt"...)
	os.WriteFile(filepath.Join(web, "app.wasm"), raw2, 0o644)
	r = get(t, h, "/web/app.wasm", "Accept-Encoding", "gzip, br")
	if r.Header.Get("Content-Encoding") != "gzip" || body(t, r) != string(raw2) {
		t.Errorf("wasm with a stale .br: Content-Encoding %q", r.Header.Get("Content-Encoding"))
	}
}
