package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/server"
)

// "OPTIONS *" on the server `inferlab serve` runs is refused like every
// method but GET and HEAD (405, with the CSP): Go's built-in handler
// answered it 200 without the CSP.
func TestServeOptionsStar(t *testing.T) {
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	h, err := server.New(web, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	srv := newHTTPServer(h)
	go srv.Serve(ln)
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "OPTIONS * HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", ln.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Content-Security-Policy") != server.CSP || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("OPTIONS *: %d, %v; want 405 with the CSP", resp.StatusCode, resp.Header)
	}
}

// An address over 64 KiB gets the lab's 431 page, on a lesson page, an
// embed page and anything else: the site's look, a notice with the sizes,
// a link to the page at its defaults; Go's bare 35-byte answer had none.
func TestServeLongAddress(t *testing.T) {
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	h, err := server.New(web, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	srv := newHTTPServer(h)
	go srv.Serve(ln)
	defer srv.Close()
	long := "?x=" + strings.Repeat("a", 70<<10)
	for _, c := range []struct{ path, link string }{
		{"/lesson/garage", `href="/lesson/garage">Open “` + html.EscapeString(lessons.Get("garage").Title) + `” at its defaults`},
		{"/embed/garage", `href="/embed/garage">Open “`},
		{"/nope", `href="/">All lessons`},
		{"/web/lab.css", `href="/">All lessons`},
	} {
		resp, err := http.Get("http://" + ln.Addr().String() + c.path + long)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page := string(b)
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Security-Policy") != server.CSP ||
			!strings.Contains(page, `<link rel="stylesheet" href="/web/lab.css">`) || !strings.Contains(page, `class="site-header"`) ||
			!strings.Contains(page, "the lab reads at most 65,536") || !strings.Contains(page, c.link) {
			t.Errorf("%s with a 70 KiB query: %d, %.300q", c.path, resp.StatusCode, page)
		}
	}
	// Below the bound the page is served as ever.
	resp, err := http.Get("http://" + ln.Addr().String() + "/lesson/garage?x=" + strings.Repeat("a", 60<<10))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("a 60 KiB query: %d", resp.StatusCode)
	}
}
