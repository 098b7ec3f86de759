// Package kvbudget holds the lesson kv-budget: Part 3. Where one GPU's memory
// goes when vLLM starts: the weights, the profiling run's reserve, the
// headroom gpu_memory_utilization leaves, and the KV pool; one token's KV
// bytes for MHA, GQA, MQA and MLA, fp8, tensor parallelism; how many requests
// of a given length fit. The arithmetic is vLLM v1's
// (core/hardware/kvbudget.go), checked against engines' own start-up logs in
// docs/VALIDATION.md.
package kvbudget

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "kv-budget",
	Title:   "The KV budget: where a GPU's memory goes",
	Part:    "Part 3",
	Summary: "Weights, the profiling run's reserve, gpu_memory_utilization and the KV pool; KV bytes per token for MHA, GQA, MQA and MLA, fp8 and tensor parallelism; how many requests fit.",
	Engine: "vLLM v1's start-up sizing (determine_available_memory, get_num_blocks and the \"GPU KV cache size\" and \"Maximum concurrency\" lines; core/hardware/kvbudget.go). " +
		"Device memory is what PyTorch reports where an engine or PyTorch log gives it (H100 SXM, A100-80GB, H200), else the datasheet's. " +
		"Simplified: the profiling run's activation peak and non-torch memory are the lab's estimate, not measured; the CUDA-graph estimate (cudagraph_estimate on, vLLM's default since v0.21.0) is the published per-graph average times the graphs vLLM's default mode captures at `vllm serve`'s max_num_seqs, not a dummy capture; every layer full attention.",
	// It opens the series: how many tokens of KV a GPU holds at all is what
	// paging then manages.
	Group: "memory", Rank: 10, Thumb: scene.KindMemoryStack,
	Params: []lessons.Param{
		kit.GPUParam,
		{Key: "model", Label: "Model", Help: "Sets the weights and how attention caches K and V (MHA, GQA, MQA or MLA).", Kind: lessons.Choice, Choices: kvModelIDs()},
		{Key: "weights", Label: "Weights", Help: "bf16: 2 bytes per parameter; fp8: linear layers in 1 byte, embeddings in bf16.", Kind: lessons.Choice, Choices: []string{"bf16", "fp8"}},
		{Key: "kv_cache_dtype", Label: "kv_cache_dtype", Help: "auto stores K and V in the model's bf16; fp8 in one byte.", Kind: lessons.Choice, Choices: []string{"auto", "fp8"}},
		{Key: "tp", Label: "Tensor parallel", Unit: "GPUs", Help: "GPUs the model is split over; each holds its share of the weights and of the KV heads.", Kind: lessons.Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "gpu_memory_utilization", Label: "gpu_memory_utilization", Help: "The share of the GPU's memory vLLM may use.", Kind: lessons.Float, Default: 0.9, Min: 0.5, Max: 0.99, Step: 0.01},
		{Key: "max_model_len", Label: "max_model_len", Unit: "tokens", Help: "The longest request (prompt + output): sets how many such requests fit.", Kind: lessons.Int, Default: 8192, Min: 16, Max: 1 << 20, Step: 16},
		{Key: "cudagraph_estimate", Label: "CUDA-graph memory estimate", Help: "vLLM's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS. off (vLLM before v0.21.0, and the v0.19 logs this lesson is checked against): graphs are captured after the pool is sized, in the headroom. on (the default since v0.21.0): their estimate comes off the pool.", Kind: lessons.Choice, Choices: []string{"off", "on"}},
		{Key: "max_num_batched_tokens", Label: "max_num_batched_tokens", Unit: "tokens", Help: "The profiling run's dummy tokens: a larger step needs a larger activation reserve.", Kind: lessons.Int, Default: 8192, Min: 512, Max: 65536, Step: 512},
	},
	Check: checkKVBudget,
	Sim:   sim{},
	// Arithmetic only: one unit per pool sized (about 40 at most).
	MaxWork: 200,
	HeavyCorners: []map[string]string{
		{"gpu": "b200", "model": "deepseek-v3", "weights": "fp8", "tp": "8", "max_model_len": "163840"},
		{"gpu": "h200-sxm", "model": "llama-3.1-405b", "weights": "fp8", "tp": "8", "kv_cache_dtype": "fp8"},
	},
}

func init() { lessons.Register(lesson) }

// kvModelIDs lists every profile: the serving models, then the sizing ones
// (MQA, MLA, the validation cases' CodeLlama, a small draft).
func kvModelIDs() []string {
	ids := kit.ModelIDs()
	for _, m := range hardware.SizingModels() {
		ids = append(ids, m.ID)
	}
	return ids
}

// kvElement is the cache's bytes per element for a kv_cache_dtype.
func kvElement(dtype string) int {
	if dtype == "fp8" {
		return 1
	}
	return 2
}

// kvSetting is the knobs of one pool: what the lesson sizes again with one
// knob changed (another model, TP, dtype or utilization).
type kvSetting struct {
	gpu     hardware.GPU
	model   hardware.Model
	tp      int
	weights hardware.WeightFormat
	kvBPE   int
	util    float64
	maxLen  int
	batched int
	// graphs is the CUDA-graph estimate taken off the pool (0 when the
	// estimate is off, as before vLLM v0.21.0).
	graphs int64
}

func kvSettingOf(v lessons.Values) (kvSetting, error) {
	g, err := hardware.GPUByID(v.Choice("gpu"))
	if err != nil {
		return kvSetting{}, err
	}
	m, err := hardware.AnyModelByID(v.Choice("model"))
	if err != nil {
		return kvSetting{}, err
	}
	s := kvSetting{gpu: g, model: m, tp: v.Int("tp"), weights: hardware.WeightFormat(v.Choice("weights")), kvBPE: kvElement(v.Choice("kv_cache_dtype")),
		util: v.Float("gpu_memory_utilization"), maxLen: v.Int("max_model_len"), batched: v.Int("max_num_batched_tokens")}
	if v.Choice("cudagraph_estimate") == "on" {
		s.graphs = graphEstimate(g, s.batched)
	}
	return s, nil
}

// graphEstimate is the CUDA-graph memory vLLM's profiler takes off the
// pool when its estimate is on: the graphs FULL_AND_PIECEWISE captures at
// `vllm serve`'s max_num_seqs on g and this token budget, at the published
// per-graph average (core/cudagraph.Capture).
func graphEstimate(g hardware.GPU, batched int) int64 {
	_, seqs := kit.VLLMBatch(g)
	return int64(cudagraph.New(cudagraph.Default, seqs, batched).Capture().Bytes)
}

