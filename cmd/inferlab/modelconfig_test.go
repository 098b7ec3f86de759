package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// configs are real models' config.json files (core/modelconfig/testdata,
// each from the Hugging Face repository its test names).
func configFile(name string) string {
	return filepath.Join("..", "..", "core", "modelconfig", "testdata", name)
}

type runOutput struct {
	Params  map[string]any     `json:"params"`
	Steps   int                `json:"steps"`
	Metrics map[string]float64 `json:"metrics"`
}

func runJSON(t *testing.T, args ...string) runOutput {
	t.Helper()
	code, out, errOut := run(args...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, errOut)
	}
	var r runOutput
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return r
}

// A Llama-3.1-8B config.json in kv-budget sizes the same pool as the
// built-in profile of that model: the same KV bytes per token, and the
// same tokens within the profile's rounding of the parameter count
// (8.03 B stored, 8,030,261,248 computed).
func TestModelConfigMatchesProfile(t *testing.T) {
	custom := runJSON(t, "run", "kv-budget", "--model-config", configFile("llama-3.1-8b.json"), "--format", "json")
	builtin := runJSON(t, "run", "kv-budget", "--set", "model=llama-3.1-8b", "--format", "json")
	if custom.Params["model"] != "custom:llama-3.1-8b" {
		t.Errorf("model = %v, want custom:llama-3.1-8b", custom.Params["model"])
	}
	if c, b := custom.Metrics["kv_bytes_per_token"], builtin.Metrics["kv_bytes_per_token"]; c != 131072 || b != c {
		t.Errorf("kv_bytes_per_token %v, built-in %v, want 131072", c, b)
	}
	c, b := custom.Metrics["kv_tokens"], builtin.Metrics["kv_tokens"]
	if c <= 0 || math.Abs(c-b)/b > 0.001 {
		t.Errorf("kv_tokens %v, built-in %v: want within 0.1%%", c, b)
	}
	// DeepSeek-V3 (MLA, a mixture of experts) sizes memory in kv-budget:
	// its config gives exactly the lab's profile, so exactly its figures.
	sets := []string{"--set", "gpu=b200", "--set", "tp=8", "--set", "weights=fp8", "--format", "json"}
	ds := runJSON(t, append([]string{"run", "kv-budget", "--model-config", configFile("deepseek-v3.json")}, sets...)...)
	dsBuiltin := runJSON(t, append([]string{"run", "kv-budget", "--set", "model=deepseek-v3"}, sets...)...)
	if len(ds.Metrics) == 0 || ds.Metrics["kv_bytes_per_token"] != 70272 {
		t.Errorf("DeepSeek-V3: %v", ds.Metrics)
	}
	for k, v := range dsBuiltin.Metrics {
		if ds.Metrics[k] != v {
			t.Errorf("DeepSeek-V3 %s = %v from the config, %v from the profile", k, ds.Metrics[k], v)
		}
	}
	if _, err := hardware.ModelByID("custom:llama-3.1-8b"); err == nil {
		t.Error("the custom model is still registered after the command")
	}
}

// The sandbox prices a mixture of experts from its config.json (Lesson.MoE):
// Mixtral-8x7B on two H100s, as the measured runs served it, decodes each
// token in about the time the measured runs' TPOT says (18–21 ms at TP 2,
// docs/VALIDATION.md), slower than the dense 8B it is compared with, whose
// active parameters are fewer; a lesson without Lesson.MoE refuses it and
// names the sandbox.
func TestModelConfigMoEInTheSandbox(t *testing.T) {
	sets := []string{"--set", "tp=2", "--set", "requests=100", "--format", "json"}
	moe := runJSON(t, append([]string{"run", "sandbox", "--model-config", configFile("mixtral-8x7b-v0.1.json")}, sets...)...)
	dense := runJSON(t, append([]string{"run", "sandbox", "--set", "model=llama-3.1-8b"}, sets...)...)
	if moe.Params["model"] != "custom:mixtral-8x7b-v0.1" {
		t.Errorf("model = %v, want custom:mixtral-8x7b-v0.1", moe.Params["model"])
	}
	if itl := moe.Metrics["itl_p50_ms"]; itl < 12 || itl > 25 || itl <= dense.Metrics["itl_p50_ms"] {
		t.Errorf("Mixtral's ITL p50 %v ms (dense 8B %v ms): want 12–25 ms, above the dense model's", itl, dense.Metrics["itl_p50_ms"])
	}
	code, _, errOut := run("run", "measuring", "--model-config", configFile("mixtral-8x7b-v0.1.json"))
	if code != 2 || !strings.Contains(errOut, "(sandbox)") {
		t.Errorf("measuring with Mixtral: exit %d, %q; want 2, naming the sandbox", code, errOut)
	}
}

// Every lesson that picks a model runs on a dense model from a config.json.
func TestModelConfigInEveryModelLesson(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every lesson with a model knob")
	}
	slugs := modelLessons(false)
	if len(slugs) < 10 {
		t.Fatalf("only %d lessons pick a model: %v", len(slugs), slugs)
	}
	for _, slug := range slugs {
		r := runJSON(t, "run", slug, "--model-config", configFile("llama-3.1-8b.json"), "--format", "json")
		if r.Params["model"] != "custom:llama-3.1-8b" || len(r.Metrics) == 0 || r.Steps == 0 {
			t.Errorf("%s: model %v, %d metrics, %d steps", slug, r.Params["model"], len(r.Metrics), r.Steps)
		}
	}
}

