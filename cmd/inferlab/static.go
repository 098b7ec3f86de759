package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/inferlab/inferlab/server"
)

// staticCmd writes the site as static files (see server.GenerateStatic for
// what a static host must do).
func staticCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("static", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "output directory (required)")
	prefix := fs.String("prefix", "", "sub-path the site is hosted under, e.g. /repo for https://user.github.io/repo/")
	web := fs.String("web", "web", "directory with app.wasm, echarts.min.js, lab.css and icons")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: inferlab static --out DIR [--prefix /repo] [--web web]")
		return 2
	}
	if err := server.GenerateStatic(*out, *web, *prefix); err != nil {
		fmt.Fprintln(stderr, "inferlab static:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote the static site to %s\n", *out)
	return 0
}
