//go:build !wasm

package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/server"
)

// Timeouts. They bound waits; they are never used as sleeps.
const (
	browserTimeout = 10 * time.Minute // whole life of one browser (TestLayout drives 30 pages in one)
	liveTimeout    = 45 * time.Second // navigation until #lab[data-live="true"]
	changeTimeout  = 10 * time.Second // a UI reaction (step change, URL update, re-simulation)
	swTimeout      = 30 * time.Second // service worker installed and active
)

// liveSelector is the readiness signal of docs/DOM.md: the app is live (it steps the state
// the address asks for) and ready (the panels under the stage are built, a frame later).
const liveSelector = `#lab[data-live="true"][data-ready="true"]`

// startSite serves the site as `inferlab serve` does, on a free loopback port.
func startSite(t *testing.T) string {
	t.Helper()
	log := &testLog{t: t}
	h, err := server.New(webDir, server.Options{Log: log})
	if err != nil {
		t.Fatalf("server.New(%q): %v", webDir, err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		log.close()
	})
	return srv.URL
}

// testLog passes the server's log lines (failed asset requests) to t.Logf while the
// test runs.
type testLog struct {
	mu     sync.Mutex
	t      *testing.T
	closed bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (l *testLog) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

// browser is one headless Chromium with one tab, a fresh profile, and a console watcher
// that records every console error, uncaught exception and Go panic of the page.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	problems []string        // console errors and exceptions, in order
	marks    map[string]bool // sync markers seen (see syncConsole)
	seen     *sync.Cond
	nmark    int

	frames map[target.ID]bool // iframe targets frameContext has handed out
}

// newBrowser launches Chromium. The console is subscribed before any navigation, and
// the test fails (at the end, or at checkConsole) on any error or exception.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tctx, cancelTimeout := context.WithTimeout(actx, browserTimeout)
	ctx, cancelTab := chromedp.NewContext(tctx)
	b := &browser{t: t, ctx: ctx, marks: map[string]bool{}}
	b.seen = sync.NewCond(&b.mu)

	if err := chromedp.Do(ctx); err != nil { // start the browser and open the tab
		cancelTab()
		cancelTimeout()
		cancelAlloc()
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatalf("viewport: %v", err)
	}

	messages := chromedp.Console(ctx) // subscribed now, before the first navigation
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			b.record(m)
		}
	}()
	t.Cleanup(func() {
		b.checkConsole()
		cancelTab()
		cancelTimeout()
		cancelAlloc()
		<-done
	})
	return b
}

const markPrefix = "e2e-console-sync-"

func (b *browser) record(m chromedp.ConsoleMessage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	text := strings.TrimSpace(m.Text)
	switch {
	case strings.HasPrefix(text, markPrefix):
		b.marks[text] = true
		b.seen.Broadcast()
		return
	case m.IsException(), m.Type == chromedp.ConsoleError:
		b.problems = append(b.problems, fmt.Sprintf("%s: %s (%s:%d)", m.Type, text, m.URL, m.Line+1))
	case strings.HasPrefix(text, "panic:") || strings.Contains(text, "fatal error:") ||
		strings.Contains(text, "Go program has already exited"):
		// The Go runtime writes stderr through console.log in wasm_exec.js.
		b.problems = append(b.problems, fmt.Sprintf("go runtime: %s", text))
	}
}

// syncConsole makes sure every console message written so far has been recorded: it
// logs a marker from the page and waits until the watcher sees it (the stream is ordered).
func (b *browser) syncConsole() {
	b.mu.Lock()
	b.nmark++
	mark := fmt.Sprintf("%s%d", markPrefix, b.nmark)
	b.mu.Unlock()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](`console.debug(`+jsString(mark)+`)`)); err != nil {
		return // page gone: nothing more to read
	}
	deadline := time.AfterFunc(5*time.Second, func() {
		b.mu.Lock()
		b.marks[mark] = true // give up waiting, do not hang
		b.seen.Broadcast()
		b.mu.Unlock()
	})
	defer deadline.Stop()
	b.mu.Lock()
	for !b.marks[mark] {
		b.seen.Wait()
	}
	b.mu.Unlock()
}

// checkConsole fails the test for every console error, exception or Go panic so far.
func (b *browser) checkConsole() {
	b.t.Helper()
	b.syncConsole()
	b.mu.Lock()
	problems := b.problems
	b.problems = nil
	b.mu.Unlock()
	for _, p := range problems {
		b.t.Errorf("browser console: %s", p)
	}
}

