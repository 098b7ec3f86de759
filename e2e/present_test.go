//go:build !wasm

package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/lessons"
)

// The teachers' tools (web/present.js, app/present.go): presenter mode
// driven by the keyboard, the printed handout (one page per step) and the
// export of a range of steps as an animated PNG and as numbered PNGs, before
// the app runs and after.

// squash is text as the page's textContent reads once its spaces are
// collapsed.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestPresenterKeys enters presenter mode with P on a prerendered page,
// steps it with the player's keys (Next ×3, Prev) and leaves it with Esc:
// at each step the caption is that step's narration and the main figure
// fills most of the screen above it; at 1280×800 and 375×740, with
// screenshots, and once more with the app live.
func TestPresenterKeys(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	src := axeSource(t)
	_, _, sc := nativeDefaults(t, "garage")
	walk := func(t *testing.T, at string) {
		// (as a reader who is not typing in a field: P there is a letter)
		evalJS[bool](b, `(document.activeElement && document.activeElement.blur && document.activeElement.blur(), true)`)
		b.shortcut("p", "KeyP")
		b.waitFor("presenter mode", `document.documentElement.classList.contains("presenting") && document.querySelector("#btn-present").getAttribute("aria-pressed") === "true"`)
		check := func(n int) {
			b.t.Helper()
			b.waitStep("presenting", n)
			b.nextFrame()
			b.nextFrame()
			if got, want := squash(evalJS[string](b, `document.querySelector("#narration").textContent`)), squash(sc.Steps[n-1].Narration); got != want {
				t.Errorf("%s step %d: the caption reads %.120q, want the step's narration %.120q", at, n, got, want)
			}
			type box struct{ Fig, Cap, VW, VH float64 }
			g := evalJS[box](b, `(() => {
  const f = document.querySelector("#scenes > figure.scene").getBoundingClientRect();
  const c = document.querySelector("#narration-panel").getBoundingClientRect();
  return {fig: f.width * f.height, cap: c.top - f.bottom, vw: innerWidth, vh: innerHeight};
})()`)
			if share := g.Fig / (g.VW * g.VH); share < 0.4 {
				t.Errorf("%s step %d: the figure covers %.0f%% of the screen, want most of it (≥ 40%%)", at, n, 100*share)
			}
			if g.Cap < -1 {
				t.Errorf("%s step %d: the caption overlaps the figure by %.0f px", at, n, -g.Cap)
			}
		}
		check(1)
		b.screenshot("present-garage-" + at)
		// (at step 1: the prerendered steps write aria-hidden="" where the
		// app writes "true", which axe reads as not hidden: a bay's notes
		// in its list from step 2 on, not these controls)
		b.runAxe(src, "presenter mode at "+at)
		for n := 2; n <= 4; n++ {
			b.keys(kb.ArrowRight)
			check(n)
		}
		b.screenshot("present-garage-step4-" + at)
		if strings.HasPrefix(at, "live") {
			b.runAxe(src, "presenter mode at step 4, "+at)
		}
		b.keys(kb.ArrowLeft)
		check(3)
		if strings.Contains(at, "1280") {
			notesFollow(t, b, sc)
		}
		b.keys(kb.Escape)
		b.waitFor("presenter mode left", `!document.documentElement.classList.contains("presenting") && document.querySelector("#btn-present").getAttribute("aria-pressed") === "false"`)
		if z := evalJS[string](b, `document.querySelector("#scenes > figure.scene").style.zoom`); z != "" {
			t.Errorf("%s: the figure keeps its presenter zoom %q after leaving", at, z)
		}
	}
	for _, size := range [][2]int64{{1280, 800}, {375, 740}} {
		at := fmt.Sprintf("%dx%d", size[0], size[1])
		subtest(t, b, at, func(t *testing.T) {
			b.viewport(size[0], size[1])
			b.do("open garage", liveTimeout, chromedp.Navigate(site+"/lesson/garage"))
			b.waitFor("the prerendered page", `!!document.querySelector("#btn-present") && document.querySelector("#lab").dataset.live === "false"`)
			walk(t, at)
			if evalJS[string](b, `document.querySelector("#lab").dataset.live`) != "false" {
				t.Errorf("%s: presenting started the app", at)
			}
		})
	}
	subtest(t, b, "live", func(t *testing.T) {
		b.viewport(1280, 800)
		b.navigate(site + "/lesson/garage")
		walk(t, "live-1280x800")
	})
}

