//go:build !wasm

package e2e

// Bring your own model and GPU (app/byo.go): a config.json pasted into the
// parameters form is read in the page's wasm, offered and selected as
// model=custom:NAME, simulated by the worker on it, and carried by the
// address as a token; a GPU's five figures likewise.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferlab/inferlab/app/urlstate"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/lessons"
)

// testConfig is a published config.json from core/modelconfig/testdata.
func testConfig(t *testing.T, file string) (path string, text string) {
	t.Helper()
	path = filepath.Join(repoRoot, "core", "modelconfig", "testdata", file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, string(b)
}

// byoNative runs a lesson natively on a parsed config (and a custom GPU,
// when given), as `inferlab run --model-config` does, and returns its
// metrics in the page's number format.
func byoNative(t *testing.T, slug, file string, gpu *hardware.CustomGPUSpec, knobs map[string]string) map[string]string {
	t.Helper()
	add := map[string]string{}
	if file != "" {
		_, text := testConfig(t, file)
		cfg, err := modelconfig.Parse([]byte(text), strings.TrimSuffix(file, ".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := hardware.RegisterCustomModel(cfg.Model); err != nil {
			t.Fatal(err)
		}
		defer hardware.UnregisterCustomModel(cfg.Model.ID)
		add["model"] = cfg.Model.ID
	}
	if gpu != nil {
		g, err := hardware.RegisterCustomGPU(*gpu)
		if err != nil {
			t.Fatal(err)
		}
		defer hardware.UnregisterCustomGPU(g.ID)
		add["gpu"] = g.ID
	}
	s, _, err := urlstate.WithChoices(lessons.Get(slug), add).Run(knobs)
	if err != nil {
		t.Fatalf("%s %v natively: %v", slug, knobs, err)
	}
	out := map[string]string{}
	for _, m := range s.Metrics {
		out[m.Key] = strconv.FormatFloat(m.Value, 'f', -1, 64)
	}
	return out
}

// sameMetrics reports every metric the page shows differently from want.
func sameMetrics(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: the page shows %d metrics, the native run has %d", what, len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s shows %q, the native run gives %s", what, k, got[k], w)
		}
	}
}

// pasteConfig names the model and pastes text into #byo-config, as a
// reader's paste fires it (an input event of inputType insertFromPaste).
func (b *browser) pasteConfig(name, text string) {
	b.t.Helper()
	if !evalJS[bool](b, `document.querySelector("#byo-model").open`) {
		b.do("open Your model", changeTimeout, chromedp.Click(chromedp.CSS("#byo-model summary")))
	}
	evalJS[bool](b, `(() => {
  const n = document.querySelector("#byo-config-name");
  n.value = `+jsString(name)+`;
  n.dispatchEvent(new Event("input", {bubbles: true}));
  const t = document.querySelector("#byo-config");
  t.value = `+jsString(text)+`;
  t.dispatchEvent(new InputEvent("input", {bubbles: true, inputType: "insertFromPaste"}));
  return true;
})()`)
}

// knobShown is true once the page is settled showing knob key = value.
func knobShown(key, value string) string {
	return settledJS + ` && new URLSearchParams(document.querySelector("#lab").dataset.query).get(` + jsString(key) + `) === ` + jsString(value)
}

