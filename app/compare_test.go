package app

import (
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/export"
	"github.com/inferlab/inferlab/lessons"
	goapp "github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Every lesson's compare address, every knob of A and of B with the page's
// own keys, is read without a notice: it stays within the query keys an
// address may carry.
func TestCompareAddressFits(t *testing.T) {
	for _, l := range lessons.All() {
		v := l.Defaults()
		q, err := url.ParseQuery(urlstate.EncodeQuery(l, v, 1) + urlstate.EncodeCompare(l, v) + "&hide=params&theme=dark&find=x")
		if err != nil {
			t.Fatal(err)
		}
		st := urlstate.ParseQuery(l, q)
		if len(st.Notices) != 0 || st.RawB == nil {
			t.Errorf("%s: %d keys: notices %q, RawB %v", l.Slug, len(q), st.Notices, st.RawB)
		}
	}
}

// compareKnob is a lesson and a setting of one integer knob other than its
// default that the lesson accepts (B's knob in these tests).
func compareKnob(t *testing.T) (*lessons.Lesson, string, string) {
	t.Helper()
	for _, l := range lessons.All() {
		for _, p := range l.Params {
			if p.Kind != lessons.Int || p.Key == "seed" {
				continue
			}
			for _, x := range []float64{p.Default + max(p.Step, 1), p.Min, p.Max} {
				s := trimFloat(x)
				v, errs := l.Resolve(map[string]string{p.Key: s})
				if len(errs) == 0 && l.CheckValues(v) == nil && s != p.DefaultText() {
					return l, p.Key, s
				}
			}
		}
	}
	t.Skip("no lesson has an integer knob to compare")
	return nil, "", ""
}

// A compare address builds B on the server as the worker does in the
// browser: the stage carries B's figures after A's, under ids of their own;
// the final figures are export.DiffMetrics' rows with each verdict; the
// address written back carries every knob of B.
func TestComparePage(t *testing.T) {
	l, key, val := compareKnob(t)
	p := &Player{}
	p.load(mustURL(t, LessonPath(l.Slug)+"?b."+key+"="+val))
	if p.cmp == nil {
		t.Fatal("no comparison for a b. key")
	}
	p.flushCompare(goapp.Context{})
	c := p.cmp
	if c.script == nil || c.fail != nil || c.shown != p.compareKey() || c.values.TextOf(key) != val || p.values.TextOf(key) == val {
		t.Fatalf("B: script %v fail %v, B's %s %q, A's %q", c.script != nil, c.fail, key, c.values.TextOf(key), p.values.TextOf(key))
	}
	if len(p.notices) != 0 {
		t.Errorf("notices %q", p.notices)
	}
	if q := p.compareQuery(); !strings.Contains(q, "&b."+key+"="+val) {
		t.Errorf("B's query %q lacks b.%s=%s", q, key, val)
	}
	html := goapp.HTMLString(p.Render())
	for _, want := range []string{`id="compare-b"`, `id="scenes-b"`, `id="compare-label-b"`, key + "=" + val, `id="compare-metrics"`, `class="page lab comparing`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	seen := map[string]bool{}
	dom := regexp.MustCompile(`(?s)<script.*?</script>`).ReplaceAllString(html, "") // the steps' and the script's data
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(dom, -1) {
		if seen[m[1]] {
			t.Errorf("id %q is repeated", m[1])
		}
		seen[m[1]] = true
	}
	sa, _ := p.st.Script.Full()
	sb, _ := c.script.Full()
	rows := export.DiffMetrics(sa.Metrics, sb.Metrics)
	table := goapp.HTMLString(p.metricsView(nil))
	verdicts := 0
	for _, r := range rows {
		// go-app writes attributes in no fixed order: the row's tag whole.
		tag := regexp.MustCompile(`<tr[^>]* data-metric="` + regexp.QuoteMeta(r.Key) + `"[^>]*>`).FindString(table)
		if r.Verdict != "" {
			verdicts++
		}
		if tag == "" || (r.Verdict != "") != strings.Contains(tag, ` data-verdict="`+r.Verdict+`"`) {
			t.Errorf("%s: row %q, want verdict %q", r.Key, tag, r.Verdict)
		}
	}
	if verdicts == 0 {
		t.Errorf("changing %s gives no verdict: %s", key, table)
	}
}

// A bad b. value is a notice naming b.KEY and B takes A's value; ending
// the comparison drops B from the address.
func TestCompareBadValue(t *testing.T) {
	l, k := intKnob(t)
	p := &Player{}
	p.load(mustURL(t, LessonPath(l.Slug)+"?b."+k.Key+"=-999999999"))
	all := strings.Join(p.notices, "\n")
	if !strings.Contains(all, "(b."+k.Key+`) = "-999999999" is not allowed`) || !strings.Contains(all, k.Range()) {
		t.Errorf("notices %q lack b.%s's value and range", all, k.Key)
	}
	if p.cmp == nil || p.cmp.values.TextOf(k.Key) != p.values.TextOf(k.Key) || p.cmp.bad[k.Key] != "-999999999" {
		t.Fatalf("B after a bad value: %+v", p.cmp)
	}
	p.load(mustURL(t, LessonPath(l.Slug)))
	if p.cmp != nil || p.compareQuery() != "" {
		t.Errorf("a plain address still compares")
	}
}

// A plain page carries the Compare button and nothing of B.
func TestPlainPageHasNoB(t *testing.T) {
	l, _ := intKnob(t)
	p := &Player{}
	p.load(mustURL(t, LessonPath(l.Slug)))
	p.full = true
	html := goapp.HTMLString(p.Render())
	if !strings.Contains(html, `id="btn-compare"`) || strings.Contains(html, `id="compare-b"`) || strings.Contains(html, "comparing") {
		t.Errorf("plain page: compare button %v, B's figures %v", strings.Contains(html, `id="btn-compare"`), strings.Contains(html, `id="compare-b"`))
	}
}
