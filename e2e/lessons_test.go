//go:build !wasm

package e2e

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// lessonCase is one lesson of TestLessons: the knobs changed through the form, the
// metric that must move with them, and the step whose scenes get a lesson-specific check.
type lessonCase struct {
	slug   string
	knobs  []ldKnob // applied together through form#params
	metric string   // a metric the knobs change (checked against the native lesson)
	// sceneStep (1-based, with the changed knobs) is shown before sceneCheck runs.
	sceneStep  int
	sceneCheck func(d *lessonsDriver, script *lessons.Script, v ldView)
}

type ldKnob struct{ key, value string }

// TestLessons plays each lesson in Chromium against its native Script: the first step,
// stepping with ArrowRight and #btn-next, a knob changed through the form (URL and the
// re-simulated metrics), a reload of the resulting URL (step and knob restored), and a
// lesson-specific scene check. One browser serves every lesson.
func TestLessons(t *testing.T) {
	cases := []lessonCase{{
		slug:      "block-table",
		knobs:     []ldKnob{{"token", "16"}},
		metric:    "physical_block",
		sceneStep: 4,
		sceneCheck: func(d *lessonsDriver, s *lessons.Script, v ldView) {
			// The request's own table (owner 0, "A") is a row of the block tables.
			fig, ok := v.scene(scene.KindBlockTables, "tables")
			if !ok {
				d.errorf("step %s: no block-tables scene", v.Step)
				return
			}
			i := slices.IndexFunc(fig.Rows, func(r ldRow) bool { return r.Owner == 0 })
			if i < 0 {
				d.errorf("step %s: .block-tables has no .bt-row[data-owner=0] (request A); rows: %+v", v.Step, fig.Rows)
				return
			}
			row := fig.Rows[i]
			rows := nativeScene(s, v.stepIndex(), scene.KindBlockTables, "tables").Tables.Rows
			want := rows[slices.IndexFunc(rows, func(r scene.TableRow) bool { return r.Owner == 0 })]
			if row.Label != "A" || len(row.Physical) == 0 || !slices.Equal(row.Physical, want.Blocks) {
				d.errorf("step %s: request A's row = %+v, want label A and physical blocks %v", v.Step, row, want.Blocks)
			}
		},
	}, {
		slug:      "cow-fork",
		knobs:     []ldKnob{{"mode", "prefix"}},
		metric:    "recomputed_tokens",
		sceneStep: 3, // prefix mode: "Prefix hits", full prompt blocks shared by every sample
		sceneCheck: func(d *lessonsDriver, s *lessons.Script, v ldView) {
			// The tables are drawn over the physical pool: each block k tables
			// share carries one ×k badge and says so in its title.
			grid := nativeScene(s, v.stepIndex(), scene.KindBlockTables, "tables").Grid
			if grid == nil {
				d.errorf("test data: step %s of cow-fork draws no pool under its tables", v.Step)
				return
			}
			type got struct {
				Found        bool
				Badges       []string
				Title, Class string
			}
			nshared := 0
			for i, blk := range grid.Blocks {
				if blk.Refs <= 1 {
					continue
				}
				nshared++
				g := evalJS[got](d.browser, `(() => {
  const e = document.querySelector('figure[data-scene-id="tables"] [data-ref="block:`+strconv.Itoa(i)+`"]');
  if (!e) return {found: false, badges: [], title: "", class: ""};
  return {found: true, badges: Array.from(e.querySelectorAll(".tm-badge")).map((b) => b.textContent), title: e.querySelector("title")?.textContent ?? "", class: e.getAttribute("class")};
})()`)
				mark := "×" + strconv.Itoa(blk.Refs)
				if !g.Found || len(g.Badges) != 1 || g.Badges[0] != mark {
					d.errorf("step %s: block %d (refs %d) shows badges %q, want one %q", v.Step, i, blk.Refs, g.Badges, mark)
				}
				if want := strconv.Itoa(blk.Refs) + " references"; !strings.Contains(g.Title, want) {
					d.errorf("step %s: block %d title = %q, want it to say %q", v.Step, i, g.Title, want)
				}
			}
			if nshared == 0 {
				d.errorf("test data: step %s of cow-fork shares no block natively", v.Step)
			}
		},
	}, {
		slug:      "chunked-prefill",
		knobs:     []ldKnob{{"chunk_size", "1024"}},
		metric:    "max_itl_ms_chunked",
		sceneStep: 3, // the chunked timeline
		sceneCheck: func(d *lessonsDriver, s *lessons.Script, v ldView) {
			fig, ok := v.scene(scene.KindTimeline, "gpu")
			if !ok {
				d.errorf("step %s: no timeline scene gpu", v.Step)
				return
			}
			bars := 0
			for _, l := range fig.Lanes {
				bars += len(l.Bars)
			}
			// decode tokens and prefill tokens per step, and R1's gaps beneath
			if len(fig.Lanes) != 3 || bars == 0 {
				d.errorf("step %s: the timeline shows %d lanes and %d .tl-bar spans, want 3 lanes with spans", v.Step, len(fig.Lanes), bars)
			}
		},
	}, {
		slug:       "roofline",
		knobs:      []ldKnob{{"batch", "64"}},
		metric:     "decode_intensity",
		sceneStep:  3,
		sceneCheck: expectChartsReady,
	}, {
		slug:       "measuring",
		knobs:      []ldKnob{{"points", "3"}, {"duration_s", "5"}},
		metric:     "max_throughput_tok_s",
		sceneStep:  5, // the last step: three charts
		sceneCheck: expectChartsReady,
	}, {
		slug:      "cuda-graphs",
		knobs:     []ldKnob{{"batch", "8"}},
		metric:    "padded_tokens",
		sceneStep: 2, // eager: timelines of CPU launches and GPU kernels
		sceneCheck: func(d *lessonsDriver, s *lessons.Script, v ldView) {
			for _, f := range v.Scenes {
				if f.Kind == string(scene.KindTimeline) {
					n := 0
					for _, l := range f.Lanes {
						n += len(l.Bars)
					}
					if n == 0 {
						d.errorf("step %s: timeline %s shows no .tl-bar", v.Step, f.ID)
					}
				}
			}
		},
	}, {
		slug:       "prefix-cache",
		knobs:      []ldKnob{{"capacity", "32"}},
		metric:     "evicted_tokens",
		sceneStep:  3, // R2 splits R1's edge: the radix tree
		sceneCheck: expectKind(scene.KindRadixTree),
	}, {
		slug:       "smart-routing",
		knobs:      []ldKnob{{"rate", "16"}},
		metric:     "ttft_mean_ms_kv_aware",
		sceneStep:  9, // the overload: the cluster, and requests per worker
		sceneCheck: expectChartsReady,
	}, {
		slug:       "kv-tiers",
		knobs:      []ldKnob{{"nvme", "nvme5"}},
		metric:     "fetch_ms_nvme",
		sceneStep:  2,
		sceneCheck: func(*lessonsDriver, *lessons.Script, ldView) {}, // every scene is compared with native at each step
	}, {
		slug:       "disaggregation",
		knobs:      []ldKnob{{"requests", "20"}},
		metric:     "ttft_p50_ms_disagg",
		sceneStep:  2,
		sceneCheck: func(*lessonsDriver, *lessons.Script, ldView) {},
	}, {
		slug:       "sandbox",
		knobs:      []ldKnob{{"policy", "round_robin"}},
		metric:     "hit_rate_pct",
		sceneStep:  2, // the dashboard
		sceneCheck: expectChartsReady,
	}}

	site := startSite(t)
	b := newBrowser(t)
	d := &lessonsDriver{browser: b, site: site}
	for _, c := range cases {
		t.Run(c.slug, func(st *testing.T) {
			b.t = st
			defer func() { b.t = t }()
			if lessons.Get(c.slug) == nil {
				st.Skipf("lesson %q is not registered", c.slug)
			}
			start := time.Now()
			d.playLesson(c)
			b.checkConsole()
			recordTiming(st, fmt.Sprintf("E2E_TIMING lesson %s total_ms=%d", c.slug, time.Since(start).Milliseconds()))
		})
	}
}