// notesFollow opens the speaker notes (#btn-notes, shown while presenting)
// at step 3 and checks that they show its narration and the next step's
// title, follow a step taken in the lesson's window, and that a key in the
// notes window steps the lesson.
func notesFollow(t *testing.T, b *browser, sc *lessons.Script) {
	b.do("open the notes", changeTimeout, chromedp.Click(chromedp.CSS("#btn-notes")))
	read := `(() => { const w = window.inferlabPresent.notes.win; if (!w || w.closed) return null; const d = w.document, q = (id) => (d.getElementById(id) || {textContent: ""}).textContent;
  return {step: q("n-step"), title: q("n-title"), narration: q("n-narration"), next: q("n-next")}; })()`
	type notesView struct{ Step, Title, Narration, Next string }
	want := func(n int) {
		b.t.Helper()
		next := "(this is the last step)"
		if n < len(sc.Steps) {
			next = sc.Steps[n].Title
		}
		w := notesView{fmt.Sprintf("Step %d of %d", n, len(sc.Steps)), sc.Steps[n-1].Title, squash(sc.Steps[n-1].Narration), next}
		b.awaitCondition(fmt.Sprintf("the notes at step %d", n), changeTimeout, `(() => { const v = `+read+`; return v && v.title === `+jsString(w.Title)+` && v.next === `+jsString(w.Next)+`; })()`)
		g := evalJS[notesView](b, read)
		g.Narration = squash(g.Narration)
		if g != w {
			t.Errorf("the notes at step %d show %+v, want %+v", n, g, w)
		}
	}
	want(3)
	b.keys(kb.ArrowRight)
	b.waitStep("a step taken in the lesson's window", 4)
	want(4)
	evalJS[bool](b, `(window.inferlabPresent.notes.win.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowLeft", bubbles: true})), true)`)
	b.waitStep("← in the notes window", 3)
	want(3)
}

// apngFile is one decoded APNG: its chunks in order and what they say.
type apngFile struct {
	frames, plays uint32
	fcTL          int
	seq           []uint32 // fcTL and fdAT sequence numbers, in order
	first         image.Image
	all           []image.Image // every frame, each decoded as a PNG of its own
}

// readAPNG checks an animated PNG's chunks (the APNG specification:
// acTL before the first IDAT, one fcTL per frame, sequence numbers 0, 1, …
// over fcTL and fdAT) and decodes its first frame with image/png (which
// skips the animation chunks) and each frame as a PNG of its own.
func readAPNG(t *testing.T, data []byte) apngFile {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("not a PNG: %q", data[:min(8, len(data))])
	}
	var f apngFile
	var ihdr []byte
	var frame [][]byte // the current frame's image data
	var frames [][][]byte
	sawIDAT := false
	for at := 8; at+12 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[at:]))
		typ := string(data[at+4 : at+8])
		body := data[at+8 : at+8+n]
		if got, want := binary.BigEndian.Uint32(data[at+8+n:]), crc32.ChecksumIEEE(data[at+4:at+8+n]); got != want {
			t.Fatalf("chunk %s at %d: CRC %08x, want %08x", typ, at, got, want)
		}
		switch typ {
		case "IHDR":
			ihdr = body
		case "acTL":
			if sawIDAT {
				t.Errorf("acTL after the first IDAT")
			}
			f.frames, f.plays = binary.BigEndian.Uint32(body), binary.BigEndian.Uint32(body[4:])
		case "fcTL":
			f.fcTL++
			f.seq = append(f.seq, binary.BigEndian.Uint32(body))
			if w, h := binary.BigEndian.Uint32(body[4:]), binary.BigEndian.Uint32(body[8:]); w != binary.BigEndian.Uint32(ihdr) || h != binary.BigEndian.Uint32(ihdr[4:]) {
				t.Errorf("fcTL %d: frame %d×%d, not the image's size", f.fcTL, w, h)
			}
			if frame != nil {
				frames = append(frames, frame)
			}
			frame = [][]byte{}
		case "IDAT":
			sawIDAT = true
			frame = append(frame, body)
		case "fdAT":
			f.seq = append(f.seq, binary.BigEndian.Uint32(body))
			frame = append(frame, body[4:])
		}
		at += 12 + n
	}
	if frame != nil {
		frames = append(frames, frame)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("image/png cannot decode the first frame: %v", err)
	}
	f.first = img
	for i, fr := range frames {
		var one bytes.Buffer
		one.WriteString("\x89PNG\r\n\x1a\n")
		writeChunk(&one, "IHDR", ihdr)
		for _, d := range fr {
			writeChunk(&one, "IDAT", d)
		}
		writeChunk(&one, "IEND", nil)
		im, err := png.Decode(&one)
		if err != nil {
			t.Fatalf("frame %d does not decode: %v", i+1, err)
		}
		f.all = append(f.all, im)
	}
	return f
}

