package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/inferlab/inferlab/server"
)

// Timeouts of the HTTP server. Requests carry no body (GET and HEAD only),
// so reading one takes a header's worth of time. Writing is sized for the
// largest file: app.wasm, about 11 MB uncompressed for a client that
// accepts no compression, in 2 minutes is 0.75 Mbit/s (2.4 MB brotli: 0.16
// Mbit/s). An idle keep-alive connection is closed after a minute.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 20 * time.Second
	writeTimeout      = 2 * time.Minute
	idleTimeout       = 60 * time.Second
	// Up to server.HTTPMaxHeaderBytes reach the handler, which answers a
	// request over server.MaxRequestHeaderBytes (64 KiB; a lesson address
	// with every knob is about 300 bytes) with the lab's 431 page instead
	// of Go's bare one.
	maxHeaderBytes = server.HTTPMaxHeaderBytes
)

// serveMemoryLimit is the soft limit on the Go runtime's memory that
// `inferlab serve` sets (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT
// is set. Prerendering a page builds its lesson (the roofline page
// allocates 590 MB, the site's 82 documents 3.7 GB) while the server
// keeps what it rendered and the web files' encodings (45 MB of live heap
// once every page is), and the default collector (GOGC=100) let the heap
// grow to twice what it held: 260 to 350 MB resident in the first seconds.
// Near the limit the collector runs sooner (3-4% of the CPU under the
// load benchmark), and the process stays under 200 MB from start through
// its first page and the load benchmark (BENCHMARKS.md, "Server under
// load").
const serveMemoryLimit = 150 << 20

// newHTTPServer is the server `inferlab serve` runs.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// "OPTIONS *" reaches the handler, which answers 405 with the CSP
		// like every other method but GET and HEAD; Go's own handler
		// answered 200 without it.
		DisableGeneralOptionsHandler: true,
	}
}

// serveCmd runs the lab's web server: prerendered pages, compressed app.wasm,
// CSP headers (package server).
func serveCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var addrFlag, webFlag, baseFlag textFlag
	fs.Var(&addrFlag, "addr", "address to listen on (default 127.0.0.1:8080)")
	fs.Var(&baseFlag, "base-url", "the site's public address, e.g. https://lab.example.org, which link previews (og:url, og:image) name (default: none, those tags left out)")
	fs.Var(&webFlag, "web", "directory with app.wasm, echarts.min.js, lab.css and icons (default web)")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	addr := addrFlag.or("127.0.0.1:8080")
	if _, err := net.ResolveTCPAddr("tcp", addr); err != nil {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab serve: --addr = %q is not allowed: want host:port, e.g. 127.0.0.1:8080 (%v)", addr, err)))
		return 2
	}
	if _, err := server.CleanBaseURL(baseFlag.value); err != nil {
		fmt.Fprintln(stderr, printable("inferlab serve: "+err.Error()))
		return 2
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
	h, err := server.New(webFlag.or("web"), server.Options{Log: stderr, Warm: true, BaseURL: baseFlag.value})
	if err != nil {
		fmt.Fprintln(stderr, printable("inferlab serve: "+err.Error()))
		if webFlag.set {
			return 2 // the directory given is none
		}
		return 1
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		fmt.Fprintf(stderr, "inferlab serve: %s is in use (another inferlab serve?): pick another address with --addr 127.0.0.1:8081 (make run ADDR=127.0.0.1:8081)\n", addr)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "inferlab serve:", err)
		return 1
	}
	srv := newHTTPServer(h)
	fmt.Fprintf(stdout, "Inference Lab on http://%s/\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(stderr, "inferlab serve:", err)
			return 1
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return 0
}