// expectKind checks that the step shows at least one scene of kind k (the
// shared check has already compared every scene with the native one).
func expectKind(k scene.Kind) func(d *lessonsDriver, s *lessons.Script, v ldView) {
	return func(d *lessonsDriver, s *lessons.Script, v ldView) {
		for _, f := range v.Scenes {
			if f.Kind == string(k) {
				return
			}
		}
		d.errorf("step %s shows no %s scene", v.Step, k)
	}
}

// expectChartsReady checks that every chart scene of the step reports data-ready and
// carries the native series (the generic step check compares the names).
func expectChartsReady(d *lessonsDriver, s *lessons.Script, v ldView) {
	n := 0
	for _, f := range v.Scenes {
		if f.Kind != string(scene.KindChart) {
			continue
		}
		n++
		if !f.Ready {
			d.errorf("step %s: #chart-%s has no data-ready=\"true\"", v.Step, f.ID)
		}
		if len(f.Series) == 0 {
			d.errorf("step %s: #chart-%s: the ECharts instance has no series", v.Step, f.ID)
		}
	}
	if n == 0 {
		d.errorf("step %s shows no chart scene", v.Step)
	}
}

func (d *lessonsDriver) playLesson(c lessonCase) {
	t := d.t
	t.Helper()
	l := lessons.Get(c.slug)
	def := runNative(t, l, nil)

	// Load: step 1 of the default script.
	d.navigate(d.site + "/lesson/" + c.slug)
	v := d.expectStep(def, 1)
	if v.Lesson != c.slug {
		t.Errorf("#lab[data-lesson] = %q, want %q", v.Lesson, c.slug)
	}
	if v.Notice != "" || v.ErrorPanel != "" {
		t.Errorf("default load: #notice = %q, #error-panel = %q; want both empty", v.Notice, v.ErrorPanel)
	}

	// Step forward twice, from a step where neither of the next two steps asks a quiz.
	from := quizFreeStart(def)
	if from > 1 {
		d.scrub(from)
		v = d.expectStep(def, from)
	}
	d.do("press ArrowRight", changeTimeout, chromedp.KeyEvent(kb.ArrowRight))
	v = d.expectAdvance("ArrowRight", def, v)
	d.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
	v = d.expectAdvance("#btn-next", def, v)
	step := from + 2
	if got := v.query().Get("step"); got != strconv.Itoa(step) {
		t.Errorf("location.search = %q on step %d, want step=%d", v.Search, step, step)
	}

	// Change the knobs through the form; the step is kept.
	raw := map[string]string{}
	for _, k := range c.knobs {
		raw[k.key] = k.value
	}
	mod := runNative(t, l, raw)
	defText, modText := metricTexts(def)[c.metric], metricTexts(mod)[c.metric]
	if modText == "" || modText == defText {
		t.Fatalf("test data: metric %s is %q natively with %v and %q with defaults; want a different, present value", c.metric, modText, raw, defText)
	}
	for _, k := range c.knobs {
		d.setField(k.key, k.value)
	}
	d.do("click #params-apply", changeTimeout, chromedp.Click(chromedp.CSS("#params-apply")))
	d.waitFor("the knobs "+fmt.Sprint(raw)+" in the URL", urlHasJS(raw))
	d.waitFor(fmt.Sprintf("#metrics [data-metric=%s] = %q", c.metric, modText),
		`(document.querySelector('#metrics [data-metric=`+jsString(c.metric)+`]')?.textContent ?? "") === `+jsString(modText))
	v = d.expectStep(mod, step)
	d.expectMetrics(mod, v)
	d.expectKnobs(raw)
	if v.Notice != "" || v.ErrorPanel != "" {
		t.Errorf("after applying %v: #notice = %q, #error-panel = %q; want both empty", raw, v.Notice, v.ErrorPanel)
	}
	d.screenshot("lesson-" + c.slug + "-knobs")

	// Reload the URL: the step and the knobs come back.
	href := v.Href
	if _, err := chromedp.Run(d.ctx, chromedp.Evaluate[chromedp.Void](`window.__ldBeforeReload = true`)); err != nil {
		d.fatal("marking the document: %v", err)
	}
	d.navigate(href)
	if old, _ := chromedp.Run(d.ctx, chromedp.Evaluate[bool](`window.__ldBeforeReload === true`)); old {
		d.fatal("navigating to %s did not load a new document", href)
	}
	v = d.expectStep(mod, step)
	d.expectMetrics(mod, v)
	d.expectKnobs(raw)
	if !strings.Contains(v.Search, "step="+strconv.Itoa(step)) {
		t.Errorf("reloaded %s: location.search = %q, want step=%d", href, v.Search, step)
	}
	for k, val := range raw {
		if v.query().Get(k) != val {
			t.Errorf("reloaded %s: location.search = %q, want %s=%s", href, v.Search, k, val)
		}
	}
	if v.Notice != "" || v.ErrorPanel != "" {
		t.Errorf("reloaded %s: #notice = %q, #error-panel = %q; want both empty", href, v.Notice, v.ErrorPanel)
	}

	// The lesson's own scene.
	if c.sceneStep != step {
		d.scrub(c.sceneStep)
	}
	v = d.expectStep(mod, c.sceneStep)
	c.sceneCheck(d, mod, v)
	d.screenshot(fmt.Sprintf("lesson-%s-step%d", c.slug, c.sceneStep))
}