func (s kvSetting) budget() (hardware.KVBudget, error) {
	b, err := hardware.NewKVBudget(s.gpu, s.model, s.tp, s.weights, s.kvBPE, s.util, s.batched, s.maxLen)
	b.CUDAGraphBytes = s.graphs
	return b, err
}

// size sizes the setting's pool; ok is false when the GPU cannot hold the
// weights and reserve, or not one request of maxLen.
func (s kvSetting) size() (hardware.KVPool, bool) {
	b, err := s.budget()
	if err != nil {
		return hardware.KVPool{}, false
	}
	p, err := b.Size()
	return p, err == nil
}

// checkKVBudget refuses a TP degree that does not split the model and a
// setting vLLM would refuse at start-up: weights and reserve over the
// requested memory, or not one request of max_model_len in the pool, or a
// max_model_len beyond the model's positions (hardware.Fit on the engine's
// memory).
func checkKVBudget(v lessons.Values) error {
	s, err := kvSettingOf(v)
	if err != nil {
		return err
	}
	m := s.model
	if !kit.TPSplits(m, s.tp) {
		return lessons.Relation("tp", strconv.Itoa(s.tp), fmt.Sprintf("a degree that splits %s's %d query heads, %d KV heads and MLP of %s evenly", m.Name, m.QHeads, m.KVHeads, kit.Comma(m.Intermediate)), "model")
	}
	b, err := s.budget()
	if err != nil {
		return err
	}
	err = b.Fit(s.gpu, s.batched, int64(s.maxLen), s.maxLen).Check()
	if err == nil && b.CUDAGraphBytes > 0 {
		// Fit knows nothing of the graph estimate; the pool does.
		_, err = b.Size()
	}
	var fe *hardware.FitError
	if !errors.As(err, &fe) {
		return err
	}
	key := "max_model_len"
	if fe.Limit == hardware.LimitWeights {
		key = "model"
		if fe.MinTP > s.tp {
			key = "tp"
		}
	}
	return lessons.Relation(key, v.TextOf(key), "a setting vLLM can start: "+fe.Error())
}

// kvKind is one reference model's cache on the chosen GPU at TP 1.
type kvKind struct {
	model  hardware.Model
	bytes  int64 // per token
	tokens int64 // the pool, 0 when the model does not fit
	fits   bool
}

// kvTP is the chosen model at one TP degree.
type kvTP struct {
	tp                              int
	weights, reserve, bytes, tokens int64
	concurrency                     float64
	fits                            bool
	nonTorch, activation, requested int64
	headsPerGPU                     int
}

// kvUtilPoint is the pool at one gpu_memory_utilization.
type kvUtilPoint struct {
	util   float64
	tokens int64
	fits   bool
}

// kvBudgetRun is what the lesson computed.
type kvBudgetRun struct {
	s         kvSetting
	memSource string // citation of the engine-visible memory, "" for the datasheet figure
	budget    hardware.KVBudget
	pool      hardware.KVPool
	// other is the pool with the other kv_cache_dtype.
	other     hardware.KVPool
	otherFits bool
	kinds     []kvKind
	tps       []kvTP
	utils     []kvUtilPoint
	// mla is an MLA model's per-GPU bytes at TP 1 and 2 (DeepSeek-V2-Lite,
	// or the chosen model when it is one), gqa a head-split model's
	// (Llama-3.1-8B, or the chosen model when its heads split at TP 2).
	mla, gqa           [2]int64
	mlaModel, gqaModel hardware.Model
	validation         []hardware.KVCaseResult
	// fp8Pair are the validation cases of one model in bf16 and fp8.
	fp8Pair [2]hardware.KVCaseResult
	work    int64
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runKVBudget(v))
}

// kvReferences are one model of each attention kind, of similar size.
var kvReferences = []string{"llama-2-7b", "llama-3.1-8b", "falcon-7b", "deepseek-v2-lite"}

// runKVBudget sizes the chosen pool, then the same with one knob changed:
// the other cache dtype, each attention kind, each TP degree, a sweep of
// utilizations.
func runKVBudget(v lessons.Values) (kvBudgetRun, error) {
	s, err := kvSettingOf(v)
	if err != nil {
		return kvBudgetRun{}, err
	}
	r := kvBudgetRun{s: s}
	_, r.memSource = hardware.EngineMemory(s.gpu)
	if r.budget, err = s.budget(); err != nil {
		return kvBudgetRun{}, err
	}
	if r.pool, err = r.budget.Size(); err != nil {
		return kvBudgetRun{}, lessons.Relation("max_model_len", strconv.Itoa(s.maxLen), "a setting vLLM can start: "+err.Error())
	}
	o := s
	o.kvBPE = 3 - s.kvBPE
	r.other, r.otherFits = o.size()
	refs := []hardware.Model{}
	for _, id := range kvReferences {
		refs = append(refs, hardware.MustAnyModel(id))
	}
	if !slices.Contains(kvReferences, s.model.ID) {
		// the reader's model (a pasted config.json too) beside the four
		refs = append(refs, s.model)
	}
	for _, m := range refs {
		k := s
		k.model, k.tp, k.weights, k.maxLen = m, 1, hardware.WeightsBF16, min(s.maxLen, m.MaxPositions)
		p, ok := k.size()
		r.kinds = append(r.kinds, kvKind{model: k.model, bytes: k.model.KVBytesPerToken(s.kvBPE), tokens: p.Tokens, fits: ok})
	}
	for _, tp := range []int{1, 2, 4, 8} {
		if !kit.TPSplits(s.model, tp) {
			continue
		}
		t := s
		t.tp = tp
		b, err := t.budget()
		if err != nil {
			return kvBudgetRun{}, err
		}
		p, ok := t.size()
		r.tps = append(r.tps, kvTP{tp: tp, weights: b.WeightBytes, activation: b.ActivationBytes, nonTorch: b.NonTorchBytes, reserve: b.ActivationBytes + b.NonTorchBytes,
			bytes: p.BytesPerToken, tokens: p.Tokens, concurrency: p.Concurrency, fits: ok, requested: p.Requested, headsPerGPU: hardware.KVHeadsPerGPU(s.model, tp)})
	}
	// The sweep, with the chosen setting among its points (the chart marks it).
	utils := []float64{}
	for u := 50; u <= 99; u += 7 {
		utils = append(utils, float64(u)/100)
	}
	if !slices.Contains(utils, s.util) {
		utils = append(utils, s.util)
		slices.Sort(utils)
	}
	for _, u := range utils {
		t := s
		t.util = u
		p, ok := t.size()
		r.utils = append(r.utils, kvUtilPoint{util: t.util, tokens: p.Tokens, fits: ok})
	}
	r.mlaModel, r.gqaModel = hardware.MustAnyModel("deepseek-v2-lite"), hardware.MustModel("llama-3.1-8b")
	switch {
	case s.model.AttentionKind() == hardware.MLA:
		r.mlaModel = s.model
	case kit.TPSplits(s.model, 2) && hardware.KVHeadsPerGPU(s.model, 2) < s.model.KVHeads:
		r.gqaModel = s.model
	}
	for i, tp := range []int{1, 2} {
		r.mla[i] = hardware.KVBytesPerTokenPerGPU(r.mlaModel, tp, s.kvBPE)
		r.gqa[i] = hardware.KVBytesPerTokenPerGPU(r.gqaModel, tp, s.kvBPE)
	}
	r.validation = hardware.ValidateKV()
	for _, c := range r.validation {
		switch c.ID {
		case "KV1":
			r.fp8Pair[0] = c
		case "KV2":
			r.fp8Pair[1] = c
		}
	}
	r.work = int64(2 + len(r.kinds) + len(r.tps) + len(r.utils) + 2*len(r.validation))
	return r, nil
}

