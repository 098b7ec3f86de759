package hardware

import (
	"fmt"
	"math"
	"strings"
)

// Model is a dense transformer's shape, as its Hugging Face config.json
// gives it, plus its published parameter counts.
type Model struct {
	// ID is a stable slug, e.g. "llama-3.1-8b".
	ID string
	// Name is the human-readable model name.
	Name string
	// Layers is num_hidden_layers.
	Layers int
	// Hidden is hidden_size (d).
	Hidden int
	// QHeads is num_attention_heads.
	QHeads int
	// KVHeads is num_key_value_heads; equal to QHeads for multi-head
	// attention, fewer for grouped-query attention.
	KVHeads int
	// HeadDim is the per-head dimension.
	HeadDim int
	// Intermediate is the MLP intermediate_size (I).
	Intermediate int
	// Vocab is vocab_size (V).
	Vocab int
	// MaxPositions is max_position_embeddings, the longest sequence (prompt
	// + output) the model serves; every profile sets it from its config.
	MaxPositions int
	// Params is the total parameter count (docs/SOURCES.md#model-shapes).
	Params int64
	// NonEmbeddingParams excludes the input embedding and the output
	// projection (lm_head) (docs/SOURCES.md#model-shapes).
	NonEmbeddingParams int64
	// TiedEmbeddings is true when the output projection reuses the input
	// embedding matrix, so it is stored once.
	TiedEmbeddings bool
	// Sources are the citation tags behind the figures (docs/SOURCES.md); see Sources().
	Sources []string

	// KVLoraRank and RopeHeadDim describe multi-head latent attention
	// (DeepSeek-V2/V3's kv_lora_rank and qk_rope_head_dim): each layer
	// caches one compressed latent of KVLoraRank values plus the shared
	// RoPE key of RopeHeadDim, instead of K and V per head. Zero for every
	// other attention kind. An MLA profile sets KVHeads to 1, as vLLM's
	// get_num_kv_heads does ("When using MLA during decode it becomes
	// MQA"), so the latent is never split by tensor parallelism.
	KVLoraRank, RopeHeadDim int

	// Experts, ExpertsPerToken and ExpertIntermediate describe a mixture
	// of experts in every layer (Mixtral's num_local_experts,
	// num_experts_per_tok and intermediate_size): the MLP is Experts
	// gated MLPs of ExpertIntermediate each, and a router sends each token
	// through ExpertsPerToken of them. Zero for a dense model. The step
	// model prices such a layer in moe.go.
	Experts, ExpertsPerToken, ExpertIntermediate int
}

// MoE reports whether every layer's MLP is a mixture of experts.
func (m Model) MoE() bool { return m.Experts > 0 && m.ExpertsPerToken > 0 }

// Attention kinds, as AttentionKind names them.
const (
	MHA = "MHA" // multi-head: one K and V head per query head
	GQA = "GQA" // grouped-query: fewer KV heads, each shared by a group
	MQA = "MQA" // multi-query: one KV head for all query heads
	MLA = "MLA" // multi-head latent: one compressed latent per token and layer
)

// AttentionKind says how the model caches keys and values: MLA when it
// has a latent rank, else MQA with one KV head, MHA with as many KV heads
// as query heads, and GQA in between.
func (m Model) AttentionKind() string {
	switch {
	case m.KVLoraRank > 0:
		return MLA
	case m.KVHeads == 1:
		return MQA
	case m.KVHeads == m.QHeads:
		return MHA
	}
	return GQA
}

// KVBytesPerToken is S_entry, the KV-cache bytes one token occupies across
// all layers: 2 (K and V) · layers · kv_heads · head_dim · bytesPerElement.
// Use 2 for a BF16/FP16 cache and 1 for FP8.
func (m Model) KVBytesPerToken(bytesPerElement int) int64 {
	return int64(m.Layers) * m.KVBytesPerTokenPerLayer(bytesPerElement)
}