// allowConsole drops the console errors so far that contain match: an
// error the test itself asked for (a page answered 404 on purpose).
func (b *browser) allowConsole(match string) {
	b.syncConsole()
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := b.problems[:0]
	for _, p := range b.problems {
		if !strings.Contains(p, match) {
			kept = append(kept, p)
		}
	}
	b.problems = kept
}

// do runs actions with a deadline and fails the test with the page state on error.
func (b *browser) do(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.fatal("%s: %v", what, err)
	}
}

// fatal stops the test, with a screenshot and the page state to explain the failure.
func (b *browser) fatal(format string, args ...any) {
	b.t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name()) + "-failure"
	b.screenshot(name)
	st, err := b.state()
	if err != nil {
		b.t.Fatalf(format+"\n(page state unavailable: %v)", append(args, err)...)
	}
	b.t.Fatalf(format+"\npage state: %s", append(args, st)...)
}

// navigate loads url, starts the app as a reader's first use of it would
// (inferlab.start: the page runs without its WebAssembly until then) and
// waits until the wasm app is live. It returns the wall time from the start
// of the navigation to readiness.
func (b *browser) navigate(url string) time.Duration {
	b.t.Helper()
	start := time.Now()
	err := b.loadLive(url)
	if err == nil {
		return time.Since(start)
	}
	// A page that is not live in liveTimeout is recorded with how far its
	// start got (make test prints the line) and loaded once more; a second
	// failure fails the test. CI saw one such page in a few hundred
	// navigations (TestStepAnimates, a loaded machine) that never went live
	// at all, and it was never reproduced here: the line is there to say why
	// when it recurs.
	st, serr := b.state()
	recordTiming(b.t, fmt.Sprintf("E2E_SLOW_START url=%s waited_ms=%d error=%q state=%v state_error=%v",
		url, time.Since(start).Milliseconds(), err, st, serr))
	if err := b.loadLive(url); err != nil {
		b.fatal("%v (and once more, %v after the first navigation began)", err, time.Since(start).Round(time.Millisecond))
	}
	return time.Since(start)
}

// loadLive navigates to url and asks the page for its app until it is
// live, within liveTimeout.
func (b *browser) loadLive(url string) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(b.ctx, liveTimeout)
	defer cancel()
	// Apart, so that a failure says whether the page never loaded or the
	// app never went live once asked.
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("navigate to %s (until its load event): %w", url, err)
	}
	// Asked from here, in short evaluations: each one asks the document
	// there is now, so a start cannot be lost to a document that replaced
	// the one asked (an evaluation's error, the context of a document gone,
	// is a reason to ask again).
	var lastErr error
	for {
		live, err := chromedp.Run(ctx, chromedp.Evaluate[bool](startAppAndCheckLive))
		if err == nil && live {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s loaded; the app, asked to start, not live (%s) %v after the navigation began (last evaluation error: %v)", url, liveSelector, time.Since(start).Round(time.Millisecond), lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startApp asks the page for its app (web/lab.js inferlab.start).
const startApp = `window.inferlab && window.inferlab.start("e2e")`

// startAppAndCheckLive asks the page for its app unless it was asked
// already (start is idempotent) and reports whether it is live and shown.
const startAppAndCheckLive = `(() => {
  if (window.inferlab && !window.inferlab.started) window.inferlab.start("e2e");
  const lab = document.querySelector(` + "`" + liveSelector + "`" + `);
  return !!lab && lab.getClientRects().length > 0;
})()`

// liveAtPageMs is the page time (ms since navigation start) at which #lab became live,
// recorded by a MutationObserver that installLiveProbe adds to every document.
func (b *browser) liveAtPageMs() float64 {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](`window.__e2eLiveAt ?? -1`))
	if err != nil {
		b.t.Errorf("reading the live probe: %v", err)
		return -1
	}
	return v
}

// loadTimes are page times (ms since navigation start) of one load.
type loadTimes struct {
	FCP       float64 `json:"fcp"`       // first contentful paint (the prerendered page is readable)
	DCL       float64 `json:"dcl"`       // DOMContentLoaded end (app.js, wasm_exec.js and lab.js ran)
	Wasm      float64 `json:"wasm"`      // app.wasm response end
	WasmBytes float64 `json:"wasmBytes"` // app.wasm bytes on the wire (0 from the service worker cache)
}

func (lt loadTimes) String() string {
	return fmt.Sprintf("fcp_ms=%.0f dcl_ms=%.0f wasm_ms=%.0f wasm_transfer_bytes=%.0f", lt.FCP, lt.DCL, lt.Wasm, lt.WasmBytes)
}

