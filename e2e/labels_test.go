//go:build !wasm

package e2e

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
)

// labelsCheckJS reads a step's labels, marks and legends (see its comment).
//
//go:embed labels_check.js
var labelsCheckJS string

// labelBox is one text label: its element's id within the figure (the
// lines of one label share it), its text, its box and the region it may
// occupy, in CSS px of the page (or of the handout's image).
type labelBox struct {
	ID      int
	Text    string
	B, C, V [4]float64 // left, top, right, bottom: its box, the region it may occupy, the region shown now
}

func (l *labelBox) UnmarshalJSON(b []byte) error {
	a, err := fields(b, "label")
	if err != nil {
		return err
	}
	id, _ := a[0].(float64)
	l.ID = int(id)
	l.Text, _ = a[1].(string)
	l.B, l.C, l.V = boxAt(a, 2), boxAt(a, 6), boxAt(a, 10)
	return nil
}

// fields reads one of the check's rows: 14 fields, 2 and then 3 boxes.
func fields(b []byte, what string) ([]any, error) {
	var a []any
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, err
	}
	if len(a) != 14 {
		return nil, fmt.Errorf("%s: %d fields, want 14", what, len(a))
	}
	return a, nil
}

// boxAt is the box of a row's four numbers from i.
func boxAt(a []any, i int) [4]float64 {
	var r [4]float64
	for k := range 4 {
		r[k], _ = a[i+k].(float64)
	}
	return r
}

// markBox is one drawing of a marked element: its ref, whether it is
// displayed, its box, the region it shows in now and the region a reader
// reaches by scrolling the frames it is in.
type markBox struct {
	Ref     string
	Shown   bool
	B, V, C [4]float64
}

func (m *markBox) UnmarshalJSON(b []byte) error {
	a, err := fields(b, "mark")
	if err != nil {
		return err
	}
	m.Ref, _ = a[0].(string)
	shown, _ := a[1].(float64)
	m.Shown = shown == 1
	m.B, m.V, m.C = boxAt(a, 2), boxAt(a, 6), boxAt(a, 10)
	return nil
}

// legendRead is one chart's legend: its entries, the series drawn (a
// point on the plot), and those drawn entirely under a later series.
type legendRead struct {
	Chart  string   `json:"chart"`
	Names  []string `json:"names"`
	Drawn  []string `json:"drawn"`
	Hidden []string `json:"hidden"`
}

// labelFig is what the check reads of one figure.
type labelFig struct {
	ID      string       `json:"id"`
	Kind    string       `json:"kind"`
	Box     [4]float64   `json:"box"`
	Over    float64      `json:"over"`   // px its content sticks out sideways
	Hidden  float64      `json:"hidden"` // px of its content a frame in it scrolls out of view
	First   bool         `json:"first"`  // the step's main figure
	Labels  []labelBox   `json:"labels"`
	Marks   []markBox    `json:"marks"`
	Legends []legendRead `json:"legends"`
}

// labelRead is one step's reading.
type labelRead struct {
	Error string     `json:"error"`
	Width float64    `json:"width"` // the page's width (clientWidth)
	Figs  []labelFig `json:"figs"`
}

// The tolerances of the check, in CSS px. A text's box is its glyphs'
// full height (ascent and descent), so two lines set close touch by a pixel
// or two without their letters meeting: an overlap counts when it is wider
// than overlapMinW and taller than a quarter of the smaller box (and
// overlapMinH).
const (
	overlapMinW = 2.0
	overlapMinH = 2.0
	leaveTol    = 1.5 // a label may stick out of its region by this much (antialiasing, rounding)
	fitTol      = 24  // how much of a laptop's main picture may scroll out of its frame
)

