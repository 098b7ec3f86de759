package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// healthCmd asks a running `inferlab serve` for its index page: exit 0 on
// 200 within the timeout, 1 otherwise. The Docker image's HEALTHCHECK uses
// it (the image has no curl). Only a loopback address is accepted: it
// checks the server beside it, nothing else.
func healthCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var addrFlag textFlag
	fs.Var(&addrFlag, "addr", "the server's loopback address (default 127.0.0.1:8080)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab health: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	addr := addrFlag.or("127.0.0.1:8080")
	host, port, err := net.SplitHostPort(addr)
	// A port out of range is refused here with exit 2, as serve refuses
	// it, rather than tried and reported down (exit 1).
	n, perr := strconv.Atoi(port)
	badPort := perr != nil || n < 1 || n > 65535 || strings.TrimLeft(port, "0123456789") != ""
	if ip := net.ParseIP(host); err != nil || badPort || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab health: --addr = %q is not allowed: want a loopback host:port with a port from 1 to 65535, e.g. 127.0.0.1:8080", addr)))
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		fmt.Fprintln(stderr, "inferlab health:", err)
		return 1
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	r, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "inferlab health:", err)
		return 1
	}
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "inferlab health: GET http://%s/ answered %s\n", addr, r.Status)
		return 1
	}
	fmt.Fprintf(stdout, "ok: http://%s/ answered 200\n", addr)
	return 0
}
