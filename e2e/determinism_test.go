//go:build !wasm

package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/lessons"
)

// TestLessonsDeterminism loads lessons with non-default seeds and knobs and checks
// that the browser (app.wasm) computes what the native build computes: every metric
// in #metrics with the same text, the number of steps, and the title, narration and
// scenes of the first three steps byte for byte.
func TestLessonsDeterminism(t *testing.T) {
	cases := []struct {
		slug string
		raw  map[string]string
	}{
		{"garage", map[string]string{"seed": "1234", "requests": "60", "block_size": "8", "reserve": "pow2", "prompt_min": "300", "prompt_max": "1800"}},
		{"cow-fork", map[string]string{"seed": "7", "n": "5", "prompt": "53", "output": "20", "block_size": "8"}},
		{"chunked-prefill", map[string]string{"gpu": "a100-80gb-sxm", "model": "qwen2.5-7b", "decodes": "24", "context": "2048", "long_prompt": "6016", "chunk_size": "768"}},
	}
	site := startSite(t)
	b := newBrowser(t)
	d := &lessonsDriver{browser: b, site: site}
	for _, c := range cases {
		t.Run(c.slug, func(st *testing.T) {
			b.t = st
			defer func() { b.t = t }()
			l := lessons.Get(c.slug)
			if l == nil {
				st.Skipf("lesson %q is not registered", c.slug)
			}
			for k, v := range c.raw {
				if p, ok := l.Param(k); !ok || p.DefaultText() == v {
					st.Fatalf("test data: %s=%s is not a non-default knob of %s", k, v, c.slug)
				}
			}
			native := runNative(st, l, c.raw)
			q := url.Values{}
			for k, v := range c.raw {
				q.Set(k, v)
			}
			start := time.Now()
			d.navigate(site + "/lesson/" + c.slug + "?" + q.Encode())
			v := d.expectStep(native, 1)
			d.expectMetrics(native, v)
			if v.Notice != "" || v.ErrorPanel != "" {
				st.Errorf("#notice = %q, #error-panel = %q; want both empty", v.Notice, v.ErrorPanel)
			}
			for k, want := range c.raw {
				if got := v.query().Get(k); got != want {
					st.Errorf("location.search = %q, want %s=%s", v.Search, k, want)
				}
			}
			for n := 2; n <= 3 && n <= len(native.Steps); n++ {
				d.scrub(n)
				d.expectStep(native, n)
			}
			b.checkConsole()
			recordTiming(st, fmt.Sprintf("E2E_TIMING determinism %s total_ms=%d", c.slug, time.Since(start).Milliseconds()))
		})
	}
}

// TestLessonsInvalidChoice gives a Choice knob a value it does not offer: the page
// names the knob and its allowed values in #notice, falls back to the default, and
// stays interactive.
func TestLessonsInvalidChoice(t *testing.T) {
	cases := []struct{ slug, key, bad string }{
		{"cow-fork", "mode", "sideways"},
		{"block-table", "kv_dtype", "int4"},
	}
	site := startSite(t)
	b := newBrowser(t)
	d := &lessonsDriver{browser: b, site: site}
	for _, c := range cases {
		t.Run(c.slug+"/"+c.key, func(st *testing.T) {
			b.t = st
			defer func() { b.t = t }()
			l := lessons.Get(c.slug)
			if l == nil {
				st.Skipf("lesson %q is not registered", c.slug)
			}
			p, ok := l.Param(c.key)
			if !ok || p.Kind != lessons.Choice {
				st.Fatalf("test data: %s has no Choice knob %s", c.slug, c.key)
			}
			def := runNative(st, l, nil)
			d.navigate(site + "/lesson/" + c.slug + "?" + url.Values{c.key: {c.bad}}.Encode())
			v := d.expectStep(def, 1)
			for _, want := range append([]string{c.key, c.bad}, p.Choices...) {
				if !strings.Contains(v.Notice, want) {
					d.errorf("#notice = %q, want it to name %q (the knob %s, the value %s and the allowed values %v)", v.Notice, want, c.key, c.bad, p.Choices)
				}
			}
			role, err := chromedp.Run(d.ctx, chromedp.Evaluate[string](`document.querySelector("#notice [role=alert]")?.getAttribute("role") ?? ""`))
			if err != nil || role != "alert" {
				st.Errorf("#notice has no role=alert message (%v)", err)
			}
			if v.ErrorPanel != "" {
				st.Errorf("#error-panel shown: %s", v.ErrorPanel)
			}
			d.expectMetrics(def, v)
			d.expectKnobs(map[string]string{c.key: p.DefaultText()})
			b.screenshot("invalid-" + c.slug + "-" + c.key)

			// Still alive: the scrubber and #btn-next step (to a step without a quiz).
			if from := quizFreeStart(def); from > 1 {
				d.scrub(from)
				v = d.expectStep(def, from)
			}
			d.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
			d.expectAdvance("#btn-next after a notice", def, v)
			b.checkConsole()
		})
	}
}
