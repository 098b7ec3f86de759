package modelconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/internal/textfmt"
)

// MaxBytes bounds the size of a config.json Parse reads. Published
// configs are one to three kilobytes; a megabyte leaves room for a long
// auto_map or quantization block without letting a hostile file cost much.
const MaxBytes = 1 << 20

// Supported lists the model_type values Parse reads, with the
// transformers config class each follows.
var Supported = []string{
	"llama",       // LlamaConfig (Llama 2, 3, 3.1, 3.2, 3.3, CodeLlama)
	"mistral",     // MistralConfig
	"qwen2",       // Qwen2Config (Qwen2, Qwen2.5): QKV bias
	"qwen3",       // Qwen3Config: per-head query and key norms
	"gemma",       // GemmaConfig: tied embeddings
	"gemma2",      // Gemma2Config: tied embeddings, four norms per layer
	"mixtral",     // MixtralConfig: every layer a mixture of experts
	"qwen2_moe",   // Qwen2MoeConfig: routed experts plus a gated shared expert
	"qwen3_moe",   // Qwen3MoeConfig: routed experts, no shared expert
	"deepseek_v2", // DeepseekV2Config: MLA and routed plus shared experts
	"deepseek_v3", // DeepseekV3Config: as V2, with a score-correction bias per expert
}

// Bounds are the ranges Parse holds each integer field to (see the package
// comment for why they keep every count within an int64).
var Bounds = map[string][2]int{
	"num_hidden_layers":               {1, 512},
	"hidden_size":                     {1, 65536},
	"num_attention_heads":             {1, 1024},
	"num_key_value_heads":             {1, 1024},
	"head_dim":                        {1, 1024},
	"intermediate_size":               {1, 262144},
	"vocab_size":                      {1, 4194304},
	"max_position_embeddings":         {1, 16777216},
	"sliding_window":                  {1, 16777216},
	"num_local_experts":               {1, 1024},
	"num_experts":                     {1, 1024},
	"n_routed_experts":                {1, 1024},
	"num_experts_per_tok":             {1, 1024},
	"n_shared_experts":                {0, 64},
	"moe_intermediate_size":           {1, 262144},
	"shared_expert_intermediate_size": {0, 262144},
	"decoder_sparse_step":             {1, 512},
	"first_k_dense_replace":           {0, 512},
	"moe_layer_freq":                  {1, 512},
	"kv_lora_rank":                    {1, 65536},
	"q_lora_rank":                     {1, 65536},
	"qk_rope_head_dim":                {1, 1024},
	"qk_nope_head_dim":                {0, 1024},
	"v_head_dim":                      {1, 1024},
	"num_nextn_predict_layers":        {0, 512},
}

// FieldError is a config.json field Parse refuses: which field, the value
// the file gives, and what is allowed.
type FieldError struct {
	// Field is the config.json key, e.g. "num_key_value_heads".
	Field string
	// Value is the field's JSON text as the file gives it (shortened past
	// 40 bytes), empty when the field is missing.
	Value string
	// Allowed says what the field may be: a range, a type, a relation.
	Allowed string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("config.json: %s is missing: want %s", e.Field, e.Allowed)
	}
	return fmt.Sprintf("config.json: %s = %s is not allowed: want %s", e.Field, e.Value, e.Allowed)
}

// Config is a parsed config.json: the model the lessons take and what the
// lab read beside it.
type Config struct {
	// Model is the shape and the derived parameter counts, named by the
	// name Parse was given (ID is hardware.CustomModelPrefix + a slug of it).
	Model hardware.Model
	// ModelType is the config's model_type, one of Supported.
	ModelType string
	// Experts is the routed experts of each sparse layer and
	// ExpertsPerToken how many of them a token goes through; SharedExperts
	// run for every token (DeepSeek's n_shared_experts; 1 for Qwen2-MoE's
	// shared expert). All zero for a dense model.
	Experts, ExpertsPerToken, SharedExperts int
	// ExpertIntermediate is one routed expert's MLP size.
	ExpertIntermediate int
	// SparseLayers counts the layers whose MLP is a mixture of experts.
	SparseLayers int
	// Notes are the simplifications this config needed, one sentence
	// each (a sliding window treated as full attention, layers not loaded).
	Notes []string

	// What the parameter count reads beyond the shape.
	qLoraRank, vHeadDim, sharedIntermediate int
	attentionBias, mlpBias, scoreBias       bool
}

