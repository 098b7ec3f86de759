package app

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// TestStepsData: the prerendered page of every lesson carries each of its steps,
// with its own narration and figures, in JSON that cannot end its script
// element.
func TestStepsData(t *testing.T) {
	for _, l := range lessons.All() {
		slug := l.Slug
		p := &Player{}
		p.load(mustURL(t, "/lesson/"+slug))
		raw := goapp.HTMLString(p.renderSteps())
		const open = `<script type="application/json" id="steps-data">`
		if !strings.HasPrefix(raw, open) || !strings.HasSuffix(raw, "</script>") {
			t.Fatalf("%s: not a JSON script element: %.200s", slug, raw)
		}
		body := strings.TrimSuffix(strings.TrimPrefix(raw, open), "</script>")
		if strings.Contains(body, "</") || strings.Contains(body, "<!--") {
			t.Errorf("%s: the data can end its script element", slug)
		}
		var d stepsData
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("%s: %v", slug, err)
		}
		sc := p.st.Script
		if len(d.Steps) != sc.Count() || len(d.Parts) != 2 {
			t.Fatalf("%s: %d steps of %d parts, want %d of 2", slug, len(d.Steps), len(d.Parts), sc.Count())
		}
		for i, st := range d.Steps {
			if !strings.Contains(st.HTML[0], `id="narration-panel"`) || !strings.Contains(st.HTML[1], `id="scenes"`) {
				t.Errorf("%s step %d: the parts are not the narration panel and the scenes", slug, i+1)
			}
			if title := sc.Steps[i].Title; !strings.Contains(st.HTML[0], htmlText(title)) {
				t.Errorf("%s step %d: the narration panel does not carry the title %q", slug, i+1, title)
			}
			if !strings.HasPrefix(st.Query, "step="+itoa(i+1)+"&") {
				t.Errorf("%s step %d: query %q", slug, i+1, st.Query)
			}
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// htmlText is s as go-app writes text.
func htmlText(s string) string { return html.EscapeString(s) }

// TestCompactHTMLKeepsTextSpaces: the prerendered steps lose the encoder's
// line breaks and indentation, not the spaces of the text ("on demand" then
// a mention, then " as decoding…" read "demandas decoding" before), at any
// depth and after a void element.
func TestCompactHTMLKeepsTextSpaces(t *testing.T) {
	for _, c := range []struct {
		ui   goapp.UI
		want string
	}{
		{goapp.P().Body(goapp.Span().Text("a"), goapp.Text(" as b"), goapp.Span().Text("c")), "<p><span>a</span> as b<span>c</span></p>"},
		{goapp.Div().Body(goapp.P().Body(goapp.Span().Text("tail"), goapp.Text(", then"))), "<div><p><span>tail</span>, then</p></div>"},
		{goapp.P().Body(goapp.Img().Src("x.png"), goapp.Text(" after"), goapp.Br(), goapp.Text("  two")), `<p><img src="x.png"> after<br>  two</p>`},
	} {
		if got := compactHTML(goapp.HTMLString(c.ui)); got != c.want {
			t.Errorf("compactHTML(%q) = %q, want %q", goapp.HTMLString(c.ui), got, c.want)
		}
	}
}