// labelProblems lists what is wrong in one figure: two labels that overlap,
// a label outside the region it may occupy (cut off, or over another
// figure), content wider than the figure or the page, a marked element that
// does not show, a legend entry that names no drawn series (or one hidden
// under another).
func labelProblems(f labelFig, pageWidth float64, fits bool) []string {
	var out []string
	name := f.ID
	// Overlaps: sorted by left edge, each box against those starting
	// before it ends.
	// Only what shows of each label now counts (a frame cuts it or
	// scrolls it out of view; that it is cut is reported below).
	var ls []labelBox
	for _, l := range f.Labels {
		v := l
		v.B = [4]float64{math.Max(l.B[0], l.V[0]), math.Max(l.B[1], l.V[1]), math.Min(l.B[2], l.V[2]), math.Min(l.B[3], l.V[3])}
		if v.B[2] > v.B[0] && v.B[3] > v.B[1] {
			ls = append(ls, v)
		}
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].B[0] < ls[j].B[0] })
	seen := map[string]bool{}
	for i, a := range ls {
		for _, b := range ls[i+1:] {
			if b.B[0] >= a.B[2]-overlapMinW {
				break
			}
			if a.ID == b.ID {
				continue
			}
			w := math.Min(a.B[2], b.B[2]) - math.Max(a.B[0], b.B[0])
			h := math.Min(a.B[3], b.B[3]) - math.Max(a.B[1], b.B[1])
			minH := math.Max(overlapMinH, 0.25*math.Min(a.B[3]-a.B[1], b.B[3]-b.B[1]))
			if w <= overlapMinW || h <= minH {
				continue
			}
			x, y := a.Text, b.Text
			if x > y {
				x, y = y, x
			}
			if k := x + "\x00" + y; !seen[k] {
				seen[k] = true
				out = append(out, fmt.Sprintf("%s: label %q overlaps %q by %.0f×%.0f px", name, a.Text, b.Text, w, h))
			}
		}
	}
	for _, l := range f.Labels {
		cut := math.Max(math.Max(l.C[0]-l.B[0], l.B[2]-l.C[2]), math.Max(l.C[1]-l.B[1], l.B[3]-l.C[3]))
		if cut > leaveTol && !seen["leave\x00"+l.Text] {
			seen["leave\x00"+l.Text] = true
			out = append(out, fmt.Sprintf("%s: label %q sticks %.0f px out of its figure or frame (box %s, region %s)", name, l.Text, cut, fmtBox(l.B), fmtBox(l.C)))
		}
	}
	// On a laptop the main picture fits beside the narration: no more
	// than two lines' worth of it scrolled out of its frame (a long table
	// scrolls in its frame by design).
	if fits && f.First && f.Kind != "table" && f.Hidden > fitTol {
		out = append(out, fmt.Sprintf("%s: the main figure does not fit beside the narration: %.0f px of it scroll out of its frame", name, f.Hidden))
	}
	if f.Over > 1 {
		out = append(out, fmt.Sprintf("%s: its content is %.0f px wider than the figure", name, f.Over))
	}
	if pageWidth > 0 && f.Box[2] > pageWidth+1 {
		out = append(out, fmt.Sprintf("%s: the figure ends %.0f px past the page's right edge (%.0f)", name, f.Box[2]-pageWidth, pageWidth))
	}
	// A marked element shows when one of its drawings is displayed with
	// half of it in view; or, in a frame that scrolls, within the frame's
	// scrolled area while another mark of the figure is in view (the
	// player scrolls a frame to its first mark; marks further apart than
	// the frame is tall are a scroll away from each other).
	var refs []string
	why := map[string]string{}
	inView, reach := map[string]bool{}, map[string]bool{}
	// Shown: half of it, or 40×10 px of a wide one (a table's row), in r.
	within := func(b, r [4]float64) bool {
		w, h := b[2]-b[0], b[3]-b[1]
		iw := math.Min(b[2], r[2]) - math.Max(b[0], r[0])
		ih := math.Min(b[3], r[3]) - math.Max(b[1], r[1])
		return w >= 1 && h >= 1 && iw >= math.Min(w/2, 40) && ih >= math.Min(h/2, 10)
	}
	for _, m := range f.Marks {
		if _, ok := why[m.Ref]; !ok {
			refs = append(refs, m.Ref)
			why[m.Ref] = "it is not displayed"
		}
		if !m.Shown {
			continue
		}
		inView[m.Ref] = inView[m.Ref] || within(m.B, m.V)
		reach[m.Ref] = reach[m.Ref] || within(m.B, m.C)
		why[m.Ref] = fmt.Sprintf("box %s, outside its view %s", fmtBox(m.B), fmtBox(m.V))
	}
	anyInView := false
	for _, r := range refs {
		anyInView = anyInView || inView[r]
	}
	for _, r := range refs {
		if !inView[r] && !(reach[r] && anyInView) {
			out = append(out, fmt.Sprintf("%s: the marked %s does not show: %s", name, r, why[r]))
		}
	}
	for _, lg := range f.Legends {
		drawn := map[string]bool{}
		for _, n := range lg.Drawn {
			drawn[n] = true
		}
		hidden := map[string]bool{}
		for _, n := range lg.Hidden {
			hidden[n] = true
		}
		for _, n := range lg.Names {
			switch {
			case !drawn[n]:
				out = append(out, fmt.Sprintf("%s: the legend of %s names %q, which the chart does not draw", name, lg.Chart, n))
			case hidden[n]:
				out = append(out, fmt.Sprintf("%s: the legend of %s names %q, drawn entirely under another series", name, lg.Chart, n))
			}
		}
	}
	return out
}