// ---- Script ----

// gib formats bytes in GiB with two decimals, as vLLM logs them.
func gib(b int64) string { return strconv.FormatFloat(float64(b)/hardware.GiB, 'f', 2, 64) + " GiB" }

func gibValue(b int64) float64 { return kit.Round2(float64(b) / hardware.GiB) }

// Stages of the memory bar, as the lesson fills it.
const (
	stageRequested = iota // the engine's memory and the utilization line
	stageWeights          // the weights loaded
	stageReserve          // the profiling run's reserve
	stagePool             // the KV pool
)

// memoryStack draws the chosen GPU's memory up to a stage, with extra
// per-token costs and the requests that fit when given.
func (r kvBudgetRun) memoryStack(stage int, perToken []scene.TokenCost, fit bool) *scene.MemoryStack {
	b, p := r.budget, r.pool
	ms := &scene.MemoryStack{Unit: "GiB", Total: gibValue(b.TotalBytes), PerToken: perToken,
		Lines: []scene.MemLine{{At: gibValue(p.Requested), Label: fmt.Sprintf("× %g = %s", b.MemUtilization, gib(p.Requested))}}}
	// Every part is present at every stage (zero until it is assigned), so
	// that a renderer keeps each in place and animates its growth.
	add := func(key, label, class string, bytes int64) {
		ms.Parts = append(ms.Parts, scene.MemPart{Key: key, Label: label, Size: gibValue(bytes), Class: class})
	}
	zero := func(key, label, class string) { add(key, label, class, 0) }
	used := int64(0)
	if stage >= stageWeights {
		add("weights", "weights "+gib(b.WeightBytes), "weights", b.WeightBytes)
		used += b.WeightBytes
	} else {
		zero("weights", "weights", "weights")
	}
	if stage >= stageReserve {
		add("activation", "activations "+gib(b.ActivationBytes), "reserve", b.ActivationBytes)
		add("nontorch", "non-torch "+gib(b.NonTorchBytes), "reserve", b.NonTorchBytes)
		used += b.ActivationBytes + b.NonTorchBytes
	} else {
		zero("activation", "activations", "reserve")
		zero("nontorch", "non-torch", "reserve")
	}
	if b.CUDAGraphBytes > 0 {
		if stage >= stagePool {
			add("cudagraphs", "CUDA graphs "+gib(b.CUDAGraphBytes), "reserve", b.CUDAGraphBytes)
			used += b.CUDAGraphBytes
		} else {
			zero("cudagraphs", "CUDA graphs", "reserve")
		}
	}
	if stage >= stagePool {
		add("kv", "KV pool "+gib(p.UsedBytes), "kv", p.UsedBytes)
		used += p.UsedBytes
	} else {
		zero("kv", "KV pool", "kv")
	}
	add("requested", "requested, unassigned "+gib(p.Requested-used), "free", p.Requested-used)
	add("headroom", "headroom "+gib(b.TotalBytes-p.Requested), "headroom", b.TotalBytes-p.Requested)
	if fit {
		ms.Fit = &scene.RequestFit{Count: kit.Round2(p.Concurrency), Context: r.s.maxLen,
			Label: fmt.Sprintf("Maximum concurrency for %s tokens per request: %.2fx", kit.Comma(r.s.maxLen), p.Concurrency)}
	}
	return ms
}

// memScene wraps a memory stack as the step's main figure, marking what
// the mentions name.
func memScene(ms *scene.MemoryStack, mentions []scene.Mention, labels map[string]string) scene.Scene {
	return scene.Scene{Kind: scene.KindMemoryStack, ID: "memory", Title: "One GPU's memory, GiB", Memory: ms, Main: true, Marks: kit.MarksFor(mentions, labels)}
}

// tokenCost is a model's per-GPU bytes per token as a scene entry.
func tokenCost(key string, m hardware.Model, tp, bpe int, label string) scene.TokenCost {
	b := hardware.KVBytesPerTokenPerGPU(m, tp, bpe)
	note := fmt.Sprintf("2 · %d layers · %d KV heads · %d · %d B", m.Layers, hardware.KVHeadsPerGPU(m, tp), m.HeadDim, bpe)
	if m.KVLoraRank > 0 {
		note = fmt.Sprintf("%d layers · (%d + %d) · %d B", m.Layers, m.KVLoraRank, m.RopeHeadDim, bpe)
	}
	return scene.TokenCost{Key: key, Label: label, Kind: m.AttentionKind(), Bytes: float64(b), Note: note}
}

