package hardware

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SizingModels returns the profiles that size memory and drafts, beside
// Models(): the attention kinds Models() lacks (MQA, MLA), the models of the
// KV-capacity validation cases, and a small draft model for speculative
// decoding. They are kept out of Models() for two reasons: that list is
// every serving lesson's model knob (a longer list would change those
// lessons' choices, and the seeded knob sets cmd/lessondiff draws from
// them), and the step-time model prices Llama-like dense decoders, which
// DeepSeek's mixture-of-experts with latent attention and Falcon's parallel
// block are not. Llama-3.2-1B and CodeLlama-7B are Llama-shaped and can be
// priced. Each call returns fresh values.
//
// Parameter counts are computed from each cited config.json the way the
// engine loads it (untied embeddings unless the config ties them); they
// agree with the published totals where one is given.
func SizingModels() []Model {
	return []Model{
		{
			ID: "codellama-7b", Name: "CodeLlama-7B",
			// [HF-CODELLAMA-7B]: Llama-2-7B's shape with vocab 32016 and
			// 16,384 positions (rope_theta 1e6). MHA: 32 KV heads.
			Layers: 32, Hidden: 4096, QHeads: 32, KVHeads: 32, HeadDim: 128,
			Intermediate: 11008, Vocab: 32016, MaxPositions: 16384,
			Params: 6_738_546_688, NonEmbeddingParams: 6_476_271_616,
			Sources: []string{"HF-CODELLAMA-7B"},
		},
		{
			ID: "falcon-7b", Name: "Falcon-7B",
			// [HF-FALCON-7B]: "multi_query": true, so vLLM caches one KV head
			// and ignores the 71 in num_kv_heads [VLLM-KVSPEC]. Head dim
			// 4544 / 71 = 64; the MLP is 4 × hidden without a gate; one
			// layer norm per (parallel) block; the output projection is tied
			// to the embedding in FalconForCausalLM.
			Layers: 32, Hidden: 4544, QHeads: 71, KVHeads: 1, HeadDim: 64,
			Intermediate: 4 * 4544, Vocab: 65024, MaxPositions: 2048,
			Params: 6_921_720_704, NonEmbeddingParams: 6_626_251_648, TiedEmbeddings: true,
			Sources: []string{"HF-FALCON-7B", "VLLM-KVSPEC"},
		},
		{
			ID: "deepseek-v2-lite", Name: "DeepSeek-V2-Lite",
			// [HF-DSV2-LITE]: MLA with kv_lora_rank 512 and qk_rope_head_dim
			// 64 (576 cached values per token and layer), 16 heads of
			// 128 + 64 query/key dims; a mixture of experts (64 routed and
			// 2 shared experts of 1,408, 6 active; layer 0 dense with 10,944)
			// whose every expert sits in memory: 15.7 B parameters, 2.4 B
			// active per token. Intermediate is the dense layer's.
			Layers: 27, Hidden: 2048, QHeads: 16, KVHeads: 1, HeadDim: 192,
			Intermediate: 10944, Vocab: 102400, MaxPositions: 163840,
			Params: 15_706_484_224, NonEmbeddingParams: 15_287_053_824,
			KVLoraRank: 512, RopeHeadDim: 64,
			Sources: []string{"HF-DSV2-LITE", "VLLM-KVSPEC"},
		},
		{
			ID: "deepseek-v3", Name: "DeepSeek-V3",
			// [HF-DSV3]: MLA as V2-Lite on 61 layers, 128 heads; 256 routed
			// experts of 2,048 and one shared (8 active), the first 3 layers
			// dense with 18,432; 671 B parameters, 37 B active. Released
			// with FP8 linear weights.
			Layers: 61, Hidden: 7168, QHeads: 128, KVHeads: 1, HeadDim: 192,
			Intermediate: 18432, Vocab: 129280, MaxPositions: 163840,
			Params: 671_026_419_200, NonEmbeddingParams: 669_173_061_120,
			KVLoraRank: 512, RopeHeadDim: 64,
			Sources: []string{"HF-DSV3", "VLLM-KVSPEC"},
		},
		{
			ID: "llama-3.2-1b", Name: "Llama-3.2-1B",
			// [HF-L32-1B]: 16 layers, 8 KV heads of 64, tied embeddings, the
			// Llama 3 vocabulary (128,256), so it can draft for the
			// Llama-3.1 models.
			Layers: 16, Hidden: 2048, QHeads: 32, KVHeads: 8, HeadDim: 64,
			Intermediate: 8192, Vocab: 128256, MaxPositions: 131072,
			Params: 1_235_814_400, NonEmbeddingParams: 973_146_112, TiedEmbeddings: true,
			Sources: []string{"HF-L32-1B"},
		},
	}
}

