//go:build !wasm

// Package server builds the lab's native HTTP handler and static site. It is
// the only place that touches go-app's app.Handler and net/http, and it never
// compiles into app.wasm (that would double the wasm's size:
// docs/SOURCES.md#go-app).
//
// New returns the live handler. Its cost never depends on what a client
// asks: every page is prerendered once per process at the lesson's
// defaults, whatever the query string (the query only changes what the wasm
// computes in the browser, as on a static host), and kept in memory with its
// gzip and brotli forms; prerendering runs at most renderSlots at a time.
// Only GET and HEAD are served. The files of the web directory are sent
// compressed with Content-Encoding negotiation; the page asks for app.wasm,
// the scripts, the stylesheet and the icons with their content hash in the
// URL (?v=…), and those answers are cached immutably, while pages, app.js
// and the worker are revalidated (ETag per content and encoding). Every
// response carries the Content-Security-Policy in CSP. GenerateStatic writes
// the same site as files for static hosts.
package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/inferlab/inferlab/app"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Options tunes New. The zero value serves what `inferlab serve` serves;
// serve also sets Warm.
type Options struct {
	// Version overrides the app version (by default a hash of the files in
	// the web directory that the service worker caches, so a restart of the
	// same build is not an "update").
	Version string
	// Log receives one line per failed request to an asset or page; nil
	// discards.
	Log io.Writer
	// Warm prerenders every page in the background as New returns (at most
	// renderSlots at a time), so the first visitor of a lesson does not wait
	// for its build. Without it a page is rendered on its first request.
	Warm bool
	// BaseURL is the site's public address (http(s)://host[/sub-path]),
	// which link previews name (og:url, og:image: preview.go); "" leaves
	// them out. See CleanBaseURL.
	BaseURL string
}

// CSP is the Content-Security-Policy of every response. Scripts come only
// from the site itself; 'wasm-unsafe-eval' lets Go's WebAssembly compile; no
// inline scripts are used (go-app's page loads app.js and wasm_exec.js as
// files). Inline styles are allowed because go-app writes style attributes
// (segment widths) and ECharts styles its tooltip; they cannot run code.
// frame-ancestors * lets any page embed a lesson (/embed/SLUG); there is no
// X-Frame-Options header.
const CSP = "default-src 'self'; " +
	"script-src 'self' 'wasm-unsafe-eval'; " +
	"style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; " +
	"font-src 'self'; " +
	"connect-src 'self'; " +
	"worker-src 'self'; " +
	"manifest-src 'self'; " +
	"object-src 'none'; " +
	"base-uri 'self'; " +
	"form-action 'self'; " +
	"frame-ancestors *"

var registerOnce sync.Once

// registerRoutes registers the app's routes with go-app once per process.
func registerRoutes() { registerOnce.Do(app.Register) }

// New returns the lab's HTTP handler serving the files of webDir (app.wasm,
// echarts.min.js, lab.css, icons) under /web/. webDir may be absolute or
// relative; a relative directory that does not exist from the working
// directory is looked up from the module root (so tests running in e2e/ can
// pass "web").
func New(webDir string, opts Options) (http.Handler, error) {
	dir, err := FindWebDir(webDir)
	if err != nil {
		return nil, err
	}
	registerRoutes()
	base, err := CleanBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	s, err := newSite(dir, opts.Version, "", base)
	if err != nil {
		return nil, err
	}
	s.log = opts.Log
	files := &assets{dir: dir, log: opts.Log}
	// One file at a time, in the background: each holds its encodings
	// while checking a sibling (app.wasm's decoded .br beside the file),
	// and seven at once held 196 MB of heap a quarter second after start.
	go func() {
		for _, f := range []string{"app.wasm", "sim.wasm", "lab.css", "lab.js", "echarts.min.js", "sim-worker.js", "present.js"} {
			files.warm(f)
		}
	}()
	if opts.Warm {
		go s.warm()
	}

	mux := http.NewServeMux()
	mux.Handle("/web/", http.StripPrefix("/web", files))
	wasm := func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/app.wasm"
		r2.URL.RawQuery = "" // never the immutable answer: this address has no version
		files.ServeHTTP(w, r2)
	}
	mux.HandleFunc("/app.wasm", wasm)
	mux.HandleFunc("/goapp.wasm", wasm)
	for _, p := range []string{"/robots.txt", "/sitemap.xml", "/ads.txt"} {
		mux.Handle(p, files) // served from web/ when present, else 404
	}
	mux.Handle("/", s)
	return secure(limitHeaders(getOrHead(mux))), nil
}