func fmtBox(b [4]float64) string {
	f := func(v float64) string {
		if math.Abs(v) >= 1e8 {
			return "∞"
		}
		return fmt.Sprintf("%.0f", v)
	}
	return "[" + f(b[0]) + "," + f(b[1]) + "," + f(b[2]) + "," + f(b[3]) + "]"
}

// labelOptions are the check's options (labels_check.js).
type labelOptions struct {
	Step      int    `json:"step"`
	Press     string `json:"press"`
	Compare   bool   `json:"compare"`
	Handout   bool   `json:"handout"`
	TimeoutMs int    `json:"timeoutMs"`
}

// readLabels runs the check once.
func (b *browser) readLabels(o labelOptions) labelRead {
	b.t.Helper()
	if o.TimeoutMs == 0 {
		o.TimeoutMs = 20000
	}
	js, _ := json.Marshal(o)
	return awaitJS[labelRead](b, "("+strings.TrimSpace(labelsCheckJS)+")("+string(js)+")")
}

// labelMode is one way a reader sees a lesson.
type labelMode struct {
	name    string
	w, h    int64
	open    func(b *browser, site, slug string) // loads the lesson at step 1
	press   string
	compare bool
	fits    bool // the main figure fits its frame, none of it scrolled out of view
}

// TestLabels steps through every lesson in every way a reader sees it and
// checks, at every step, every figure shown: no text label overlaps another
// or leaves its figure (or the frame it scrolls in), the figure fits the
// page, every marked element shows, and every chart legend entry names a
// series drawn on the plot and not hidden under another. The ways: the
// live app at 1280×800 and 375×740, at 1280×800 with the Knobs panel open,
// in compare mode (run B a copy of A, side by side), and the prerendered
// embed at 375 and 760 px; TestHandout reads the printed handout's figure
// images the same way (handoutLabels). Each step is one evaluation that
// steps, waits and returns every label's box; the geometry is judged here
// (labelProblems). Reduced motion, so nothing is read mid-move.
func TestLabels(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	ctx, cancel := context.WithTimeout(b.ctx, changeTimeout)
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{
		{Name: "prefers-reduced-motion", Value: "reduce"},
	}})
	cancel()
	if err != nil {
		t.Fatalf("asking for reduced motion: %v", err)
	}
	// INFERLAB_LABEL_SHOTS=DIR saves a picture of the page at each step
	// where the check finds something (not of the handout).
	shots := os.Getenv("INFERLAB_LABEL_SHOTS")
	live := func(b *browser, site, slug string) { b.navigate(site + "/lesson/" + slug) }
	modes := []labelMode{
		{name: "laptop", w: 1280, h: 800, open: live, press: "key", fits: true},
		{name: "phone", w: 375, h: 740, open: live, press: "key"},
		{name: "knobs", w: 1280, h: 800, press: "key", open: func(b *browser, site, slug string) {
			live(b, site, slug)
			b.clickNow("#btn-knobs")
			b.waitFor("the Knobs panel open", `document.documentElement.classList.contains("knobs-open")`)
		}},
		{name: "compare", w: 1280, h: 800, press: "key", compare: true, open: func(b *browser, site, slug string) {
			l := lessons.Get(slug)
			p := l.Params[0]
			if p.Key == "seed" && len(l.Params) > 1 {
				p = l.Params[1]
			}
			b.navigate(site + "/lesson/" + slug + "?b." + p.Key + "=" + p.DefaultText())
			b.waitCompare("run B", "")
		}},
		{name: "embed375", w: 375, h: 740, press: "click", open: embedOpen},
		{name: "embed760", w: 760, h: 700, press: "click", open: embedOpen},
	}
	for _, m := range modes {
		b.viewport(m.w, m.h)
		for _, l := range lessons.All() {
			subtest(t, b, m.name+"/"+l.Slug, func(t *testing.T) {
				s, _, err := l.Run(nil)
				if err != nil {
					t.Fatalf("native %s: %v", l.Slug, err)
				}
				start := time.Now()
				m.open(b, site, l.Slug)
				opened := time.Since(start)
				bad := 0
				for i := range s.Steps {
					o := labelOptions{Step: i + 1, Compare: m.compare}
					if i > 0 {
						o.Press = m.press
					}
					r := b.readLabels(o)
					if r.Error != "" {
						t.Fatalf("%s", r.Error)
					}
					before := bad
					for _, f := range r.Figs {
						for _, p := range labelProblems(f, r.Width, m.fits) {
							bad++
							t.Errorf("step %d (%s): %s", i+1, s.Steps[i].Title, p)
						}
					}
					if shots != "" && bad > before {
						b.saveShot(filepath.Join(shots, fmt.Sprintf("%s-%s-%02d.png", m.name, l.Slug, i+1)), chromedp.FullScreenshot(100))
					}
				}
				recordTiming(t, fmt.Sprintf("E2E_LABELS %s %s steps=%d problems=%d open_ms=%d walk_ms=%d", m.name, l.Slug, len(s.Steps), bad,
					opened.Milliseconds(), (time.Since(start)-opened).Milliseconds()))
			})
		}
	}
	b.viewport(1200, 900)
}

// embedOpen loads a lesson's embed (prerendered; the app does not start).
func embedOpen(b *browser, site, slug string) {
	b.do("open the embed of "+slug, liveTimeout, chromedp.Navigate(site+"/embed/"+slug), chromedp.WaitVisible(chromedp.CSS("#btn-next")))
}

// handoutLabels checks the labels of the handout the page holds (#handout,
// built): each page's figure images drawn in an empty frame at their own
// size and read there, as labelProblems judges a page's figures.
func handoutLabels(t *testing.T, b *browser, s *lessons.Script) {
	t.Helper()
	for i := range s.Steps {
		r := b.readLabels(labelOptions{Step: i + 1, Handout: true})
		if r.Error != "" {
			t.Fatalf("the handout: %s", r.Error)
		}
		for _, f := range r.Figs {
			for _, p := range labelProblems(f, 0, false) {
				t.Errorf("the handout's page %d (%s): %s", i+1, s.Steps[i].Title, p)
			}
		}
	}
}