// AnyModelByID finds a profile in Models() or SizingModels().
func AnyModelByID(id string) (Model, error) {
	if m, err := ModelByID(id); err == nil {
		return m, nil
	}
	var ids []string
	for _, m := range append(Models(), SizingModels()...) {
		if m.ID == id {
			return m, nil
		}
		ids = append(ids, m.ID)
	}
	return Model{}, fmt.Errorf("%w: model %q; valid ids: %s", ErrUnknownProfile, id, strings.Join(ids, ", "))
}

// MustAnyModel is AnyModelByID for an id in the program's own text; it
// panics, naming the id, when no profile has it.
func MustAnyModel(id string) Model {
	m, err := AnyModelByID(id)
	if err != nil {
		panic(fmt.Sprintf("hardware.MustAnyModel(%q): %v", id, err))
	}
	return m
}

// sizingSources are the citations of SizingModels and of the KV budget
// (kvbudget.go); KVSource resolves them.
var sizingSources = map[string]Source{
	"HF-CODELLAMA-7B": {Ref: "https://huggingface.co/loubnabnl/CodeLlama-7b-hf/blame/67f3de8804aecf11243dfd103c60adf95c781be3/config.json",
		Note: "config.json of codellama/CodeLlama-7b-hf: 32 layers, 32 KV heads, vocab 32016, max_position_embeddings 16384"},
	"HF-FALCON-7B": {Ref: "https://huggingface.co/ybelkada/falcon-7b-sharded-bf16/blob/e486a3b87ff20d70293084fdfaad8ff34ba291d6/config.json",
		Note: "config.json of tiiuae/falcon-7b: hidden 4544, n_head 71, n_layer 32, multi_query true, vocab 65024"},
	"HF-DSV2-LITE": {Ref: "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/refs%2Fpr%2F49/inference/configs/config_16B.json",
		Note: "DeepSeek-V2-Lite (16B): 27 layers, kv_lora_rank 512, qk_rope_head_dim 64, 64 routed + 2 shared experts, max_position_embeddings 163840"},
	"HF-DSV3": {Ref: "https://huggingface.co/FILM6912/DeepSeek-V3/blob/fbcffd29c9a96d0fb296252449a8060143645c48/inference/configs/config_671B.json",
		Note: "DeepSeek-V3 (671B): 61 layers, 128 heads, kv_lora_rank 512, qk_rope_head_dim 64, 256 routed experts, fp8 weights"},
	"HF-L32-1B": {Ref: "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
		Note: "Llama-3.2-1B: 16 layers, hidden 2048, 32 heads, 8 KV heads, head_dim 64, intermediate 8192, vocab 128256, tied embeddings"},
	"VLLM-KVSPEC": {Ref: "vllm-project/vllm, vllm/v1/kv_cache_interface.py @ bc8282e and vllm/config/model.py get_num_kv_heads",
		Note: "page size per layer: block · kv_heads · head_size · 2 · dtype; MLA: block · 1 · 576 · dtype; MLA KV heads = 1; GQA heads ÷ TP, at least 1"},
	"VLLM-WORKER": {Ref: "vllm-project/vllm, vllm/v1/worker/gpu_worker.py @ 35d5cda (determine_available_memory), vllm/utils/mem_utils.py, vllm/v1/core/kv_cache_utils.py (get_num_blocks)",
		Note: "available KV = total × gpu_memory_utilization − (weights + torch activation peak + non-torch); blocks = available // page // layers"},
	"VLLM-13596": {Ref: "https://github.com/vllm-project/vllm/pull/13596",
		Note: "the start-up lines \"GPU KV cache size: N tokens\" (blocks × block size) and \"Maximum concurrency for L tokens per request: X.XXx\""},
	"LLMD-V019": {Ref: "llm-d-incubation/llm-d-planner @ d3121e0, accuracy/results/v0.19.0/logs/*.log and accuracy_report.md @ fbd6851",
		Note: "vLLM v0.19.0 start-up logs on H100-80GB (total_memory 79.19 GiB), gpu_memory_utilization 0.95, block 16, CUDA-graph estimate off"},
	"VLLM-15871": {Ref: "https://github.com/vllm-project/vllm/issues/15871",
		Note: "DeepSeek-V2-Lite-Chat: \"0.95 GiB KV cache is needed\" to serve one request of 32,768 tokens"},
}

// KVSource resolves a citation tag of the sizing profiles or the KV
// budget, then any tag of the package (Cite).
func KVSource(tag string) (Source, bool) { return CiteWith(sizingSources, tag) }

// KVSourceTags returns the sizing citations' tags in sorted order.
func KVSourceTags() []string {
	return slices.Sorted(maps.Keys(sizingSources))
}
