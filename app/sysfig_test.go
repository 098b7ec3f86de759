package app

import (
	"strings"
	"testing"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// systemsScenes are the systems pictures of every lesson at its defaults.
func systemsScenes(t testing.TB) []scene.Scene {
	var out []scene.Scene
	for _, l := range lessons.All() {
		out = append(out, lessonSystemsScenes(t, l)...)
	}
	return out
}

// lessonSystemsScenes are the systems pictures of l at its defaults.
func lessonSystemsScenes(t testing.TB, l *lessons.Lesson) []scene.Scene {
	s, _, err := l.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []scene.Scene
	for _, st := range s.Steps {
		for _, sc := range st.Scenes {
			if sc.Radix != nil || sc.Cluster != nil || sc.Tiers != nil || sc.Journey != nil {
				out = append(out, sc)
			}
		}
	}
	return out
}

// Each systems picture renders (as the server prerenders it) to a figure
// of its kind whose SVG carries every marked ref as data-ref on an element
// flagged "marked", and a ring for it.
func TestSystemsRender(t *testing.T) {
	for _, l := range lessons.All() {
		t.Run(l.Slug, func(t *testing.T) { checkSystemsRender(t, lessonSystemsScenes(t, l)) })
	}
}

func checkSystemsRender(t *testing.T, scenes []scene.Scene) {
	for _, sc := range scenes {
		html := app.HTMLString(&sceneView{Scene: sc})
		if !strings.Contains(html, `data-kind="`+string(sc.Kind)+`"`) || !strings.Contains(html, "<svg") {
			t.Errorf("%s %s: no figure of its kind with an SVG", sc.Kind, sc.ID)
			continue
		}
		for _, m := range sc.Marks {
			if !strings.Contains(html, `data-ref="`+htmlAttr(m.Ref)+`"`) || !strings.Contains(html, `data-for="`+htmlAttr(m.Ref)+`"`) {
				t.Errorf("%s %s: mark %q has no element or no ring", sc.Kind, sc.ID, m.Ref)
			}
		}
	}
}

// BenchmarkSystemsRender builds the UI tree of every systems picture of the
// lessons at their defaults (what a step change asks of go-app before
// it diffs the DOM).
func BenchmarkSystemsRender(b *testing.B) {
	scenes := systemsScenes(b)
	b.ResetTimer()
	for range b.N {
		for _, sc := range scenes {
			_ = app.HTMLString(&sceneView{Scene: sc})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(scenes)), "µs/figure")
}