// loadTimes reads the navigation, paint and resource timings of the current document.
func (b *browser) loadTimes() loadTimes {
	b.t.Helper()
	const js = `(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  const wasm = performance.getEntriesByType("resource").find((e) => e.name.includes("app.wasm"));
  return {
    fcp: fcp ? fcp.startTime : -1,
    dcl: nav ? nav.domContentLoadedEventEnd : -1,
    wasm: wasm ? wasm.responseEnd : -1,
    wasmBytes: wasm ? wasm.transferSize : -1,
  };
})()`
	lt, err := chromedp.Run(b.ctx, chromedp.Evaluate[loadTimes](js))
	if err != nil {
		b.t.Errorf("reading the load timings: %v", err)
	}
	return lt
}

const liveProbe = `(() => {
  const mark = () => {
    const lab = document.getElementById("lab");
    if (window.__e2eLiveAt === undefined && lab && lab.dataset.live === "true") {
      window.__e2eLiveAt = performance.now();
    }
  };
  new MutationObserver(mark).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-live"]});
})();`

// installLiveProbe adds the MutationObserver of liveAtPageMs to every new document.
func (b *browser) installLiveProbe() {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: liveProbe}); err != nil {
		b.t.Fatalf("adding the live probe: %v", err)
	}
}

// waitServiceWorker waits until the page's service worker is activated (its install
// step caches the app shell, so the next navigation is a warm one).
func (b *browser) waitServiceWorker() {
	b.t.Helper()
	b.awaitCondition("an active service worker", swTimeout,
		`navigator.serviceWorker ? navigator.serviceWorker.getRegistration().then(r => !!(r && r.active && r.active.state === "activated")) : false`)
}