// lessonsDriver drives one lesson page and compares it with the native Script.
type lessonsDriver struct {
	*browser
	site  string
	shots map[string]bool // failure screenshots taken, by test
}

// errorf reports a failed check with a screenshot of the page (once per test).
func (d *lessonsDriver) errorf(format string, args ...any) {
	d.t.Helper()
	d.screenshotFailure()
	d.t.Errorf(format, args...)
}

func (d *lessonsDriver) screenshotFailure() {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(d.t.Name()) + "-failure"
	if d.shots == nil {
		d.shots = map[string]bool{}
	}
	if !d.shots[name] {
		d.shots[name] = true
		d.screenshot(name)
	}
}

// runNative builds the lesson natively, as the browser should.
func runNative(t *testing.T, l *lessons.Lesson, raw map[string]string) *lessons.Script {
	t.Helper()
	s, _, err := l.Run(raw)
	if err != nil {
		t.Fatalf("native %s with %v: %v", l.Slug, raw, err)
	}
	return s
}

// metricTexts is each native metric as #metrics shows it (app/metrics.go metricText).
func metricTexts(s *lessons.Script) map[string]string {
	out := make(map[string]string, len(s.Metrics))
	for _, m := range s.Metrics {
		out[m.Key] = strconv.FormatFloat(m.Value, 'f', -1, 64)
	}
	return out
}

