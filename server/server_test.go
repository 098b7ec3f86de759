//go:build !wasm

package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/inferlab/inferlab/lessons"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// fakeWeb makes a web directory with a stand-in app.wasm (the tests do not
// need a real build) and the repository's CSS and icons when present.
func fakeWeb(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wasm := bytes.Repeat([]byte("\x00asm fake wasm body "), 5000)
	if err := os.WriteFile(filepath.Join(dir, "app.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sim.wasm"), bytes.Repeat([]byte("\x00asm fake sim "), 3000), 0o644)
	for _, f := range []string{"lab.css", "lab.js", "embed.js", "icon.svg", "icon-192.png", "icon-512.png", "sim-worker.js", "present.js"} {
		if b, err := os.ReadFile(filepath.Join("..", "web", f)); err == nil {
			os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
	}
	os.WriteFile(filepath.Join(dir, "echarts.min.js"), []byte("window.echarts={};"), 0o644)
	return dir
}

func get(t *testing.T, h http.Handler, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	var rd io.Reader = r.Body
	switch r.Header.Get("Content-Encoding") {
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		rd = zr
	case "br":
		rd = brotli.NewReader(r.Body)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWorkerPatched(t *testing.T) {
	if !strings.Contains(goapp.DefaultAppWorkerJS, workerInstallFrom) || !strings.Contains(goapp.DefaultAppWorkerJS, workerMatchFrom) ||
		!strings.Contains(goapp.DefaultAppWorkerJS, workerFetchFrom) {
		t.Fatal("go-app's worker template changed: update the patches in worker.go")
	}
	if !strings.Contains(ReloadingWorker, workerInstallTo) || strings.Contains(ReloadingWorker, workerInstallFrom) {
		t.Error(`install does not take versioned addresses in the default mode and revalidate the others`)
	}
	if !strings.Contains(ReloadingWorker, workerMatchTo) || strings.Contains(ReloadingWorker, workerMatchFrom) {
		t.Error("navigations do not ignore the query")
	}
	if !strings.Contains(ReloadingWorker, workerFetchTo) || strings.Count(ReloadingWorker, "return await fetch(request);") != 1 {
		t.Error("offline navigations get no cached shell")
	}
	if !strings.Contains(ReloadingWorker, "{{.Version}}") || !strings.Contains(ReloadingWorker, "{{.ResourcesToCache}}") {
		t.Error("the patched worker lost go-app's versioning")
	}
}

func TestServer(t *testing.T) {
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "/")
	if r.StatusCode != 200 {
		t.Fatalf("GET / = %d", r.StatusCode)
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self' 'wasm-unsafe-eval'", "frame-ancestors *", "object-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-eval'") && !strings.Contains(csp, "wasm-unsafe-eval") {
		t.Error("CSP allows eval")
	}
	if r.Header.Get("X-Frame-Options") != "" {
		t.Error("X-Frame-Options set: embeds need framing")
	}
	page := body(t, r)
	for _, l := range lessons.All() {
		if !strings.Contains(page, `href="/lesson/`+l.Slug+`"`) {
			t.Errorf("index lacks a link to %s", l.Slug)
		}
	}
	for _, want := range []string{`/web/lab.css?v=`, `<meta name="inferlab:echarts" content="/web/echarts.min.js?v=`, `/web/icon.svg?v=`} {
		if !strings.Contains(page, want) {
			t.Errorf("index lacks %q", want)
		}
	}
	if strings.Contains(page, "raw.githubusercontent.com") {
		t.Error("page references a remote icon")
	}

	// Compressed wasm with negotiation.
	r = get(t, h, "/web/app.wasm", "Accept-Encoding", "br;q=0, gzip")
	if r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("wasm: %d %v", r.StatusCode, r.Header)
	}
	if r.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("wasm content type %q", r.Header.Get("Content-Type"))
	}
	if got := body(t, r); !strings.HasPrefix(got, "\x00asm fake") {
		t.Errorf("gzip body does not decode to the wasm")
	}
	r = get(t, h, "/web/app.wasm")
	if r.Header.Get("Content-Encoding") != "" || r.ContentLength != 100000 {
		t.Errorf("identity wasm: %v len %d", r.Header, r.ContentLength)
	}
	r = get(t, h, "/app.wasm", "Accept-Encoding", "gzip")
	if r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("/app.wasm: %d %v", r.StatusCode, r.Header)
	}
	// go-app's own text resources are compressed too; progress uses the raw size.
	r = get(t, h, "/app.js", "Accept-Encoding", "gzip")
	js := body(t, r)
	if r.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(js, `goappWasmContentLength = "100000"`) {
		t.Errorf("app.js: %v, content length missing", r.Header)
	}
	r = get(t, h, "/app-worker.js")
	w := body(t, r)
	if !strings.Contains(w, workerInstallTo) {
		t.Error("served worker is not the patched one")
	}
	// The wasm and the worker start when the page asks, not at load.
	if !strings.Contains(js, "window.goappStart = function") || strings.Contains(js, appStartFrom) {
		t.Error("served app.js starts the wasm at load: the deferred start (loader.go) did not apply")
	}
	if strings.Contains(body(t, get(t, h, "/lesson/garage")), `rel="preload"`) {
		t.Error("a lesson page preloads a file it does not need before the app starts")
	}
	// Offline: the worker caches every lesson page and every file a page loads.
	for _, l := range lessons.All() {
		if !strings.Contains(w, `"/lesson/`+l.Slug+`"`) {
			t.Errorf("the worker does not cache /lesson/%s", l.Slug)
		}
	}
	for _, f := range []string{"/web/icon.svg", "/web/lab.js", "/web/lab.css", "/web/echarts.min.js", "/web/app.wasm", "/web/sim.wasm", "/web/sim-worker.js"} {
		if !strings.Contains(w, `"`+f+`?v=`) {
			t.Errorf("the worker does not cache %s", f)
		}
	}
	// The host pages' embed helper.
	r = get(t, h, "/web/embed.js")
	if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Type"), "javascript") || !strings.Contains(body(t, r), "inferlab:height") {
		t.Errorf("/web/embed.js: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := get(t, h, "/web/missing.txt"); r.StatusCode != 404 {
		t.Errorf("missing file: %d", r.StatusCode)
	}
	if r := get(t, h, "/web/../server.go"); r.StatusCode == 200 {
		t.Error("path escapes the web directory")
	}
}

