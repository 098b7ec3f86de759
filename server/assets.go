//go:build !wasm

package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// assets serves the files of the web directory with Content-Encoding
// negotiation: text-like files (the wasm, scripts, styles, SVG) are
// compressed once and kept in memory, keyed by path, size and modification
// time, so a rebuilt app.wasm is picked up without a restart. Brotli comes
// from a precompressed sibling (app.wasm.br, written at build time by
// `inferlab compress`: quality 11 takes minutes on the wasm); gzip from a
// sibling app.wasm.gz or, without one, is computed here. A sibling is used
// only if it decodes to exactly the file's bytes.
//
// A request whose ?v= is the file's content hash (the addresses the pages
// use) is cached for a year as immutable; any other is revalidated.
type assets struct {
	dir string
	log io.Writer
}

// brotliHereMax is the largest file compressed with brotli here when it has
// no precompressed sibling: every script and stylesheet (ECharts, 715 kB,
// takes about two seconds at quality 11, once per file version); a wasm file
// is brotli only from its build's sibling (minutes at quality 11).
const brotliHereMax = 2 << 20

// brotliHere lets one file at a time be compressed with brotli here, at
// quality 11: each compression holds tens of MB while it runs (66 MB
// allocated for echarts.min.js), and the first requests for every script
// and stylesheet, arriving together, ran them all at once.
var brotliHere = make(chan struct{}, 1)

// compressible lists the extensions worth compressing.
var compressible = map[string]bool{".wasm": true, ".js": true, ".css": true, ".svg": true, ".json": true, ".txt": true, ".xml": true, ".webmanifest": true, ".html": true}

// Cache-Control values.
const (
	immutable   = "public, max-age=31536000, immutable"
	revalidated = "no-cache"
)

type encoded struct {
	once sync.Once
	v    *variant
	err  error
}

type assetKey struct {
	path string
	size int64
	mod  time.Time
	enc  string
}

var assetCache sync.Map // assetKey → *encoded (shared by every handler of the process)

func init() {
	_ = mime.AddExtensionType(".wasm", "application/wasm")
	_ = mime.AddExtensionType(".webmanifest", "application/manifest+json")
}

// webFile reports whether name (a clean slash path under dir, "/lab.js")
// is a file of the site, and returns its information: a regular file
// reached through no symbolic link below dir, and not a precompressed
// sibling (FILE.br, FILE.gz), which is sent only as FILE's encoding. These
// are the files WriteStatic copies (copyDir), so the server and a static
// site serve the same ones: the server once followed a link that the
// static copy left out.
func webFile(dir, name string) (os.FileInfo, bool) {
	if strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz") {
		return nil, false
	}
	p := dir
	var st os.FileInfo
	for _, part := range strings.Split(strings.Trim(name, "/"), "/") {
		p = filepath.Join(p, part)
		var err error
		if st, err = os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink != 0 {
			return nil, false
		}
	}
	return st, st != nil && st.Mode().IsRegular()
}

// warm computes a file's encodings, so the first request for app.wasm
// does not wait for them.
func (a *assets) warm(name string) {
	full := filepath.Join(a.dir, name)
	st, ok := webFile(a.dir, "/"+name)
	if !ok {
		return
	}
	for _, enc := range append([]string{"identity"}, encodings...) {
		a.variant(full, st, enc)
	}
}

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Files only: no directory listings, and no file under an address with a
	// trailing slash (/web/lab.js/ is not lab.js).
	if strings.HasSuffix(r.URL.Path, "/") || strings.Contains(r.URL.Path, "\x00") {
		http.NotFound(w, r)
		return
	}
	name := path.Clean("/" + r.URL.Path)
	full := filepath.Join(a.dir, filepath.FromSlash(name))
	st, ok := webFile(a.dir, name)
	if !ok {
		http.NotFound(w, r)
		return
	}
	ext := strings.ToLower(filepath.Ext(full))
	ctype := mime.TypeByExtension(ext)
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	raw := a.variant(full, st, "identity")
	if raw.err != nil {
		a.logf("serving %s: %v", name, raw.err)
		http.Error(w, "cannot read file", http.StatusInternalServerError)
		return
	}
	vs := variants{"identity": raw.v}
	if compressible[ext] {
		for _, enc := range encodings {
			if e := a.variant(full, st, enc); e.err == nil {
				vs[enc] = e.v
			}
		}
	}
	cache := revalidated
	if v := r.URL.Query().Get("v"); v != "" && strings.HasPrefix(raw.v.hash, v) && len(v) >= 16 {
		cache = immutable
	}
	serveVariants(w, r, ctype, cache, vs)
}

// variant returns the file's bytes in one encoding, computing them once per
// file version.
func (a *assets) variant(full string, st os.FileInfo, enc string) *encoded {
	v, _ := assetCache.LoadOrStore(assetKey{full, st.Size(), st.ModTime(), enc}, &encoded{})
	e := v.(*encoded)
	e.once.Do(func() {
		if enc == "identity" {
			body, err := os.ReadFile(full)
			if err == nil && int64(len(body)) != st.Size() {
				err = fmt.Errorf("%s changed while it was read", full)
			}
			if err != nil {
				e.err = err
				return
			}
			e.v = newVariant(body, enc)
			return
		}
		raw := a.variant(full, st, "identity")
		if raw.err != nil {
			e.err = raw.err
			return
		}
		body, err := a.sibling(full, enc, raw.v.body)
		switch {
		case err == nil:
		case enc == "gzip":
			body, err = gzipBytes(raw.v.body)
		case enc == "br" && len(raw.v.body) <= brotliHereMax && filepath.Ext(full) != ".wasm":
			brotliHere <- struct{}{}
			body, err = brotliBytes(raw.v.body, 11)
			<-brotliHere
		}
		if err != nil {
			e.err = err
			return
		}
		e.v = newVariant(body, enc)
	})
	return e
}

// siblingExt names the precompressed sibling of each encoding.
var siblingExt = map[string]string{"br": ".br", "gzip": ".gz"}

// sibling reads FILE.br or FILE.gz when it decodes to the file's bytes.
func (a *assets) sibling(full, enc string, raw []byte) ([]byte, error) {
	p := full + siblingExt[enc]
	body, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if !decodes(body, enc, raw) {
		a.logf("ignoring %s: it does not decode to %s (rebuild with `make build`)", p, filepath.Base(full))
		return nil, errors.New(p + " is stale")
	}
	return body, nil
}

func (a *assets) logf(format string, args ...any) {
	if a.log != nil {
		fmt.Fprintf(a.log, "server: "+format+"\n", args...)
	}
}