func writeChunk(w *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	w.Write(n[:])
	w.WriteString(typ)
	w.Write(data)
	binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(append([]byte(typ), data...)))
	w.Write(n[:])
}

// TestExportSteps exports steps 1–4 from the dialog (#btn-export) as an
// animated PNG and as a zip of numbered PNGs, in the dark theme before the
// app runs, in the light theme with the app live, and decodes them: four
// frames, four fcTL chunks, sequence numbers 0…n−1, every frame a PNG of
// the chosen width; frames of different steps differ.
func TestExportSteps(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	got := downloads(t, b)
	b.viewport(1280, 800)
	src := axeSource(t)
	export := func(t *testing.T, slug, theme, width string, wantW int) {
		b.clickNow("#btn-export")
		b.waitFor("the export dialog", `!!document.querySelector("#export-dialog[open]")`)
		b.runAxe(src, slug+": the export dialog")
		evalJS[bool](b, `(() => {
  const set = (id, v) => { const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event("change", {bubbles: true})); };
  set("export-from", "1"); set("export-to", "4"); set("export-width", `+jsString(width)+`);
  return true;
})()`)
		// saved awaits the dialog's word that the file is saved (drawing
		// four steps takes seconds), then its download.
		saved := func(name string) []byte {
			b.t.Helper()
			b.awaitCondition("the export of "+name, 2*liveTimeout, `document.querySelector("#export-status").textContent.startsWith("Saved") || !document.querySelector("#export-apng").disabled && document.querySelector("#export-status").textContent !== "" && !/…$/.test(document.querySelector("#export-status").textContent)`)
			if st := evalJS[string](b, `document.querySelector("#export-status").textContent`); st != "Saved "+name+"." {
				b.fatal("%s: the dialog says %q", name, st)
			}
			return got(name)
		}
		evalJS[bool](b, `(document.querySelector("#export-status").textContent = "", true)`)
		b.clickNow("#export-apng")
		name := slug + "-steps-01-04.png"
		a := readAPNG(t, saved(name))
		if a.frames != 4 || a.fcTL != 4 {
			t.Errorf("%s: acTL says %d frames and there are %d fcTL chunks, want 4 and 4", name, a.frames, a.fcTL)
		}
		for i, s := range a.seq {
			if s != uint32(i) {
				t.Errorf("%s: sequence numbers %v, want 0, 1, 2, …", name, a.seq)
				break
			}
		}
		if w := a.first.Bounds().Dx(); w != wantW {
			t.Errorf("%s: the first frame is %d px wide, want %d", name, w, wantW)
		}
		if len(a.all) != 4 {
			t.Fatalf("%s: %d frames decoded, want 4", name, len(a.all))
		}
		if samePixels(a.all[0], a.all[3]) {
			t.Errorf("%s: steps 1 and 4 gave the same picture", name)
		}
		for i, im := range a.all {
			savePNG(t, fmt.Sprintf("export-%s-%s-frame%d", slug, theme, i+1), im)
		}
		evalJS[bool](b, `(document.querySelector("#export-status").textContent = "", true)`)
		b.clickNow("#export-pngs")
		zname := slug + "-steps-01-04.zip"
		zdata := saved(zname)
		z, err := zip.NewReader(bytes.NewReader(zdata), int64(len(zdata)))
		if err != nil {
			t.Fatalf("%s: %v", zname, err)
		}
		var names []string
		for _, f := range z.File {
			names = append(names, f.Name)
			r, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", zname, f.Name, err)
			}
			im, err := png.Decode(r)
			r.Close()
			if err != nil {
				t.Errorf("%s: %s does not decode: %v", zname, f.Name, err)
				continue
			}
			if im.Bounds().Dx() != wantW {
				t.Errorf("%s: %s is %d px wide, want %d", zname, f.Name, im.Bounds().Dx(), wantW)
			}
		}
		if want := []string{slug + "-step-01.png", slug + "-step-02.png", slug + "-step-03.png", slug + "-step-04.png"}; strings.Join(names, " ") != strings.Join(want, " ") {
			t.Errorf("%s holds %v, want %v", zname, names, want)
		}
		if s := evalJS[string](b, `document.querySelector("#lab").dataset.step`); s != "1" {
			t.Errorf("after the export the page shows step %s, want the reader's step 1 again", s)
		}
		evalJS[bool](b, `(document.querySelector("#export-close").click(), true)`)
	}
	subtest(t, b, "before the app, dark", func(t *testing.T) {
		b.do("open garage", liveTimeout, chromedp.Navigate(site+"/lesson/garage"))
		b.waitFor("the prerendered page", `!!document.querySelector("#btn-export")`)
		export(t, "garage", "dark", "1280", 1280)
		if evalJS[string](b, `document.querySelector("#lab").dataset.live`) != "false" {
			t.Errorf("exporting started the app")
		}
	})
	subtest(t, b, "a chart, before the app, dark", func(t *testing.T) {
		b.do("open measuring", liveTimeout, chromedp.Navigate(site+"/lesson/measuring"))
		b.waitFor("the prerendered page", `!!document.querySelector("#btn-export")`)
		export(t, "measuring", "dark", "1920", 1920)
	})
	subtest(t, b, "live, light", func(t *testing.T) {
		b.navigate(site + "/lesson/smart-routing?theme=light")
		export(t, "smart-routing", "light", "1280", 1280)
	})
}

