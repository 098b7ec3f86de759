package kit

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

// Knobs shared by the lessons that price steps on a GPU.
var (
	GPUParam   = lessons.Param{Key: "gpu", Label: "GPU", Help: "Sets memory, bandwidth and peak FLOPS (core/hardware, with sources).", Kind: lessons.Choice, Choices: gpuIDs("h100-sxm")}
	ModelParam = lessons.Param{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: lessons.Choice, Choices: ModelIDs()}
	GraphParam = lessons.Param{Key: "graph_mode", Label: "CUDA graphs", Help: "vLLM's CUDAGraphMode: how the CPU issues each step's kernels (the cuda-graphs lesson takes it apart).", Kind: lessons.Choice, Choices: GraphModes()}
	// WeightParam is the checkpoint's precision (hardware.StepModel.SetWeights,
	// hardware.LoadedWeightBytes); the KV cache stays BF16.
	WeightParam = lessons.Param{Key: "weight_dtype", Label: "Weights", Help: "bf16: 2 bytes per parameter. fp8: an FP8 checkpoint, linear layers in 1 byte with FP8 tensor-core GEMMs (H100, H200, B200, L4, L40S; on A100 weight-only with BF16 math, as vLLM's FP8 Marlin kernels), embeddings and lm_head in bf16. The KV cache stays bf16.", Kind: lessons.Choice, Choices: []string{"bf16", "fp8"}}
)

// TPParam is the tensor-parallel degree of each worker, default 1: the
// degrees that split the model evenly (TPRelation refuses the others).
func TPParam() lessons.Param {
	return lessons.Param{Key: "tp", Label: "GPUs per worker (TP)", Unit: "GPUs", Help: "Each worker is a tensor-parallel group of this many GPUs (1, 2, 4 or 8 for the models here); each holds its share of the weights and of the KV.", Kind: lessons.Int, Default: 1, Min: 1, Max: 8, Step: 1}
}

// WeightFormat is the values' weight_dtype, BF16 without the knob.
func WeightFormat(v lessons.Values) hardware.WeightFormat {
	if !v.Has("weight_dtype") {
		return hardware.WeightsBF16
	}
	return hardware.WeightFormat(v.Choice("weight_dtype"))
}

// WorkerTP is the values' tp, 1 without the knob.
func WorkerTP(v lessons.Values) int {
	if !v.Has("tp") {
		return 1
	}
	return v.Int("tp")
}

// WeightName is a weight format as the narration names it: "BF16" or
// "FP8".
func WeightName(f hardware.WeightFormat) string {
	if f == hardware.WeightsFP8 {
		return "FP8"
	}
	return "BF16"
}

// EngineFit is the shared feasibility check's setup for the values' GPU,
// model, tp and weight_dtype; FixedTP when the lesson has no tp knob.
func EngineFit(v lessons.Values, g hardware.GPU, m hardware.Model) hardware.Fit {
	return hardware.Fit{GPU: g, Model: m, TP: WorkerTP(v), FixedTP: !v.Has("tp"), Weights: WeightFormat(v)}
}

// CheckTP refuses a tp that does not split the model evenly.
func CheckTP(v lessons.Values, m hardware.Model) error {
	if tp := WorkerTP(v); !TPSplits(m, tp) {
		return TPRelation(m, tp)
	}
	return nil
}

// PrecisionNote is one sentence on the weights when they are FP8, "" for
// BF16: what the GPU does with them.
func PrecisionNote(e *Engine) string {
	if e.Weights != hardware.WeightsFP8 {
		return ""
	}
	if e.Step.FP8Math() {
		return fmt.Sprintf(" The weights are an FP8 checkpoint: linear layers in 1 byte with FP8 tensor-core GEMMs on the %s, embeddings and lm_head in BF16.", e.GPU.Name)
	}
	return fmt.Sprintf(" The weights are an FP8 checkpoint, which the %s, without FP8 tensor cores, runs weight-only: 1 byte per weight read, BF16 math (vLLM's FP8 Marlin kernels).", e.GPU.Name)
}

// GraphModes lists vLLM's CUDA-graph modes, the default first.
func GraphModes() []string {
	var out []string
	for _, m := range cudagraph.Modes() {
		out = append(out, m.Key())
	}
	return out
}