func TestLessonPagePrerendered(t *testing.T) {
	l := lessons.Get("garage")
	if l == nil {
		t.Skip("no garage lesson yet")
	}
	s, _, err := l.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "/lesson/garage", "Accept-Encoding", "gzip")
	page := body(t, r)
	if r.StatusCode != 200 {
		t.Fatalf("GET /lesson/garage = %d", r.StatusCode)
	}
	first := s.Steps[0].Narration
	if len(first) > 60 {
		first = first[:60]
	}
	for _, want := range []string{`id="lab"`, `data-live="false"`, `data-lesson="garage"`, `data-step="1"`, `id="narration"`, `id="notice"`, `id="params"`} {
		if !strings.Contains(page, want) {
			t.Errorf("lesson page lacks %q", want)
		}
	}
	if !strings.Contains(page, escape(first)) {
		t.Errorf("lesson page lacks step 1's narration %q", first)
	}
	// The query never reaches the prerender: any query gets the page of the
	// defaults (the wasm then reads the address), byte for byte.
	for _, q := range []string{"?step=2&block_size=banana", "?requests=2000&prompt_max=131071&step=9"} {
		r2 := get(t, h, "/lesson/garage"+q, "Accept-Encoding", "gzip")
		if r2.Header.Get("ETag") != r.Header.Get("ETag") || body(t, r2) != page {
			t.Errorf("/lesson/garage%s: not the default page", q)
		}
	}
}

