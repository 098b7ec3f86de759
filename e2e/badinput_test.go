//go:build !wasm

package e2e

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/chromedp/chromedp"
	"github.com/inferlab/inferlab/app"
	"github.com/inferlab/inferlab/lessons"
)

// noticeHas is a predicate true once #notice holds text.
func noticeHas(text string) string {
	return `(document.querySelector("#notice")?.textContent ?? "").includes(` + jsString(text) + `)`
}

// TestAddressNotices: what `inferlab run` refuses is a notice at the top
// of the page, never dropped silently: a step past the last in every lesson
// (at the defaults, the prerendered script, it showed the last step with no
// notice), a key given twice, one the lesson does not read, one that
// differs only in case. The page still shows the lesson.
func TestAddressNotices(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	for _, l := range lessons.All() {
		subtest(t, b, "step=99999/"+l.Slug, func(t *testing.T) {
			b.navigate(site + "/lesson/" + l.Slug + "?step=99999")
			b.waitFor("the out-of-range notice", noticeHas("step = 99999 is out of range"))
		})
	}
	q := "?block_size=16&block_size=999&step=1&step=3&nosuchknob=1&Block_Size=1"
	for _, size := range []struct {
		name string
		w, h int64
	}{{"laptop", 1280, 800}, {"phone", 375, 740}} {
		subtest(t, b, "garage keys/"+size.name, func(t *testing.T) {
			b.viewport(size.w, size.h)
			defer b.viewport(1200, 900)
			b.navigate(site + "/lesson/garage" + q)
			for _, want := range []string{
				`block_size is given 2 times ("16", "999"): using the first, "16"`,
				`step is given 2 times ("1", "3"): using the first, "1"`,
				"nosuchknob is not a parameter of this lesson",
				"Block_Size is not a parameter of this lesson: keys are case-sensitive; did you mean block_size?",
			} {
				b.waitFor(want, noticeHas(want))
			}
			if s := b.mustState(); s.Step != "1" || !strings.Contains(s.Search, "block_size=16") {
				t.Errorf("state %v; want step 1 with block_size 16", s)
			}
			b.screenshot("badinput-notices-" + size.name)
		})
	}
}

// TestLongAddress: an address over 64 KiB gets the lab's 431 page on a
// first visit and on an embed page (Go's bare 35 bytes before); once the
// service worker holds the lesson page, the app itself shows the lesson at
// its defaults with a notice.
func TestLongAddress(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	long := "?x=" + strings.Repeat("a", 70<<10)
	for _, size := range []struct {
		name string
		w, h int64
	}{{"laptop", 1280, 800}, {"phone", 375, 740}} {
		for _, path := range []string{"/embed/garage", "/lesson/garage"} {
			subtest(t, b, size.name+path, func(t *testing.T) {
				b.viewport(size.w, size.h)
				defer b.viewport(1200, 900)
				b.do("open "+path+" with a 70 KiB query", liveTimeout, chromedp.Navigate(site+path+long), chromedp.WaitVisible(chromedp.CSS("#too-long #notice")))
				text := evalJS[string](b, `document.querySelector("#notice").textContent`)
				href := evalJS[string](b, `document.querySelector("#too-long-lesson")?.getAttribute("href") ?? ""`)
				if !strings.Contains(text, "the lab reads at most 65,536") || href != path {
					t.Errorf("notice %q, link %q", text, href)
				}
				b.allowConsole("status of 431") // the page asked for, answered 431 on purpose
				if size.name == "phone" || path == "/lesson/garage" {
					b.screenshot("badinput-too-long-" + size.name + strings.ReplaceAll(path, "/", "-"))
				}
			})
		}
	}
	subtest(t, b, "from the service worker's cache", func(t *testing.T) {
		b.navigate(site + "/lesson/garage")
		b.waitServiceWorker()
		b.waitCached("/lesson/garage")
		b.navigate(site + "/lesson/garage" + long)
		b.waitFor("the app's notice", noticeHas("The address's query is 71,682 bytes long: the lab reads at most 65,536; showing the lesson at its defaults."))
		b.screenshot("badinput-too-long-cached")
	})
}

