package modelconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/hardware"
)

// A model's address token (a page's mc= parameter) carries the derived
// shape of a parsed config, not its JSON: every figure Parse reads that
// the parameter count and the KV bytes depend on, as decimal integers
// separated by dots, after a version and the model_type, with the name
// last (it may hold dots):
//
//	v1.TYPE.LAYERS.HIDDEN.HEADS.KV_HEADS.HEAD_DIM.INTERMEDIATE.VOCAB.POSITIONS.
//	   FLAGS.EXPERTS.EXPERTS_PER_TOKEN.SHARED_EXPERTS.EXPERT_INTERMEDIATE.
//	   SPARSE_LAYERS.SHARED_INTERMEDIATE.KV_LORA_RANK.Q_LORA_RANK.
//	   ROPE_HEAD_DIM.V_HEAD_DIM.NAME
//
// FLAGS adds 1 for tie_word_embeddings, 2 for Llama's attention_bias, 4
// for its mlp_bias and 8 for DeepSeek's noaux_tc score-correction bias;
// a figure the model_type has no use for is 0. Llama-3.1-8B's is
//
//	v1.llama.32.4096.32.8.128.14336.128256.131072.0.0.0.0.0.0.0.0.0.0.0.llama-3.1-8b
//
// DecodeToken rebuilds the config those figures stand for (a sparse
// layer count becomes mlp_only_layers or first_k_dense_replace) and reads
// it with Parse, so a token is held to every bound and relation a
// config.json is, and gives the same parameter count; it then refuses a
// token that Token would not write back the same (a figure the type does
// not use, a layer count a mixture of experts cannot have). What the token
// leaves out is what Parse only notes: a sliding window, the multi-token
// prediction layers, a quantization block. The name is the model's id
// slug (Name), so a model read from a token is named by it.
const (
	tokenVersion = "v1"
	// MaxToken bounds a token before it is read: 20 figures of at most 8
	// digits, a type and a 48-byte name fit well within it.
	MaxToken = 320
)

// tokenFields names the token's figures after the version and the type,
// by the config.json keys they stand for (the error for a bad one names
// it).
var tokenFields = []string{
	"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
	"intermediate_size", "vocab_size", "max_position_embeddings", "flags",
	"experts", "num_experts_per_tok", "shared_experts", "moe_intermediate_size", "sparse_layers",
	"shared_expert_intermediate_size", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "v_head_dim",
}

// Flag bits of a token.
const (
	flagTied = 1 << iota
	flagAttentionBias
	flagMLPBias
	flagScoreBias
	flagsAll = flagTied | flagAttentionBias | flagMLPBias | flagScoreBias
)

// figures lists the config's token figures in tokenFields' order.
func (c *Config) figures() []int {
	m := c.Model
	flags := 0
	for bit, on := range []bool{m.TiedEmbeddings, c.attentionBias, c.mlpBias, c.scoreBias} {
		if on {
			flags |= 1 << bit
		}
	}
	return []int{
		m.Layers, m.Hidden, m.QHeads, m.KVHeads, m.HeadDim,
		m.Intermediate, m.Vocab, m.MaxPositions, flags,
		c.Experts, c.ExpertsPerToken, c.SharedExperts, c.ExpertIntermediate, c.SparseLayers,
		c.sharedIntermediate, m.KVLoraRank, c.qLoraRank, m.RopeHeadDim, c.vHeadDim,
	}
}

// Token is the config's address token (see above).
func (c *Config) Token() string {
	parts := []string{tokenVersion, c.ModelType}
	for _, x := range c.figures() {
		parts = append(parts, strconv.Itoa(x))
	}
	name := strings.TrimPrefix(c.Model.ID, hardware.CustomModelPrefix)
	return strings.Join(append(parts, name), ".")
}

// DecodeToken reads a model's address token into the config it stands
// for. A token refused is a *hardware.TokenError (param "mc") naming the
// part at fault (a config.json key, "flags", "sparse_layers", "name",
// "version" or "token"), its text and what is allowed.
func DecodeToken(tok string) (*Config, error) {
	bad := func(part, value, allowed string) error {
		return &hardware.TokenError{Param: "mc", Part: part, Value: value, Allowed: allowed}
	}
	if len(tok) > MaxToken {
		return nil, bad("token", tok, fmt.Sprintf("at most %d characters", MaxToken))
	}
	n := len(tokenFields)
	parts := strings.SplitN(tok, ".", n+3)
	if len(parts) < n+3 {
		return nil, bad("token", tok, fmt.Sprintf("%s, the model_type, %d figures and a name, separated by dots (%s)", tokenVersion, n, llamaToken))
	}
	if parts[0] != tokenVersion {
		return nil, bad("version", parts[0], tokenVersion)
	}
	typ, name := parts[1], parts[n+2]
	if id, _ := Name(name); id != name {
		return nil, bad("name", name, "1 to 48 lower-case letters, digits, dots and dashes, starting and ending with a letter or digit")
	}
	x := make([]int, n)
	for i, f := range tokenFields {
		s := parts[i+2]
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || len(s) > 9 || strconv.Itoa(v) != s {
			return nil, bad(f, s, "a whole number written plainly (0, 32, 4096)")
		}
		x[i] = v
	}
	raw, err := tokenConfig(typ, x)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, bad("token", tok, err.Error())
	}
	c, err := Parse(data, name)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			v := fe.Value
			var text string
			if json.Unmarshal([]byte(v), &text) == nil {
				v = text // the type, as the token gives it
			}
			return nil, bad(fe.Field, v, fe.Allowed)
		}
		return nil, bad("token", tok, err.Error())
	}
	for i, got := range c.figures() {
		if got != x[i] {
			return nil, bad(tokenFields[i], parts[i+2], fmt.Sprintf("%d, what model_type %s gives with the token's other figures", got, typ))
		}
	}
	return c, nil
}