// nativeScene returns the scene of kind and id in step i (0-based).
func nativeScene(s *lessons.Script, i int, kind scene.Kind, id string) scene.Scene {
	for _, sc := range s.Steps[i].Scenes {
		if sc.Kind == kind && sc.ID == id {
			return sc
		}
	}
	return scene.Scene{}
}

// quizFreeStart is the first 1-based step from which the next two steps ask no quiz,
// so no checkpoint question (app/quiz.go asks the next step's quiz beside the current
// one) is on screen or holds the focus while the test steps with → and Next.
func quizFreeStart(s *lessons.Script) int {
	for i := 0; i+2 < len(s.Steps); i++ {
		if s.Steps[i+1].Quiz == nil && s.Steps[i+2].Quiz == nil {
			return i + 1
		}
	}
	return 1
}

func urlHasJS(raw map[string]string) string {
	var conds []string
	for k, v := range raw {
		conds = append(conds, `q.get(`+jsString(k)+`) === `+jsString(v))
	}
	slices.Sort(conds)
	return `(() => { const q = new URLSearchParams(location.search); return ` + strings.Join(conds, " && ") + `; })()`
}

// ldView is what the lesson tests read of the player: raw texts (not whitespace-
// normalised, so narration can be compared byte for byte) and every scene figure.
type ldView struct {
	Live       string     `json:"live"`
	Lesson     string     `json:"lesson"`
	Step       string     `json:"step"`
	StepLabel  string     `json:"stepLabel"`
	Title      string     `json:"title"`
	Narration  string     `json:"narration"`
	Notice     string     `json:"notice"`
	ErrorPanel string     `json:"errorPanel"`
	Href       string     `json:"href"`
	Search     string     `json:"search"`
	Metrics    [][]string `json:"metrics"` // [key, text] in page order
	Scenes     []ldFigure `json:"scenes"`
}