// getOrHead answers 405 to every method but GET and HEAD: nothing the lab
// serves changes state, and no request should cost a render.
func getOrHead(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: this site answers GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secure adds the security headers to every response.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		next.ServeHTTP(w, r)
	})
}

// newAppHandler configures go-app's handler. res resolves /web/... paths:
// the site's root for the live server, a prefix for static generation.
func newAppHandler(dir, version string, res goapp.ResourceResolver) (*goapp.Handler, error) {
	if version == "" {
		v, err := Version(dir)
		if err != nil {
			return nil, err
		}
		version = v
	}
	wasmLen := ""
	if st, err := os.Stat(filepath.Join(dir, "app.wasm")); err == nil {
		wasmLen = strconv.FormatInt(st.Size(), 10)
	}
	// Offline after one visit: every lesson page (the embed pages boot from
	// one of them, see worker.go), the SVG icon, which go-app's own list
	// leaves out although every page links it, and the simulation worker
	// with its wasm when the build has them.
	pages := []string{"/web/icon.svg"}
	for _, p := range app.Paths() {
		if p != "/" && strings.HasPrefix(p, "/lesson/") {
			pages = append(pages, p)
		}
	}
	pages = append(pages, dataPaths()...) // each lesson's script and steps (pagedata.go)
	// The page's simulation worker (web/lab.js, inferlab.sim) takes its
	// files' addresses from these meta tags, so that they carry their
	// content hash too.
	var head []string
	// ECharts (1.1 MB of script) is loaded when the first chart is drawn
	// or once the page is live (web/lab.js, inferlab.loadCharts), not in
	// the head, where its evaluation held the page's start.
	// app-wasm: web/lab.js preloads it as it starts the app (app.js fetches
	// the same address).
	// present: web/lab.js loads web/present.js (presenter mode, the
	// handout, image export) at the first use of one of them.
	for _, f := range []struct{ meta, file string }{{"sim-worker", "sim-worker.js"}, {"sim-wasm", "sim.wasm"}, {"echarts", "echarts.min.js"}, {"app-wasm", "app.wasm"}, {"present", "present.js"}} {
		if _, err := os.Stat(filepath.Join(dir, f.file)); err == nil {
			pages = append(pages, "/web/"+f.file)
			head = append(head, `<meta name="inferlab:`+f.meta+`" content="`+html.EscapeString(res.Resolve("/web/"+f.file))+`">`)
		}
	}
	// No preload of app.wasm: the page runs without it until the reader
	// uses something only the app does (loader.go).
	// lab.js comes last in the head, not in Handler.Scripts (which go-app
	// writes before RawHeaders): it reads the meta tags above as it runs,
	// when an address with knobs starts its simulation before the page is
	// parsed; ahead of them it asked for the unversioned sim.wasm, which the
	// service worker does not hold, so such a page failed offline. No
	// "defer": the DOM helpers of lab.js must exist before the wasm's
	// components mount, and it sets the theme before the first paint.
	pages = append(pages, "/web/lab.js")
	head = append(head, `<script src="`+html.EscapeString(res.Resolve("/web/lab.js"))+`"></script>`)
	return &goapp.Handler{
		Name:            "Inference Lab",
		ShortName:       "Inference Lab",
		Title:           "Inference Lab",
		Description:     "Interactive lessons on LLM serving: KV-cache paging, scheduling, kernels and routing, computed by one Go model.",
		Lang:            "en",
		BackgroundColor: "#0f172a",
		ThemeColor:      "#0f172a",
		LoadingLabel:    "Starting the interactive lab… {progress}%",
		Icon: goapp.Icon{
			Default:  "/web/icon-192.png",
			Large:    "/web/icon-512.png",
			Maskable: "/web/icon-192.png",
			SVG:      "/web/icon.svg",
		},
		Styles:                []string{"/web/lab.css"},
		CacheableResources:    pages,
		Version:               version,
		WasmContentLength:     wasmLen,
		ServiceWorkerTemplate: ReloadingWorker,
		Resources:             res,
		RawHeaders:            head,
	}, nil
}

