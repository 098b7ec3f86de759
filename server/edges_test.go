//go:build !wasm

package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fetch sends one request to srv with the given headers (no decompression
// by the client).
func fetch(t *testing.T, srv *httptest.Server, method, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// Ranges: one range of the uncompressed body is served; an empty suffix
// (bytes=-0) is 416, not a 206 with an inverted Content-Range; several
// ranges (3,000 one-byte ones made a 424 KB multipart body) and any range
// of a compressed answer get the whole body.
func TestRanges(t *testing.T) {
	web := fakeWeb(t)
	h, err := New(web, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	raw, _ := os.ReadFile(filepath.Join(web, "app.wasm"))
	size := strconv.Itoa(len(raw))

	r, b := fetch(t, srv, "GET", "/web/app.wasm", "Range", "bytes=10-19", "Accept-Encoding", "identity")
	if r.StatusCode != 206 || string(b) != string(raw[10:20]) || r.Header.Get("Content-Range") != "bytes 10-19/"+size {
		t.Errorf("one range: %d %q %q", r.StatusCode, r.Header.Get("Content-Range"), b)
	}
	for _, rg := range []string{"bytes=-0", "bytes= -000"} {
		r, _ = fetch(t, srv, "GET", "/web/app.wasm", "Range", rg, "Accept-Encoding", "identity")
		if r.StatusCode != http.StatusRequestedRangeNotSatisfiable || r.Header.Get("Content-Range") != "bytes */"+size || r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, Content-Range %q; want 416 and bytes */%s", rg, r.StatusCode, r.Header.Get("Content-Range"), size)
		}
	}
	var many []string
	for i := 0; i < 3000; i++ {
		many = append(many, fmt.Sprintf("%d-%d", 2*i, 2*i))
	}
	r, b = fetch(t, srv, "GET", "/web/app.wasm", "Range", "bytes="+strings.Join(many, ","), "Accept-Encoding", "identity")
	if r.StatusCode != 200 || len(b) != len(raw) || strings.Contains(r.Header.Get("Content-Type"), "multipart") {
		t.Errorf("3,000 ranges: %d, %s, %d bytes; want the whole file, 200", r.StatusCode, r.Header.Get("Content-Type"), len(b))
	}
	r, b = fetch(t, srv, "GET", "/web/app.wasm", "Range", "bytes=0-9", "Accept-Encoding", "gzip")
	if r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("Content-Length") != strconv.Itoa(len(b)) {
		t.Errorf("a range of the gzip body: %d %v, %d bytes; want the whole compressed body", r.StatusCode, r.Header, len(b))
	}
}

// Every whole answer says its length, compressed ones and HEAD included.
func TestContentLength(t *testing.T) {
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, path := range []string{"/web/app.wasm", "/web/lab.js", "/lesson/garage", "/embed/garage", "/app.js", "/"} {
		for _, enc := range []string{"br", "gzip", "identity"} {
			get, body := fetch(t, srv, "GET", path, "Accept-Encoding", enc)
			head, hb := fetch(t, srv, "HEAD", path, "Accept-Encoding", enc)
			n := strconv.Itoa(len(body))
			if get.StatusCode != 200 || get.Header.Get("Content-Length") != n || head.Header.Get("Content-Length") != n || len(hb) != 0 {
				t.Errorf("%s (%s, sent as %q): GET Content-Length %q, HEAD %q; body %s bytes", path, enc, get.Header.Get("Content-Encoding"),
					get.Header.Get("Content-Length"), head.Header.Get("Content-Length"), n)
			}
		}
	}
}