type ldFigure struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// block-grid
	Owners []int    `json:"owners"`
	Labels []string `json:"labels"`
	Titles []string `json:"titles"`
	Shared []bool   `json:"shared"`
	// block-tables
	Rows []ldRow `json:"rows"`
	// timeline
	Lanes []ldLane `json:"lanes"`
	// chart
	Ready  bool     `json:"ready"`
	Series []string `json:"series"`
}

type ldRow struct {
	Owner    int    `json:"owner"`
	Label    string `json:"label"`
	Physical []int  `json:"physical"`
}

type ldLane struct {
	Label string   `json:"label"`
	Bars  []string `json:"bars"`
}

func (v ldView) scene(kind scene.Kind, id string) (ldFigure, bool) {
	for _, f := range v.Scenes {
		if f.Kind == string(kind) && f.ID == id {
			return f, true
		}
	}
	return ldFigure{}, false
}

func (v ldView) stepIndex() int {
	n, _ := strconv.Atoi(v.Step)
	return n - 1
}

func (v ldView) query() url.Values {
	q, _ := url.ParseQuery(strings.TrimPrefix(v.Search, "?"))
	return q
}

const ldViewJS = `(() => {
  const q = (s) => document.querySelector(s);
  const lab = q("#lab");
  const all = (root, s) => Array.from(root.querySelectorAll(s));
  const panel = q("#error-panel");
  const shown = (e) => !!e && !e.hidden && e.getClientRects().length > 0;
  const figure = (f) => {
    const o = {kind: f.dataset.kind || "", id: f.dataset.sceneId || ""};
    if (o.kind === "block-grid") {
      const cells = all(f, ".block-grid .block");
      o.owners = cells.map((e) => Number(e.dataset.owner));
      o.labels = cells.map((e) => e.textContent);
      o.titles = cells.map((e) => e.title);
      o.shared = cells.map((e) => e.classList.contains("shared"));
    } else if (o.kind === "block-tables") {
      o.rows = all(f, ".block-tables .bt-row").map((r) => ({
        owner: Number(r.dataset.owner),
        label: r.querySelector(".bt-label")?.textContent ?? "",
        physical: all(r, ".bt-physical").map((e) => Number(e.textContent)),
      }));
    } else if (o.kind === "timeline") {
      o.lanes = all(f, ".tl-lane").map((l) => ({
        label: l.querySelector(".tl-label")?.textContent ?? "",
        bars: all(l, ".tl-bar").map((e) => e.textContent),
      }));
    } else if (o.kind === "chart") {
      const el = f.querySelector(".chart");
      o.ready = !!el && el.dataset.ready === "true";
      const inst = el && window.echarts ? window.echarts.getInstanceByDom(el) : null;
      o.series = inst ? (inst.getOption().series || []).map((s) => s.name ?? "") : [];
    }
    return o;
  };
  return {
    live: lab ? (lab.dataset.live || "") : "",
    lesson: lab ? (lab.dataset.lesson || "") : "",
    step: lab ? (lab.dataset.step || "") : "",
    stepLabel: q("#step-label")?.textContent ?? "",
    title: q("#step-title")?.textContent ?? "",
    narration: q("#narration")?.textContent ?? "",
    notice: (q("#notice")?.textContent ?? "").trim(),
    errorPanel: shown(panel) ? panel.textContent.trim().replace(/\s+/g, " ") : "",
    href: location.href,
    search: location.search,
    metrics: all(document, "#metrics [data-metric]").map((e) => [e.dataset.metric, e.textContent]),
    scenes: all(document, "#lab figure.scene").map(figure),
  };
})()`

func (d *lessonsDriver) view() ldView {
	d.t.Helper()
	v, err := chromedp.Run(d.ctx, chromedp.Evaluate[ldView](ldViewJS))
	if err != nil {
		d.fatal("reading the lesson view: %v", err)
	}
	return v
}