// TestEmbedResizesOnlyLabFrames: embed.js sets the height of a lab iframe
// (iframe[data-inferlab]) that reports one from its own origin, and of no
// other frame: a same-origin frame of the host page that posts the same
// message grew itself to the 20,000 px cap.
func TestEmbedResizesOnlyLabFrames(t *testing.T) {
	site := startSite(t)
	labOrigin := strings.Replace(site, "127.0.0.1", "localhost", 1)
	b := newBrowser(t)
	l, v, _ := nativeDefaults(t, "garage")
	snippet := app.EmbedSnippet(labOrigin+"/embed/garage?"+app.EncodeQuery(l, v, 2), l.Title, labOrigin+"/web/embed.js")
	pages := map[string]string{
		"/": `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Host</title><script src="/record.js"></script></head><body>
<iframe id="other" src="/other.html" style="height:150px;border:0"></iframe>` + snippet + `</body></html>`,
		"/record.js": `window.__msgs = [];
window.addEventListener("message", (e) => { if (e.data && e.data.type === "inferlab:height") window.__msgs.push({origin: e.origin, height: e.data.height}); });`,
		"/other.html": `<!doctype html><html><head><script src="/other.js"></script></head><body>a widget</body></html>`,
		// It posts when the test asks, once embed.js listens (it is deferred).
		"/other.js": `addEventListener("message", () => parent.postMessage({type: "inferlab:height", height: 20000, slug: "garage"}, "*"));`,
	}
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ct := "text/html; charset=utf-8"
		if strings.HasSuffix(r.URL.Path, ".js") {
			ct = "text/javascript"
		}
		w.Header().Set("Content-Type", ct)
		fmt.Fprint(w, body)
	}))
	defer host.Close()
	b.do("open the host page", liveTimeout, chromedp.Navigate(host.URL+"/"), chromedp.WaitVisible(chromedp.CSS("iframe[data-inferlab]")))
	lab := `Math.round(document.querySelector("iframe[data-inferlab]").getBoundingClientRect().height)`
	b.waitFor("the lab frame resized", `window.__msgs.length > 0 && `+lab+` === window.__msgs.at(-1).height`)
	// embed.js listens now; record.js listened before it, so once the other
	// frame's message is recorded, embed.js has handled it too.
	evalJS[bool](b, `(document.querySelector("#other").contentWindow.postMessage("go", "*"), true)`)
	b.waitFor("the other frame's message", `window.__msgs.some((m) => m.height === 20000)`)
	if h := evalJS[int](b, `Math.round(document.querySelector("#other").getBoundingClientRect().height)`); h != 150 {
		t.Errorf("the host's own frame was resized to %d px by its message; want 150", h)
	}
}

// TestSandboxTraceUTF16: a UTF-16LE trace with its byte-order mark (what
// Windows PowerShell's `>` writes) runs in the page as the CLI runs it:
// "Export JSON" equals `inferlab run sandbox --trace FILE` on the same file
// (the page took such a file that the CLI refused). A NUL-filled file (UTF-16
// without its mark) is refused beside the file input in both.
func TestSandboxTraceUTF16(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	waitFile := downloads(t, b)
	dir := t.TempDir()
	text := "{\"arrival_s\": 0, \"prompt_tokens\": 300, \"output_tokens\": 20}\r\n{\"arrival_s\": 0.2, \"prompt_tokens\": 500, \"output_tokens\": 9, \"prefix_group\": 1, \"prefix_tokens\": 128}\r\n{\"arrival_s\": 0.4, \"prompt_tokens\": 700, \"output_tokens\": 12, \"prefix_group\": 1, \"prefix_tokens\": 128}\r\n"
	encode := func(mark bool) []byte {
		s := text
		if mark {
			s = "\ufeff" + s
		}
		units := utf16.Encode([]rune(s))
		out := make([]byte, 2*len(units))
		for i, u := range units {
			binary.LittleEndian.PutUint16(out[2*i:], u)
		}
		return out
	}
	good := filepath.Join(dir, "ps-trace.jsonl")
	noMark := filepath.Join(dir, "no-mark.jsonl")
	os.WriteFile(good, encode(true), 0o644)
	os.WriteFile(noMark, encode(false), 0o644)
	l := lessons.Get("sandbox")
	v := l.Defaults()
	status := `(document.querySelector("#trace-status")?.dataset.trace ?? "")`

	b.navigate(site + "/lesson/sandbox?" + app.EncodeQuery(l, v, 1))
	b.do("choose ps-trace.jsonl", changeTimeout, chromedp.SetUploadFiles(chromedp.CSS("#trace-file"), []string{good}))
	b.waitFor("the trace in use", status+` === "ps-trace.jsonl"`)
	b.waitStep("the trace's run from its start", 1)
	b.do("click #btn-export-json", changeTimeout, chromedp.Click(chromedp.CSS("#btn-export-json")))
	got := waitFile("inferlab-sandbox.json")
	if cli := goCmd(t, traceRunArgs(l, v, good)...); string(cli) != string(got) {
		t.Errorf("downloaded JSON differs from `inferlab run sandbox --trace` on the UTF-16 file:\n got %.300s\n cli %.300s", got, cli)
	}

	b.do("choose no-mark.jsonl", changeTimeout, chromedp.SetUploadFiles(chromedp.CSS("#trace-file"), []string{noMark}))
	b.waitFor("#trace-error", `!document.querySelector("#trace-error").hidden`)
	want := "no-mark.jsonl: line 1: a NUL byte: the file looks like UTF-16 without its byte-order mark"
	if e := evalJS[string](b, `document.querySelector("#trace-error").textContent`); !strings.HasPrefix(e, want) {
		t.Errorf("#trace-error = %q, want %q…", e, want)
	}
	if got := evalJS[string](b, status); got != "ps-trace.jsonl" {
		t.Errorf("a refused file changed the trace in use to %q", got)
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"laptop", 1280, 800}, {"phone", 375, 740}} {
		b.viewport(size.w, size.h)
		evalJS[bool](b, `(document.querySelector("#trace-error").scrollIntoView({block: "center"}), true)`)
		b.nextFrame()
		b.screenshot("badinput-trace-utf16-refused-" + size.name)
	}
	b.viewport(1200, 900)
}