// KVBytesPerTokenPerLayer is the KV-cache bytes one token occupies in one
// layer: 2 · kv_heads · head_dim · bytesPerElement. Paged engines allocate
// per layer, so this is the unit a block is made of. For MLA it is the
// latent row, (kv_lora_rank + qk_rope_head_dim) · bytesPerElement, with no
// factor 2: vLLM's MLAAttentionSpec page is block_size · 1 · 576 · dtype.
func (m Model) KVBytesPerTokenPerLayer(bytesPerElement int) int64 {
	if m.KVLoraRank > 0 {
		return int64(m.KVLoraRank+m.RopeHeadDim) * int64(bytesPerElement)
	}
	return 2 * int64(m.KVHeads) * int64(m.HeadDim) * int64(bytesPerElement)
}

// WeightBytes is the memory the weights take at bytesPerWeight bytes each
// (2 for BF16, 1 for FP8, about 0.5 for 4-bit), rounded to the nearest byte.
// It counts every parameter, embeddings included, because all of them sit
// in GPU memory.
func (m Model) WeightBytes(bytesPerWeight float64) int64 {
	return int64(math.Round(float64(m.Params) * bytesPerWeight))
}

// DenseParamCount recomputes the total parameter count from the shape with
// the formula of docs/SOURCES.md#model-shapes, so the stored shape and the stored count
// can be checked against each other. Biases (Qwen's QKV bias) are left out,
// as in the note; they are well under 0.1% of any model here.
func (m Model) DenseParamCount() int64 {
	embed := int64(m.Vocab) * int64(m.Hidden)
	if !m.TiedEmbeddings {
		embed *= 2 // separate lm_head
	}
	return m.nonEmbeddingParamCount() + embed
}

// nonEmbeddingParamCount is DenseParamCount without the embedding tables.
func (m Model) nonEmbeddingParamCount() int64 {
	d := int64(m.Hidden)
	q := int64(m.QHeads) * int64(m.HeadDim)
	kv := int64(m.KVHeads) * int64(m.HeadDim)
	perLayer := d*q + // W_q
		2*d*kv + // W_k and W_v
		q*d + // W_o
		3*d*int64(m.Intermediate) + // gate, up and down projections
		2*d // two RMSNorm weight vectors
	return int64(m.Layers)*perLayer + d // plus the final norm
}

