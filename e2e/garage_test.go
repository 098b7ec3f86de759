//go:build !wasm

package e2e

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestGarage covers the player of the first lesson: cold and warm loads (timed),
// stepping with the keyboard and the buttons, and re-simulating after a parameter change.
func TestGarage(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.installLiveProbe()
	lessonURL := site + "/lesson/garage"

	// Cold load: fresh profile, empty cache, no service worker.
	cold := b.navigate(lessonURL)
	coldPage := b.liveAtPageMs()
	coldTimes := b.loadTimes()
	s := b.mustState()
	if s.Lesson != "garage" {
		t.Errorf(`#lab[data-lesson] = %q, want "garage"`, s.Lesson)
	}
	if s.Step != "1" {
		t.Errorf(`#lab[data-step] = %q on /lesson/garage, want "1"`, s.Step)
	}
	if s.Narration == "" {
		t.Errorf("#narration is empty on step 1")
	}
	if s.ErrorPanel != "" {
		t.Fatalf("#error-panel is shown: %s", s.ErrorPanel)
	}
	b.screenshot("garage-cold")
	b.checkConsole()

	// Warm load: the service worker serves the app shell from its cache.
	b.waitServiceWorker()
	warm := b.navigate(lessonURL)
	warmPage := b.liveAtPageMs()
	warmTimes := b.loadTimes()
	// cold_ms/warm_ms: wall time from the navigation to #lab[data-live=true];
	// *_page_ms: the same in page time; the rest: what the load was waiting for.
	recordTiming(t, fmt.Sprintf("E2E_TIMING garage cold_ms=%d warm_ms=%d cold_page_ms=%.0f warm_page_ms=%.0f cold_%s warm_%s",
		cold.Milliseconds(), warm.Milliseconds(), coldPage, warmPage,
		strings.ReplaceAll(coldTimes.String(), " ", " cold_"), strings.ReplaceAll(warmTimes.String(), " ", " warm_")))
	b.checkConsole()

	// Keyboard: ArrowRight goes to the next step.
	before := b.mustState()
	b.do("press ArrowRight", changeTimeout, chromedp.KeyEvent(kb.ArrowRight))
	after := b.expectStepAdvance("ArrowRight", before)
	b.checkConsole()

	// Button: #btn-next goes to the next step.
	b.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
	after = b.expectStepAdvance("#btn-next", after)
	if q, _ := url.ParseQuery(strings.TrimPrefix(after.Search, "?")); q.Get("step") != after.Step {
		t.Errorf("location.search = %q after stepping to %s, want step=%s in it", after.Search, after.Step, after.Step)
	}
	b.screenshot("garage-step" + after.Step)
	b.checkConsole()

	// Parameters: a new block size re-simulates, lands in the URL and changes the metrics.
	b.changeBlockSize()
	b.screenshot("garage-block-size")
	b.checkConsole()
}

// expectStepAdvance waits until #lab[data-step] is one more than in before, then checks
// that the narration and the block grid changed with it.
func (b *browser) expectStepAdvance(action string, before labState) labState {
	b.t.Helper()
	n, err := strconv.Atoi(before.Step)
	if err != nil {
		b.fatal("#lab[data-step] = %q before %s, want a number", before.Step, action)
	}
	want := strconv.Itoa(n + 1)
	b.waitFor(fmt.Sprintf("#lab[data-step=%s] and step=%s in the address after %s", want, want, action),
		`document.querySelector("#lab")?.dataset.step === `+jsString(want)+` && `+urlStepIs(n+1))
	// The step attribute and the content render together; give the content the same
	// bounded wait in case they land in different frames.
	changed := `(() => {
  const n = (document.querySelector("#narration")?.textContent ?? "").trim().replace(/\s+/g, " ");
  const blocks = Array.from(document.querySelectorAll(".block-grid .block")).map((e) => e.dataset.owner ?? "").join(",");
  return n !== ` + jsString(before.Narration) + ` && blocks !== ` + jsString(before.Blocks) + `;
})()`
	_ = b.tryWaitFor(changed)
	after := b.mustState()
	if after.Narration == before.Narration {
		b.t.Errorf("after %s (step %s → %s): #narration did not change: %.200q", action, before.Step, after.Step, after.Narration)
	}
	if after.Blocks == before.Blocks {
		b.t.Errorf("after %s (step %s → %s): the block grid (.block-grid .block data-owner, %d blocks) did not change: %.200q",
			action, before.Step, after.Step, after.NBlocks, after.Blocks)
	}
	if after.NBlocks == 0 {
		b.t.Errorf("after %s: step %s shows no .block-grid .block", action, after.Step)
	}
	if after.Live != "true" {
		b.t.Errorf("after %s: #lab[data-live] = %q, want true", action, after.Live)
	}
	return after
}