// TestBYOModel: a published config.json pasted into kv-budget and into
// measuring is offered and selected as custom:NAME; the page's metrics
// equal the lesson run natively on the parsed file (and, for kv-budget,
// `inferlab run --model-config`); the shared address, reloaded, gives the
// same figures, in a browser without workers too; a malformed config is
// refused with the field named, and a bad token in an address is a notice.
func TestBYOModel(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	cases := []struct {
		slug, file, name string
		knobs            map[string]string
	}{
		{"kv-budget", "gemma-2-9b.json", "gemma-2-9b", map[string]string{"max_model_len": "4096"}},
		{"measuring", "qwen3-8b.json", "qwen3-8b", map[string]string{"points": "2", "duration_s": "5", "rate_max": "16"}},
	}
	shared := map[string]string{}
	for _, c := range cases {
		subtest(t, b, "paste/"+c.slug, func(t *testing.T) {
			l := lessons.Get(c.slug)
			v, errs := l.Resolve(c.knobs)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			b.navigate(site + "/lesson/" + c.slug + "?" + urlstate.EncodeQuery(l, v, 1))
			_, text := testConfig(t, c.file)
			b.pasteConfig(c.name, text)
			id := "custom:" + c.name
			b.awaitCondition(id+" selected and simulated", liveTimeout, knobShown("model", id))
			b.waitFor("the address carrying the model", `new URLSearchParams(location.search).get("mc")?.startsWith("v1.")`)
			knobs := map[string]string{"model": id}
			for k, x := range c.knobs {
				knobs[k] = x
			}
			want := byoNative(t, c.slug, c.file, nil, knobs)
			sameMetrics(t, c.slug+" pasted", b.mustState().Metrics, want)
			if status := evalJS[string](b, `document.querySelector("#byo-model-status").dataset.model`); status != id {
				t.Errorf("#byo-model-status names %q, want %s", status, id)
			}
			if c.slug == "kv-budget" {
				path, _ := testConfig(t, c.file)
				args := []string{"run", "./cmd/inferlab", "run", c.slug, "--model-config", path, "--format", "json"}
				for k, x := range c.knobs {
					args = append(args, "--set", k+"="+x)
				}
				var cli struct {
					Metrics map[string]float64 `json:"metrics"`
				}
				if err := json.Unmarshal(goCmd(t, args...), &cli); err != nil {
					t.Fatal(err)
				}
				for k, x := range cli.Metrics {
					if w := strconv.FormatFloat(x, 'f', -1, 64); want[k] != w {
						t.Errorf("%s: the CLI's --model-config gives %s, the page %s", k, w, want[k])
					}
				}
				// axe-core finds nothing on the page with both forms open.
				evalJS[bool](b, `(document.querySelector("#byo-gpu").open = true, true)`)
				b.nextFrame()
				b.runAxe(axeSource(t), "kv-budget with Your model and Your GPU open")
				evalJS[bool](b, `(document.querySelector("#byo-gpu").open = false, true)`)
				evalJS[bool](b, `(document.querySelector("#byo-model").scrollIntoView(), true)`)
				b.screenshot("byo-kv-budget-model-laptop")
				b.viewport(375, 740)
				evalJS[bool](b, `(document.querySelector("#byo-model").scrollIntoView(), true)`)
				b.screenshot("byo-kv-budget-model-phone")
				b.viewport(1280, 800)
				evalJS[bool](b, `(document.querySelector("#param-model").scrollIntoView({block: "center"}), true)`)
				b.screenshot("byo-kv-budget-knob-1280")
				b.viewport(1200, 900)
			}
			shared[c.slug] = evalJS[string](b, `location.href`)

			b.navigate(shared[c.slug])
			b.awaitCondition("the shared address's state", liveTimeout, knobShown("model", id))
			if st := b.mustState(); st.Notice != "" {
				t.Errorf("reloading the shared address: notice %q", st.Notice)
			}
			sameMetrics(t, c.slug+" reloaded", b.mustState().Metrics, want)
		})
	}

	subtest(t, b, "a paste starts the app", func(t *testing.T) {
		// The prerendered page, before the app: the paste is its first
		// interaction (web/lab.js starts the app and hands the text over).
		b.do("open kv-budget without starting the app", liveTimeout,
			chromedp.Navigate(site+"/lesson/kv-budget"), chromedp.WaitVisible(chromedp.CSS("#lab")))
		b.waitFor("the page's script ready", `document.readyState === "complete"`)
		if started := evalJS[string](b, `String(window.inferlab.started || "")`); started != "" {
			t.Fatalf("the app started before the paste (%q): the test proves nothing", started)
		}
		_, text := testConfig(t, "mistral-7b-v0.1.json")
		evalJS[bool](b, `(document.querySelector("#byo-model").open = true, true)`)
		b.do("click into the text area", changeTimeout, chromedp.Click(chromedp.CSS("#byo-config")))
		evalJS[bool](b, `(() => {
  const t = document.querySelector("#byo-config");
  if (!t) return false; // the app has drawn its page already: the paste goes to its own
  t.value = `+jsString(text)+`;
  t.dispatchEvent(new InputEvent("input", {bubbles: true, inputType: "insertFromPaste"}));
  return true;
})()`)
		b.awaitCondition("the pasted model (no name given: custom:model) simulated", liveTimeout, knobShown("model", "custom:model"))
		want := byoNative(t, "kv-budget", "mistral-7b-v0.1.json", nil, map[string]string{"model": "custom:mistral-7b-v0.1"})
		sameMetrics(t, "kv-budget pasted before the app", b.mustState().Metrics, want)
	})

	subtest(t, b, "malformed config", func(t *testing.T) {
		b.navigate(site + "/lesson/measuring")
		_, text := testConfig(t, "llama-3.1-8b.json")
		b.pasteConfig("bad", strings.Replace(text, `"num_key_value_heads": 8`, `"num_key_value_heads": 7`, 1))
		want := "config.json: num_key_value_heads = 7 is not allowed: want a divisor of num_attention_heads (32)"
		b.waitFor("the field's error", `(() => { const e = document.querySelector("#byo-model-error"); return !e.hidden && e.textContent.includes(`+jsString(want)+`); })()`)
		if q := evalJS[string](b, `new URLSearchParams(document.querySelector("#lab").dataset.query).get("model")`); q != "llama-3.1-8b" {
			t.Errorf("after a refused config the model is %q, want the default", q)
		}
		// A mixture of experts is refused by a lesson that prices steps.
		_, moe := testConfig(t, "mixtral-8x7b-v0.1.json")
		b.pasteConfig("mixtral", moe)
		b.waitFor("the mixture of experts refused", `document.querySelector("#byo-model-error").textContent.includes("custom:mixtral is a mixture of experts")`)
	})

	subtest(t, b, "bad token in the address", func(t *testing.T) {
		b.navigate(site + "/lesson/kv-budget?model=custom:x&mc=v1.llama.32")
		b.waitFor("the token's notice", noticeHas("The address's own model is not used (mc: token = "))
		b.waitFor("the model knob's notice", noticeHas(`= "custom:x" is not allowed`))
		if st := b.mustState(); st.Live != "true" || st.ErrorPanel != "" || !strings.Contains(st.Search, "model=llama-3.1-8b") {
			t.Errorf("state %v: want the lesson live at its default model", st)
		}
	})

	nw := newBrowser(t)
	addScriptOnNewDocument(nw, "delete window.Worker;")
	subtest(t, nw, "no worker", func(t *testing.T) {
		nw.navigate(shared["measuring"])
		nw.awaitCondition("the shared address's state without workers", liveTimeout, knobShown("model", "custom:qwen3-8b"))
		if s := nw.simStats(); s.Workers != 0 || s.PageRuns < 1 {
			t.Errorf("without Worker: %+v", s)
		}
		want := byoNative(t, "measuring", "qwen3-8b.json", nil, map[string]string{"model": "custom:qwen3-8b", "points": "2", "duration_s": "5", "rate_max": "16"})
		sameMetrics(t, "measuring without workers", nw.mustState().Metrics, want)
	})
}

