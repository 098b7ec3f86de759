package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/inferlab/inferlab/server"
)

// staticCmd writes the site as static files (see server.WriteStatic for
// what it refuses and server.GenerateStatic for what a static host must do).
func staticCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("static", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var out, prefix, web textFlag
	fs.Var(&out, "out", "output directory (required): new, empty, or written by an earlier inferlab static")
	fs.Var(&prefix, "prefix", "sub-path the site is hosted under, e.g. /repo for https://user.github.io/repo/ (default: the host's root)")
	fs.Var(&web, "web", "directory with app.wasm, echarts.min.js, lab.css and icons (default web)")
	force := fs.Bool("force", false, "replace a non-empty --out that inferlab static did not write")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !out.set || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: inferlab static --out DIR [--prefix /repo] [--web web] [--force]")
		return 2
	}
	if _, err := server.CleanPrefix(prefix.value); err != nil {
		fmt.Fprintln(stderr, "inferlab", err)
		return 2
	}
	if err := server.WriteStatic(out.value, web.or("web"), server.StaticOptions{Prefix: prefix.value, Force: *force}); err != nil {
		fmt.Fprintln(stderr, "inferlab", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote the static site to %s\n", out.value)
	return 0
}
