// Command wasmsize says what a Go WebAssembly binary is made of: the bytes
// of each section and of each package's function bodies, largest first.
// It reads the "name" custom section, so build without -s (the lab's
// `make wasm` strips it):
//
//	GOOS=js GOARCH=wasm go build -trimpath -o /tmp/app.wasm ./wasm
//	go run ./cmd/wasmsize [-top 40] /tmp/app.wasm
//
// A function's package is read from its symbol name (see pkgOf).
// Data (the data section: strings, tables, type descriptors) is reported as
// one line; it is not split by package.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

func main() {
	top := flag.Int("top", 40, "packages to list")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: wasmsize [-top N] FILE.wasm")
		os.Exit(2)
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err == nil {
		err = report(os.Stdout, b, *top)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmsize:", err)
		os.Exit(1)
	}
}

type reader struct{ b []byte }

func (r *reader) uleb() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		panic(errors.New("bad LEB128"))
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		panic(errors.New("truncated"))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

var sectionNames = []string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "datacount"}

func report(w io.Writer, b []byte, top int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return errors.New("not a WebAssembly module")
	}
	r := &reader{b[8:]}
	var bodies []int
	names := map[uint64]string{}
	imported := uint64(0)
	type sec struct {
		name string
		size int
	}
	var secs []sec
	for len(r.b) > 0 {
		id := r.b[0]
		r.b = r.b[1:]
		size := r.uleb()
		body := &reader{r.bytes(size)}
		name := "unknown"
		if int(id) < len(sectionNames) {
			name = sectionNames[id]
		}
		switch id {
		case 0:
			n := body.uleb()
			cname := string(body.bytes(n))
			name = "custom " + cname
			if cname == "name" {
				for len(body.b) > 0 {
					sub := body.b[0]
					body.b = body.b[1:]
					sz := body.uleb()
					s := &reader{body.bytes(sz)}
					if sub != 1 {
						continue
					}
					for c := s.uleb(); c > 0; c-- {
						idx := s.uleb()
						l := s.uleb()
						names[idx] = string(s.bytes(l))
					}
				}
			}
		case 2:
			for c := body.uleb(); c > 0; c-- {
				body.bytes(body.uleb())
				body.bytes(body.uleb())
				kind := body.b[0]
				body.b = body.b[1:]
				switch kind {
				case 0:
					body.uleb()
					imported++
				case 1:
					body.b = body.b[1:]
					if body.b[0]&1 != 0 {
						body.b = body.b[1:]
						body.uleb()
						body.uleb()
					} else {
						body.b = body.b[1:]
						body.uleb()
					}
				case 2:
					if body.b[0]&1 != 0 {
						body.b = body.b[1:]
						body.uleb()
						body.uleb()
					} else {
						body.b = body.b[1:]
						body.uleb()
					}
				case 3:
					body.b = body.b[2:]
				}
			}
		case 10:
			for c := body.uleb(); c > 0; c-- {
				n := body.uleb()
				body.bytes(n)
				bodies = append(bodies, int(n))
			}
		}
		secs = append(secs, sec{name, int(size)})
	}
	fmt.Fprintf(w, "%-40s %12s\n", "section", "bytes")
	for _, s := range secs {
		fmt.Fprintf(w, "%-40s %12d\n", s.name, s.size)
	}
	fmt.Fprintf(w, "%-40s %12d\n\n", "total", len(b))
	if len(names) == 0 {
		return errors.New("no name section: build without -ldflags=-s")
	}
	byPkg := map[string]int{}
	for i, n := range bodies {
		byPkg[pkgOf(names[imported+uint64(i)])] += n
	}
	type kv struct {
		k string
		v int
	}
	var list []kv
	total := 0
	for k, v := range byPkg {
		list = append(list, kv{k, v})
		total += v
	}
	sort.Slice(list, func(i, j int) bool { return list[i].v > list[j].v || list[i].v == list[j].v && list[i].k < list[j].k })
	fmt.Fprintf(w, "%-60s %10s %6s\n", "package (function bodies)", "bytes", "share")
	for i, e := range list {
		if i == top {
			break
		}
		fmt.Fprintf(w, "%-60s %10d %5.1f%%\n", e.k, e.v, 100*float64(e.v)/float64(total))
	}
	fmt.Fprintf(w, "%-60s %10d\n", "all function bodies", total)
	return nil
}

// pkgOf is the package part of a function's name in the name section, where
// Go writes "/" as "_" and "(*T)" as "__T_": the text before the first "."
// after a leading host name ("github.com_…", "golang.org_…").
func pkgOf(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	skip := 0
	if m := host.FindStringIndex(name); m != nil {
		skip = m[1]
	}
	if i := strings.Index(name[skip:], "."); i >= 0 {
		return name[:skip+i]
	}
	return name
}

var host = regexp.MustCompile(`^[a-z0-9-]+\.(com|org|io|net|in|dev)_`)