// gpuWords says where the total memory comes from.
func (r kvBudgetRun) gpuWords() string {
	g, total := r.s.gpu, r.budget.TotalBytes
	if r.memSource != "" {
		return fmt.Sprintf("On an %s, torch reports %s of device memory (%s; the datasheet's %s is %s)", g.Name, gib(total), hardware.EngineMemoryWhere(g), kit.BytesText(float64(g.MemoryBytes)), gib(g.MemoryBytes))
	}
	return fmt.Sprintf("The lab has no engine log for the %s, so it takes the datasheet's %s (%s); what torch reports differs from it, more on the HBM parts with a log (79.15 GiB on an A100-80GB, not 74.51)", g.Name, kit.BytesText(float64(g.MemoryBytes)), gib(total))
}

// graphWhere says where the CUDA graphs go, by the estimate knob and the
// vLLM version whose default it is.
func (r kvBudgetRun) graphWhere() string {
	if r.budget.CUDAGraphBytes > 0 {
		return fmt.Sprintf(". The CUDA graphs do not go there: with the profiler's CUDA-graph estimate on (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, the default since vLLM v0.21.0) their %s come off the KV pool", gib(r.budget.CUDAGraphBytes))
	}
	return " and the CUDA graphs, which vLLM captures after sizing the pool when the profiler's CUDA-graph estimate is off (every release before v0.21.0, v0.19 included)"
}

// graphTerm is the CUDA-graph estimate as a term of the pool's sum.
func (r kvBudgetRun) graphTerm() string {
	if r.budget.CUDAGraphBytes == 0 {
		return ""
	}
	return " − " + gib(r.budget.CUDAGraphBytes) + " of CUDA graphs"
}

// outsideWords is what the memory outside gpu_memory_utilization holds.
func (r kvBudgetRun) outsideWords() string {
	if r.budget.CUDAGraphBytes > 0 {
		return "the allocator's slack and"
	}
	return "the CUDA graphs and"
}

// splitWords is ", split over N GPUs" when TP > 1.
func (r kvBudgetRun) splitWords() string {
	if r.s.tp == 1 {
		return ""
	}
	return fmt.Sprintf(", this GPU's 1/%d share", r.s.tp)
}

func (r kvBudgetRun) budgetSteps() []lessons.Step {
	b, p, m := r.budget, r.pool, r.s.model
	steps := make([]lessons.Step, 0, 4)
	n := fmt.Sprintf("%s. gpu_memory_utilization %g lets vLLM use %s of it; the other %s is headroom, for anything else on the GPU%s.",
		r.gpuWords(), b.MemUtilization, gib(p.Requested), gib(b.TotalBytes-p.Requested), r.graphWhere())
	ms := kit.Linked(n, "memory", "headroom", "part:headroom", "lets vLLM use", "part:requested")
	steps = append(steps, lessons.Step{Title: "The memory the engine sees", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stageRequested, nil, false), ms, nil)}})
	wordsParams := fmt.Sprintf("%s parameters", bigCount(m.Params))
	n = fmt.Sprintf("Loading %s takes %s: %s at %s%s. Every parameter sits in memory, whether or not a token uses it.",
		m.Name, gib(b.WeightBytes), wordsParams, weightWords(r.s.weights), r.splitWords())
	ms = kit.Linked(n, "memory", "takes "+gib(b.WeightBytes), "part:weights")
	steps = append(steps, lessons.Step{Title: "The weights", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stageWeights, nil, false), ms, map[string]string{"part:weights": gib(b.WeightBytes)})}})
	n = fmt.Sprintf("vLLM then runs one forward pass over max_num_batched_tokens = %s dummy tokens and records what it needed besides the weights: the activations' peak (%s here) and memory outside torch's allocator, "+
		"the CUDA context and communication buffers (%s). vLLM measures both; the lab scales one H100 measurement (vLLM PR #10511) by the hidden size and the tokens, so these two are estimates.",
		kit.Comma(r.s.batched), gib(b.ActivationBytes), gib(b.NonTorchBytes))
	ms = kit.Linked(n, "memory", "activations' peak", "part:activation", "memory outside torch's allocator", "part:nontorch")
	steps = append(steps, lessons.Step{Title: "The profiling run's reserve", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stageReserve, nil, false), ms, nil)}})
	n = fmt.Sprintf("What is left of the %s becomes the KV pool: %s − %s − %s − %s%s = %s. Nothing else is computed from the workload: the pool is the same whatever max_model_len is.",
		gib(p.Requested), gib(p.Requested), gib(b.WeightBytes), gib(b.ActivationBytes), gib(b.NonTorchBytes), r.graphTerm(), gib(p.Available))
	ms = kit.Linked(n, "memory", "the KV pool", "part:kv")
	steps = append(steps, lessons.Step{Title: "What is left is the KV pool", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stagePool, nil, false), ms, map[string]string{"part:kv": gib(p.Available)})}})
	return steps
}

func weightWords(f hardware.WeightFormat) string {
	if f == hardware.WeightsFP8 {
		return "1 byte each in the linear layers and 2 in the embeddings (fp8)"
	}
	return "2 bytes each (bf16)"
}

// bigCount is a parameter count in words: "8.03 billion".
func bigCount(n int64) string {
	return strconv.FormatFloat(float64(n)/1e9, 'f', 2, 64) + " billion"
}

