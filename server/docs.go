//go:build !wasm

package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/inferlab/inferlab/app"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// renderSlots bounds how many documents go-app renders at once, across
// every handler of the process. A lesson page's first render builds the
// lesson at its defaults (up to about a second of CPU); with the set of
// documents fixed, this also bounds the total: each renders once.
const renderSlots = 2

var renderSem = make(chan struct{}, renderSlots)

// renders counts go-app renders in this process (tests assert on it).
var renders atomic.Int64

// site serves go-app's documents: the prerendered pages and the files go-app
// generates (app.js, app-worker.js, wasm_exec.js, app.css, the manifest).
// The set is fixed by the lesson registry; each document is rendered once
// per process, with no query string and no request headers, so a request
// can neither choose what is simulated nor grow the cache. Any other path
// is 404, with the app's not-found page.
type site struct {
	app    *goapp.Handler
	base   string            // the site's public address, for link previews (preview.go); "" if unknown
	config string            // what renders depend on besides the path
	docs   map[string]string // served path → the document rendered for it
	log    io.Writer
}

// goappFiles are the files go-app generates, with their aliases.
var goappFiles = map[string]string{
	"/app.js": "/app.js", "/goapp.js": "/app.js",
	"/app-worker.js":        "/app-worker.js",
	"/wasm_exec.js":         "/wasm_exec.js",
	"/app.css":              "/app.css",
	"/manifest.webmanifest": "/manifest.webmanifest", "/manifest.json": "/manifest.webmanifest",
}

// newSite configures go-app for the files of dir; prefix is "" for the
// live server, the sub-path for a static site; publicURL is the site's
// public address for link previews ("": none).
func newSite(dir, version, prefix, publicURL string) (*site, error) {
	versions, err := fileVersions(dir)
	if err != nil {
		return nil, err
	}
	var base goapp.ResourceResolver = webResolver{}
	if prefix != "" {
		base = goapp.PrefixedLocation(prefix)
	}
	h, err := newAppHandler(dir, version, versioned{base: base, versions: versions})
	if err != nil {
		return nil, err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "prefix=%s base=%s version=%s", prefix, publicURL, h.Version)
	keys := make([]string, 0, len(versions))
	for k := range versions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&cfg, " %s=%s", k, versions[k])
	}
	s := &site{app: h, base: publicURL, config: cfg.String(), docs: map[string]string{"/": "/", "/index.html": "/"}}
	for p, d := range goappFiles {
		s.docs[p] = d
	}
	// A page is also reachable as /lesson/SLUG/, /lesson/SLUG.html and
	// /lesson/SLUG/index.html (the addresses static hosts use); they get
	// the page of /lesson/SLUG, whose og:url is the canonical address.
	for _, p := range app.Paths() {
		if p == "/" {
			continue
		}
		for _, alias := range []string{p, p + "/", p + ".html", p + "/index.html"} {
			s.docs[alias] = p
		}
	}
	for _, p := range dataPaths() {
		s.docs[p] = p
	}
	return s, nil
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := s.docs[r.URL.Path]
	if !ok {
		s.notFound(w, r)
		return
	}
	d := s.doc(r, name)
	if d == nil {
		return // the client left while the document rendered
	}
	if d.status != http.StatusOK {
		s.logf("rendering %s: status %d", name, d.status)
		http.Error(w, http.StatusText(d.status), d.status)
		return
	}
	// Revalidated: pages and app.js name the versioned files, and the worker
	// must be checked for updates.
	serveVariants(w, r, d.ctype, "no-cache", d.vars)
}