// awaitCondition waits until the asynchronous JavaScript predicate (an
// expression that may return a promise) is truthy, re-checking it in the page
// after each animation frame and at most every 50 ms.
func (b *browser) awaitCondition(what string, timeout time.Duration, predicate string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	js := `(async () => {
  const check = async () => { try { return !!(await (` + predicate + `)); } catch (e) { return false; } };
  while (!(await check())) await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)));
  return true;
})()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil {
		b.fatal("waiting %v for %s: %v", timeout, what, err)
	}
}

// dragSlider moves knob's slider (#slider-KNOB) through the positions as a
// pointer drag does: input events only, no change event and no Apply, as
// fast as the page takes them.
func (b *browser) dragSlider(knob string, positions ...int) {
	b.t.Helper()
	ps := make([]string, len(positions))
	for i, p := range positions {
		ps[i] = strconv.Itoa(p)
	}
	evalJS[bool](b, `(() => {
  const s = document.querySelector(`+jsString("#slider-"+knob)+`);
  for (const p of [`+strings.Join(ps, ", ")+`]) {
    s.value = String(p);
    s.dispatchEvent(new Event("input", {bubbles: true}));
  }
  return true;
})()`)
}

// waitFor polls a JavaScript predicate in the page until it is truthy.
func (b *browser) waitFor(what, predicate string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, changeTimeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(changeTimeout)))
	if err != nil {
		b.fatal("waiting for %s (%s): %v", what, predicate, err)
	}
}

// urlStepIs is a predicate true once the address bar shows step n (1-based).
// The address follows a step change once stepping pauses (Player.syncURLSoon).
func urlStepIs(n int) string {
	return `new URLSearchParams(location.search).get("step") === ` + jsString(strconv.Itoa(n))
}

// labState is what the tests read of the player (docs/DOM.md).
type labState struct {
	Live       string            `json:"live"`
	Lesson     string            `json:"lesson"`
	Step       string            `json:"step"`
	StepLabel  string            `json:"stepLabel"`
	Narration  string            `json:"narration"`
	Blocks     string            `json:"blocks"`  // data-owner of every .block, in order
	NBlocks    int               `json:"nblocks"` // number of .block elements
	Notice     string            `json:"notice"`
	ErrorPanel string            `json:"errorPanel"` // text of a visible #error-panel
	Search     string            `json:"search"`
	Metrics    map[string]string `json:"metrics"`
	Boot       string            `json:"boot"` // how far the app's start got (for a page that never went live)
}

func (s labState) String() string {
	blocks := s.Blocks
	if len(blocks) > 120 {
		blocks = blocks[:120] + "…"
	}
	return fmt.Sprintf("{live=%q lesson=%q step=%q label=%q narration=%.100q blocks(%d)=%q notice=%q errorPanel=%.200q search=%q metrics=%v boot=%s}",
		s.Live, s.Lesson, s.Step, s.StepLabel, s.Narration, s.NBlocks, blocks, s.Notice, s.ErrorPanel, s.Search, s.Metrics, s.Boot)
}

const stateJS = `(() => {
  const q = (s) => document.querySelector(s);
  const text = (s) => { const e = q(s); return e ? e.textContent.trim().replace(/\s+/g, " ") : ""; };
  const lab = q("#lab");
  // One entry per block: the cells of an HTML grid, or a compact grid's
  // SVG (app/grid_svg.go: data-owners).
  const blocks = Array.from(document.querySelectorAll(".block-grid")).flatMap((g) => {
    const svg = g.querySelector(".blocks-svg[data-owners]");
    return svg ? svg.dataset.owners.split(",").map((owner) => ({dataset: {owner}})) : Array.from(g.querySelectorAll(".block"));
  });
  const panel = q("#error-panel");
  const shown = (e) => !!e && !e.hidden && e.getClientRects().length > 0;
  return {
    live: lab ? (lab.dataset.live || "") : "",
    lesson: lab ? (lab.dataset.lesson || "") : "",
    step: lab ? (lab.dataset.step || "") : "",
    stepLabel: text("#step-label"),
    narration: text("#narration"),
    blocks: blocks.map((e) => e.dataset.owner ?? "").join(","),
    nblocks: blocks.length,
    notice: text("#notice"),
    errorPanel: shown(panel) ? panel.textContent.trim().replace(/\s+/g, " ") : "",
    search: location.search,
    metrics: Object.fromEntries(Array.from(document.querySelectorAll("#metrics [data-metric]"))
      .map((e) => [e.dataset.metric, e.textContent.trim().replace(/\s+/g, " ")])),
    // The document's load, lab.js's start, go-app's start, app.wasm's
    // fetch and the service worker: where a page that never went live stopped.
    boot: JSON.stringify({
      readyState: document.readyState,
      sinceNavMs: Math.round(performance.now()),
      started: (window.inferlab && window.inferlab.started) || "",
      goappStart: typeof window.goappStart,
      scriptData: !!document.getElementById("script-data"),
      wasm: performance.getEntriesByType("resource").filter((e) => /\.wasm/.test(e.name))
        .map((e) => e.name.replace(/^.*\//, "") + " start=" + Math.round(e.startTime) + " end=" + Math.round(e.responseEnd) + " bytes=" + e.transferSize),
      sw: navigator.serviceWorker ? (navigator.serviceWorker.controller ? navigator.serviceWorker.controller.state : "no controller") : "none",
      rootClass: document.documentElement.className,
      goappLoader: (document.getElementById("app-wasm-loader-label") || {}).innerText || "",
    }),
  };
})()`

func (b *browser) state() (labState, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[labState](stateJS))
}

func (b *browser) mustState() labState {
	b.t.Helper()
	s, err := b.state()
	if err != nil {
		b.t.Fatalf("reading the page state: %v", err)
	}
	return s
}

// screenshot saves a PNG of the viewport under e2e/test-output/NAME.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	if outDir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			b.t.Logf("screenshot %s: %v", name, err)
		}
		return
	}
	path := filepath.Join(outDir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot: %s", path)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// ---- helpers shared by every browser test ----------------------------------

// evalJS evaluates js in the page and returns its value.
func evalJS[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.fatal("evaluating %.300s: %v", js, err)
	}
	return v
}

// awaitJS evaluates js that returns a promise and returns its value.
func awaitJS[T any](b *browser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.fatal("evaluating %.300s: %v", js, err)
	}
	return v
}

// nextFrame waits for the next animation frame (the grid and charts patch
// themselves in deferred calls after a render).
func (b *browser) nextFrame() {
	b.t.Helper()
	awaitJS[bool](b, `new Promise((r) => requestAnimationFrame(() => setTimeout(() => r(true), 0)))`)
}

// navigateIndex loads the lesson index and waits until the app is live.
func (b *browser) navigateIndex(url string) {
	b.t.Helper()
	b.do("navigate to "+url, liveTimeout, chromedp.Navigate(url), chromedp.Evaluate[chromedp.Void](startApp),
		chromedp.WaitVisible(chromedp.CSS(`#index[data-live="true"]`)))
}

// keys types keys into the focused element (or the page).
func (b *browser) keys(keys string) {
	b.t.Helper()
	b.do("press "+strconv.Quote(keys), changeTimeout, chromedp.KeyEvent(keys))
}

// shortcut presses a printable shortcut key as a keyboard does: one
// keyDown carrying the text, then keyUp. Chromium then suppresses the
// character when a handler prevents the keydown, which kb's separate char
// event (chromedp.KeyEvent) would type regardless.
func (b *browser) shortcut(key, code string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, changeTimeout)
	defer cancel()
	for _, ev := range []input.DispatchKeyEventParams{
		{Type: input.DispatchKeyEventTypeKeyDown, Key: key, Code: code, Text: key, UnmodifiedText: key},
		{Type: input.DispatchKeyEventTypeKeyUp, Key: key, Code: code},
	} {
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
			b.fatal("pressing %q: %v", key, err)
		}
	}
}

