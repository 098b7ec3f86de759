package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/inferlab/inferlab/server"
)

// compressHolding is what a file to compress holds, for messages.
const compressHolding = "what the server sends (web/app.wasm)"

// compressCmd writes FILE.br and FILE.gz beside each file for the server to
// send as they are (server.Compress); a file whose siblings already decode
// to it is skipped, so the build can run it every time.
func compressCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var quality textFlag
	fs.Var(&quality, "quality", "brotli quality, 0 to 11 (default 11: about 2 minutes on app.wasm; 6 takes seconds and is 15% larger)")
	giveOnce(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: inferlab compress [--quality 0-11] FILE...")
		return 2
	}
	q, err := strconv.Atoi(quality.or("11"))
	if err != nil || q < 0 || q > 11 {
		fmt.Fprintf(stderr, "inferlab compress: --quality = %q is not allowed: want an integer from 0 to 11\n", quality.value)
		return 2
	}
	// Every file is checked before any is read: a regular file of at most
	// server.MaxCompressBytes (`compress /dev/zero` once read 9.3 GB in
	// 30 s, and a named pipe waited forever).
	for _, f := range fs.Args() {
		st, err := os.Stat(f)
		if err == nil {
			err = boundedFile(st, compressHolding, server.MaxCompressBytes)
		}
		if err != nil {
			fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab compress: %s: %v", f, err)))
			return 2
		}
	}
	for _, f := range fs.Args() {
		if server.UpToDate(f) {
			fmt.Fprintf(stdout, "%s.br and %s.gz are up to date\n", f, f)
			continue
		}
		if err := server.Compress(f, q); err != nil {
			fmt.Fprintln(stderr, "inferlab compress:", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s.br (brotli quality %d) and %s.gz\n", f, q, f)
	}
	return 0
}
