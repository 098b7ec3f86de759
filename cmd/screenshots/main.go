// Command screenshots drives headless Chromium over the lab and writes PNGs
// of chosen lessons at chosen steps: the pictures at the top of the README
// (docs/img/), and, with -all, every step of every lesson at a laptop's and
// a phone's size, for reviewing the layout by eye.
//
//	make screenshots                                   # the README's pictures, into docs/img/
//	go run ./cmd/screenshots -all -out /tmp/shots      # every lesson and step, 1280×800 and 375×740
//	go run ./cmd/screenshots -all -only garage,roofline -out /tmp/shots
//
// It serves the site itself (package server, on a free loopback port, from
// -web, which must hold a built app: `make build`), starts Chromium with a
// fresh profile and no network beyond that port, and asks for reduced
// motion, so no picture is taken halfway through a step's animation.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/lessons"
	_ "github.com/inferlab/inferlab/lessons/all" // every lesson registers itself
	"github.com/inferlab/inferlab/server"
)

// shot is one picture: a lesson at a step, at a viewport size.
type shot struct {
	Name  string // file name without .png
	Slug  string
	Step  int // 1-based
	W, H  int64
	Theme string // "" (dark) or "light"
	Hover string // a selector to hover before the picture (a mention lights its element up)
}

// readme are the README's pictures: one lesson per kind of figure.
var readme = []shot{
	{Name: "garage", Slug: "garage", Step: 2, W: 1280, H: 800},
	{Name: "prefix-cache", Slug: "prefix-cache", Step: 3, W: 1280, H: 800, Hover: "#narration .mention"},
	{Name: "block-table", Slug: "block-table", Step: 7, W: 1280, H: 800},
	{Name: "smart-routing", Slug: "smart-routing", Step: 3, W: 1280, H: 800},
	{Name: "chunked-prefill", Slug: "chunked-prefill", Step: 3, W: 1280, H: 800},
	{Name: "phone-batching", Slug: "batching", Step: 2, W: 375, H: 740},
}

type config struct {
	web, out, chromium, only string
	all                      bool
	timeout                  time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.web, "web", "web", "the built web directory (make build)")
	flag.StringVar(&c.out, "out", "docs/img", "where the PNGs go")
	flag.StringVar(&c.chromium, "chromium", "/usr/bin/chromium", "the Chromium binary")
	flag.BoolVar(&c.all, "all", false, "every step of every lesson at 1280×800 and 375×740 (for review), instead of the README's pictures")
	flag.StringVar(&c.only, "only", "", "with -all: these lessons only (comma-separated slugs; \"pages\": the index and the not-found page)")
	flag.DurationVar(&c.timeout, "timeout", 20*time.Minute, "give up after this long")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if _, err := os.Stat(filepath.Join(c.web, "app.wasm")); err != nil {
		return fmt.Errorf("%s/app.wasm is missing: run `make build` first", c.web)
	}
	if _, err := os.Stat(c.chromium); err != nil {
		return fmt.Errorf("chromium not found at %s (run `make deps` as root, or pass -chromium)", c.chromium)
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	h, err := server.New(c.web, server.Options{})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	site := "http://" + ln.Addr().String()

	ctx, stop, err := startChromium(c)
	if err != nil {
		return err
	}
	defer stop()
	if c.all {
		return shootAll(ctx, site, c)
	}
	for _, s := range readme {
		if lessons.Get(s.Slug) == nil {
			return fmt.Errorf("no lesson %q", s.Slug)
		}
		if err := shootOne(ctx, site, c.out, s); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// startChromium starts headless Chromium with a fresh profile, without
// network services of its own, and asks pages for reduced motion.
func startChromium(c config) (context.Context, func(), error) {
	profile, err := os.MkdirTemp("", "inferlab-shots-")
	if err != nil {
		return nil, nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(c.chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tctx, cancelTimeout := context.WithTimeout(actx, c.timeout)
	ctx, cancelTab := chromedp.NewContext(tctx)
	stop := func() {
		cancelTab()
		cancelTimeout()
		cancelAlloc()
		_ = os.RemoveAll(profile)
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{
		{Name: "prefers-reduced-motion", Value: "reduce"},
	}}); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s: %w", c.chromium, err)
	}
	return ctx, stop, nil
}

// startApp asks the page for its app: a first visit shows the prerendered
// page and starts the app only at the reader's first use of it
// (docs/ARCHITECTURE.md, "Light until it is used"); the pictures show the
// live page, which draws the same figures.
var startApp = chromedp.Evaluate[chromedp.Void](`window.inferlab && window.inferlab.start("screenshots")`)

// live is the page's readiness (docs/DOM.md).
const live = `#lab[data-live="true"][data-ready="true"]`

// settled waits until the step's figures are drawn: the step shown, no
// simulation running, every chart drawn, fonts loaded, two frames later.
func settled(step int) chromedp.Action[chromedp.Void] {
	js := `(async () => {
  const ok = () => {
    const lab = document.querySelector("#lab");
    return lab && lab.dataset.step === "` + strconv.Itoa(step) + `" && lab.dataset.busy !== "true" &&
      [...document.querySelectorAll(".scenes .chart")].every((c) => c.dataset.ready === "true");
  };
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
  await document.fonts.ready;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return ok();
})()`
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise))
		if err == nil && !ok {
			err = fmt.Errorf("step %d did not settle", step)
		}
		return err
	})
}

func viewport(w, h int64) chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(w, h, chromedp.EmulateScale(1))
}

