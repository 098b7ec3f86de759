package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestServeCmdBadArgs(t *testing.T) {
	var out, errb bytes.Buffer
	if code := serveCmd([]string{"--nope"}, &out, &errb); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
	errb.Reset()
	if code := serveCmd([]string{"extra"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "extra") {
		t.Errorf("extra argument: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := serveCmd([]string{"--web", t.TempDir() + "/missing"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "not found") {
		t.Errorf("missing web dir: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := serveCmd([]string{"--addr", "256.0.0.1:bad", "--web", t.TempDir()}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `--addr = "256.0.0.1:bad" is not allowed`) {
		t.Errorf("bad address: exit %d, %q", code, errb.String())
	}
}

// Idle keep-alive connections are closed and slow clients cut off (issue
// 14: 200 idle connections were held for 40 s, none closed).
func TestServeTimeouts(t *testing.T) {
	s := newHTTPServer(http.NotFoundHandler())
	if s.IdleTimeout <= 0 || s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.MaxHeaderBytes <= 0 {
		t.Fatalf("server timeouts: %+v", s)
	}
	// The write timeout lets the raw wasm (11 MB) through at 1 Mbit/s.
	if s.WriteTimeout < 90*time.Second || s.IdleTimeout > 2*time.Minute {
		t.Errorf("write timeout %v, idle timeout %v", s.WriteTimeout, s.IdleTimeout)
	}
}

// A port in use says how to pick another.
func TestServePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	web := t.TempDir()
	os.WriteFile(filepath.Join(web, "app.wasm"), []byte("\x00asm"), 0o644)
	var out, errb bytes.Buffer
	code := serveCmd([]string{"--addr", ln.Addr().String(), "--web", web}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "is in use") || !strings.Contains(errb.String(), "--addr 127.0.0.1:8081") || !strings.Contains(errb.String(), "make run ADDR=") {
		t.Errorf("port in use: exit %d, %q", code, errb.String())
	}
	for _, args := range [][]string{{"--addr", ""}, {"--web", ""}, {"--addr", "a", "--addr", "b"}} {
		errb.Reset()
		if code := serveCmd(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, %q", args, code, errb.String())
		}
	}
}

func TestCompressCmd(t *testing.T) {
	f := filepath.Join(t.TempDir(), "app.wasm")
	os.WriteFile(f, bytes.Repeat([]byte("wasm bytes "), 1000), 0o644)
	var out, errb bytes.Buffer
	if code := compressCmd([]string{"--quality", "4", f}, &out, &errb); code != 0 || !strings.Contains(out.String(), "wrote") {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	for _, ext := range []string{".br", ".gz"} {
		if _, err := os.Stat(f + ext); err != nil {
			t.Errorf("%s: %v", ext, err)
		}
	}
	out.Reset()
	if code := compressCmd([]string{"--quality", "4", f}, &out, &errb); code != 0 || !strings.Contains(out.String(), "up to date") {
		t.Errorf("second run: exit %d: %s", code, out.String())
	}
	for _, args := range [][]string{{}, {"--quality", "12", f}, {"--quality", "x", f}, {"--quality", "", f}} {
		errb.Reset()
		if code := compressCmd(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, %q", args, code, errb.String())
		}
	}
}

// The Docker HEALTHCHECK: 0 when the server answers /, 1 when it does not,
// 2 for a non-loopback address.
func TestHealthCmd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var out, errb bytes.Buffer
	if code := healthCmd([]string{"--addr", addr}, &out, &errb); code != 0 {
		t.Errorf("healthy server: exit %d, %s", code, errb.String())
	}
	srv.Close()
	if code := healthCmd([]string{"--addr", addr, "--timeout", "2s"}, &out, &errb); code != 1 {
		t.Errorf("stopped server: exit %d", code)
	}
	for _, a := range []string{"example.org:80", "10.0.0.1:8080", "", "nonsense"} {
		errb.Reset()
		if code := healthCmd([]string{"--addr", a}, &out, &errb); code != 2 {
			t.Errorf("--addr %q: exit %d, %s", a, code, errb.String())
		}
	}
}
