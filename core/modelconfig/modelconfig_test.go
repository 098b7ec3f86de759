package modelconfig

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// published are real models' config.json files, transcribed into testdata/
// from the Hugging Face repository named beside each (docs/SOURCES.md,
// "Configurations read by core/modelconfig"), with the total parameter
// count the model card or repository publishes and the KV bytes one token
// takes in BF16 (docs/SOURCES.md#kv-bytes-per-token).
var published = []struct {
	file      string
	params    float64 // published total
	kvBytes   int64   // BF16, all layers
	attention string
	dense     bool
	profile   string // the lab's own profile of the same model, if any
}{
	// meta-llama/Llama-3.1-8B: 8.03 B; 2 · 32 layers · 8 KV heads · 128 · 2 B.
	{"llama-3.1-8b.json", 8.03e9, 131_072, hardware.GQA, true, "llama-3.1-8b"},
	// meta-llama/Llama-3.1-70B: 70.6 B; 2 · 80 · 8 · 128 · 2 B.
	{"llama-3.1-70b.json", 70.6e9, 327_680, hardware.GQA, true, "llama-3.1-70b"},
	// mistralai/Mistral-7B-v0.1: 7.24 B; 2 · 32 · 8 · 128 · 2 B.
	{"mistral-7b-v0.1.json", 7.24e9, 131_072, hardware.GQA, true, "mistral-7b-v0.1"},
	// Qwen/Qwen2.5-7B: 7.61 B (model card); 2 · 28 · 4 · 128 · 2 B.
	{"qwen2.5-7b.json", 7.61e9, 57_344, hardware.GQA, true, "qwen2.5-7b"},
	// google/gemma-2-9b: 9.24 B; 2 · 42 · 8 · 256 · 2 B.
	{"gemma-2-9b.json", 9.24e9, 344_064, hardware.GQA, true, ""},
	// mistralai/Mixtral-8x7B-v0.1: 46.7 B; 2 · 32 · 8 · 128 · 2 B.
	{"mixtral-8x7b-v0.1.json", 46.7e9, 131_072, hardware.GQA, false, ""},
	// Qwen/Qwen1.5-MoE-A2.7B: 14.3 B (model card); 2 · 24 · 16 · 128 · 2 B (MHA).
	{"qwen1.5-moe-a2.7b.json", 14.3e9, 196_608, hardware.MHA, false, ""},
	// Qwen/Qwen3-8B: 8.2 B (model card); 2 · 36 · 8 · 128 · 2 B.
	{"qwen3-8b.json", 8.2e9, 147_456, hardware.GQA, true, ""},
	// Qwen/Qwen3-30B-A3B: 30.5 B (model card); 2 · 48 · 4 · 128 · 2 B.
	{"qwen3-30b-a3b.json", 30.5e9, 98_304, hardware.GQA, false, ""},
	// deepseek-ai/DeepSeek-V3: 671 B in the main model (the repository's
	// 685 B adds the 14 B multi-token prediction module); MLA: 61 · (512 + 64) · 2 B.
	{"deepseek-v3.json", 671e9, 70_272, hardware.MLA, false, "deepseek-v3"},
	// deepseek-ai/DeepSeek-V2-Lite: 15.7 B; MLA: 27 · (512 + 64) · 2 B.
	{"deepseek-v2-lite.json", 15.7e9, 31_104, hardware.MLA, false, "deepseek-v2-lite"},
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPublishedModels(t *testing.T) {
	for _, tc := range published {
		t.Run(tc.file, func(t *testing.T) {
			c, err := Parse(readTestdata(t, tc.file), strings.TrimSuffix(tc.file, ".json"))
			if err != nil {
				t.Fatal(err)
			}
			m := c.Model
			t.Logf("%s: %d parameters (published %.4g), %d B of KV per token", m.ID, m.Params, tc.params, m.KVBytesPerToken(2))
			if rel := math.Abs(float64(m.Params)-tc.params) / tc.params; rel > 0.02 {
				t.Errorf("params = %d, published %.4g: off by %.2f%%, want within 2%%", m.Params, tc.params, 100*rel)
			}
			if got := m.KVBytesPerToken(2); got != tc.kvBytes {
				t.Errorf("KV bytes per token = %d, want %d", got, tc.kvBytes)
			}
			if got := m.AttentionKind(); got != tc.attention {
				t.Errorf("attention = %s, want %s", got, tc.attention)
			}
			if c.Dense() != tc.dense {
				t.Errorf("Dense() = %v, want %v", c.Dense(), tc.dense)
			}
			if m.NonEmbeddingParams <= 0 || m.NonEmbeddingParams >= m.Params {
				t.Errorf("non-embedding params = %d of %d", m.NonEmbeddingParams, m.Params)
			}
			if want := hardware.CustomModelPrefix + strings.TrimSuffix(tc.file, ".json"); m.ID != want {
				t.Errorf("id = %q, want %q", m.ID, want)
			}
		})
	}
}

// TestAgreesWithProfiles holds the parsed configs to the lab's own profiles
// of the same models: the same shape, so the same KV arithmetic, and the
// same parameter count (the profiles store published totals rounded to
// 10 M, or for DeepSeek the count computed from the config, which Parse
// must reproduce exactly).
func TestAgreesWithProfiles(t *testing.T) {
	for _, tc := range published {
		if tc.profile == "" {
			continue
		}
		t.Run(tc.profile, func(t *testing.T) {
			c, err := Parse(readTestdata(t, tc.file), "")
			if err != nil {
				t.Fatal(err)
			}
			got, want := c.Model, hardware.MustAnyModel(tc.profile)
			type shape struct{ L, D, Q, KV, HD, I, V, Rank, Rope int }
			gs := shape{got.Layers, got.Hidden, got.QHeads, got.KVHeads, got.HeadDim, got.Intermediate, got.Vocab, got.KVLoraRank, got.RopeHeadDim}
			ws := shape{want.Layers, want.Hidden, want.QHeads, want.KVHeads, want.HeadDim, want.Intermediate, want.Vocab, want.KVLoraRank, want.RopeHeadDim}
			if gs != ws {
				t.Errorf("shape %+v, profile %+v", gs, ws)
			}
			if got.TiedEmbeddings != want.TiedEmbeddings {
				t.Errorf("tied = %v, profile %v", got.TiedEmbeddings, want.TiedEmbeddings)
			}
			tol := 0.001
			if c.Model.KVLoraRank > 0 {
				tol = 0
			}
			if rel := math.Abs(float64(got.Params-want.Params)) / float64(want.Params); rel > tol {
				t.Errorf("params = %d, profile %d", got.Params, want.Params)
			}
			if rel := math.Abs(float64(got.NonEmbeddingParams-want.NonEmbeddingParams)) / float64(want.NonEmbeddingParams); rel > tol {
				t.Errorf("non-embedding params = %d, profile %d", got.NonEmbeddingParams, want.NonEmbeddingParams)
			}
		})
	}
}

func TestMixtureOfExperts(t *testing.T) {
	for _, tc := range []struct {
		file                             string
		experts, perToken, shared, layer int
	}{
		{"mixtral-8x7b-v0.1.json", 8, 2, 0, 32},
		{"qwen1.5-moe-a2.7b.json", 60, 4, 1, 24},
		{"qwen3-30b-a3b.json", 128, 8, 0, 48},
		{"deepseek-v3.json", 256, 8, 1, 58}, // the first 3 of 61 layers are dense
		{"deepseek-v2-lite.json", 64, 6, 2, 26},
	} {
		c, err := Parse(readTestdata(t, tc.file), "")
		if err != nil {
			t.Fatal(err)
		}
		if c.Experts != tc.experts || c.ExpertsPerToken != tc.perToken || c.SharedExperts != tc.shared || c.SparseLayers != tc.layer {
			t.Errorf("%s: %d experts, %d per token, %d shared, %d sparse layers; want %d, %d, %d, %d",
				tc.file, c.Experts, c.ExpertsPerToken, c.SharedExperts, c.SparseLayers, tc.experts, tc.perToken, tc.shared, tc.layer)
		}
	}
}

func TestNotes(t *testing.T) {
	for file, want := range map[string]string{
		"mistral-7b-v0.1.json":   "sliding_window 4,096 (every layer) is treated as full attention",
		"gemma-2-9b.json":        "sliding_window 4,096 (every other layer)",
		"deepseek-v3.json":       "multi-token prediction",
		"qwen2.5-7b.json":        "", // use_sliding_window is false
		"mixtral-8x7b-v0.1.json": "", // sliding_window is null
	} {
		c, err := Parse(readTestdata(t, file), "")
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(c.Notes, " ")
		if want == "" && notes != "" || !strings.Contains(notes, want) {
			t.Errorf("%s: notes %q, want %q", file, notes, want)
		}
	}
}

// TestName: the name becomes the id's slug; the config's _name_or_path
// stands in for a missing name.
func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"meta-llama/Llama-3.1-8B":       "llama-3.1-8b",
		"/home/me/ckpt/step_1000/":      "step-1000",
		"My Model (v2)":                 "my-model-v2",
		"":                              "model",
		"\x1b[31m":                      "31m",
		"../..":                         "model",
		strings.Repeat("a", 100):        strings.Repeat("a", 48),
		`C:\models\Qwen2.5-7B-Instruct`: "qwen2.5-7b-instruct",
	} {
		if got, _ := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
	c, err := Parse([]byte(`{"_name_or_path": "org/Tiny-Llama", "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
		"num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.ID != "custom:tiny-llama" || c.Model.Name != "Tiny-Llama" {
		t.Errorf("id %q, name %q", c.Model.ID, c.Model.Name)
	}
	if c.Model.KVHeads != 4 || c.Model.HeadDim != 16 {
		t.Errorf("defaults: kv heads %d, head_dim %d; want 4 (num_attention_heads) and 16 (64/4)", c.Model.KVHeads, c.Model.HeadDim)
	}
}

// TestRefusals: each malformed config is refused with a *FieldError naming
// the field, the value and what is allowed.
func TestRefusals(t *testing.T) {
	base := string(readTestdata(t, "llama-3.1-8b.json"))
	set := func(field, value string) string { // replace one field's value
		i := strings.Index(base, `"`+field+`": `)
		if i < 0 {
			t.Fatalf("no %s in the base config", field)
		}
		j := i + len(field) + 4
		k := j + strings.IndexAny(base[j:], ",\n")
		return base[:j] + value + base[k:]
	}
	drop := func(field string) string {
		i := strings.Index(base, `"`+field+`": `)
		k := i + strings.Index(base[i:], "\n")
		return base[:i] + `"_dropped": 0,` + base[k:]
	}
	v3 := string(readTestdata(t, "deepseek-v3.json"))
	mixtral := string(readTestdata(t, "mixtral-8x7b-v0.1.json"))
	for _, tc := range []struct {
		name, json, field, value, allowed string
	}{
		{"layers missing", drop("num_hidden_layers"), "num_hidden_layers", "", "an integer from 1 to 512"},
		{"layers zero", set("num_hidden_layers", "0"), "num_hidden_layers", "0", "an integer from 1 to 512"},
		{"layers negative", set("num_hidden_layers", "-32"), "num_hidden_layers", "-32", "an integer from 1 to 512"},
		{"layers fraction", set("num_hidden_layers", "32.5"), "num_hidden_layers", "32.5", "an integer"},
		{"layers as text", set("num_hidden_layers", `"32"`), "num_hidden_layers", `"32"`, "an integer"},
		{"layers too many", set("num_hidden_layers", "100000"), "num_hidden_layers", "100000", "an integer from 1 to 512"},
		{"layers huge", set("num_hidden_layers", "1e400"), "num_hidden_layers", "1e400", "an integer"},
		{"hidden too wide", set("hidden_size", "1048576"), "hidden_size", "1048576", "an integer from 1 to 65,536"},
		{"kv heads not a divisor", set("num_key_value_heads", "7"), "num_key_value_heads", "7", "a divisor of num_attention_heads (32): 1, 2, 4, 8, 16, 32"},
		{"kv heads above heads", set("num_key_value_heads", "64"), "num_key_value_heads", "64", "a divisor of num_attention_heads"},
		{"vocab null", set("vocab_size", "null"), "vocab_size", "null", "an integer from 1 to 4,194,304"},
		{"layers round to zero", set("num_hidden_layers", "1e-400"), "num_hidden_layers", "1e-400", "an integer from 1 to 512"},
		{"layers not quite whole", set("num_hidden_layers", "32.0000000000000001"), "num_hidden_layers", "32.0000000000000001", "an integer from 1 to 512"},
		{"positions as list", set("max_position_embeddings", "[131072]"), "max_position_embeddings", "[131072]", "an integer"},
		{"tie as text", set("tie_word_embeddings", `"false"`), "tie_word_embeddings", `"false"`, "true or false"},
		{"unknown type", set("model_type", `"gpt2"`), "model_type", `"gpt2"`, "one of llama, mistral"},
		{"type missing", drop("model_type"), "model_type", "", "one of llama"},
		{"type a number", set("model_type", "7"), "model_type", "7", "a string"},
		{"hidden not split", strings.Replace(set("hidden_size", "4000"), `"num_attention_heads": 32`, `"num_attention_heads": 48`, 1), "hidden_size", "4000", "a multiple of num_attention_heads (48) when head_dim is not given"},
		{"escape in value", set("model_type", `"\u001b[2J"`), "model_type", `"\u001b[2J"`, "one of"},
		{"control character in value", set("model_type", "\"\u0085x\""), "model_type", `"\u0085x"`, "one of"},
		{"mla rank missing", strings.Replace(v3, `"kv_lora_rank": 512,`, "", 1), "kv_lora_rank", "", "an integer from 1 to 65,536"},
		{"mla rope zero", strings.Replace(v3, `"qk_rope_head_dim": 64`, `"qk_rope_head_dim": 0`, 1), "qk_rope_head_dim", "0", "an integer from 1 to 1,024"},
		{"too many active experts", strings.Replace(v3, `"num_experts_per_tok": 8`, `"num_experts_per_tok": 300`, 1), "num_experts_per_tok", "300", "at most the number of routed experts (256)"},
		{"dense layers beyond the model", strings.Replace(v3, `"first_k_dense_replace": 3`, `"first_k_dense_replace": 62`, 1), "first_k_dense_replace", "62", "at most num_hidden_layers (61)"},
		{"shared experts round to zero", strings.Replace(v3, `"n_shared_experts": 1`, `"n_shared_experts": 1e-400`, 1), "n_shared_experts", "1e-400", "an integer from 0 to 64"},
		{"experts missing", strings.Replace(mixtral, `"num_local_experts": 8,`, "", 1), "num_local_experts", "", "an integer from 1 to 1,024"},
		{"experts too many", strings.Replace(mixtral, `"num_local_experts": 8`, `"num_local_experts": 5000`, 1), "num_local_experts", "5000", "an integer from 1 to 1,024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.json), "")
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want a *FieldError", err)
			}
			if fe.Field != tc.field || fe.Value != tc.value || !strings.Contains(fe.Allowed, tc.allowed) {
				t.Errorf("got %s = %q (want %s), want %s = %q (want …%s…)", fe.Field, fe.Value, fe.Allowed, tc.field, tc.value, tc.allowed)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.field) || !strings.Contains(msg, "want") {
				t.Errorf("message %q does not name the field and what is allowed", msg)
			}
		})
	}
}

// TestEveryBadFieldReported: a config with several bad fields names each.
func TestEveryBadFieldReported(t *testing.T) {
	_, err := Parse([]byte(`{"model_type": "llama", "num_hidden_layers": 0, "hidden_size": "big", "num_attention_heads": 32,
		"intermediate_size": 14336, "vocab_size": -1}`), "x")
	for _, f := range []string{"num_hidden_layers = 0", `hidden_size = "big"`, "vocab_size = -1", "max_position_embeddings is missing"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("error %v does not name %s", err, f)
		}
	}
}

func TestNotAnObject(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "not a JSON object",
		"null":                          "it is null",
		"[1, 2]":                        "the top level is a JSON array",
		`"llama"`:                       "the top level is a JSON string",
		"{\n  \"a\": 1,\n}":             "line 3, column 1",
		`{"model_type": "llama"} {}`:    "more follows",
		`{"model_type": "llama"} x`:     "more follows",
		strings.Repeat(" ", MaxBytes+1): "config.json is over 1,048,576 bytes: want at most 1,048,576",
	} {
		_, err := Parse([]byte(in), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%.30q) = %v, want an error saying %q", in, err, want)
		}
	}
}

// TestRegisteredModelReachesModelByID: the parsed model, registered,
// resolves by its id the way a lesson's model knob resolves it.
func TestRegisteredModelReachesModelByID(t *testing.T) {
	c, err := Parse(readTestdata(t, "gemma-2-9b.json"), "my-gemma")
	if err != nil {
		t.Fatal(err)
	}
	if err := hardware.RegisterCustomModel(c.Model); err != nil {
		t.Fatal(err)
	}
	defer hardware.UnregisterCustomModel(c.Model.ID)
	m, err := hardware.ModelByID("custom:my-gemma")
	if err != nil {
		t.Fatal(err)
	}
	if m.KVBytesPerToken(2) != 344_064 || m.Params != c.Model.Params {
		t.Errorf("resolved %+v", m)
	}
	if _, err := hardware.AnyModelByID("custom:my-gemma"); err != nil {
		t.Error(err)
	}
	hardware.UnregisterCustomModel(c.Model.ID)
	if _, err := hardware.ModelByID("custom:my-gemma"); !errors.Is(err, hardware.ErrUnknownProfile) {
		t.Errorf("after unregistering: %v", err)
	}
}

func TestSummary(t *testing.T) {
	c, err := Parse(readTestdata(t, "mixtral-8x7b-v0.1.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := "custom:model (mixtral): mixture of experts (2 of 8 routed experts per token), GQA attention, 32 layers, 46.70 B parameters, 131,072 B of KV per token in BF16"
	if got := c.Summary(); got != want {
		t.Errorf("Summary() =\n  %s\nwant\n  %s", got, want)
	}
}

// FuzzParse: no input makes Parse panic, and every accepted config gives a
// model the registry takes, with positive counts that add up.
func FuzzParse(f *testing.F) {
	for _, tc := range published {
		f.Add(readTestdata(f, tc.file))
	}
	f.Add([]byte(`{"model_type": "qwen2_moe", "num_hidden_layers": 3, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8,
		"vocab_size": 4, "max_position_embeddings": 4, "num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 4, "mlp_only_layers": [0, 2]}`))
	f.Add([]byte(`{"model_type": "deepseek_v2", "num_hidden_layers": 1, "hidden_size": 1, "num_attention_heads": 1, "intermediate_size": 1,
		"vocab_size": 1, "max_position_embeddings": 1, "kv_lora_rank": 1, "qk_rope_head_dim": 1, "qk_nope_head_dim": 0, "v_head_dim": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		m := c.Model
		if m.Params <= 0 || m.NonEmbeddingParams <= 0 || m.NonEmbeddingParams >= m.Params || m.KVBytesPerToken(2) <= 0 {
			t.Fatalf("accepted %q with params %d, non-embedding %d, KV %d", data, m.Params, m.NonEmbeddingParams, m.KVBytesPerToken(2))
		}
		if err := hardware.RegisterCustomModel(m); err != nil {
			t.Fatalf("accepted %q, but the registry refuses it: %v", data, err)
		}
		hardware.UnregisterCustomModel(m.ID)
	})
}

// A config.json saved with a UTF-8 byte-order mark (as some Windows
// editors save it) was refused as `invalid character 'ï'`, where a trace
// with one is read; it reads as the same config without it.
func TestByteOrderMark(t *testing.T) {
	data := readTestdata(t, "llama-3.1-8b.json")
	want, err := Parse(data, "x")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(append([]byte("\ufeff"), data...), "x")
	if err != nil {
		t.Fatalf("with a byte-order mark: %v", err)
	}
	if got.Summary() != want.Summary() || got.Model.Params != want.Model.Params {
		t.Errorf("with a byte-order mark: %s, want %s", got.Summary(), want.Summary())
	}
	if _, err := Parse(append([]byte("\ufeff\ufeff"), data...), "x"); err == nil {
		t.Error("two byte-order marks accepted: only one opens a file")
	}
}