// samePixels reports whether two images are equal pixel for pixel.
func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y += 3 {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x += 3 {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

func savePNG(t *testing.T, name string, im image.Image) {
	if outDir == "" {
		return
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, im); err == nil {
		_ = os.WriteFile(filepath.Join(outDir, name+".png"), buf.Bytes(), 0o644)
	}
}

// pdfPages counts a PDF's page objects (/Type /Page, not /Pages).
var pdfPage = regexp.MustCompile(`/Type\s*/Page[^s]`)

// TestHandout lays out the handout (what "Print handout" prints) and
// prints it to PDF as Chromium's print does: one page per step, for two
// lessons before the app runs and one with the app live; no chrome prints.
// Every page's figures pass the label check (handoutLabels).
func TestHandout(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.viewport(1280, 800)
	print := func(t *testing.T, slug string) {
		l := lessons.Get(slug)
		s, _, err := l.Run(nil)
		if err != nil {
			t.Fatal(err)
		}
		// (laying out twenty steps takes longer than one evaluation may)
		evalJS[bool](b, `(window.__handout = "", window.inferlab.present().then((p) => p.handout(() => {})).then(
  (h) => { window.__handout = String(h.querySelectorAll(".handout-step").length); },
  (e) => { window.__handout = "failed: " + e.message; }), true)`)
		b.awaitCondition("the handout of "+slug, 3*liveTimeout, `window.__handout !== ""`)
		if got, want := evalJS[string](b, `window.__handout`), strconv.Itoa(len(s.Steps)); got != want {
			t.Fatalf("%s: the handout has %s steps, want %s", slug, got, want)
		}
		handoutLabels(t, b, s)
		titles := evalJS[[]string](b, `[...document.querySelectorAll("#handout .handout-step h2")].map((h) => h.textContent)`)
		for i, st := range s.Steps {
			if want := fmt.Sprintf("Step %d of %d · %s", i+1, len(s.Steps), st.Title); i < len(titles) && squash(titles[i]) != squash(want) {
				t.Errorf("%s: page %d is titled %q, want %q", slug, i+1, titles[i], want)
			}
		}
		ctx, cancel := context.WithTimeout(b.ctx, liveTimeout)
		res, err := chromedp.Call(ctx, page.PrintToPDF, page.PrintToPDFParams{})
		cancel()
		if err != nil {
			t.Fatalf("%s: printing to PDF: %v", slug, err)
		}
		pdf := res.Data
		if outDir != "" {
			_ = os.WriteFile(filepath.Join(outDir, "handout-"+slug+".pdf"), pdf, 0o644)
		}
		if got := len(pdfPage.FindAll(pdf, -1)); got != len(s.Steps) {
			t.Errorf("%s: the handout prints on %d pages, want one per step: %d", slug, got, len(s.Steps))
		}
	}
	for _, slug := range []string{"garage", "measuring"} {
		subtest(t, b, slug, func(t *testing.T) {
			b.do("open "+slug, liveTimeout, chromedp.Navigate(site+"/lesson/"+slug))
			b.waitFor("the prerendered page", `!!document.querySelector("#btn-export")`)
			print(t, slug)
			if evalJS[string](b, `document.querySelector("#lab").dataset.live`) != "false" {
				t.Errorf("%s: printing started the app", slug)
			}
		})
	}
	subtest(t, b, "live", func(t *testing.T) {
		b.navigate(site + "/lesson/smart-routing")
		print(t, "smart-routing")
	})
}