// gpuIDs lists the GPU profiles with first as the default.
func gpuIDs(first string) []string {
	ids := []string{first}
	for _, g := range hardware.GPUs() {
		if g.ID != first {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// Engine is a priced serving worker, one GPU or a tensor-parallel group:
// the step model with CUDA-graph replay and overlapped host work (a modern
// vLLM), and its KV capacity on each GPU.
type Engine struct {
	GPU     hardware.GPU
	Model   hardware.Model
	TP      int
	Weights hardware.WeightFormat
	Step    hardware.StepModel
	Mode    cudagraph.Mode
	// Pool is vLLM's start-up sizing of the KV cache on one GPU
	// (hardware.Fit.Pool); KVBlocks the blocks requests can hold.
	Pool     hardware.KVPool
	KVBlocks int
}

// EngineBudget is the token budget (max_num_batched_tokens) NewEngine
// sizes the activation reserve for: what the lessons without a budget knob
// run their schedulers at, vLLM's API-server default on H100-class GPUs.
const EngineBudget = 8192

// EnginePool is the KV pool vLLM would allocate for m on each of tp GPUs g
// with a token budget of batchedTokens (weights in format w, a BF16 cache,
// 0.9 of the memory): the same budget hardware.Fit checks against, so a
// setting Fit accepts is one the simulated pool holds. It returns the pool
// and the blocks a request can take: all but one, vLLM's null block.
func EnginePool(g hardware.GPU, m hardware.Model, tp int, w hardware.WeightFormat, blockSize, batchedTokens int) (hardware.KVPool, int, error) {
	p, err := hardware.Fit{GPU: g, Model: m, TP: tp, Weights: w, BatchedTokens: batchedTokens}.Pool(blockSize)
	if err != nil {
		return p, 0, err
	}
	return p, int(p.Blocks) - 1, nil
}

// ChosenHardware resolves the "gpu" and "model" knobs to their profiles.
func ChosenHardware(v lessons.Values) (hardware.GPU, hardware.Model, error) {
	g, err := hardware.GPUByID(v.Choice("gpu"))
	if err != nil {
		return hardware.GPU{}, hardware.Model{}, err
	}
	m, err := hardware.ModelByID(v.Choice("model"))
	return g, m, err
}

// FitKnobs says which knob a lesson ties to each limit of hardware.Fit.
type FitKnobs map[hardware.FitLimit]string

// CheckFit runs the shared feasibility check (hardware.Fit) and turns a
// refusal into an error on the knob the lesson ties to the broken limit,
// e.g. weights → "model", KV → "context", positions → "prompt".
func CheckFit(v lessons.Values, f hardware.Fit, knobs FitKnobs) error {
	err := f.Check()
	var fe *hardware.FitError
	if !errors.As(err, &fe) {
		return err
	}
	key := knobs[fe.Limit]
	return lessons.Relation(key, v.TextOf(key), "a setting a real GPU can run: "+fe.Error())
}

// StepWork is what one engine step counts in Script.Work beside the
// requests it advances: scheduling and pricing a step cost about as much
// CPU as advancing eight requests (measuring: 1.4 µs per step against 0.2
// µs per request advanced, BENCHMARKS.md).
const StepWork = 8

// StepsWork counts a scheduler run's work for Script.Work: StepWork for
// each step and one for each request it advanced.
func StepsWork(steps []scheduler.Step) int64 {
	w := StepWork * int64(len(steps))
	for _, st := range steps {
		w += int64(st.Running)
	}
	return w
}

// StreamedWork is what pricing one step kernel by kernel costs m's
// simulation beyond StepWork, in Script.Work units: a step the CUDA-graph
// dispatcher does not replay as one graph (eager, piecewise, a batch past
// the captured sizes) walks every kernel of every layer (the launch stream
// of core/hardware), 5–9 µs a step for a 32-layer model against about
// 1.1 µs for one replay, about 1.5 units per layer (BENCHMARKS.md, "Worst
// settings found by search": measuring with graph_mode none or piecewise,
// a 64-token budget and two or three sequences cost 2.8–3 s of CPU at
// 3.7–3.9 million units counted without it).
func StreamedWork(m hardware.Model) int64 { return int64(3 * m.Layers / 2) }

// StreamedWorkTP is StreamedWork for a worker of tp GPUs: at tp > 1 each
// layer issues two all-reduces beside its ten kernels (core/hardware's
// kernel list), so a streamed step walks 12/10 as many.
func StreamedWorkTP(m hardware.Model, tp int) int64 {
	if tp > 1 {
		return int64(9 * m.Layers / 5)
	}
	return StreamedWork(m)
}

// PricedStepsWork is StepsWork with StreamedWork added for each step that
// a dispatcher of mode with these max_num_seqs and token budget streams:
// what a scheduler run priced by e.timer costs.
func (e *Engine) PricedStepsWork(steps []scheduler.Step, seqs, budget int) int64 {
	return StepsWork(steps) + e.streamedSteps(steps, seqs, budget)*StreamedWorkTP(e.Model, e.TP)
}

// streamedSteps counts the steps a dispatcher at these limits streams
// kernel by kernel (the rest replay one captured graph).
func (e *Engine) streamedSteps(steps []scheduler.Step, seqs, budget int) int64 {
	d := cudagraph.New(e.Mode, seqs, budget)
	var n int64
	var seqBuf []hardware.Chunk
	for _, st := range steps {
		// The dispatcher reads a batch's token count and whether every
		// sequence computes one token; a step records both as counts.
		seqBuf = seqBuf[:0]
		for range st.DecodeTokens {
			seqBuf = append(seqBuf, hardware.Chunk{NewTokens: 1})
		}
		if st.PrefillTokens > 0 {
			seqBuf = append(seqBuf, hardware.Chunk{NewTokens: st.PrefillTokens})
		}
		if _, one := d.OneLaunch(hardware.Batch{Seqs: seqBuf}); !one {
			n++
		}
	}
	return n
}

// streamCounter is a scheduler.Timer that counts, as extra Script.Work,
// StreamedWork for each step its dispatcher streams (see PricedStepsWork):
// for simulations that keep no step records (core/batching's servers).
type streamCounter struct {
	scheduler.Timer
	d     cudagraph.Dispatcher
	per   int64
	Extra int64
}

// CountingTimer is e.timer with its streamed steps counted.
func (e *Engine) CountingTimer(maxNumSeqs, budget int) *streamCounter {
	return &streamCounter{Timer: e.Timer(maxNumSeqs, budget), d: cudagraph.New(e.Mode, maxNumSeqs, budget), per: StreamedWorkTP(e.Model, e.TP)}
}

// StepSeconds prices one step, counting it when it is streamed.
func (c *streamCounter) StepSeconds(b []scheduler.Work) float64 {
	if _, one := c.d.OneLaunch(hardware.Batch{Seqs: b}); !one {
		c.Extra += c.per
	}
	return c.Timer.StepSeconds(b)
}

// PricedRequestWork bounds what serving reqs costs beyond RequestWork
// when steps are priced kernel by kernel under mode (graph_mode), on a
// model of m on tp GPUs with these max_num_seqs and token budget: StreamedWorkTP for
// each prefill chunk (a step that carries one is streamed outside FULL
// mode within the captured sizes) and, under none or piecewise, for each
// output token (a request running alone is a step per token), else for
// each output token over the largest captured size (a decode batch past it
// is streamed). An upper bound: requests that share steps share them.
func PricedRequestWork(reqs []workload.Request, mode cudagraph.Mode, m hardware.Model, tp, seqs, budget int) int64 {
	d := cudagraph.New(mode, seqs, budget)
	var chunks, outputs int64
	for _, r := range reqs {
		chunks += int64((r.Prompt + budget - 1) / budget)
		outputs += int64(r.Output)
	}
	streamed := chunks
	if mode == cudagraph.Full && budget <= d.MaxCaptureSize() {
		streamed = 0
	}
	switch captured := int64(d.MaxCaptureSize()); {
	case mode == cudagraph.None || mode == cudagraph.Piecewise || captured == 0:
		streamed += outputs
	default:
		streamed += outputs / captured
	}
	return streamed * StreamedWorkTP(m, tp)
}

// GraphMode is the values' graph_mode, vLLM's default without the knob.
func GraphMode(v lessons.Values) cudagraph.Mode {
	if !v.Has("graph_mode") {
		return cudagraph.Default
	}
	mode, err := cudagraph.ParseMode(v.Choice("graph_mode"))
	if err != nil {
		return cudagraph.Default
	}
	return mode
}

// MaxFitting is the largest n in [0, limit] for which fits holds, given
// that it holds for every smaller n (a batch that fits stays fitting when
// smaller): 0 when even 1 does not.
func MaxFitting(limit int, fits func(n int) bool) int {
	lo, hi := 0, limit
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// TPSplits reports whether tp splits m's query heads, KV heads and MLP
// evenly (a KV head may be replicated when tp exceeds them), as engines
// require.
func TPSplits(m hardware.Model, tp int) bool {
	return m.QHeads%tp == 0 && m.Intermediate%tp == 0 && (m.KVHeads%tp == 0 || tp%m.KVHeads == 0)
}

// TPRelation is the error for a tensor-parallel degree that does not split
// the model evenly.
func TPRelation(m hardware.Model, tp int) error {
	return lessons.Relation("tp", strconv.Itoa(tp), fmt.Sprintf("a degree that splits %s's %d query heads, %d KV heads and MLP evenly (1, 2, 4 or 8)", m.Name, m.QHeads, m.KVHeads), "model")
}

// VLLMBatch is what `vllm serve` sets max_num_batched_tokens and
// max_num_seqs to on g when the user sets neither
// (scheduler.BatchDefaults: 8,192 and 1,024 on H100, H200 and B200; 2,048
// and 256 on A100, L4 and L40S).
func VLLMBatch(g hardware.GPU) (budget, seqs int) {
	return scheduler.BatchDefaults(g, scheduler.APIServer)
}

// VLLMBatchNote is one sentence for a lesson whose max_num_seqs and
// max_num_batched_tokens knobs differ from what vLLM would default to on
// g, "" when they do not.
func VLLMBatchNote(g hardware.GPU, seqs, budget int) string {
	dBudget, dSeqs := VLLMBatch(g)
	if seqs == dSeqs && budget == dBudget {
		return ""
	}
	return fmt.Sprintf(" On an %s vLLM would default to max_num_seqs %s and max_num_batched_tokens %s (get_batch_defaults); this run uses %s and %s.",
		g.Name, Comma(dSeqs), Comma(dBudget), Comma(seqs), Comma(budget))
}

// PagedKVTokens is the KV cache, in tokens, that n sequences of tokens
// each take in vLLM's paged pool: whole blocks of blockSize per sequence,
// and the pool's null block. As hardware.Fit's KVTokens it makes Check
// accept exactly the n that the pool Fit.Pool sizes holds.
func PagedKVTokens(n, tokens, blockSize int) int64 {
	return (int64(n)*int64((tokens+blockSize-1)/blockSize) + 1) * int64(blockSize)
}

// NewEngine builds the engine for the "gpu" and "model" knobs and, when the
// lesson has it, the "graph_mode" knob, its KV pool sized for a token
// budget of EngineBudget. It fails (with the GPU and model named) when the
// weights do not fit.
func NewEngine(v lessons.Values, blockSize int) (*Engine, error) {
	return NewEngineAt(v, blockSize, EngineBudget)
}

// NewEngineAt is NewEngine for a scheduler whose token budget
// (max_num_batched_tokens) is batchedTokens, where vLLM's profiling run
// measures the activation peak it takes off the pool; a worker of the
// values' tp GPUs (1 without the knob) and weight_dtype (BF16 without it).
// Weights that do not fit are refused on "model".
func NewEngineAt(v lessons.Values, blockSize, batchedTokens int) (*Engine, error) {
	return buildEngine(v, WorkerTP(v), blockSize, batchedTokens, "model")
}

// buildEngine is an engine of tp GPUs for the values' gpu, model,
// weight_dtype and graph_mode; weights and activations that leave no room
// for KV are refused on the knob key.
func buildEngine(v lessons.Values, tp, blockSize, batchedTokens int, key string) (*Engine, error) {
	g, m, err := ChosenHardware(v)
	if err != nil {
		return nil, err
	}
	sm, err := hardware.NewStepModel(g, m, tp, hardware.BF16)
	if err != nil {
		return nil, TPRelation(m, tp)
	}
	w := WeightFormat(v)
	if err := sm.SetWeights(w); err != nil {
		return nil, err
	}
	// vLLM v1 dispatches with CUDA graphs (FULL_AND_PIECEWISE by default)
	// and overlaps host work with the GPU (async scheduling).
	mode := cudagraph.Default
	if v.Has("graph_mode") {
		if mode, err = cudagraph.ParseMode(v.Choice("graph_mode")); err != nil {
			return nil, err
		}
	}
	sm.OverlapHost = true
	if tp > 1 {
		// vLLM workers: vLLM's custom all-reduce for decode-sized messages.
		sm.AllReduce = hardware.VLLMAllReduce(g, tp)
	}
	p, blocks, err := EnginePool(g, m, tp, w, blockSize, batchedTokens)
	if err != nil {
		if key == "tp" || tp > 1 {
			return nil, lessons.Relation(key, v.TextOf(key), fmt.Sprintf("enough %s GPUs per worker to hold %s's %s weights and activations with room for KV (%v)", g.Name, m.Name, WeightName(w), err))
		}
		return nil, lessons.Relation(key, m.ID, "a model whose "+WeightName(w)+" weights and activations fit on one "+g.Name+" ("+err.Error()+")")
	}
	return &Engine{GPU: g, Model: m, TP: tp, Weights: w, Step: sm, Mode: mode, Pool: p, KVBlocks: blocks}, nil
}

// Timer prices the steps of a scheduler with these max_num_seqs and token
// budget, which set vLLM's CUDA-graph capture sizes.
func (e *Engine) Timer(maxNumSeqs, budget int) scheduler.Timer {
	sm := e.Step
	sm.Dispatcher = cudagraph.New(e.Mode, maxNumSeqs, budget)
	return scheduler.HardwareTimer{Model: sm}
}

// PrefillSeconds prices an isolated prompt of n tokens on e, cut into
// budget-sized chunks as vLLM would.
func PrefillSeconds(t scheduler.Timer, n, budget int) float64 {
	return prefillAfter(t, 0, n, budget)
}

// ChoicesFirst returns ids with first moved to the front (the default).
func ChoicesFirst(ids []string, first string) []string {
	out := []string{first}
	for _, id := range ids {
		if id != first {
			out = append(out, id)
		}
	}
	return out
}

// NewTPEngine is an engine of tp GPUs whose refusal, when the weights
// leave no room for KV, is on the knob key (the lesson's TP knob for that
// worker); the engine's pool is each GPU's.
func NewTPEngine(v lessons.Values, tp int, key string, blockSize, batchedTokens int) (*Engine, error) {
	return buildEngine(v, tp, blockSize, batchedTokens, key)
}

func ModelIDs() []string {
	var ids []string
	for _, m := range hardware.Models() {
		ids = append(ids, m.ID)
	}
	return ids
}

// ContextLimit is a model's context window, or 131,072 tokens where a
// profile leaves max_position_embeddings unknown (0; every profile now
// states it, see hardware.Model.MaxPositions).
func ContextLimit(maxPositions int) int {
	if maxPositions <= 0 {
		return 1 << 17
	}
	return maxPositions
}

// RoutingRun is one policy over one stream.
type RoutingRun struct {
	Name   string
	Result *cluster.Result
	// HitTokens is cached prompt tokens / prompt tokens; HitRequests the
	// share of requests that found any of their prompt cached.
	HitTokens, HitRequests     float64
	TTFTMean, ttftP50, TTFTP99 float64
	Imbalance                  float64
	PerWorker                  []int
}

func SummariseRouting(name string, res *cluster.Result) RoutingRun {
	r := RoutingRun{Name: name, Result: res}
	var cached, prompt, hits int
	var ttft []float64
	for _, m := range res.Requests {
		cached += m.CachedHit
		prompt += m.Prompt
		if m.CachedHit > 0 {
			hits++
		}
		ttft = append(ttft, m.TTFT)
	}
	p := scheduler.Summarise(ttft)
	r.TTFTMean, r.ttftP50, r.TTFTP99 = p.Mean, p.P50, p.P99
	r.HitTokens = float64(cached) / float64(max(1, prompt))
	r.HitRequests = float64(hits) / float64(max(1, len(res.Requests)))
	var sum, top float64
	for _, w := range res.Workers {
		sum += w.MeanActive
		top = max(top, w.MeanActive)
		r.PerWorker = append(r.PerWorker, w.Requests)
	}
	if sum > 0 {
		r.Imbalance = top / (sum / float64(len(res.Workers)))
	}
	return r
}

// PromptHashes are the block hashes of each of groups system prompts of
// prefixTokens tokens (workload's PrefixGroup ids), to ask a router's index
// what it caches of each.
func PromptHashes(groups, prefixTokens, blockSize int) [][]uint64 {
	var out [][]uint64
	for g := 0; g < groups; g++ {
		wr := workload.Request{ID: 0, Prompt: prefixTokens, PrefixGroup: g, PrefixLen: prefixTokens}
		out = append(out, router.BlockHashes(wr.TokenIDs(), blockSize, ""))
	}
	return out
}

// CachedByPrompt asks idx, per worker, how many leading blocks of each
// prefix it caches.
func CachedByPrompt(idx router.Indexer, prefixes [][]uint64, workers int) [][]int {
	out := make([][]int, workers)
	for _, hs := range prefixes {
		ov := idx.Overlap(hs)
		for w := range out {
			out[w] = append(out[w], ov[w])
		}
	}
	return out
}

// CacheFills is one worker's cache bar: each system prompt's cached blocks,
// then the rest of the total (-1: blocks of no system prompt).
func CacheFills(perPrompt []int, total int) []scene.Fill {
	var out []scene.Fill
	sum := 0
	for g, n := range perPrompt {
		if n > 0 {
			out = append(out, scene.Fill{Group: g, Value: float64(n)})
			sum += n
		}
	}
	if total > sum {
		out = append(out, scene.Fill{Group: -1, Value: float64(total - sum)})
	}
	return out
}

// PromptGroups names n system prompts for a cluster's legend.
func PromptGroups(n int) []string {
	var out []string
	for g := 0; g < n; g++ {
		out = append(out, "prompt "+strconv.Itoa(g+1))
	}
	return out
}

// EndPool is a routing run's workers as the run ended: what the router's
// index saw cached (each system prompt's blocks when cached is not nil,
// else every block it holds), the mean
// requests in flight at routing time, and the requests each served. idp
// keeps worker refs unique when several pools are drawn.
func EndPool(label, idp string, run RoutingRun, cached [][]int) scene.Pool {
	p := scene.Pool{Label: label}
	for w, wr := range run.Result.Workers {
		var per []int
		if cached != nil {
			per = cached[w]
		}
		name := "W" + strconv.Itoa(w+1)
		total := 0
		if cached == nil {
			total = run.Result.Index.Blocks(w)
		}
		p.Workers = append(p.Workers, scene.Worker{ID: idp + name, Name: name, Cache: CacheFills(per, total),
			Queue: Round2(wr.MeanActive), Lines: []string{fmt.Sprintf("served %d", wr.Requests)}})
	}
	return p
}

// Busiest is the worker with the most requests in flight on average.
func (r RoutingRun) Busiest() int {
	best := 0
	for w, wr := range r.Result.Workers {
		if wr.MeanActive > r.Result.Workers[best].MeanActive {
			best = w
		}
	}
	return best
}

// GPUsText names a worker's GPUs: "H100 SXM" for one, "4× H100 SXM" for a
// TP group.
func (e *Engine) GPUsText() string {
	if e.TP > 1 {
		return fmt.Sprintf("%d× %s", e.TP, e.GPU.Name)
	}
	return e.GPU.Name
}

// ModelText names the model with its weights' format when it is not BF16:
// "Llama-3.1-70B FP8".
func (e *Engine) ModelText() string {
	if e.Weights == hardware.WeightsFP8 {
		return e.Model.Name + " FP8"
	}
	return e.Model.Name
}

// WorkersText is n workers of this engine: "4 H100 SXM workers", or "4
// workers of 4× H100 SXM" for TP groups.
func (e *Engine) WorkersText(n int) string {
	if e.TP > 1 {
		return fmt.Sprintf("%d workers of %d× %s", n, e.TP, e.GPU.Name)
	}
	return fmt.Sprintf("%d %s workers", n, e.GPU.Name)
}

// OneWorkerText is one worker of this engine: "one H100 SXM", or "4× H100
// SXM (one TP group)".
func (e *Engine) OneWorkerText() string {
	if e.TP > 1 {
		return e.GPUsText() + " (one TP group)"
	}
	return "one " + e.GPU.Name
}