// waitStep waits until #lab shows step n.
func (b *browser) waitStep(what string, n int) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("#lab[data-step=%d] %s", n, what),
		`document.querySelector("#lab")?.dataset.step === `+jsString(strconv.Itoa(n)))
}

// nativeDefaults builds a lesson natively with its defaults.
func nativeDefaults(t *testing.T, slug string) (*lessons.Lesson, lessons.Values, *lessons.Script) {
	t.Helper()
	l := lessons.Get(slug)
	if l == nil {
		t.Fatalf("no lesson %q", slug)
	}
	s, v, err := l.Run(nil)
	if err != nil {
		t.Fatalf("native %s: %v", slug, err)
	}
	return l, v, s
}

// quizIndex is the 0-based index of the first step whose quiz has the kind.
func quizIndex(t *testing.T, s *lessons.Script, kind lessons.QuizKind) int {
	t.Helper()
	for i, st := range s.Steps {
		if st.Quiz != nil && st.Quiz.Kind == kind && i > 0 {
			return i
		}
	}
	t.Fatalf("test data: no %s quiz after step 1", kind)
	return -1
}

// subtest runs a subtest that shares the browser b.
func subtest(t *testing.T, b *browser, name string, f func(t *testing.T)) {
	t.Run(name, func(st *testing.T) {
		b.t = st
		defer func() { b.t = t }()
		f(st)
		b.checkConsole()
	})
}

// swapHandler serves whatever handler was set last: a new deployment on the
// same origin.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}
func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

// labHandler is the lab's handler with a fixed version.
func labHandler(t *testing.T, version string) http.Handler {
	t.Helper()
	log := &testLog{t: t}
	t.Cleanup(log.close)
	h, err := server.New(webDir, server.Options{Version: version, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// waitCached waits until the service worker's cache holds path.
func (b *browser) waitCached(path string) {
	b.t.Helper()
	b.awaitCondition(path+" in the service worker's cache", swTimeout,
		`caches.keys().then((ks) => Promise.all(ks.map((k) => caches.open(k).then((c) => c.match(`+jsString(path)+`))))).then((rs) => rs.some(Boolean))`)
}

// downloads lets the page download into a temporary directory and returns a
// function that waits for the browser's "completed" event of the file name
// and returns its bytes.
func downloads(t *testing.T, b *browser) func(name string) []byte {
	dl := t.TempDir()
	var mu sync.Mutex
	names := map[string]string{} // download GUID → suggested file name
	done := map[string]chan struct{}{}
	doneFor := func(name string) chan struct{} {
		if done[name] == nil {
			done[name] = make(chan struct{})
		}
		return done[name]
	}
	chromedp.ListenBrowser(b.ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *cdpbrowser.EventDownloadWillBegin:
			names[e.GUID] = e.SuggestedFilename
		case *cdpbrowser.EventDownloadProgress:
			if n, ok := names[e.GUID]; ok && e.State == cdpbrowser.DownloadProgressStateCompleted {
				select {
				case <-doneFor(n):
				default:
					close(doneFor(n))
				}
			}
		}
	})
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl, EventsEnabled: ptrTo(true)}); err != nil {
		t.Fatal(err)
	}
	return func(name string) []byte {
		b.t.Helper()
		mu.Lock()
		ch := doneFor(name)
		mu.Unlock()
		select {
		case <-ch:
		case <-time.After(changeTimeout):
			entries, _ := os.ReadDir(dl)
			b.fatal("no completed download %s after %v (downloads: %v)", name, changeTimeout, entries)
		}
		data, err := os.ReadFile(filepath.Join(dl, name))
		if err != nil {
			b.fatal("reading the download %s: %v", name, err)
		}
		return data
	}
}

