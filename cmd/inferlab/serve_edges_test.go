package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

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