func (r kvBudgetRun) perTokenSteps() []lessons.Step {
	b, p, m, s := r.budget, r.pool, r.s.model, r.s
	chosen := tokenCost("chosen", m, s.tp, s.kvBPE, m.Name)
	expr, result := "S = 2 · layers · KV heads per GPU · head_dim · bytes", fmt.Sprintf("%s B per token", kit.Comma(int(p.BytesPerToken)))
	terms := []scene.Term{{Symbol: "layers", Meaning: "num_hidden_layers", Value: strconv.Itoa(m.Layers)},
		{Symbol: "KV heads per GPU", Meaning: fmt.Sprintf("%d KV heads over TP %d (at least 1)", m.KVHeads, s.tp), Value: strconv.Itoa(p.HeadsPerGPU)},
		{Symbol: "head_dim", Meaning: "per-head width", Value: strconv.Itoa(m.HeadDim)},
		{Symbol: "bytes", Meaning: "kv_cache_dtype", Value: strconv.Itoa(s.kvBPE)}}
	if m.KVLoraRank > 0 {
		expr = "S = layers · (kv_lora_rank + qk_rope_head_dim) · bytes"
		terms = []scene.Term{{Symbol: "layers", Meaning: "num_hidden_layers", Value: strconv.Itoa(m.Layers)},
			{Symbol: "kv_lora_rank", Meaning: "the latent's width", Value: strconv.Itoa(m.KVLoraRank)},
			{Symbol: "qk_rope_head_dim", Meaning: "the shared RoPE key", Value: strconv.Itoa(m.RopeHeadDim)},
			{Symbol: "bytes", Meaning: "kv_cache_dtype", Value: strconv.Itoa(s.kvBPE)}}
	}
	formula := scene.Scene{Kind: scene.KindFormula, ID: "per-token", Title: "One token's KV on one GPU", Formula: &scene.Formula{Expr: expr, Terms: terms, Result: result}}
	n := fmt.Sprintf("Each token the model has seen keeps its keys and values in every layer. For %s (%s) one token takes %s bytes on this GPU: %s.",
		m.Name, m.AttentionKind(), kit.Comma(int(p.BytesPerToken)), chosen.Note)
	ms := kit.Linked(n, "memory", m.Name, "attn:chosen")
	steps := []lessons.Step{{Title: "One token's keys and values", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stagePool, []scene.TokenCost{chosen}, false), ms, nil), formula}}}
	pageF := scene.Scene{Kind: scene.KindFormula, ID: "blocks", Title: "From the pool to blocks and tokens", Formula: &scene.Formula{
		Expr: "num_blocks = ⌊available / page / layers⌋, tokens = num_blocks · block_size",
		Terms: []scene.Term{{Symbol: "available", Meaning: "the KV pool", Value: gib(p.Available)},
			{Symbol: "page", Meaning: fmt.Sprintf("one layer's block: %d tokens · %s B", b.BlockSize, kit.Comma(int(p.BytesPerToken/int64(m.Layers)))), Value: kit.Comma(int(p.PageBytes)) + " B"},
			{Symbol: "layers", Meaning: "one page per layer per block", Value: strconv.Itoa(m.Layers)},
			{Symbol: "block_size", Meaning: "tokens per block", Value: strconv.Itoa(b.BlockSize)}},
		Result: fmt.Sprintf("%s blocks = %s tokens", kit.Comma(int(p.Blocks)), kit.Comma(int(p.Tokens)))}}
	n = fmt.Sprintf("vLLM allocates the pool in blocks of %d tokens, one page per layer: %s B a page, so %s holds %s blocks, and it logs \"GPU KV cache size: %s tokens\". The remainder, less than one block across the layers, stays unused.",
		b.BlockSize, kit.Comma(int(p.PageBytes)), gib(p.Available), kit.Comma(int(p.Blocks)), kit.Comma(int(p.Tokens)))
	ms = kit.Linked(n, "memory", "GPU KV cache size", "part:kv")
	steps = append(steps, lessons.Step{Title: "Blocks and tokens", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stagePool, []scene.TokenCost{chosen}, false), ms, map[string]string{"part:kv": kit.Comma(int(p.Tokens)) + " tokens"}), pageF}})
	n = fmt.Sprintf("How many requests fit? If every request reached max_model_len = %s tokens (%s blocks), %s blocks hold %.2f of them: vLLM logs \"Maximum concurrency for %s tokens per request: %.2fx\". "+
		"Shorter requests leave room for more; the scheduler's max_num_seqs caps the batch anyway.",
		kit.Comma(s.maxLen), kit.Comma(int(p.BlocksPerRequest)), kit.Comma(int(p.Blocks)), p.Concurrency, kit.Comma(s.maxLen), p.Concurrency)
	ms = kit.Linked(n, "memory", "Maximum concurrency", "fit:requests")
	steps = append(steps, lessons.Step{Title: "How many requests fit", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(r.memoryStack(stagePool, []scene.TokenCost{chosen}, true), ms, nil)}})
	return steps
}

// kindsStep compares one model of each attention kind.
func (r kvBudgetRun) kindsStep() lessons.Step {
	var costs []scene.TokenCost
	tbl := &scene.Table{Columns: []string{"model", "attention", "bytes per token", "weights", "tokens in this GPU's pool"}}
	var parts []string
	for _, k := range r.kinds {
		c := tokenCost(k.model.ID, k.model, 1, r.s.kvBPE, k.model.Name)
		costs = append(costs, c)
		pool := "does not fit"
		if k.fits {
			pool = kit.Comma(int(k.tokens))
		}
		w, _ := hardware.LoadedWeightBytes(k.model, hardware.WeightsBF16)
		tbl.Rows = append(tbl.Rows, []string{k.model.Name, k.model.AttentionKind(), kit.Comma(int(k.bytes)) + " B", gib(w), pool})
		what := k.model.AttentionKind()
		if k.model.ID == r.s.model.ID && !slices.Contains(kvReferences, k.model.ID) {
			what += ", the model chosen"
		}
		parts = append(parts, fmt.Sprintf("%s %s B (%s)", k.model.Name, kit.Comma(int(k.bytes)), what))
	}
	title := "One model of each attention kind on this GPU (TP 1, bf16 weights)"
	if !slices.Contains(kvReferences, r.s.model.ID) {
		title = "One model of each attention kind, and the model chosen, on this GPU (TP 1, bf16 weights)"
	}
	n := fmt.Sprintf("The same pool holds very different numbers of tokens depending on how attention caches K and V. MHA keeps a K and a V for every query head; "+
		"GQA shares each KV head among a group of query heads; MQA keeps one KV head; MLA caches one compressed latent of 512 values plus a 64-value RoPE key per layer. "+
		"Per token, in %s: %s. DeepSeek-V2-Lite's experts all sit in memory, so its small cache comes with larger weights.",
		map[int]string{1: "fp8", 2: "bf16"}[r.s.kvBPE], joinWords(parts))
	ms := kit.Linked(n, "memory", "MHA", "attn:llama-2-7b", "GQA", "attn:llama-3.1-8b", "MQA", "attn:falcon-7b", "MLA", "attn:deepseek-v2-lite")
	if !slices.Contains(kvReferences, r.s.model.ID) {
		ms = append(ms, kit.Linked(n, "memory", "the model chosen", "attn:"+r.s.model.ID)...)
	}
	ms2 := &scene.MemoryStack{Unit: "GiB", Total: gibValue(r.budget.TotalBytes), Parts: r.memoryStack(stagePool, nil, false).Parts, PerToken: costs}
	return lessons.Step{Title: "MHA, GQA, MQA and MLA", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{memScene(ms2, ms, nil), {Kind: scene.KindTable, ID: "kinds", Title: title, Table: tbl}}}
}