// changeBlockSize sets #param-block_size, applies the form, and checks the URL and the
// metrics.
func (b *browser) changeBlockSize() {
	b.t.Helper()
	metricKeys := []string{"paged_admitted", "paged_waste_bound_pct"}
	before := b.mustState()
	for _, k := range metricKeys {
		if _, ok := before.Metrics[k]; !ok {
			b.t.Errorf("#metrics [data-metric=%s] is missing; metrics shown: %v", k, before.Metrics)
		}
	}
	cur, err := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS("#param-block_size")))
	if err != nil {
		b.fatal("reading #param-block_size: %v", err)
	}
	next := "32"
	if strings.TrimSpace(cur) == next {
		next = "8"
	}
	setJS := `(() => {
  const el = document.querySelector("#param-block_size");
  el.focus();
  el.value = ` + jsString(next) + `;
  el.dispatchEvent(new Event("input", {bubbles: true}));
  el.dispatchEvent(new Event("change", {bubbles: true}));
  return el.value;
})()`
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](setJS))
	if err != nil || got != next {
		b.fatal("setting #param-block_size from %q to %q: got %q, %v", cur, next, got, err)
	}
	b.do("click #params-apply", changeTimeout, chromedp.Click(chromedp.CSS("#params-apply")))
	b.waitFor("block_size="+next+" in the URL",
		`new URLSearchParams(location.search).get("block_size") === `+jsString(next))

	var conds []string
	for _, k := range metricKeys {
		conds = append(conds, fmt.Sprintf(`metric(%s) !== %s`, jsString(k), jsString(before.Metrics[k])))
	}
	changed := `(() => {
  const metric = (k) => (document.querySelector('#metrics [data-metric="' + k + '"]')?.textContent ?? "").trim().replace(/\s+/g, " ");
  return ` + strings.Join(conds, " || ") + `;
})()`
	err = b.tryWaitFor(changed)
	after := b.mustState()
	if err != nil {
		b.t.Errorf("block_size %s → %s: none of the metrics %v changed: before %v, after %v", cur, next, metricKeys, before.Metrics, after.Metrics)
	}
	if after.Live != "true" {
		b.t.Errorf("after applying block_size=%s: #lab[data-live] = %q, want true", next, after.Live)
	}
	if after.Notice != "" {
		b.t.Errorf("after applying the valid block_size=%s: #notice = %q, want empty", next, after.Notice)
	}
	if after.ErrorPanel != "" {
		b.t.Errorf("after applying block_size=%s: #error-panel shown: %s", next, after.ErrorPanel)
	}
	if v, _ := chromedp.Run(b.ctx, chromedp.Value(chromedp.CSS("#param-block_size"))); v != next {
		b.t.Errorf("#param-block_size = %q after applying, want %q", v, next)
	}
}

// TestGarageURLState covers deep links: the step and the parameters come from the URL,
// and invalid values show a notice naming the knob and fall back to defaults.
func TestGarageURLState(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			b.t = st
			defer func() { b.t = t }()
			f(st)
		})
	}

	run("step and a bad block_size", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=5&block_size=zero")
		s := b.mustState()
		if s.Step != "5" {
			t.Errorf(`#lab[data-step] = %q on ?step=5&block_size=zero, want "5"`, s.Step)
		}
		if !strings.Contains(s.Notice, "block_size") {
			t.Errorf("#notice = %q, want a message naming block_size", s.Notice)
		}
		if s.ErrorPanel != "" {
			t.Errorf("#error-panel shown: %s", s.ErrorPanel)
		}
		if s.Narration == "" || s.NBlocks == 0 {
			t.Errorf("step 5 with defaults shows no narration or no blocks: %s", s)
		}
		b.screenshot("garage-notice-block_size")
		b.checkConsole()
	})

	run("prompt_min greater than prompt_max", func(t *testing.T) {
		q := url.Values{"prompt_min": {"1200"}, "prompt_max": {"600"}}
		b.navigate(site + "/lesson/garage?" + q.Encode())
		s := b.mustState()
		if !strings.Contains(s.Notice, "prompt_min") && !strings.Contains(s.Notice, "prompt_max") {
			t.Errorf("#notice = %q, want a message naming prompt_min or prompt_max", s.Notice)
		}
		if s.ErrorPanel != "" {
			t.Errorf("#error-panel shown: %s", s.ErrorPanel)
		}
		if s.Live != "true" || s.Narration == "" {
			t.Errorf("page not alive after the rejected parameters: %s", s)
		}
		b.screenshot("garage-notice-prompt")
		// Still interactive: the next step renders.
		b.do("click #btn-next", changeTimeout, chromedp.Click(chromedp.CSS("#btn-next")))
		b.expectStepAdvance("#btn-next after a notice", s)
		b.checkConsole()
	})

	// Browsers limit history writes (Safari: 100 in 30 s), so quick stepping
	// writes the address once, when it pauses, not once per step.
	run("fast stepping writes the address once", func(t *testing.T) {
		b.navigate(site + "/lesson/garage?step=2")
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[chromedp.Void](`(() => {
  document.activeElement?.blur();
  window.__e2eWrites = 0;
  const replace = history.replaceState.bind(history);
  history.replaceState = (...a) => { window.__e2eWrites++; return replace(...a); };
})()`)); err != nil {
			b.fatal("counting history writes: %v", err)
		}
		// Six presses in one task: as fast as a held key, whatever the machine.
		evalJS[bool](b, `(() => { for (let i = 0; i < 6; i++) window.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight", bubbles: true})); return true; })()`)
		b.waitFor("step 8 in the address", `document.querySelector("#lab")?.dataset.step === "8" && `+urlStepIs(8))
		b.waitFor("no address write pending", `document.querySelector("#lab[data-url-pending]") === null`)
		writes := evalJS[int](b, `window.__e2eWrites`)
		if writes != 1 {
			t.Errorf("6 quick steps wrote the address %d times, want once", writes)
		}
	})
}