// TestBYOGPU: a GPU's figures typed into kv-budget's "Your GPU" form are
// checked at their fields, offered and selected as gpu=custom:NAME, and
// change the KV figure as `inferlab run --gpu-config` says; the address
// carries the GPU.
func TestBYOGPU(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	fill := func(figures map[string]string) {
		b.t.Helper()
		if !evalJS[bool](b, `document.querySelector("#byo-gpu").open`) {
			b.do("open Your GPU", changeTimeout, chromedp.Click(chromedp.CSS("#byo-gpu summary")))
		}
		for k, x := range figures {
			evalJS[bool](b, `(() => { const e = document.querySelector("#byo-gpu-`+k+`"); e.value = `+jsString(x)+`; e.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`)
		}
		b.do("click Use this GPU", changeTimeout, chromedp.Click(chromedp.CSS("#byo-gpu-use")))
	}
	b.navigate(site + "/lesson/kv-budget")
	before := b.mustState().Metrics["kv_tokens"]

	subtest(t, b, "out of bounds", func(t *testing.T) {
		fill(map[string]string{"name": "tiny", "memory_gib": "4"})
		b.waitFor("the field's error", `(document.querySelector("#byo-gpu-error-memory_gib")?.textContent ?? "").includes("memory_gib = 4 is not allowed: want a number from 8 to 1,024 (GiB)")`)
		if q := evalJS[string](b, `new URLSearchParams(document.querySelector("#lab").dataset.query).get("gpu")`); q != "h100-sxm" {
			t.Errorf("gpu %q after a refused figure, want h100-sxm", q)
		}
	})

	subtest(t, b, "a bigger H100", func(t *testing.T) {
		figures := map[string]string{"name": "big-h100", "memory_gib": "158.38", "hbm_gbps": "3350", "bf16_tflops": "989.4", "fp8_tflops": "1979", "interconnect_gbps": "450"}
		fill(figures)
		b.awaitCondition("custom:big-h100 selected and simulated", liveTimeout, knobShown("gpu", "custom:big-h100"))
		b.waitFor("the address carrying the GPU", `new URLSearchParams(location.search).get("gc") === "v1_158.38_3350_989.4_1979_450_big-h100"`)
		got := b.mustState().Metrics["kv_tokens"]

		file := filepath.Join(t.TempDir(), "big-h100.json")
		body := `{"memory_gib": 158.38, "hbm_gbps": 3350, "bf16_tflops": 989.4, "fp8_tflops": 1979, "interconnect_gbps": 450}`
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		var cli struct {
			Params  map[string]any     `json:"params"`
			Metrics map[string]float64 `json:"metrics"`
		}
		if err := json.Unmarshal(goCmd(t, "run", "./cmd/inferlab", "run", "kv-budget", "--gpu-config", file, "--format", "json"), &cli); err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatFloat(cli.Metrics["kv_tokens"], 'f', -1, 64); got != want || cli.Params["gpu"] != "custom:big-h100" {
			t.Errorf("kv_tokens on custom:big-h100: the page shows %s, `inferlab run --gpu-config` gives %s (gpu %v)", got, want, cli.Params["gpu"])
		}
		if got == before {
			t.Errorf("twice the memory left kv_tokens at %s", got)
		}
		spec := hardware.CustomGPUSpec{Name: "big-h100", MemoryGiB: 158.38, HBMGBps: 3350, BF16TFLOPS: 989.4, FP8TFLOPS: 1979, InterconnectGBps: 450}
		sameMetrics(t, "kv-budget on custom:big-h100", b.mustState().Metrics, byoNative(t, "kv-budget", "", &spec, map[string]string{"gpu": "custom:big-h100"}))
		b.viewport(1280, 800)
		evalJS[bool](b, `(document.querySelector("#byo-gpu").scrollIntoView(), true)`)
		b.screenshot("byo-kv-budget-gpu-1280")
		b.viewport(375, 740)
		evalJS[bool](b, `(document.querySelector("#byo-gpu").scrollIntoView(), true)`)
		b.screenshot("byo-kv-budget-gpu-phone")
		b.viewport(1200, 900)

		b.navigate(evalJS[string](b, `location.href`))
		b.awaitCondition("the shared address's GPU", liveTimeout, knobShown("gpu", "custom:big-h100"))
		if again := b.mustState().Metrics["kv_tokens"]; again != got {
			t.Errorf("reloaded: kv_tokens %s, want %s", again, got)
		}
	})
}