// joinWords joins with commas and a final "and".
func joinWords(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	out := parts[0]
	for _, p := range parts[1 : len(parts)-1] {
		out += ", " + p
	}
	return out + " and " + parts[len(parts)-1]
}

// dtypeName names a cache element size as the knob does.
func dtypeName(bpe int) string {
	if bpe == 1 {
		return "fp8"
	}
	return "auto (bf16)"
}

func (r kvBudgetRun) dtypeStep() lessons.Step {
	s, p, o, m := r.s, r.pool, r.other, r.s.model
	cur := tokenCost("chosen", m, s.tp, s.kvBPE, m.Name+", "+dtypeName(s.kvBPE))
	oth := tokenCost("other", m, s.tp, 3-s.kvBPE, m.Name+", "+dtypeName(3-s.kvBPE))
	oth.Highlight = true
	st := lessons.Step{Title: "fp8 halves the bytes, not the pool"}
	if !r.otherFits {
		st.Narration = fmt.Sprintf("With kv_cache_dtype %s each element would take %d byte(s): %s B per token; this GPU could not start that setting (not one request of %s tokens fits).",
			dtypeName(3-s.kvBPE), 3-s.kvBPE, kit.Comma(int(oth.Bytes)), kit.Comma(s.maxLen))
	} else {
		st.Quiz = lessons.NumberQuiz(fmt.Sprintf("Switch kv_cache_dtype from %s to %s. How many tokens does the pool hold now?", dtypeName(s.kvBPE), dtypeName(3-s.kvBPE)),
			float64(o.Tokens), 0.02, fmt.Sprintf("The pool stays %s; each token takes %s B instead of %s B, so it holds %s tokens.", gib(o.Available), kit.Comma(int(o.BytesPerToken)), kit.Comma(int(p.BytesPerToken)), kit.Comma(int(o.Tokens))))
		st.Narration = fmt.Sprintf("The cache's element size changes the bytes per token, not the pool: with kv_cache_dtype %s, %s takes %s B per token instead of %s B, and the same %s holds %s tokens instead of %s (%.2f×). "+
			"vLLM's logs show it: %s held %s tokens in bf16 and %s in fp8 from the same pool (cases %s and %s of docs/VALIDATION.md).",
			dtypeName(3-s.kvBPE), m.Name, kit.Comma(int(o.BytesPerToken)), kit.Comma(int(p.BytesPerToken)), gib(o.Available), kit.Comma(int(o.Tokens)), kit.Comma(int(p.Tokens)), float64(o.Tokens)/float64(p.Tokens),
			r.fp8Pair[0].Model.Name, kit.Comma(int(r.fp8Pair[0].LoggedTokens)), kit.Comma(int(r.fp8Pair[1].LoggedTokens)), r.fp8Pair[0].ID, r.fp8Pair[1].ID)
	}
	st.Mentions = kit.Linked(st.Narration, "memory", "instead of "+kit.Comma(int(p.BytesPerToken))+" B", "attn:other", "the same "+gib(o.Available), "part:kv")
	st.Scenes = []scene.Scene{memScene(r.memoryStack(stagePool, []scene.TokenCost{cur, oth}, false), st.Mentions, nil)}
	return st
}

func (r kvBudgetRun) tpStep() lessons.Step {
	s, m := r.s, r.s.model
	tbl := &scene.Table{Columns: []string{"TP", "weights per GPU", "reserve per GPU", "KV heads per GPU", "KV bytes per token per GPU", "tokens in the pool", fmt.Sprintf("requests of %s", kit.Comma(s.maxLen))}}
	chart := &scene.Chart{Type: scene.Bar, XLabel: "tensor-parallel GPUs", XUnit: "GPUs", YLabel: "tokens the pool holds", YUnit: "tokens"}
	sr := scene.Series{Name: m.Name}
	var words []string
	for _, t := range r.tps {
		tokens, conc := "does not fit", "—"
		if t.fits {
			tokens, conc = kit.Comma(int(t.tokens)), fmt.Sprintf("%.2f", t.concurrency)
			sr.X, sr.Y = append(sr.X, float64(t.tp)), append(sr.Y, float64(t.tokens))
			words = append(words, fmt.Sprintf("TP %d holds %s tokens", t.tp, kit.Comma(int(t.tokens))))
		} else {
			words = append(words, fmt.Sprintf("TP %d does not fit", t.tp))
		}
		tbl.Rows = append(tbl.Rows, []string{strconv.Itoa(t.tp), gib(t.weights), gib(t.reserve), strconv.Itoa(t.headsPerGPU), kit.Comma(int(t.bytes)) + " B", tokens, conc})
	}
	chart.Series = []scene.Series{sr}
	n := fmt.Sprintf("Tensor parallelism splits %s over GPUs: each keeps its share of the weights and of the KV heads, so every token's KV is spread over the group and the group holds as many tokens as one GPU's pool. "+
		"Two gains multiply: more memory freed from weights, fewer bytes per token on each GPU, until each GPU keeps a single KV head. Communication buffers grow the reserve at TP ≥ 2. %s.",
		m.Name, joinWords(words))
	var ms []scene.Mention
	for i, t := range r.tps {
		ms = append(ms, kit.Linked(n, "tp", fmt.Sprintf("TP %d ", t.tp), "row:"+strconv.Itoa(i))...)
	}
	tblScene := scene.Scene{Kind: scene.KindTable, ID: "tp", Title: "The same model split over 1, 2, 4 and 8 GPUs", Table: tbl, Main: true, Marks: kit.MarksFor(ms, nil)}
	return lessons.Step{Title: "Tensor parallelism splits the KV heads", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{tblScene, {Kind: scene.KindChart, ID: "tp-chart", Title: "Tokens the pool holds, by TP degree", Chart: chart}}}
}