// stepProblems compares the page with step n (1-based) of the native script: the
// step attribute and label, the title and narration byte for byte, and every scene
// (kind and id in order; block owners and shared marks; block-table rows; timeline
// lanes and span labels; chart readiness and series names).
func stepProblems(s *lessons.Script, n int, v ldView) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	if v.Live != "true" {
		add(`#lab[data-live] = %q, want "true"`, v.Live)
	}
	if v.Step != strconv.Itoa(n) {
		add(`#lab[data-step] = %q, want "%d"`, v.Step, n)
		return p
	}
	if want := fmt.Sprintf("Step %d of %d", n, len(s.Steps)); v.StepLabel != want {
		add("#step-label = %q, want %q", v.StepLabel, want)
	}
	st := s.Steps[n-1]
	if v.Title != st.Title {
		add("#step-title = %q, want the native %q", v.Title, st.Title)
	}
	if v.Narration != st.Narration {
		add("#narration = %q,\nwant the native %q", v.Narration, st.Narration)
	}
	var gotIDs, wantIDs []string
	for _, f := range v.Scenes {
		gotIDs = append(gotIDs, f.Kind+":"+f.ID)
	}
	for _, sc := range st.Scenes {
		wantIDs = append(wantIDs, string(sc.Kind)+":"+sc.ID)
	}
	if !slices.Equal(gotIDs, wantIDs) {
		add("figure.scene [data-kind:data-scene-id] = %v, want %v", gotIDs, wantIDs)
		return p
	}
	for i, sc := range st.Scenes {
		f := v.Scenes[i]
		switch {
		case sc.Kind == scene.KindBlockGrid && sc.Grid != nil:
			var owners []int
			var shared []bool
			for _, b := range sc.Grid.Blocks {
				owners = append(owners, b.Owner)
				shared = append(shared, b.Owner != scene.Free && b.Refs > 1)
			}
			if !slices.Equal(f.Owners, owners) {
				add("grid %s: data-owner of the %d cells = %v, want %v", sc.ID, len(f.Owners), f.Owners, owners)
			}
			if !slices.Equal(f.Shared, shared) {
				add("grid %s: cells with class shared = %v, want %v", sc.ID, f.Shared, shared)
			}
		case sc.Kind == scene.KindBlockTables && sc.Tables != nil:
			if len(f.Rows) != len(sc.Tables.Rows) {
				add("block tables %s: %d .bt-row, want %d", sc.ID, len(f.Rows), len(sc.Tables.Rows))
				continue
			}
			for j, r := range sc.Tables.Rows {
				g := f.Rows[j]
				if g.Owner != r.Owner || g.Label != r.Label || !slices.Equal(g.Physical, r.Blocks) {
					add("block tables %s row %d = %+v, want owner %d label %q physical %v", sc.ID, j, g, r.Owner, r.Label, r.Blocks)
				}
			}
		case sc.Kind == scene.KindTimeline && sc.Gantt != nil:
			if len(f.Lanes) != len(sc.Gantt.Lanes) {
				add("timeline %s: %d .tl-lane, want %d", sc.ID, len(f.Lanes), len(sc.Gantt.Lanes))
				continue
			}
			for j, l := range sc.Gantt.Lanes {
				var labels []string
				for _, b := range l.Bars {
					labels = append(labels, b.Label)
				}
				g := f.Lanes[j]
				if g.Label != l.Label || !slices.Equal(g.Bars, labels) {
					add("timeline %s lane %d: label %q, %d spans %v; want %q, %d spans %v", sc.ID, j, g.Label, len(g.Bars), g.Bars, l.Label, len(labels), labels)
				}
			}
		case sc.Kind == scene.KindChart && sc.Chart != nil:
			var names []string
			for _, se := range sc.Chart.Series {
				names = append(names, se.Name)
			}
			if !f.Ready {
				add(`#chart-%s: data-ready is not "true"`, sc.ID)
			} else if !slices.Equal(f.Series, names) {
				add("#chart-%s: series %q, want %q", sc.ID, f.Series, names)
			}
		}
	}
	return p
}

// expectStep waits (bounded) until the page shows step n of s as the native script
// has it, and fails with the differences otherwise.
func (d *lessonsDriver) expectStep(s *lessons.Script, n int) ldView {
	d.t.Helper()
	deadline := time.Now().Add(changeTimeout)
	for {
		v := d.view()
		p := stepProblems(s, n, v)
		if len(p) == 0 {
			return v
		}
		if time.Now().After(deadline) {
			d.fatal("step %d differs from the native script:\n  %s", n, strings.Join(p, "\n  "))
		}
		// The grid and charts are patched in deferred calls after the render that
		// sets data-step: wait for the next frame, not a fixed time.
		if _, err := chromedp.Run(d.ctx, chromedp.Evaluate[chromedp.Void](
			`new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))`, chromedp.EvalAwaitPromise)); err != nil {
			d.fatal("waiting for a frame: %v", err)
		}
	}
}