func TestModelConfigText(t *testing.T) {
	code, out, errOut := run("run", "kv-budget", "--model-config", configFile("mistral-7b-v0.1.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"model from " + configFile("mistral-7b-v0.1.json") + ": custom:mistral-7b-v0.1 (mistral): dense, GQA attention, 32 layers, 7.24 B parameters, 131,072 B of KV per token in BF16",
		"note: sliding_window 4,096 (every layer) is treated as full attention",
		"model=custom:mistral-7b-v0.1",
		"Metrics:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%.600s", want, out)
		}
	}
}

// Bad files and misuses exit 2 naming the field, the value and what is
// allowed, or what is wrong with the file.
func TestModelConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	llama, err := os.ReadFile(configFile("llama-3.1-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	badKV := write("bad-kv.json", strings.Replace(string(llama), `"num_key_value_heads": 8`, `"num_key_value_heads": 7`, 1))
	noLayers := write("no-layers.json", strings.Replace(string(llama), `"num_hidden_layers": 32,`, "", 1))
	lite, err := os.ReadFile(configFile("deepseek-v2-lite.json"))
	if err != nil {
		t.Fatal(err)
	}
	denseMLA := write("dense-mla.json", strings.Replace(string(lite), `"n_routed_experts": 64,`, "", 1))
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"kv heads", []string{"run", "measuring", "--model-config", badKV}, []string{"--model-config " + badKV, "num_key_value_heads = 7 is not allowed", "a divisor of num_attention_heads (32)"}},
		{"missing field", []string{"run", "kv-budget", "--model-config", noLayers}, []string{"num_hidden_layers is missing", "an integer from 1 to 512"}},
		{"not json", []string{"run", "kv-budget", "--model-config", write("x.json", "{\"model_type\": llama}")}, []string{"not a JSON object", "line 1, column 16"}},
		{"unknown type", []string{"run", "kv-budget", "--model-config", write("gpt2.json", `{"model_type": "gpt2"}`)}, []string{`model_type = "gpt2" is not allowed`, "one of llama, mistral"}},
		{"missing file", []string{"run", "kv-budget", "--model-config", filepath.Join(dir, "none.json")}, []string{"no such file"}},
		{"directory", []string{"run", "kv-budget", "--model-config", dir}, []string{"is a directory: want a regular file holding a config.json"}},
		{"no model knob", []string{"run", "garage", "--model-config", configFile("llama-3.1-8b.json")}, []string{"lessons that pick a model", "kv-budget", "not garage"}},
		{"moe in a priced lesson", []string{"run", "measuring", "--model-config", configFile("mixtral-8x7b-v0.1.json")}, []string{"custom:mixtral-8x7b-v0.1 is a mixture of experts", "dense decoders", "(kv-budget)"}},
		{"moe and mla in a priced lesson", []string{"run", "roofline", "--model-config", configFile("deepseek-v2-lite.json")}, []string{"custom:deepseek-v2-lite is a mixture of experts"}},
		{"mla in a priced lesson", []string{"run", "sandbox", "--model-config", denseMLA}, []string{"custom:dense-mla uses multi-head latent attention"}},
		{"two models", []string{"run", "kv-budget", "--model-config", configFile("llama-3.1-8b.json"), "--set", "model=qwen2.5-7b"}, []string{"--set model=qwen2.5-7b and --model-config", "give one"}},
		{"given twice", []string{"run", "kv-budget", "--model-config", badKV, "--model-config", noLayers}, []string{"given twice"}},
		{"too large for the gpu", []string{"run", "measuring", "--model-config", configFile("llama-3.1-70b.json")}, []string{`model = "custom:llama-3.1-70b" is not allowed`}},
		{"the lesson's own checks", []string{"run", "speculative-decoding", "--model-config", configFile("mistral-7b-v0.1.json")}, []string{`model = "custom:mistral-7b-v0.1" is not allowed with draft`, "vocabulary (32,000 tokens"}},
		{"diff too", []string{"diff", "measuring", "--model-config", badKV, "--vs", "gpu=b200"}, []string{"inferlab diff measuring", "num_key_value_heads = 7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.args...)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %.100q; want 2 and nothing", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
	// The same model named both ways is one choice, not two.
	if code, _, errOut := run("run", "kv-budget", "--model-config", configFile("llama-3.1-8b.json"), "--set", "model=custom:llama-3.1-8b", "--format", "json"); code != 0 {
		t.Errorf("--set model=custom:llama-3.1-8b with its config: exit %d: %s", code, errOut)
	}
}

func TestConfigName(t *testing.T) {
	for in, want := range map[string]string{
		"my-llama.json":                        "my-llama",
		"models/Llama-3.1-8B/config.json":      "Llama-3.1-8B",
		filepath.Join("a", "b", "CONFIG.JSON"): "b",
		"weights.v2.json":                      "weights.v2",
	} {
		if got := configName(in); got != want {
			t.Errorf("configName(%q) = %q, want %q", in, got, want)
		}
	}
}