// Models returns every model profile in a stable order. Each call returns
// fresh values, so callers may modify them.
//
// Embeddings are untied for every model here. For the two Qwen models the
// config copies do not say so, but the published totals only come out with
// a separate lm_head.
func Models() []Model {
	return []Model{
		{
			ID: "llama-3.1-8b", Name: "Llama-3.1-8B",
			// [HF-L31-8B]; 131072 positions via llama3 RoPE scaling ×8 from 8192.
			Layers: 32, Hidden: 4096, QHeads: 32, KVHeads: 8, HeadDim: 128,
			Intermediate: 14336, Vocab: 128256, MaxPositions: 131072,
			Params: 8_030_000_000, NonEmbeddingParams: 6_980_000_000, // §4.1
			Sources: []string{"HF-L31-8B"},
		},
		{
			ID: "llama-3.1-70b", Name: "Llama-3.1-70B",
			// [HF-L31-70B]
			Layers: 80, Hidden: 8192, QHeads: 64, KVHeads: 8, HeadDim: 128,
			Intermediate: 28672, Vocab: 128256, MaxPositions: 131072,
			Params: 70_550_000_000, NonEmbeddingParams: 68_450_000_000, // §4.1
			Sources: []string{"HF-L31-70B"},
		},
		{
			ID: "llama-3.1-405b", Name: "Llama-3.1-405B",
			// Current configs list 8 KV heads [HF-L31-405B]; an early upload
			// said 16 [HF-405-OLD], which would double S_entry.
			Layers: 126, Hidden: 16384, QHeads: 128, KVHeads: 8, HeadDim: 128,
			Intermediate: 53248, Vocab: 128256, MaxPositions: 131072,
			Params: 405_850_000_000, NonEmbeddingParams: 401_650_000_000, // §4.1
			Sources: []string{"HF-L31-405B", "HF-405-OLD"},
		},
		{
			ID: "mistral-7b-v0.1", Name: "Mistral-7B-v0.1",
			// [HF-MIS7B]. The config sets sliding_window 4096; this first cut
			// treats every layer as full attention, which is what an engine
			// without sliding-window support stores.
			Layers: 32, Hidden: 4096, QHeads: 32, KVHeads: 8, HeadDim: 128,
			Intermediate: 14336, Vocab: 32000, MaxPositions: 32768,
			Params: 7_240_000_000, NonEmbeddingParams: 6_980_000_000, // §4.1
			Sources: []string{"HF-MIS7B"},
		},
		{
			ID: "qwen2.5-7b", Name: "Qwen2.5-7B-Instruct",
			// [HF-Q25-7B] [HF-Q2-7B]. The Instruct config caps positions at
			// 32768; the base model's config lists 131072 [HF-Q2-7B].
			Layers: 28, Hidden: 3584, QHeads: 28, KVHeads: 4, HeadDim: 128,
			Intermediate: 18944, Vocab: 152064, MaxPositions: 32768,
			Params: 7_620_000_000, NonEmbeddingParams: 6_530_000_000, // §4.1
			Sources: []string{"HF-Q25-7B", "HF-Q2-7B"},
		},
		{
			ID: "qwen2.5-72b", Name: "Qwen2.5-72B-Instruct",
			// [HF-Q25-72B] [HF-Q2-72B]
			Layers: 80, Hidden: 8192, QHeads: 64, KVHeads: 8, HeadDim: 128,
			Intermediate: 29568, Vocab: 152064, MaxPositions: 32768,
			Params: 72_710_000_000, NonEmbeddingParams: 70_220_000_000, // §4.1
			Sources: []string{"HF-Q25-72B", "HF-Q2-72B"},
		},
		{
			ID: "llama-2-7b", Name: "Llama-2-7B",
			// The shape of this reference model is read back from the figures
			// measured on it, and confirmed by its config.json:
			//   - 32 layers, 32 KV heads (MHA), head_dim 128: its KV bytes per
			//     token (docs/SOURCES.md#kv-bytes-per-token);
			//   - hidden 4096 = 32 heads × 128, and the fp16 QKV weight of
			//     100.7 MB = 3·4096²·2 B [VIDUR-MLP];
			//   - intermediate 11008: gate+up weight 180.4 MB = 2·4096·11008·2 B
			//     [VIDUR-MLP];
			//   - vocab 32000: lm_head 0.131e9 params = 32000·4096 (validation
			//     case VC3, [GPTFAST-README]).
			// The totals below are docs/SOURCES.md#model-shapes'; 4,096 positions from the model's
			// config.json [HF-L2-7B], which also confirms the shape.
			Layers: 32, Hidden: 4096, QHeads: 32, KVHeads: 32, HeadDim: 128,
			Intermediate: 11008, Vocab: 32000, MaxPositions: 4096,
			Params: 6_740_000_000, NonEmbeddingParams: 6_480_000_000, // docs/SOURCES.md#model-shapes
			Sources: []string{"VIDUR-MLP", "GPTFAST-README", "HF-L2-7B"},
		},
	}
}

// ModelByID returns the model profile with the given id, or an error
// wrapping ErrUnknownProfile that lists the valid ids.
func ModelByID(id string) (Model, error) {
	all := append(Models(), registeredCustomModels()...) // a reader's own models (custom.go) too
	ids := make([]string, len(all))
	for i, m := range all {
		if m.ID == id {
			return m, nil
		}
		ids[i] = m.ID
	}
	return Model{}, fmt.Errorf("%w: model %q; valid ids: %s", ErrUnknownProfile, id, strings.Join(ids, ", "))
}

// MustModel is ModelByID for an id written in the program's own text: it
// panics, naming the id, when no profile has it (see MustGPU).
func MustModel(id string) Model {
	m, err := ModelByID(id)
	if err != nil {
		panic(fmt.Sprintf("hardware.MustModel(%q): %v", id, err))
	}
	return m
}
