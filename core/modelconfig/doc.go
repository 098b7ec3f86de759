// Package modelconfig reads a model's Hugging Face config.json into the
// hardware.Model the lessons take, so a reader can bring their own model:
// Parse checks every field it reads, refusing a bad one with a *FieldError
// that names the field, the value and what is allowed, and derives the
// parameter count and the KV bytes per token with the lab's formulas.
//
// # The model
//
// The shape is read the way Hugging Face transformers' config classes read
// it, for the model_types in Supported: num_hidden_layers, hidden_size,
// num_attention_heads, num_key_value_heads (default: the attention heads),
// head_dim (default: hidden_size / num_attention_heads), intermediate_size,
// vocab_size, max_position_embeddings and tie_word_embeddings (default per
// config class: true for Gemma, false for the others). Fields the lab does
// not model (RoPE scaling, dropout, token ids) are not read.
//
// KV bytes per token are hardware.Model.KVBytesPerToken: 2 · layers ·
// kv_heads · head_dim per element, or for multi-head latent attention
// (DeepSeek-V2/V3) layers · (kv_lora_rank + qk_rope_head_dim), with one KV
// head as vLLM's get_num_kv_heads counts it (docs/SOURCES.md#kv-bytes-per-token).
//
// The parameter count of a dense model is hardware.Model.DenseParamCount
// (docs/SOURCES.md#model-shapes), plus what that formula leaves out and the
// architecture has: the query, key and value biases of Qwen2 and of Llama
// with attention_bias, Llama's MLP biases with mlp_bias, Qwen3's per-head
// query and key norms, and Gemma 2's two extra norms per layer. A mixture of
// experts replaces the MLP of its sparse layers by the router (hidden ×
// experts), every routed expert (3 · hidden · expert intermediate each) and
// the shared experts (Qwen2-MoE's also has a one-output gate), and DeepSeek-V3's
// noaux_tc routing keeps one score-correction bias per expert. Multi-head
// latent attention replaces the Q, K, V and O projections by DeepSeek's
// low-rank ones (q_a/q_b or q, kv_a with its norm, kv_b, o). Every expert
// counts, because every expert sits in GPU memory; DeepSeek-V3's multi-token
// prediction layers (num_nextn_predict_layers) do not, as an engine serving
// without speculative decoding does not load them. The counts come out
// within 2% of the published totals (modelconfig_test.go), and equal to the
// lab's own DeepSeek profiles (hardware.SizingModels).
//
// # What is left out
//
// Sliding-window attention (Mistral-7B-v0.1, Gemma 2's every other layer)
// is read but not modelled: every layer is counted as full attention, which
// is what an engine without sliding-window support stores, and Config.Notes
// says so. The step-time model prices Llama-like dense decoders, so a
// mixture of experts or a latent-attention model (Config.Dense false) is a
// model for sizing memory only.
//
// # Bounds
//
// Each integer field has a range (Bounds) wide enough for every published
// model and narrow enough that no count overflows an int64: with at most 512
// layers, a hidden size of 65,536, an MLP of 262,144 and 1,024 experts, the
// largest count is below 3·2⁵³.
package modelconfig
