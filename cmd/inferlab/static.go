package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/inferlab/inferlab/server"
)

// staticCmd writes the site as static files (see server.WriteStatic for
// what it refuses and server.GenerateStatic for what a static host must do).
// SIGINT or SIGTERM stops it: what it was writing beside --out is removed
// and --out is left as it was (exit 130 or 143); an --out it will not write
// exits 2.
func staticCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("static", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var out, prefix, web, base textFlag
	fs.Var(&out, "out", "output directory (required): new, empty, or written by an earlier inferlab static")
	fs.Var(&prefix, "prefix", "sub-path the site is hosted under, e.g. /repo for https://user.github.io/repo/ (default: the host's root)")
	fs.Var(&web, "web", "directory with app.wasm, echarts.min.js, lab.css and icons (default web)")
	fs.Var(&base, "base-url", "the site's public address, its sub-path included, e.g. https://user.github.io/repo, which link previews (og:url, og:image) name (default: none, those tags left out)")
	// Kept so that scripts that pass it still run; a directory inferlab
	// static did not write is refused whatever it says.
	fs.Bool("force", false, "no effect: --out is replaced only when inferlab static wrote it or it is empty")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab static: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if !out.set {
		fmt.Fprintln(stderr, "usage: inferlab static --out DIR [--prefix /repo] [--base-url https://host/repo] [--web web]")
		return 2
	}
	if _, err := server.CleanPrefix(prefix.value); err != nil {
		fmt.Fprintln(stderr, "inferlab", err)
		return 2
	}
	if _, err := server.CleanBaseURL(base.value); err != nil {
		fmt.Fprintln(stderr, printable("inferlab static: "+err.Error()))
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case got = <-sigs:
			cancel()
		case <-done:
		}
	}()
	err := server.WriteStaticContext(ctx, out.value, web.or("web"), server.StaticOptions{Prefix: prefix.value, BaseURL: base.value, Log: messages{stderr}})
	close(done)
	if err != nil {
		fmt.Fprintln(stderr, printable("inferlab "+err.Error()))
		var refused *server.StaticRefusal
		switch {
		case errors.As(err, &refused):
			return 2
		case ctx.Err() != nil:
			if s, ok := got.(syscall.Signal); ok {
				return 128 + int(s)
			}
			return 1
		}
		return 1
	}
	fmt.Fprintf(stdout, "wrote the static site to %s\n", printable(out.value))
	return 0
}