// shootOne opens a lesson at a step and saves the viewport.
func shootOne(ctx context.Context, site, out string, s shot) error {
	url := fmt.Sprintf("%s/lesson/%s?step=%d", site, s.Slug, s.Step)
	if s.Theme != "" {
		url += "&theme=" + s.Theme
	}
	focus := "document.activeElement?.blur()"
	if s.Hover != "" {
		focus += ", document.querySelector(" + strconv.Quote(s.Hover) + ").dispatchEvent(new PointerEvent(\"pointerover\", {bubbles: true}))"
	}
	if err := chromedp.Do(ctx, viewport(s.W, s.H), chromedp.Navigate(url), startApp,
		chromedp.WaitVisible(chromedp.CSS(live)), settled(s.Step),
		chromedp.Evaluate[chromedp.Void](`(`+focus+`, window.scrollTo(0, 0))`)); err != nil {
		return err
	}
	return save(ctx, filepath.Join(out, s.Name+".png"))
}

func save(ctx context.Context, path string) error {
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return err
	}
	if small, err := paletted(shot); err == nil {
		shot = small
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s (%d kB)\n", path, len(shot)/1000)
	return nil
}

// paletted re-encodes a screenshot with its 256 most frequent colours
// (each pixel takes the nearest): the lab's flat colours survive, the
// file is a third to a quarter of the size.
func paletted(b []byte) ([]byte, error) {
	src, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	bounds := src.Bounds()
	count := map[color.RGBA]int{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			count[color.RGBAModel.Convert(src.At(x, y)).(color.RGBA)]++
		}
	}
	colours := make([]color.RGBA, 0, len(count))
	for c := range count {
		colours = append(colours, c)
	}
	sort.Slice(colours, func(i, j int) bool {
		if count[colours[i]] != count[colours[j]] {
			return count[colours[i]] > count[colours[j]]
		}
		a, b := colours[i], colours[j]
		return uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A) < uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A)
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range colours[:min(256, len(colours))] {
		pal = append(pal, c)
	}
	dst := image.NewPaletted(bounds, pal)
	index := map[color.RGBA]uint8{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := color.RGBAModel.Convert(src.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			dst.SetColorIndex(x, y, i)
		}
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// shootAll steps through every lesson (or those of -only) with the arrow
// key at both sizes, saving each step as SLUG-WxH-NN.png.
func shootAll(ctx context.Context, site string, c config) error {
	var slugs []string
	if c.only != "" {
		slugs = strings.Split(c.only, ",")
	} else {
		for _, l := range lessons.All() {
			slugs = append(slugs, l.Slug)
		}
	}
	var failed []string
	for _, size := range [][2]int64{{1280, 800}, {375, 740}} {
		if c.only == "" || slices.Contains(slugs, "pages") {
			// The not-found page as the app shows it for an unknown address
			// (a link followed inside the app; the server answers 404 itself).
			follow := `(() => { const a = document.createElement("a"); a.href = "/lesson/no-such-lesson/at/all"; document.body.append(a); a.click(); a.remove(); })()`
			for _, pg := range []struct{ name, js, ready string }{{"index", "", "#index"}, {"not-found", follow, "#not-found"}} {
				steps := []chromedp.Action[chromedp.Void]{viewport(size[0], size[1]), chromedp.Navigate(site + "/"), startApp,
					chromedp.WaitVisible(chromedp.CSS(`#index[data-live="true"]`))}
				if pg.js != "" {
					steps = append(steps, chromedp.Evaluate[chromedp.Void](pg.js), chromedp.WaitVisible(chromedp.CSS(pg.ready)))
				}
				err := chromedp.Do(ctx, steps...)
				if err == nil {
					err = save(ctx, filepath.Join(c.out, fmt.Sprintf("%s-%dx%d.png", pg.name, size[0], size[1])))
				}
				if err != nil {
					failed = append(failed, fmt.Sprintf("%s at %dx%d: %v", pg.name, size[0], size[1], err))
				}
			}
		}
		for _, slug := range slugs {
			if slug == "pages" {
				continue
			}
			l := lessons.Get(slug)
			if l == nil {
				return fmt.Errorf("no lesson %q", slug)
			}
			s, _, err := l.Run(nil)
			if err != nil {
				return fmt.Errorf("%s: %w", slug, err)
			}
			if err := shootSteps(ctx, site, c.out, slug, len(s.Steps), size); err != nil {
				failed = append(failed, fmt.Sprintf("%s at %dx%d: %v", slug, size[0], size[1], err))
			}
		}
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

func shootSteps(ctx context.Context, site, out, slug string, n int, size [2]int64) error {
	if err := chromedp.Do(ctx, viewport(size[0], size[1]), chromedp.Navigate(site+"/lesson/"+slug), startApp,
		chromedp.WaitVisible(chromedp.CSS(live))); err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		if i > 1 {
			if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
				return err
			}
		}
		// After the first step the page stays where Next left it (the
		// player scrolls the figure into view), as a reader sees it.
		reset := `document.activeElement?.blur()`
		if i == 1 {
			reset = `(document.activeElement?.blur(), window.scrollTo(0, 0))`
		}
		if err := chromedp.Do(ctx, settled(i), chromedp.Evaluate[chromedp.Void](reset)); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		if err := save(ctx, filepath.Join(out, fmt.Sprintf("%s-%dx%d-%02d.png", slug, size[0], size[1], i))); err != nil {
			return err
		}
	}
	return nil
}
