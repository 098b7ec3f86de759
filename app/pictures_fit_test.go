package app

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// The layouts leave room for what they draw: these are the rules the
// browser's label check (e2e TestLabels) found broken, each checked here
// on the layout's own numbers.

func TestLegendRows(t *testing.T) {
	names := func(ns ...string) []scene.Series {
		var out []scene.Series
		for _, n := range ns {
			out = append(out, scene.Series{Name: n})
		}
		return out
	}
	cuda := names("NONE: eager, 24 µs per launch", "PIECEWISE", "FULL (= FULL_AND_PIECEWISE for decode)", "GPU work alone, unpadded", "NONE from C++, 5 µs per launch")
	for _, c := range []struct {
		series []scene.Series
		width  float64
		want   int
	}{
		{names("paged", "contiguous"), 800, 1},
		{cuda, 800, 2}, // the scroll legend showed two of five names and a 1/2 pager
		{cuda, 330, 5}, // a phone: a name a row
		{cuda, 0, 3},   // width unknown: 640 px assumed
		{nil, 800, 1},
	} {
		if got := legendRows(c.series, c.width); got != c.want {
			t.Errorf("legendRows(%d names, %v px) = %d, want %d", len(c.series), c.width, got, c.want)
		}
	}
	// The plot starts under the legend's rows.
	js, err := chartOptionsAt(&scene.Chart{Type: scene.Line, Series: cuda}, nil, false, 800)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Legend struct{ Type string }
		Grid   []struct{ Top string }
	}
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if m.Legend.Type != "plain" || len(m.Grid) != 1 || m.Grid[0].Top != strconv.Itoa(chartGridTop+int(legendRowH)) {
		t.Errorf("legend %+v, grid %+v: want a plain legend and the plot a row lower for its second row", m.Legend, m.Grid)
	}
}

func TestCalloutBelow(t *testing.T) {
	c := &scene.Chart{Type: scene.Line, Series: []scene.Series{
		{Name: "bound", X: []float64{0, 3, 6}, Y: []float64{100, 90, 53}},
		{Name: "lower", X: []float64{0, 3, 6}, Y: []float64{100, 64, 40}},
	}}
	mk := marksOf([]scene.Mark{{Ref: "point:bound:1"}, {Ref: "point:lower:1"}, {Ref: "point:bound:0"}, {Ref: "point:lower:2"}})
	got := calloutBelow(c, mk)
	for ref, want := range map[string]bool{
		"point:bound:1": false, // the higher of two at x = 3: above
		"point:lower:1": true,  // the lower: under, clear of the other
		"point:bound:0": false, // shares x = 0 with no other mark; near the top, but...
		"point:lower:2": false, // alone, low: above
	} {
		if ref == "point:bound:0" {
			want = true // ...alone at its x and in the top eighth: under
		}
		if got[ref] != want {
			t.Errorf("%s below = %v, want %v", ref, got[ref], want)
		}
	}
}

// A row holding a marked worker starts clMarkRoom lower than it would, so
// the callout above it covers no worker of the row above; small multiples
// are counted as rows of workers.
func TestClusterMarkRoom(t *testing.T) {
	pool := func(label string) scene.Pool {
		p := scene.Pool{Label: label}
		for i := 1; i <= 8; i++ {
			p.Workers = append(p.Workers, scene.Worker{ID: label + strconv.Itoa(i), Name: "W" + strconv.Itoa(i), Queue: 1})
		}
		return p
	}
	c := &scene.Cluster{Pools: []scene.Pool{pool("a")}, QueueUnit: "in flight"}
	plain := layoutCluster(c, nil, clPerLine, 600)
	marked := layoutCluster(c, []scene.Mark{{Ref: "worker:a8", Label: "chosen"}}, clPerLine, 600)
	above := plain.workers["a1"]
	if got := marked.workers["a8"].y - (above.y + above.h); got < clMarkRoom {
		t.Errorf("the marked worker's row starts %v under the row above, want at least %v", got, clMarkRoom)
	}
	c.Pools = append(c.Pools, pool("b"))
	html := app.HTMLString(&sceneView{Scene: scene.Scene{Kind: scene.KindCluster, ID: "end", Title: "t", Cluster: c}})
	if !strings.Contains(html, "2 × 8 workers") || strings.Contains(html, "16 workers") {
		t.Errorf("two pools of 8 are not headed \"2 × 8 workers\": %.300s", html[strings.Index(html, "scene-sub"):])
	}
	// Four pools: mini workers, a pool a row, within a laptop's column.
	c.Pools = append(c.Pools, pool("c"), pool("d"))
	l := layoutCluster(c, nil, clPerLine, 600)
	if !l.mini || l.w*sysMinScale > 800 || l.workers["a8"].y != l.workers["a1"].y {
		t.Errorf("four pools of 8: mini %v, width %v units, a pool on one row %v", l.mini, l.w, l.workers["a8"].y == l.workers["a1"].y)
	}
}

// Every race lane of every lesson, its bars and its total, lies within the
// drawing; a deep radix tree fits a laptop's column.
func TestRacesAndTreesFit(t *testing.T) {
	for _, l := range lessons.All() {
		s, _, err := l.Run(nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range s.Steps {
			for _, sc := range st.Scenes {
				if sc.Tiers != nil && len(sc.Tiers.Races) > 0 {
					for _, g := range []tiersGeom{tiersWide, tiersNarrow} {
						marks := newMarkSet(sc.Marks)
						raceLanes(sc.Tiers, 0, g, marks)
						for _, r := range sc.Tiers.Races {
							if b := marks.at[r.Ref]; b.x+b.w > g.w+0.5 {
								t.Errorf("%s step %d %s: lane %s ends at %.0f, past the drawing's %.0f units", l.Slug, i+1, sc.ID, r.Ref, b.x+b.w, g.w)
							}
						}
					}
				}
				if sc.Radix != nil {
					if _, w, _ := layoutRadix(sc.Radix); w > rxFitW+0.5 && w > 560 {
						t.Errorf("%s step %d: the tree is %.0f units wide, past %v", l.Slug, i+1, w, rxFitW)
					}
				}
			}
		}
	}
}

func TestSysMinClass(t *testing.T) {
	for _, c := range []struct {
		w    float64
		want int
	}{{320, 4}, {860, 8}, {870, 9}, {1160, 11}, {5000, 16}} {
		if got := sysMinClass(c.w); got != c.want {
			t.Errorf("sysMinClass(%v) = %d, want %d", c.w, got, c.want)
		}
	}
}

// A pool row holding a marked block leaves room under it for the callout
// drawn there; a row without one does not.
func TestBlockTablesNoteRoom(t *testing.T) {
	pool := make([]scene.Block, 18)
	bt := &scene.BlockTables{Rows: []scene.TableRow{{Label: "S1", Blocks: []int{0, 1}}}}
	grid := &scene.BlockGrid{BlockSize: 16, Blocks: pool}
	plain := layoutMap(bt, grid, nil)
	marked := layoutMap(bt, grid, marksOf([]scene.Mark{{Ref: "block:0", Label: "shared"}}))
	if len(plain.rowY) != 2 || marked.rowY[1]-plain.rowY[1] != tmNoteRoom || marked.rowY[0] != plain.rowY[0] {
		t.Errorf("rows at %v unmarked, %v with block 0 marked: want the second row %v lower", plain.rowY, marked.rowY, tmNoteRoom)
	}
}
