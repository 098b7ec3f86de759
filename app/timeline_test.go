package app

import (
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/scene"
)

// A label shows from the narrowest track width at which it fits whole.
func TestFitClass(t *testing.T) {
	for _, c := range []struct {
		frac  float64
		label string
		want  string
	}{
		{1, "16", "fit-0"},
		{0.05, "16", "fit-2"},          // 22 px needed: 25 px at 500
		{0.1, "gate_up_proj", "fit-x"}, // 92 px needed, 90 at 900
		{0.2, "gate_up_proj", "fit-2"}, // 100 at 500
		{0.5, "layer 0", "fit-0"},
		{0, "", "fit-x"},
	} {
		if got := fitClass(c.frac, c.label); got != c.want {
			t.Errorf("fitClass(%v, %q) = %q, want %q", c.frac, c.label, got, c.want)
		}
	}
}

func TestTickStep(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{0.16, 0.2}, {1, 1}, {23, 50}, {4, 5}, {0, 1}} {
		if got := tickStep(c.in); got != c.want {
			t.Errorf("tickStep(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The timeline keeps every bar in its lane (those outside the zoom window
// hidden, not removed), puts references and marks on bars, and draws the
// overview only with a zoom.
func TestRenderTimeline(t *testing.T) {
	tl := &scene.Timeline{Unit: "ms", Lanes: []scene.Lane{{Label: "decode tokens", Key: "decode", Bars: []scene.Span{
		{Start: 0, End: 7, Label: "16", Class: "decode"}, {Start: 7, End: 101, Label: "16", Class: "decode"}, {Start: 101, End: 108, Label: "17", Class: "decode"},
	}}}, Zoom: &scene.Window{Start: 5, End: 102, Label: "the stall"}}
	html := app.HTMLString(renderTimeline(scene.Scene{Kind: scene.KindTimeline, ID: "gpu", Title: "GPU", Gantt: tl,
		Marks: []scene.Mark{{Ref: "span:decode:1", Label: "the stall: 94 ms"}}}))
	for _, want := range []string{`data-ref="span:decode:1"`, `marked`, `the stall: 94 ms`, `tl-window`, `zoomed to the stall`} {
		if !strings.Contains(html, want) {
			t.Errorf("no %q in %s", want, html)
		}
	}
	if n := strings.Count(html, `class="tl-bar`); n != 3 {
		t.Errorf("%d bars, want all 3", n)
	}
	tl.Zoom = nil
	html = app.HTMLString(renderTimeline(scene.Scene{Kind: scene.KindTimeline, ID: "gpu", Gantt: tl}))
	if strings.Contains(html, "tl-window") || strings.Contains(html, " out") {
		t.Errorf("no zoom, yet a window or hidden bars: %s", html)
	}
}

func TestMiniBars(t *testing.T) {
	got := miniBars([]scene.Span{{Start: 0, End: 1, Class: "gpu"}, {Start: 1.001, End: 2, Class: "gpu"}, {Start: 2, End: 3, Class: "idle"}, {Start: 5, End: 6, Class: "idle"}}, 0.01)
	want := []scene.Span{{Start: 0, End: 2, Class: "gpu"}, {Start: 2, End: 3, Class: "idle"}, {Start: 5, End: 6, Class: "idle"}}
	if len(got) != len(want) {
		t.Fatalf("miniBars = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bar %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
