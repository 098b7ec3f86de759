//go:build !wasm

package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// assets serves the files of the web directory with Content-Encoding
// negotiation: text-like files (the wasm, scripts, styles, SVG) are gzipped
// once and kept in memory, keyed by path, size and modification time, so a
// rebuilt app.wasm is picked up without a restart. A fresh precompressed
// sibling (app.wasm.br, app.wasm.gz, newer than the file) is used as is,
// which is how brotli gets served: the standard library only writes gzip.
type assets struct {
	dir string
	log io.Writer
}

// compressible lists the extensions worth compressing.
var compressible = map[string]bool{".wasm": true, ".js": true, ".css": true, ".svg": true, ".json": true, ".txt": true, ".xml": true, ".webmanifest": true, ".html": true}

type encoded struct {
	once sync.Once
	body []byte
	etag string
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

// warm starts compressing a file in the background, so the first request
// for app.wasm does not wait for it.
func (a *assets) warm(name string) {
	full := filepath.Join(a.dir, name)
	st, err := os.Stat(full)
	if err != nil {
		return
	}
	go a.variant(full, st, "gzip")
}

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := path.Clean("/" + r.URL.Path)
	if strings.Contains(name, "\x00") {
		http.NotFound(w, r)
		return
	}
	full := filepath.Join(a.dir, filepath.FromSlash(name))
	st, err := os.Stat(full)
	if err != nil || st.IsDir() {
		http.NotFound(w, r)
		return
	}
	ext := strings.ToLower(filepath.Ext(full))
	ctype := mime.TypeByExtension(ext)
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set("Cache-Control", "no-cache")
	if compressible[ext] {
		hd.Add("Vary", "Accept-Encoding")
		accept := r.Header.Get("Accept-Encoding")
		for _, enc := range []string{"br", "gzip"} {
			if !accepts(accept, enc) {
				continue
			}
			e := a.variant(full, st, enc)
			if e == nil || e.err != nil {
				continue
			}
			hd.Set("Content-Encoding", enc)
			hd.Set("ETag", e.etag)
			http.ServeContent(w, r, "", st.ModTime(), bytes.NewReader(e.body))
			return
		}
	}
	e := a.variant(full, st, "identity")
	if e == nil || e.err != nil {
		a.logf("serving %s: %v", name, e.err)
		http.Error(w, "cannot read file", http.StatusInternalServerError)
		return
	}
	hd.Set("ETag", e.etag)
	http.ServeContent(w, r, "", st.ModTime(), bytes.NewReader(e.body))
}

// variant returns the file's bytes in one encoding, computing them once per
// file version. br only comes from a fresh precompressed sibling.
func (a *assets) variant(full string, st os.FileInfo, enc string) *encoded {
	k := assetKey{full, st.Size(), st.ModTime(), enc}
	v, _ := assetCache.LoadOrStore(k, &encoded{})
	e := v.(*encoded)
	e.once.Do(func() {
		var body []byte
		var err error
		switch enc {
		case "identity":
			body, err = os.ReadFile(full)
		case "br":
			body, err = a.sibling(full, st, ".br")
		case "gzip":
			body, err = a.sibling(full, st, ".gz")
			if err != nil {
				var raw []byte
				raw, err = os.ReadFile(full)
				if err == nil {
					body, err = gzipBytes(raw)
				}
			}
		}
		if err != nil {
			e.err = err
			return
		}
		sum := sha256.Sum256(body)
		e.body = body
		e.etag = `"` + hex.EncodeToString(sum[:8]) + "-" + enc + `"`
	})
	return e
}

// sibling reads FILE.ext when it exists and is not older than FILE.
func (a *assets) sibling(full string, st os.FileInfo, ext string) ([]byte, error) {
	sst, err := os.Stat(full + ext)
	if err != nil {
		return nil, err
	}
	if sst.ModTime().Before(st.ModTime()) {
		return nil, fmt.Errorf("%s%s is older than %s", full, ext, full)
	}
	return os.ReadFile(full + ext)
}

func gzipBytes(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// accepts reports whether an Accept-Encoding header allows enc (q>0).
func accepts(header, enc string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), enc) {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q <= 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}

func (a *assets) logf(format string, args ...any) {
	if a.log != nil {
		fmt.Fprintf(a.log, "server: "+format+"\n", args...)
	}
}