// goCmd runs the go command in the repository and returns its standard output.
func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go %v: %v\n%s", args, err, stderr)
	}
	return out
}

// frameContext attaches to the cross-site iframe whose URL contains part: it
// looks at the targets the browser has, and otherwise waits for the target
// events that announce a new or navigated iframe.
func (b *browser) frameContext(part string) context.Context {
	b.t.Helper()
	return b.attach(b.frameTarget(part))
}

// frameTarget is the target of an iframe whose address contains part and
// that no earlier call returned (see frameContext).
func (b *browser) frameTarget(part string) target.ID {
	b.t.Helper()
	// A frame handed out before belongs to a page since navigated away:
	// Chromium may still list its target for a moment, and a context on
	// it never answers.
	b.mu.Lock()
	if b.frames == nil {
		b.frames = map[target.ID]bool{}
	}
	handed := maps.Clone(b.frames)
	b.mu.Unlock()
	found := make(chan target.ID, 1)
	offer := func(ti *target.Info) {
		if ti != nil && ti.Type == "iframe" && strings.Contains(ti.URL, part) && !handed[ti.TargetID] {
			select {
			case found <- ti.TargetID:
			default:
			}
		}
	}
	lctx, stop := context.WithCancel(b.ctx)
	defer stop()
	chromedp.ListenBrowser(lctx, func(ev any) {
		switch e := ev.(type) {
		case *target.EventTargetCreated:
			offer(e.TargetInfo)
		case *target.EventTargetInfoChanged:
			offer(e.TargetInfo)
		}
	})
	ts, err := chromedp.Targets(b.ctx)
	if err != nil {
		b.fatal("listing targets: %v", err)
	}
	for _, ti := range ts {
		offer(ti)
	}
	select {
	case id := <-found:
		b.mu.Lock()
		b.frames[id] = true
		b.mu.Unlock()
		return id
	case <-time.After(liveTimeout):
		b.fatal("no iframe target for %s after %v", part, liveTimeout)
		return ""
	}
}

// attach gives a new session on the target id (until the test ends).
// A frame's app replaces its document as it mounts; a session whose
// DOM domain saw the old one may never answer again (chromedp then logs
// "DOM.documentUpdated when there's no top-level frame"), so what comes
// after an app start takes a session of its own.
func (b *browser) attach(id target.ID) context.Context {
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	b.t.Cleanup(cancel)
	return ctx
}

func ptrTo[T any](v T) *T { return &v }

// TestLearnerUpdate: a new deployment (a new version on the same origin) is picked up
// on the next load: the page shows the update banner, and reloading runs the new
// version.
func TestLearnerUpdate(t *testing.T) {
	swap := &swapHandler{}
	swap.set(labHandler(t, "update-v1"))
	srv := httptest.NewServer(swap)
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	version := `goappGetenv("GOAPP_VERSION")`

	b.navigate(srv.URL + "/lesson/garage")
	b.waitServiceWorker()
	b.waitCached("/lesson/garage")
	if v := evalJS[string](b, version); v != "update-v1" {
		t.Fatalf("version %q, want update-v1", v)
	}

	swap.set(labHandler(t, "update-v2")) // the deployment
	b.navigate(srv.URL + "/lesson/garage?step=2")
	if v := evalJS[string](b, version); v != "update-v1" {
		t.Errorf("the first load after the deployment runs %q, want the cached update-v1", v)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(b.ctx, swTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#update-banner"))); err != nil {
		b.fatal("no #update-banner %v after loading the new deployment: %v", swTimeout, err)
	}
	recordTiming(t, fmt.Sprintf("E2E_TIMING update banner_after_ms=%d", time.Since(start).Milliseconds()))
	b.screenshot("learner-update-banner")
	if _, err := chromedp.Run(b.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS("#btn-reload")))); err != nil {
		b.fatal("reloading from the banner: %v", err)
	}
	b.waitFor("live after the reload", `document.querySelector("#lab")?.dataset.live === "true"`)
	if v := evalJS[string](b, version); v != "update-v2" {
		t.Errorf("after reloading from the banner the page runs %q, want update-v2", v)
	}
	if s := b.mustState(); s.Step != "2" {
		t.Errorf("the reload lost the step: %s", s)
	}
}

// tryWaitFor is waitFor that returns the error instead of stopping the test.
func (b *browser) tryWaitFor(predicate string) error {
	_, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(changeTimeout)))
	return err
}