func (r kvBudgetRun) mlaStep() lessons.Step {
	l8, ds := r.gqaModel, r.mlaModel
	costs := []scene.TokenCost{
		tokenCost("gqa-1", l8, 1, r.s.kvBPE, l8.Name+", TP 1"), tokenCost("gqa-2", l8, 2, r.s.kvBPE, l8.Name+", TP 2"),
		tokenCost("mla-1", ds, 1, r.s.kvBPE, ds.Name+", TP 1"), tokenCost("mla-2", ds, 2, r.s.kvBPE, ds.Name+", TP 2"),
	}
	n := fmt.Sprintf("Splitting works on heads. %s's %s B per token become %s B on each GPU at TP 2. MLA's latent is one row that every head reads, and vLLM treats it as a single KV head: "+
		"at TP 2 each GPU still stores %s's full %s B per token (and DeepSeek-V3's (512 + 64) × 61 layers = %s B in bf16). MLA saves memory per token, not per GPU of a group.",
		l8.Name, kit.Comma(int(r.gqa[0])), kit.Comma(int(r.gqa[1])), ds.Name, kit.Comma(int(r.mla[1])), kit.Comma(int(hardware.MustAnyModel("deepseek-v3").KVBytesPerToken(2))))
	ms := kit.Linked(n, "memory", "become "+kit.Comma(int(r.gqa[1]))+" B", "attn:gqa-2", "full "+kit.Comma(int(r.mla[1]))+" B", "attn:mla-2")
	ms2 := &scene.MemoryStack{Unit: "GiB", Total: gibValue(r.budget.TotalBytes), Parts: r.memoryStack(stagePool, nil, false).Parts, PerToken: costs}
	return lessons.Step{Title: "MLA's latent is not split", Narration: n, Mentions: ms, Scenes: []scene.Scene{memScene(ms2, ms, nil)}}
}

func (r kvBudgetRun) utilStep() lessons.Step {
	chart := &scene.Chart{Type: scene.Line, XLabel: "gpu_memory_utilization", YLabel: "tokens the pool holds", YUnit: "tokens"}
	sr := scene.Series{Name: r.s.model.Name + " on " + r.s.gpu.Name}
	chosen, chosenTokens := -1, int64(0)
	for _, u := range r.utils {
		if u.fits {
			if u.util == r.s.util {
				chosen, chosenTokens = len(sr.X), u.tokens
			}
			sr.X, sr.Y = append(sr.X, u.util), append(sr.Y, float64(u.tokens))
		}
	}
	chart.Series = []scene.Series{sr}
	step := float64(r.budget.TotalBytes) * 0.01
	n := fmt.Sprintf("Everything but the pool is fixed, so the pool grows one for one with gpu_memory_utilization: each 0.01 is %s, about %s tokens of %s here. "+
		"vLLM's default was 0.9 until vllm-project/vllm#38284 raised it to 0.92 (vllm/config/cache.py @ 002f10e); this knob keeps 0.9, and the runs in docs/VALIDATION.md set 0.95. What stays outside must hold %s any other process on the GPU, or the engine runs out of memory after start-up.",
		gib(int64(step)), kit.Comma(int(step/float64(r.pool.BytesPerToken))), r.s.model.Name, r.outsideWords())
	sc := scene.Scene{Kind: scene.KindChart, ID: "util", Title: "Pool size against gpu_memory_utilization", Chart: chart, Main: true}
	var ms []scene.Mention
	if chosen >= 0 {
		phrase := fmt.Sprintf("%.2f, the setting chosen here, gives a pool of %s tokens", r.s.util, kit.Comma(int(chosenTokens)))
		n += " " + phrase + "."
		ref := "point:" + sr.Name + ":" + strconv.Itoa(chosen)
		ms = []scene.Mention{kit.Mention(phrase, "util", ref)}
		sc.Marks = []scene.Mark{kit.MarkRef(ref, fmt.Sprintf("%.2f: %s tokens", r.s.util, kit.Comma(int(chosenTokens))))}
	}
	return lessons.Step{Title: "gpu_memory_utilization", Narration: n, Mentions: ms, Scenes: []scene.Scene{sc}}
}

// validationCounts counts the cases whose prediction is within tolerance.
func (r kvBudgetRun) validationCounts() (within int, worstArith float64) {
	for _, c := range r.validation {
		if c.Within() {
			within++
		}
		worstArith = max(worstArith, math.Abs(c.ArithmeticError))
	}
	return within, worstArith
}

func (r kvBudgetRun) validationStep() lessons.Step {
	tbl := &scene.Table{Columns: []string{"case", "setting", "logged", "arithmetic (logged non-KV)", "predicted (from the profile)", "source"}}
	for _, c := range r.validation {
		if c.LoggedNeedGiB > 0 {
			tbl.Rows = append(tbl.Rows, []string{c.ID, c.Setting, fmt.Sprintf("%.2f GiB", c.LoggedNeedGiB), fmt.Sprintf("%.3f GiB (%+.2f%%)", c.NeedGiB, 100*c.ArithmeticError), "the same", "[" + c.Source + "]"})
			continue
		}
		tbl.Rows = append(tbl.Rows, []string{c.ID, c.Setting, kit.Comma(int(c.LoggedTokens)) + " tokens",
			fmt.Sprintf("%s (%+.3f%%)", kit.Comma(int(c.Arithmetic.Tokens)), 100*c.ArithmeticError), fmt.Sprintf("%s (%+.2f%%)", kit.Comma(int(c.Predicted.Tokens)), 100*c.PredictedError), "[" + c.Source + "]"})
	}
	within, worst := r.validationCounts()
	n := fmt.Sprintf("vLLM prints its pool at start-up. Fed the non-KV memory the engine logged, the lab's arithmetic lands within %.3f%% of all %d published figures (bytes per token, TP split, fp8, MLA, block rounding). "+
		"Predicting the weights from the parameter count and the reserve from its estimate, it lands within %.0f%% on %d of %d: the reserve is where an estimate can miss, which is why vLLM measures it.",
		100*worst, len(r.validation), 100*hardware.KVTolerance, within, len(r.validation))
	// The figures the prediction misses are marked: the point of the table.
	var ms []scene.Mention
	var marks []scene.Mark
	for i, c := range r.validation {
		if !c.Within() {
			ref := "row:" + strconv.Itoa(i)
			marks = append(marks, kit.MarkRef(ref, fmt.Sprintf("%s: %+.1f%%", c.ID, 100*c.PredictedError)))
			if ms == nil {
				ms = kit.Linked(n, "validation", fmt.Sprintf("on %d of %d", within, len(r.validation)), ref)
			}
		}
	}
	return lessons.Step{Title: "Checked against the engine's own figures", Narration: n, Mentions: ms,
		Scenes: []scene.Scene{{Kind: scene.KindTable, ID: "validation", Title: "Published KV-capacity figures vs the lab (docs/VALIDATION.md)", Table: tbl, Main: true, Marks: marks}}}
}