// Dense reports whether the model is a dense decoder with per-head K and V,
// the shape the step-time model prices: no mixture of experts and no
// latent attention.
func (c *Config) Dense() bool { return c.Experts == 0 && c.Model.KVLoraRank == 0 }

// Summary describes the model in one line: its id, architecture, parameter
// count and BF16 KV bytes per token.
func (c *Config) Summary() string {
	m := c.Model
	kind := "dense"
	if c.Experts > 0 {
		kind = fmt.Sprintf("mixture of experts (%d of %d routed experts per token", c.ExpertsPerToken, c.Experts)
		if c.SharedExperts > 0 {
			kind += fmt.Sprintf(", %d shared", c.SharedExperts)
		}
		kind += ")"
	}
	return fmt.Sprintf("%s (%s): %s, %s attention, %d layers, %s parameters, %s B of KV per token in BF16",
		m.ID, c.ModelType, kind, m.AttentionKind(), m.Layers, billions(m.Params), comma(m.KVBytesPerToken(2)))
}

// Parse reads a config.json. name labels the model (its Name, and its ID
// after hardware.CustomModelPrefix); when empty, the config's
// _name_or_path is used, else "model". Every field it cannot take is
// reported: the error joins one *FieldError per bad field (errors.As finds
// the first), in the order the fields are read. A file that is not a JSON
// object is refused with a plain error.
//
// A UTF-8 byte-order mark before the object is skipped, as a trace's is
// (some Windows editors write one). data over MaxBytes is refused without
// reading it: a caller reads at most MaxBytes + 1 bytes of a file, so its
// length says only that the file is larger.
func Parse(data []byte, name string) (*Config, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("config.json is over %s bytes: want at most %s (published configs are a few kilobytes)", comma(MaxBytes), comma(MaxBytes))
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("config.json is not a JSON object: %v", describeJSONError(data, err))
	}
	if raw == nil {
		return nil, errors.New("config.json is not a JSON object: it is null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("config.json is not one JSON object: more follows the closing brace")
	}
	p := &parser{raw: raw}
	c := p.config(name)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// describeJSONError adds the line and column to a syntax error.
func describeJSONError(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		at := max(min(int(se.Offset), len(data))-1, 0) // Offset counts the offending byte
		line := 1 + bytes.Count(data[:at], []byte("\n"))
		col := at - bytes.LastIndexByte(data[:at], '\n')
		return fmt.Sprintf("%v (line %d, column %d)", se, line, col)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("the top level is a JSON %s", te.Value)
	}
	return err.Error()
}

// parser reads fields, collecting one error per bad field.
type parser struct {
	raw  map[string]json.RawMessage
	errs []error
}

func (p *parser) fail(field string, value json.RawMessage, allowed string) {
	p.errs = append(p.errs, &FieldError{Field: field, Value: shown(value), Allowed: allowed})
}

// failed reports whether field was already refused.
func (p *parser) failed(field string) bool {
	for _, e := range p.errs {
		if fe, ok := e.(*FieldError); ok && fe.Field == field {
			return true
		}
	}
	return false
}