// llamaToken is Llama-3.1-8B's token, the example an error shows.
const llamaToken = "v1.llama.32.4096.32.8.128.14336.128256.131072.0.0.0.0.0.0.0.0.0.0.0.llama-3.1-8b"

// tokenConfig is the config.json a token's figures stand for (x in
// tokenFields' order), with only the keys the type reads.
func tokenConfig(typ string, x []int) (map[string]any, error) {
	layers, headDim, flags := x[0], x[4], x[8]
	experts, perToken, shared, expertI, sparse, sharedI := x[9], x[10], x[11], x[12], x[13], x[14]
	kvRank, qRank, rope, vDim := x[15], x[16], x[17], x[18]
	cfg := map[string]any{
		"model_type": typ, "num_hidden_layers": layers, "hidden_size": x[1],
		"num_attention_heads": x[2], "num_key_value_heads": x[3],
		"intermediate_size": x[5], "vocab_size": x[6], "max_position_embeddings": x[7],
		"tie_word_embeddings": flags&flagTied != 0,
	}
	if flags&^flagsAll != 0 {
		return nil, &hardware.TokenError{Param: "mc", Part: "flags", Value: strconv.Itoa(flags),
			Allowed: "a sum of 1 (tie_word_embeddings), 2 (attention_bias), 4 (mlp_bias) and 8 (noaux_tc), from 0 to 15"}
	}
	if b := Bounds["num_hidden_layers"]; layers < b[0] || layers > b[1] {
		return nil, &hardware.TokenError{Param: "mc", Part: "num_hidden_layers", Value: strconv.Itoa(layers), Allowed: intRange("num_hidden_layers")}
	}
	if sparse > layers {
		return nil, &hardware.TokenError{Param: "mc", Part: "sparse_layers", Value: strconv.Itoa(sparse),
			Allowed: fmt.Sprintf("at most num_hidden_layers (%d)", layers)}
	}
	mla := strings.HasPrefix(typ, "deepseek")
	if mla && headDim < rope {
		return nil, &hardware.TokenError{Param: "mc", Part: "head_dim", Value: strconv.Itoa(headDim),
			Allowed: fmt.Sprintf("at least qk_rope_head_dim (%d): a latent-attention head is qk_nope_head_dim + qk_rope_head_dim", rope)}
	}
	if !mla {
		cfg["head_dim"] = headDim
	}
	switch typ {
	case "llama":
		cfg["attention_bias"], cfg["mlp_bias"] = flags&flagAttentionBias != 0, flags&flagMLPBias != 0
	case "mixtral":
		cfg["num_local_experts"], cfg["num_experts_per_tok"] = experts, perToken
	case "qwen2_moe", "qwen3_moe":
		dense := make([]int, layers-sparse)
		for i := range dense {
			dense[i] = i
		}
		cfg["num_experts"], cfg["num_experts_per_tok"], cfg["moe_intermediate_size"] = experts, perToken, expertI
		cfg["decoder_sparse_step"], cfg["mlp_only_layers"] = 1, dense
		if typ == "qwen2_moe" {
			cfg["shared_expert_intermediate_size"] = sharedI
		}
	}
	if mla {
		cfg["kv_lora_rank"], cfg["qk_rope_head_dim"], cfg["v_head_dim"] = kvRank, rope, vDim
		cfg["qk_nope_head_dim"] = headDim - rope
		if qRank > 0 {
			cfg["q_lora_rank"] = qRank
		}
		if experts > 0 {
			cfg["n_routed_experts"], cfg["num_experts_per_tok"], cfg["moe_intermediate_size"] = experts, perToken, expertI
			cfg["n_shared_experts"], cfg["first_k_dense_replace"], cfg["moe_layer_freq"] = shared, layers-sparse, 1
			if flags&flagScoreBias != 0 {
				cfg["topk_method"] = "noaux_tc"
			}
		}
	}
	return cfg, nil
}