// webResolver resolves /web/... paths to themselves (the site root is "/"),
// like go-app's LocalDir(""), but serves nothing: package server serves the
// files so it can compress them.
type webResolver struct{}

func (webResolver) Resolve(location string) string {
	if location == "" || location == "/" {
		return "/"
	}
	if remote(location) {
		return location
	}
	if location == "web" || location == "/web" || strings.HasPrefix(location, "web/") || strings.HasPrefix(location, "/web/") {
		return "/" + strings.Trim(location, "/")
	}
	return location
}

func remote(location string) bool {
	return strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://")
}

// versioned adds ?v=HASH to the address of each web file it knows, so that
// the page, app.js (the wasm's address) and the worker's list name each
// file's content: a new build is a new address, and an address can be
// cached for good.
type versioned struct {
	base     goapp.ResourceResolver
	versions map[string]string // "/web/lab.js" → content hash
}

func (v versioned) Resolve(location string) string {
	out := v.base.Resolve(location)
	if remote(location) {
		return out
	}
	if h, ok := v.versions["/"+strings.Trim(location, "/")]; ok {
		out += "?v=" + h
	}
	return out
}

// cachedFiles are the files of web/ that the service worker caches; the
// version hashes them, so a change to any of them is an update. Pages ask
// for each with its content hash in the address.
var cachedFiles = []string{"app.wasm", "echarts.min.js", "lab.js", "lab.css", "icon-192.png", "icon-512.png", "icon.svg", "sim.wasm", "sim-worker.js", "present.js"}

// fileVersions hashes each of cachedFiles that exists.
func fileVersions(webDir string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range cachedFiles {
		h, err := fileHash(filepath.Join(webDir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out["/web/"+name] = h
	}
	return out, nil
}

// fileHash is the first 16 hex digits of a file's SHA-256.
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Version is a short hash of the web files the service worker caches (the
// wasm first). The same build gives the same version across restarts.
func Version(webDir string) (string, error) {
	h := sha256.New()
	for _, name := range cachedFiles {
		f, err := os.Open(filepath.Join(webDir, name))
		if errors.Is(err, os.ErrNotExist) {
			io.WriteString(h, name+":missing\n")
			continue
		}
		if err != nil {
			return "", err
		}
		io.WriteString(h, name+"\n")
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// FindWebDir returns the web directory to serve: webDir itself if it exists,
// otherwise (for a relative path) webDir under the nearest parent directory
// that holds this module's go.mod.
func FindWebDir(webDir string) (string, error) {
	if webDir == "" {
		webDir = "web"
	}
	if st, err := os.Stat(webDir); err == nil && st.IsDir() {
		return filepath.Abs(webDir)
	}
	if !filepath.IsAbs(webDir) {
		if wd, err := os.Getwd(); err == nil {
			for d := wd; ; d = filepath.Dir(d) {
				if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/inferlab/inferlab") {
					cand := filepath.Join(d, webDir)
					if st, err := os.Stat(cand); err == nil && st.IsDir() {
						return cand, nil
					}
					break
				}
				if filepath.Dir(d) == d {
					break
				}
			}
		}
	}
	return "", fmt.Errorf("server: web directory %q not found (run from the repository root, or pass an absolute path)", webDir)
}
