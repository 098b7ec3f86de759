// Command inferlab is the lab's native binary: it serves the site, writes it
// out as a static site, and runs lessons from the command line.
//
//	inferlab serve  [--addr 127.0.0.1:8080]      serve the lab (prerendered, app.wasm compressed)
//	inferlab static --out DIR [--prefix /repo] [--force]   write a static site
//	inferlab compress [--quality 0-11] FILE...   write FILE.br and FILE.gz for serve
//	inferlab health [--addr 127.0.0.1:8080]      exit 0 when the server beside it answers (Docker HEALTHCHECK)
//	inferlab run SLUG [--set k=v ...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]
//	inferlab diff SLUG [--set k=v ...] --vs k=v [...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]
//	                                             the same lesson twice on one seed: metrics side by side
//	inferlab replay DIR [--gpu h100-sxm] [--format text|json]   replay a measured vLLM benchmark whole
//	inferlab list [--format text|json]           list the lessons
//	inferlab bench [--runs N] [--only TEXT] [--format text|json]   time the core and lesson scenarios
//	inferlab bench --corners [--runs N] [--only LESSON]   every lesson's heaviest settings: time and peak memory
package main

import (
	"fmt"
	"io"
	"os"

	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serveCmd(args[1:], stdout, stderr)
	case "static":
		return staticCmd(args[1:], stdout, stderr)
	case "health":
		return healthCmd(args[1:], stdout, stderr)
	case "compress":
		return compressCmd(args[1:], stdout, stderr)
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "diff":
		return diffCmd(args[1:], stdout, stderr)
	case "replay":
		return replayCmd(args[1:], stdout, stderr)
	case "list":
		return listCmd(args[1:], stdout, stderr)
	case "bench":
		return benchCmd(args[1:], stdout, stderr)
	case "bench-corner": // hidden: the child of bench --corners
		return benchCornerCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "inferlab help: unexpected argument %q\n", args[1])
			return 2
		}
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "inferlab: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  inferlab serve  [--addr 127.0.0.1:8080]
  inferlab static --out DIR [--prefix /repo] [--force]
  inferlab compress [--quality 0-11] FILE...
  inferlab health [--addr 127.0.0.1:8080]
  inferlab run SLUG [--set key=value ...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]
  inferlab diff SLUG [--set key=value ...] --vs key=value [--vs ...] [--seed N] [--model-config FILE] [--gpu-config FILE] [--format text|json]
  inferlab replay DIR [--gpu h100-sxm] [--format text|json]
  inferlab list [--format text|json]
  inferlab bench  [--runs N] [--only TEXT] [--format text|json] [--list] [--corners]
`)
}