// TestLearnerPagesPrerendered: the page shell (search, theme toggle,
// shortcuts dialog, update slot, embed chrome) is in the prerendered HTML,
// and no attribute is written as ="false" (which HTML reads as true).
// hide= and find= are applied by the wasm (e2e), never by the prerender.
func TestLearnerPagesPrerendered(t *testing.T) {
	if lessons.Get("cow-fork") == nil {
		t.Skip("no cow-fork lesson")
	}
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	page := body(t, get(t, h, "/embed/cow-fork?step=2&hide=controls,narration"))
	for _, want := range []string{`id="controls"`, `id="narration-panel"`, `class="page lab embed`, `class="open-full"`, `id="keys-dialog"`, `id="update"`, `data-step="1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("embed page lacks %q", want)
		}
	}
	if strings.Contains(page, `id="search"`) {
		t.Error("the embed page has the site search")
	}
	if page != body(t, get(t, h, "/embed/cow-fork")) {
		t.Error("the embed page's query changed the prerendered page")
	}
	page = body(t, get(t, h, "/lesson/cow-fork?find=copy+on+write"))
	for _, want := range []string{`id="search"`, `role="combobox"`, `id="btn-theme"`, `id="btn-copy-link"`, `id="btn-copy-embed"`, `id="btn-export-json"`, `id="embed-panel"`, `id="checkpoint"`, `id="quiz-verdict"`} {
		if !strings.Contains(page, want) {
			t.Errorf("lesson page lacks %q", want)
		}
	}
	for _, bad := range []string{`hidden="false"`, `disabled="false"`, `checked="false"`} {
		if strings.Contains(page, bad) {
			t.Errorf("lesson page writes %s", bad)
		}
	}
}

func escape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

func TestVersionStable(t *testing.T) {
	dir := fakeWeb(t)
	a, _ := Version(dir)
	b, _ := Version(dir)
	if a == "" || a != b {
		t.Fatalf("versions %q %q", a, b)
	}
	os.WriteFile(filepath.Join(dir, "app.wasm"), []byte("other"), 0o644)
	if c, _ := Version(dir); c == a {
		t.Error("a new wasm kept the version")
	}
}

func TestFindWebDir(t *testing.T) {
	if _, err := FindWebDir(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("missing dir: no error")
	}
	// From this package's directory, "web" resolves to the module's web/.
	d, err := FindWebDir("web")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(d) != "web" {
		t.Errorf("FindWebDir(web) = %s", d)
	}
}

func TestAccepts(t *testing.T) {
	for h, want := range map[string]bool{
		"gzip": true, "br, gzip;q=0.5": true, "gzip;q=0": false, "identity": false, "GZIP": true, "deflate, gzip ; q=0.0": false,
		"gzip;q=abc": false, "gzip;q=": false, "gzip;q": false, "gzip;q=2": false, "gzip;q=1.5": false, "gzip;q=0.5555": false,
		"gzip;q=-1": false, "gzip;level=9": false, "gzip;q=1.000": true, "gzip;q=0.001": true, "gzip;Q=0.2": true,
		"*": true, "*;q=0": false, "gzip;q=0, *": false, "br, *;q=0.1": true, "": false, "gzip;q=abc, *;q=0.3": true,
	} {
		if accepts(h, "gzip") != want {
			t.Errorf("accepts(%q, gzip) != %v", h, want)
		}
	}
	vs := variants{"identity": {}, "gzip": {}, "br": {}}
	for h, want := range map[string]string{"gzip, br": "br", "gzip, br;q=0.5": "gzip", "gzip;q=abc": "identity", "br;q=0, gzip": "gzip", "": "identity", "identity": "identity"} {
		if got := negotiate(h, vs); got != want {
			t.Errorf("negotiate(%q) = %s, want %s", h, got, want)
		}
	}
}

// A lesson page and its embed carry neither their default script nor their
// steps: each lesson's are documents of their own, listed for the service
// worker (pagedata.go).
func TestPageDataApart(t *testing.T) {
	h, err := New(fakeWeb(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/lesson/prefix-cache", "/embed/prefix-cache"} {
		page := body(t, get(t, h, p, "Accept-Encoding", "br"))
		if strings.Contains(page, `id="script-data"`) || strings.Contains(page, `id="steps-data"`) {
			t.Errorf("%s still carries its script or its steps", p)
		}
		if !strings.Contains(page, `id="lab"`) || !strings.Contains(page, `id="narration"`) {
			t.Errorf("%s lost its own markup", p)
		}
	}
	script := get(t, h, "/data/prefix-cache.script.txt", "Accept-Encoding", "br")
	if s := body(t, script); script.StatusCode != 200 || !strings.HasPrefix(s, `{"key":`) || script.Header.Get("Content-Encoding") != "br" {
		t.Errorf("/data/prefix-cache.script.txt: %d %v %.80q", script.StatusCode, script.Header, s)
	}
	steps := get(t, h, "/data/prefix-cache.steps.json")
	if s := body(t, steps); steps.StatusCode != 200 || !strings.HasPrefix(s, `{"parts":["narration-panel","scenes"]`) {
		t.Errorf("/data/prefix-cache.steps.json: %d %.80q", steps.StatusCode, s)
	}
	for _, p := range []string{"/data/nothing.steps.json", "/data/prefix-cache.json", "/data/"} {
		if r := get(t, h, p); r.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", p, r.StatusCode)
		}
	}
	w := body(t, get(t, h, "/app-worker.js"))
	for _, l := range lessons.All() {
		if !strings.Contains(w, `"/data/`+l.Slug+`.steps.json"`) || !strings.Contains(w, `"/data/`+l.Slug+`.script.txt"`) {
			t.Errorf("the worker does not cache %s's data", l.Slug)
		}
	}
}