// shown is a field's JSON text for an error message: at most 40 bytes (cut
// at a rune boundary), with control characters escaped so that a value
// cannot send escape sequences to a terminal.
func shown(v json.RawMessage) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			b.WriteString(strconv.QuoteRune(r)[1 : len(strconv.QuoteRune(r))-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// present reports whether the field is given and not null.
func (p *parser) present(field string) bool {
	v, ok := p.raw[field]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// intRange words an integer field's bounds.
func intRange(field string) string {
	b := Bounds[field]
	return fmt.Sprintf("an integer from %s to %s", comma(int64(b[0])), comma(int64(b[1])))
}

// int reads an integer field within its Bounds. A missing (or null) field
// takes def when optional, as transformers reads null, and is refused
// otherwise (a null one as null); ok is false when the field was refused.
// Only text that names an integer is one: a float64 reads 1e-400 as the
// integer 0.
func (p *parser) int(field string, def int, optional bool) (n int, ok bool) {
	if !p.present(field) {
		if optional {
			return def, true
		}
		p.fail(field, p.raw[field], intRange(field))
		return 0, false
	}
	v := p.raw[field]
	var x float64
	if err := json.Unmarshal(v, &x); err != nil || x != math.Trunc(x) || !textfmt.IsWhole(string(bytes.TrimSpace(v))) {
		p.fail(field, v, intRange(field))
		return 0, false
	}
	b := Bounds[field]
	if x < float64(b[0]) || x > float64(b[1]) {
		p.fail(field, v, intRange(field))
		return 0, false
	}
	return int(x), true
}

// bool reads an optional boolean field.
func (p *parser) bool(field string, def bool) bool {
	if !p.present(field) {
		return def
	}
	var b bool
	if err := json.Unmarshal(p.raw[field], &b); err != nil {
		p.fail(field, p.raw[field], "true or false")
		return def
	}
	return b
}

// string reads an optional string field ("" when missing); a value of
// another type is refused.
func (p *parser) string(field string) string {
	if !p.present(field) {
		return ""
	}
	var s string
	if err := json.Unmarshal(p.raw[field], &s); err != nil {
		p.fail(field, p.raw[field], "a string")
	}
	return s
}

// ints reads an optional list of integers, each within [lo, hi).
func (p *parser) ints(field string, lo, hi int) []int {
	if !p.present(field) {
		return nil
	}
	var xs []float64
	allowed := fmt.Sprintf("a list of layer indices from %d to %d", lo, hi-1)
	if err := json.Unmarshal(p.raw[field], &xs); err != nil || len(xs) > hi {
		p.fail(field, p.raw[field], allowed)
		return nil
	}
	out := make([]int, 0, len(xs))
	for _, x := range xs {
		if x != math.Trunc(x) || x < float64(lo) || x >= float64(hi) {
			p.fail(field, p.raw[field], allowed)
			return nil
		}
		out = append(out, int(x))
	}
	return out
}

// config reads every field, in the order a reader would check them.
func (p *parser) config(name string) *Config {
	c := &Config{ModelType: p.string("model_type")}
	if !p.failed("model_type") && !slices.Contains(Supported, c.ModelType) {
		p.fail("model_type", p.raw["model_type"], "one of "+strings.Join(Supported, ", "))
	}
	if p.failed("model_type") {
		return nil // which fields to read depends on the type
	}
	if name == "" {
		name = p.string("_name_or_path")
	}
	id, display := Name(name)
	m := hardware.Model{ID: hardware.CustomModelPrefix + id, Name: display}

	m.Layers, _ = p.int("num_hidden_layers", 0, false)
	m.Hidden, _ = p.int("hidden_size", 0, false)
	heads, headsOK := p.int("num_attention_heads", 0, false)
	m.QHeads = heads
	m.Intermediate, _ = p.int("intermediate_size", 0, false)
	m.Vocab, _ = p.int("vocab_size", 0, false)
	m.MaxPositions, _ = p.int("max_position_embeddings", 0, false)
	m.TiedEmbeddings = p.bool("tie_word_embeddings", strings.HasPrefix(c.ModelType, "gemma"))

	mla := strings.HasPrefix(c.ModelType, "deepseek")
	kvHeads, kvOK := p.int("num_key_value_heads", heads, true)
	if kvOK && headsOK && !mla && heads > 0 && (kvHeads > heads || heads%kvHeads != 0) {
		p.fail("num_key_value_heads", p.raw["num_key_value_heads"], fmt.Sprintf("a divisor of num_attention_heads (%d): %s", heads, divisors(heads)))
	}
	m.KVHeads = kvHeads
	if mla {
		p.latent(c, &m)
	} else {
		m.HeadDim, _ = p.int("head_dim", 0, true)
		if m.HeadDim == 0 && !p.failed("head_dim") && headsOK && m.Hidden > 0 {
			if m.Hidden%heads != 0 {
				p.fail("hidden_size", p.raw["hidden_size"], fmt.Sprintf("a multiple of num_attention_heads (%d) when head_dim is not given", heads))
			}
			m.HeadDim = m.Hidden / heads
		}
	}
	if c.ModelType == "llama" {
		c.attentionBias, c.mlpBias = p.bool("attention_bias", false), p.bool("mlp_bias", false)
	}
	p.experts(c, m)
	p.slidingWindow(c)
	if p.present("quantization_config") {
		c.Notes = append(c.Notes, "quantization_config is not read: the lesson's weight format sets the bytes per weight.")
	}
	if len(p.errs) > 0 {
		return nil
	}
	m.Params = paramCount(c, m)
	m.NonEmbeddingParams = m.Params - embeddingParams(m)
	c.Model = m
	if c.pricedMoE() {
		c.Model.Experts, c.Model.ExpertsPerToken, c.Model.ExpertIntermediate = c.Experts, c.ExpertsPerToken, c.ExpertIntermediate
	}
	return c
}

// pricedMoE reports whether the model is a mixture of experts the step
// model prices (core/hardware's moe.go): experts in every layer, no shared
// expert, per-head K and V (Mixtral, Qwen3-MoE with every layer sparse).
func (c *Config) pricedMoE() bool {
	return c.Experts > 0 && c.ExpertsPerToken > 0 && c.SharedExperts == 0 &&
		c.SparseLayers == c.Model.Layers && c.Model.KVLoraRank == 0
}

// Priced reports whether the step-time model prices the model's steps: a
// dense decoder with per-head K and V, or a mixture of experts of the kind
// moe.go prices. Others are for sizing memory only.
func (c *Config) Priced() bool { return c.Dense() || c.pricedMoE() }

// latent reads DeepSeek's multi-head latent attention: one KV head, as
// vLLM's get_num_kv_heads counts it, of qk_nope_head_dim + qk_rope_head_dim
// query/key dimensions.
func (p *parser) latent(c *Config, m *hardware.Model) {
	m.KVLoraRank, _ = p.int("kv_lora_rank", 0, false)
	m.RopeHeadDim, _ = p.int("qk_rope_head_dim", 0, false)
	nope, _ := p.int("qk_nope_head_dim", 0, false)
	c.vHeadDim, _ = p.int("v_head_dim", 0, false)
	c.qLoraRank, _ = p.int("q_lora_rank", 0, true)
	m.HeadDim = nope + m.RopeHeadDim
	m.KVHeads = 1
	if n, _ := p.int("num_nextn_predict_layers", 0, true); n > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("The %d multi-token prediction layer(s) (num_nextn_predict_layers) are not counted: an engine serving without speculative decoding does not load them.", n))
	}
}

// experts reads the mixture-of-experts fields of the sparse model types.
func (p *parser) experts(c *Config, m hardware.Model) {
	layers := m.Layers
	switch c.ModelType {
	case "mixtral":
		c.Experts, _ = p.int("num_local_experts", 0, false)
		c.ExpertIntermediate = m.Intermediate
		c.SparseLayers = layers
	case "qwen2_moe", "qwen3_moe":
		c.Experts, _ = p.int("num_experts", 0, false)
		c.ExpertIntermediate, _ = p.int("moe_intermediate_size", 0, false)
		if c.ModelType == "qwen2_moe" {
			c.sharedIntermediate, _ = p.int("shared_expert_intermediate_size", 0, true)
			if c.sharedIntermediate > 0 {
				c.SharedExperts = 1
			}
		}
		step, _ := p.int("decoder_sparse_step", 1, true)
		dense := p.ints("mlp_only_layers", 0, max(layers, 1))
		for i := range layers {
			if !slices.Contains(dense, i) && step > 0 && (i+1)%step == 0 {
				c.SparseLayers++
			}
		}
	case "deepseek_v2", "deepseek_v3":
		c.Experts, _ = p.int("n_routed_experts", 0, true)
		if c.Experts == 0 {
			return // a dense DeepSeek: every layer's MLP is intermediate_size
		}
		c.ExpertIntermediate, _ = p.int("moe_intermediate_size", 0, false)
		c.SharedExperts, _ = p.int("n_shared_experts", 0, true)
		first, ok := p.int("first_k_dense_replace", 0, true)
		if ok && first > layers && layers > 0 {
			p.fail("first_k_dense_replace", p.raw["first_k_dense_replace"], fmt.Sprintf("at most num_hidden_layers (%d)", layers))
		}
		freq, _ := p.int("moe_layer_freq", 1, true)
		c.scoreBias = p.string("topk_method") == "noaux_tc"
		for i := range layers {
			if i >= first && freq > 0 && i%freq == 0 {
				c.SparseLayers++
			}
		}
	default:
		return
	}
	k, ok := p.int("num_experts_per_tok", 0, false)
	if ok && c.Experts > 0 && k > c.Experts {
		p.fail("num_experts_per_tok", p.raw["num_experts_per_tok"], fmt.Sprintf("at most the number of routed experts (%d)", c.Experts))
	}
	c.ExpertsPerToken = k
}

// slidingWindow notes a sliding window the lab treats as full attention.
func (p *parser) slidingWindow(c *Config) {
	on := true
	switch c.ModelType {
	case "qwen2", "qwen3", "qwen2_moe", "qwen3_moe":
		on = p.bool("use_sliding_window", false) // Qwen reads sliding_window only then
	case "mistral", "mixtral", "gemma2":
	default:
		return
	}
	w, ok := p.int("sliding_window", 0, true)
	if !ok || w == 0 || !on {
		return
	}
	which := "every layer"
	if c.ModelType == "gemma2" {
		which = "every other layer"
	}
	c.Notes = append(c.Notes, fmt.Sprintf("sliding_window %s (%s) is treated as full attention: the KV per token is what an engine without sliding-window support stores.", comma(int64(w)), which))
}

// paramCount is the model's total parameter count (package comment).
func paramCount(c *Config, m hardware.Model) int64 {
	d, layers := int64(m.Hidden), int64(m.Layers)
	var extra int64 // per layer, beyond DenseParamCount's
	switch c.ModelType {
	case "qwen2", "qwen2_moe":
		extra += int64(m.QHeads+2*m.KVHeads) * int64(m.HeadDim) // q, k and v biases
	case "qwen3", "qwen3_moe":
		extra += 2 * int64(m.HeadDim) // q_norm and k_norm
	case "gemma2":
		extra += 2 * d // pre- and post-feedforward norms
	case "llama":
		if c.attentionBias {
			extra += int64(m.QHeads+2*m.KVHeads)*int64(m.HeadDim) + d
		}
		if c.mlpBias {
			extra += 2*int64(m.Intermediate) + d
		}
	}
	total := m.DenseParamCount() + layers*extra
	if m.KVLoraRank > 0 {
		total += layers * (latentAttention(c, m) - gqaAttention(m))
	}
	if c.Experts > 0 {
		denseMLP := 3 * d * int64(m.Intermediate)
		total += int64(c.SparseLayers) * (sparseMLP(c, m) - denseMLP)
	}
	return total
}

// gqaAttention is DenseParamCount's attention weights per layer: W_q, W_k,
// W_v and W_o.
func gqaAttention(m hardware.Model) int64 {
	d, q, kv := int64(m.Hidden), int64(m.QHeads)*int64(m.HeadDim), int64(m.KVHeads)*int64(m.HeadDim)
	return 2*d*q + 2*d*kv
}

// latentAttention is one layer of DeepSeek's multi-head latent attention
// (transformers' DeepseekV3Attention): the query through a low-rank q_a
// (with its norm) and q_b when q_lora_rank is set, else one q_proj; kv_a
// to the latent plus the RoPE key, its norm, kv_b back to every head's
// no-RoPE key and value, and o_proj.
func latentAttention(c *Config, m hardware.Model) int64 {
	d, h := int64(m.Hidden), int64(m.QHeads)
	nope := int64(m.HeadDim - m.RopeHeadDim)
	rope, rank := int64(m.RopeHeadDim), int64(m.KVLoraRank)
	v, qRank := c.vHeadDim, c.qLoraRank
	q := d * h * (nope + rope)
	if qRank > 0 {
		q = d*int64(qRank) + int64(qRank) + int64(qRank)*h*(nope+rope)
	}
	kv := d*(rank+rope) + rank + rank*h*(nope+int64(v))
	return q + kv + h*int64(v)*d
}

// sparseMLP is the MLP of one sparse layer: the router, the routed
// experts, the shared experts (and Qwen2-MoE's shared-expert gate), and
// DeepSeek-V3's per-expert score-correction bias under noaux_tc routing.
func sparseMLP(c *Config, m hardware.Model) int64 {
	d, e := int64(m.Hidden), int64(c.Experts)
	n := d*e + e*3*d*int64(c.ExpertIntermediate)
	switch c.ModelType {
	case "qwen2_moe":
		if c.sharedIntermediate > 0 {
			n += 3*d*int64(c.sharedIntermediate) + d
		}
	case "deepseek_v2", "deepseek_v3":
		n += int64(c.SharedExperts) * 3 * d * int64(c.ExpertIntermediate)
		if c.scoreBias {
			n += e
		}
	}
	return n
}

// embeddingParams is the input embedding plus, when untied, the lm_head.
func embeddingParams(m hardware.Model) int64 {
	e := int64(m.Vocab) * int64(m.Hidden)
	if !m.TiedEmbeddings {
		e *= 2
	}
	return e
}

// Name turns a model's name into the slug of its id (lower case letters,
// digits, dots and dashes, at most 48 bytes, the last path segment of a
// repository id or a local path) and the name shown (printable, at most 64
// bytes). An empty or unusable name gives "model".
func Name(name string) (id, display string) {
	name = strings.TrimRight(strings.TrimSpace(name), "/")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		ok := r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_')
		if ok {
			if r == '_' {
				r = '-'
			}
			b.WriteRune(r)
			dash = r == '-'
		} else if b.Len() > 0 && !dash {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 48 {
			break
		}
	}
	id = strings.Trim(b.String(), "-.")
	if id == "" {
		return "model", "model"
	}
	var s strings.Builder
	for _, r := range name {
		if unicode.IsPrint(r) && s.Len() < 64 {
			s.WriteRune(r)
		}
	}
	return id, s.String()
}

func divisors(n int) string {
	var ds []string
	for i := 1; i <= n; i++ {
		if n%i == 0 {
			ds = append(ds, strconv.Itoa(i))
		}
	}
	if len(ds) > 12 {
		return strings.Join(ds[:12], ", ") + ", …"
	}
	return strings.Join(ds, ", ")
}

// billions writes a parameter count as "8.03 B".
func billions(n int64) string {
	return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + " B"
}

func comma(n int64) string { return textfmt.Comma(int(n)) }