func (r kvBudgetRun) claims() []lessons.Claim {
	s, p := r.s, r.pool
	var kv1, kv8 hardware.KVCaseResult
	for _, c := range r.validation {
		switch c.ID {
		case "KV1":
			kv1 = c
		case "KV8":
			kv8 = c
		}
	}
	short, long := (2048+15)/16, (32768+15)/16
	act, nonTorch := hardware.ReserveParts(kv1.Model, kv1.TP, kv1.BatchedTokens)
	return []lessons.Claim{{
		What:    "GPU KV cache size, Llama-3.1-8B on an H100, gpu_memory_utilization 0.95",
		Article: "476,016 tokens (vLLM v0.19.0's start-up log) [LLMD-V019]",
		Model:   fmt.Sprintf("%s predicted (%+.1f%%); %s from the logged non-KV memory", kit.Comma(int(kv1.Predicted.Tokens)), 100*kv1.PredictedError, kit.Comma(int(kv1.Arithmetic.Tokens))),
		Why: fmt.Sprintf("The lab estimates the non-KV memory at %s (weights %s, reserve %s, from an older vLLM measurement); v0.19 logged %.2f GiB in all. Given that, the arithmetic agrees to one block.",
			gib(kv1.Predicted.NonKV), gib(kv1.Predicted.NonKV-act-nonTorch), gib(act+nonTorch), kv1.LoggedNonKVGiB),
	}, {
		What:    "fp8 halves per-token storage, not the pool",
		Article: "952,032 fp8 tokens vs 476,016 bf16 from the same 58.11 GiB (llm-d's vLLM v0.19 runs) [LLMD-V019]",
		Model:   fmt.Sprintf("%s: %s B vs %s B per token; %s vs %s tokens", s.model.Name, kit.Comma(int(hardware.KVBytesPerTokenPerGPU(s.model, s.tp, 1))), kit.Comma(int(hardware.KVBytesPerTokenPerGPU(s.model, s.tp, 2))), kit.Comma(int(tokensAt(r, 1))), kit.Comma(int(tokensAt(r, 2)))),
		Why:     "Agrees: the pool comes from memory alone, the dtype only sets the bytes per token.",
	}, {
		What:    "The KV pool does not depend on max_model_len",
		Article: "\"KV pool size (GiB) is independent of max_model_len\" (58.11 GiB at 2,048 to 32,768) [LLMD-V019]",
		Model:   fmt.Sprintf("%s at any max_model_len; concurrency %.2fx at 2,048 and %.2fx at 32,768", gib(p.Available), float64(p.Blocks)/float64(short), float64(p.Blocks)/float64(long)),
		Why:     "Agrees: the profiling run uses max_num_batched_tokens, not max_model_len; max_model_len only divides the pool into requests.",
	}, {
		What:    "DeepSeek's latent cache",
		Article: "(512 + 64) × 61 layers for DeepSeek-V3 (its config); 0.95 GiB for one 32,768-token DeepSeek-V2-Lite request (vLLM's error message) [VLLM-15871]",
		Model:   fmt.Sprintf("%s B per token for DeepSeek-V3 in bf16; %.3f GiB for the V2-Lite request", kit.Comma(int(hardware.MustAnyModel("deepseek-v3").KVBytesPerToken(2))), kv8.NeedGiB),
		Why:     "Agrees: 576 values per token and layer, one row for all heads, not split by tensor parallelism.",
	}}
}

// tokensAt is the chosen pool's tokens with bpe-byte elements.
func tokensAt(r kvBudgetRun, bpe int) int64 {
	if bpe == r.s.kvBPE {
		return r.pool.Tokens
	}
	return r.other.Tokens
}

func (r kvBudgetRun) metrics() []lessons.Metric {
	b, p := r.budget, r.pool
	return []lessons.Metric{
		{Key: "total_gib", Label: "Device memory the engine sees", Unit: "GiB", Value: gibValue(b.TotalBytes)},
		{Key: "requested_gib", Label: "Memory vLLM may use (total × gpu_memory_utilization)", Unit: "GiB", Value: gibValue(p.Requested)},
		{Key: "weights_gib", Label: "Weights on this GPU", Unit: "GiB", Value: gibValue(b.WeightBytes)},
		{Key: "activation_gib", Label: "Activation peak of the profiling run (estimate)", Unit: "GiB", Value: gibValue(b.ActivationBytes)},
		{Key: "non_torch_gib", Label: "Non-torch memory (estimate)", Unit: "GiB", Value: gibValue(b.NonTorchBytes)},
		{Key: "kv_pool_gib", Label: "Available KV cache memory", Unit: "GiB", Better: lessons.HigherIsBetter, Value: gibValue(p.Available)},
		{Key: "kv_bytes_per_token", Label: "KV bytes per token on this GPU", Unit: "B", Better: lessons.LowerIsBetter, Value: float64(p.BytesPerToken)},
		{Key: "kv_blocks", Label: "KV blocks (num_blocks)", Unit: "blocks", Better: lessons.HigherIsBetter, Value: float64(p.Blocks)},
		{Key: "kv_tokens", Label: "GPU KV cache size", Unit: "tokens", Better: lessons.HigherIsBetter, Value: float64(p.Tokens)},
		{Key: "max_concurrency", Label: "Maximum concurrency at max_model_len", Unit: "requests", Better: lessons.HigherIsBetter, Value: kit.Round2(p.Concurrency)},
		{Key: "kv_tokens_other_dtype", Label: "GPU KV cache size with the other kv_cache_dtype (0: does not start)", Unit: "tokens", Value: float64(r.other.Tokens * b2i(r.otherFits))},
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (r kvBudgetRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	s.Steps = append(s.Steps, r.budgetSteps()...)
	s.Steps = append(s.Steps, r.perTokenSteps()...)
	s.Steps = append(s.Steps, r.kindsStep(), r.dtypeStep(), r.tpStep(), r.mlaStep(), r.utilStep(), r.validationStep(), lessons.Step{
		Title:     "Published figures vs this model",
		Narration: fmt.Sprintf("The lab's pool for %s on %s is %s: %s tokens, %.2f requests of %s tokens. Below, published figures beside the model's.", r.s.model.Name, r.s.gpu.Name, gib(r.pool.Available), kit.Comma(int(r.pool.Tokens)), r.pool.Concurrency, kit.Comma(r.s.maxLen)),
		Scenes:    []scene.Scene{kit.ClaimsTable(s.Claims)},
	})
	kit.IndexCursors(s.Steps)
	s.Work = r.work
	return s
}