// notFound answers 404 with the app's not-found page (the site's chrome,
// every lesson linked), rendered once like any page; once the app starts,
// its router shows the same page for the address asked for.
func (s *site) notFound(w http.ResponseWriter, r *http.Request) {
	d := s.doc(r, app.NotFoundPath)
	if d == nil {
		return // the client left while the page rendered
	}
	if d.status != http.StatusOK {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", d.ctype)
	hd.Set("Cache-Control", "no-cache")
	if len(d.vars) > 1 {
		hd.Add("Vary", "Accept-Encoding")
	}
	enc := negotiate(strings.Join(r.Header.Values("Accept-Encoding"), ","), d.vars)
	if enc != "identity" {
		hd.Set("Content-Encoding", enc)
	}
	body := d.vars[enc].body
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// doc is one rendered document and its encodings.
type doc struct {
	status int
	ctype  string
	vars   variants
	// data are a lesson page's data documents, cut out of it and encoded
	// (pagedata.go); nil for every other document.
	data []variants
}

type docKey struct{ config, path string }

type docEntry struct {
	once sync.Once
	done chan struct{}
	d    *doc
}

var docCache sync.Map // docKey → *docEntry, shared by every handler of the process

// doc returns the document for path, rendering it on first use. A caller
// whose request ends (r's context) stops waiting and gets nil; the render
// goes on and is cached for the next. With r nil it waits.
func (s *site) doc(r *http.Request, path string) *doc {
	v, _ := docCache.LoadOrStore(docKey{s.config, path}, &docEntry{})
	e := v.(*docEntry)
	e.once.Do(func() {
		e.done = make(chan struct{})
		go func() {
			defer close(e.done)
			if _, _, ok := dataOf(path); ok {
				e.d = s.dataDoc(path) // waits for its page's render, taking no slot
				return
			}
			d, texts := s.renderInSlot(path)
			if d.status == http.StatusOK {
				// Outside the slot: compressing a lesson's data (3.5 MB for
				// garage) is no render, and held the next page's render back.
				d.data = encodeData(path, texts)
			}
			e.d = d
		}()
	})
	if r == nil {
		<-e.done
		return e.d
	}
	select {
	case <-e.done:
		return e.d
	case <-r.Context().Done():
		return nil
	}
}

// renderInSlot renders path in one of the renderSlots.
func (s *site) renderInSlot(path string) (*doc, []string) {
	renderSem <- struct{}{}
	defer func() { <-renderSem }()
	return s.render(path)
}

// render asks go-app for path with a bare GET: no query, no headers. It
// returns the data cut out of a lesson page (cutData) beside the page.
func (s *site) render(path string) (d *doc, data []string) {
	defer func() {
		if p := recover(); p != nil {
			s.logf("rendering %s: panic: %v", path, p)
			d, data = &doc{status: http.StatusInternalServerError}, nil
		}
	}()
	renders.Add(1)
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return &doc{status: http.StatusInternalServerError}, nil
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	s.app.ServeHTTP(rec, req)
	d = &doc{status: rec.status, ctype: rec.header.Get("Content-Type")}
	if d.status == http.StatusOK {
		if d.ctype == "" {
			d.ctype = http.DetectContentType(rec.body.Bytes())
		}
		if strings.HasPrefix(d.ctype, "text/html") && !strings.Contains(d.ctype, "charset") {
			d.ctype = "text/html; charset=utf-8"
		}
		body := rec.body.Bytes()
		if path == "/app.js" {
			var ok bool
			if body, ok = patchAppJS(body); !ok {
				// The page would start the wasm at load: still a working lab.
				s.logf("go-app's app.js changed: the deferred start (loader.go) does not apply")
			}
		}
		if strings.HasPrefix(d.ctype, "text/html") {
			body = withPreview(body, s.base, path)
			body, data = cutData(body)
			body = []byte(app.PrerenderedARIA(string(body)))
		}
		d.vars = encodeAll(body, textual(d.ctype))
	}
	return d, data
}

// warm renders every document, each once.
func (s *site) warm() {
	seen := map[string]bool{}
	for _, p := range s.docs {
		if !seen[p] {
			seen[p] = true
			s.doc(nil, p)
		}
	}
}

func (s *site) logf(format string, args ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, "server: "+format+"\n", args...)
	}
}

// recorder captures one response of go-app's handler.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}

func textual(ct string) bool {
	ct = strings.ToLower(ct)
	return strings.HasPrefix(ct, "text/") || strings.Contains(ct, "javascript") || strings.Contains(ct, "json") ||
		strings.Contains(ct, "xml") || strings.Contains(ct, "manifest") || strings.Contains(ct, "wasm")
}