// expectAdvance waits for the step after prev and checks it against the native script;
// the narration must have changed.
func (d *lessonsDriver) expectAdvance(action string, s *lessons.Script, prev ldView) ldView {
	d.t.Helper()
	n, _ := strconv.Atoi(prev.Step)
	d.waitFor(fmt.Sprintf("#lab[data-step=%d] and step=%d in the address after %s", n+1, n+1, action),
		`document.querySelector("#lab")?.dataset.step === `+jsString(strconv.Itoa(n+1))+` && `+urlStepIs(n+1))
	v := d.expectStep(s, n+1)
	if v.Narration == prev.Narration {
		d.t.Errorf("after %s (step %d → %d): #narration did not change: %.200q", action, n, n+1, v.Narration)
	}
	if v.query().Get("step") != strconv.Itoa(n+1) {
		d.t.Errorf("after %s: location.search = %q, want step=%d", action, v.Search, n+1)
	}
	return v
}

// expectMetrics compares #metrics with the native metrics: same keys in the same
// order, same text.
func (d *lessonsDriver) expectMetrics(s *lessons.Script, v ldView) {
	d.t.Helper()
	var got, want []string
	for _, m := range v.Metrics {
		got = append(got, m[0]+"="+m[1])
	}
	for _, m := range s.Metrics {
		want = append(want, m.Key+"="+strconv.FormatFloat(m.Value, 'f', -1, 64))
	}
	if !slices.Equal(got, want) {
		var diff []string
		for i := range max(len(got), len(want)) {
			g, w := "(none)", "(none)"
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				diff = append(diff, fmt.Sprintf("%s, native %s", g, w))
			}
		}
		d.errorf("#metrics differs from the native lesson:\n  %s", strings.Join(diff, "\n  "))
	}
}

// expectKnobs checks that the form shows each knob's value.
func (d *lessonsDriver) expectKnobs(raw map[string]string) {
	d.t.Helper()
	for k, want := range raw {
		got, err := chromedp.Run(d.ctx, chromedp.Evaluate[string](`document.querySelector(`+jsString("#param-"+k)+`)?.value ?? "(missing)"`))
		if err != nil {
			d.fatal("reading #param-%s: %v", k, err)
		}
		if got != want {
			d.errorf("#param-%s = %q, want %q", k, got, want)
		}
	}
}

// setField types a value into #param-KEY (an input or a select) as a user would:
// the value changes and input and change events fire.
func (d *lessonsDriver) setField(key, value string) {
	d.t.Helper()
	js := `(() => {
  const el = document.querySelector(` + jsString("#param-"+key) + `);
  if (!el) return "(missing)";
  el.focus();
  el.value = ` + jsString(value) + `;
  el.dispatchEvent(new Event("input", {bubbles: true}));
  el.dispatchEvent(new Event("change", {bubbles: true}));
  el.blur();
  return el.value;
})()`
	got, err := chromedp.Run(d.ctx, chromedp.Evaluate[string](js))
	if err != nil || got != value {
		d.fatal("setting #param-%s to %q: got %q, %v", key, value, got, err)
	}
}

// scrub moves the #scrubber range input to step n (1-based) and waits for it.
func (d *lessonsDriver) scrub(n int) {
	d.t.Helper()
	js := `(() => {
  const el = document.querySelector("#scrubber");
  if (!el) return false;
  el.value = ` + jsString(strconv.Itoa(n)) + `;
  el.dispatchEvent(new Event("input", {bubbles: true}));
  return true;
})()`
	ok, err := chromedp.Run(d.ctx, chromedp.Evaluate[bool](js))
	if err != nil || !ok {
		d.fatal("moving #scrubber to %d: %v (found: %v)", n, err, ok)
	}
	d.waitFor(fmt.Sprintf("#lab[data-step=%d] after the scrubber", n),
		`document.querySelector("#lab")?.dataset.step === `+jsString(strconv.Itoa(n)))
}
