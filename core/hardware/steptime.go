package hardware

import (
	"fmt"
	"math"
	"sync"
)

// This file is the step-time model: how long one engine step — one forward
// pass over a batch of prefill chunks and decodes — takes on one GPU of a
// tensor-parallel group. It follows docs/SOURCES.md#step-time-model:
//
//	t_kernel = t0 + max(FLOPs / (peak · MFU), bytes / (bandwidth · η))   per kernel (§6.2)
//	GPU time = the kernels of the step laid end to end on one stream,
//	           each starting once the CPU has launched it (§3)
//	t_step   = max(GPU timeline end, CPU dispatch end) + host overhead (§6.4)
//
// The kernel list is derived from the model shape the way vLLM's
// LlamaDecoderLayer issues it (§3.2), tensor-parallel all-reduces included
// (§6.5), so the same list drives the CUDA-graph lesson's Gantt chart.

// Chunk is one sequence's work in a step: NewTokens computed on top of
// Context tokens already in the KV cache. A decode is NewTokens = 1; a
// prefill chunk of a prompt is NewTokens > 1, with Context the part of the
// prompt computed (or found in the prefix cache) before. It is also what a
// scheduler's step records for each request it scheduled (core/scheduler's
// Work is this type): Req names the request and Prefill says whether the
// tokens are part of its prompt or a recompute after preemption. The step
// model reads only the token counts.
type Chunk struct {
	NewTokens int
	Context   int
	Req       int
	Prefill   bool
}

// Batch is the work of one step, one Chunk per scheduled sequence.
type Batch struct {
	Seqs []Chunk
}

// Tokens is N, the number of new tokens in the step.
func (b Batch) Tokens() int {
	n := 0
	for _, s := range b.Seqs {
		n += s.NewTokens
	}
	return n
}

// Decodes counts the sequences computing exactly one token.
func (b Batch) Decodes() int {
	n := 0
	for _, s := range b.Seqs {
		if s.NewTokens == 1 {
			n++
		}
	}
	return n
}

// PrefillTokens counts the new tokens of sequences computing more than one.
func (b Batch) PrefillTokens() int {
	n := 0
	for _, s := range b.Seqs {
		if s.NewTokens > 1 {
			n += s.NewTokens
		}
	}
	return n
}

// IsUniformDecode reports whether every sequence decodes one token, the
// batch shape vLLM's full CUDA graphs are captured for (docs/SOURCES.md#vllm-cg).
func (b Batch) IsUniformDecode() bool {
	return len(b.Seqs) > 0 && b.Decodes() == len(b.Seqs)
}

// ContextTokens is Σ c_i, the cached tokens the step's attention reads.
func (b Batch) ContextTokens() int {
	n := 0
	for _, s := range b.Seqs {
		n += s.Context
	}
	return n
}

// DecodeBatch returns n decodes, each on top of context cached tokens.
func DecodeBatch(n, context int) Batch {
	b := Batch{Seqs: make([]Chunk, n)}
	for i := range b.Seqs {
		b.Seqs[i] = Chunk{NewTokens: 1, Context: context}
	}
	return b
}

// PrefillBatch returns n prompts of the given length, each computed whole in
// one step with nothing cached.
func PrefillBatch(n, prompt int) Batch {
	b := Batch{Seqs: make([]Chunk, n)}
	for i := range b.Seqs {
		b.Seqs[i] = Chunk{NewTokens: prompt}
	}
	return b
}

// KernelKind says which roof a kernel is held to.
type KernelKind int

const (
	// Elementwise kernels (norms, rotary, activation, cache writes,
	// embedding lookup, sampling) move activations and are bandwidth-bound.
	Elementwise KernelKind = iota
	// GEMM kernels multiply activations by weights; FP8 precision applies
	// to them.
	GEMM
	// Attention kernels read the KV cache; their FLOPs grow with context.
	Attention
	// Collective kernels are tensor-parallel all-reduces and gathers,
	// timed by the AllReduce model rather than by the roofline.
	Collective
)

func (k KernelKind) String() string {
	switch k {
	case Elementwise:
		return "elementwise"
	case GEMM:
		return "gemm"
	case Attention:
		return "attention"
	case Collective:
		return "collective"
	}
	return fmt.Sprintf("KernelKind(%d)", int(k))
}

// Kernel is one GPU kernel launch of a step, on one GPU of the group.
type Kernel struct {
	// Name is the operation, e.g. "qkv_proj"; the same name repeats in
	// every layer.
	Name string
	// Layer is the decoder layer, or -1 for the embedding and the output
	// head.
	Layer int
	Kind  KernelKind
	// FLOPs and Bytes are this GPU's share of the work and of the memory
	// traffic (weights, KV cache, activations).
	FLOPs, Bytes float64
	// GPUTime is how long the kernel occupies the GPU, in seconds:
	// t0 + max(compute, memory) for roofline kernels, the all-reduce time
	// for collectives.
	GPUTime float64
	// ComputeBound is true when the compute term exceeds the memory term.
	ComputeBound bool
	// Start is when the kernel starts on the GPU, in seconds from the
	// start of the step. Kernels returned by StepModel.Kernels have it 0;
	// StepCost.Kernels have it set by the dispatch timeline.
	Start float64
}

// Attention reports whether the kernel is an attention kernel, the ones
// vLLM's piecewise CUDA graphs leave out (docs/SOURCES.md#vllm-cg).
func (k Kernel) Attention() bool { return k.Kind == Attention }

// Precision is the number format of the GEMMs' tensor-core math.
type Precision string

const (
	// BF16 is BF16/FP16 weights and math.
	BF16 Precision = "bf16"
	// FP8 is FP8 weights and FP8 tensor-core GEMMs (Hopper, Ada,
	// Blackwell). On a GPU without FP8 tensor cores (A100) it degrades to
	// FP8 weight-only storage with BF16 math.
	FP8 Precision = "fp8"
)

// Efficiency holds the factors that turn datasheet peaks into achieved
// rates (docs/SOURCES.md#efficiency-factors).
type Efficiency struct {
	// HBM is η, the fraction of peak memory bandwidth a streaming kernel
	// reaches.
	HBM float64
	// MFU is the fraction of dense BF16 peak a large GEMM or attention
	// kernel reaches.
	MFU float64
	// MFUFP8 is the fraction of dense FP8 peak an FP8 GEMM reaches; it is
	// per architecture and must not be carried across (§6.8 VC8).
	MFUFP8 float64
	// KernelFixed is t0, the fixed cost of every roofline kernel in
	// seconds: launch latency, ramp-up and tail. It contains the 1–2 µs
	// GPU-side gap between kernels inside a CUDA graph, so dispatchers do
	// not add that gap again.
	KernelFixed float64
}

// Efficiency factors (docs/SOURCES.md#efficiency-factors).
const (
	// hbmHopper: vidur's 1-token GEMMs reach 79–92% of HBM on H100
	// [VIDUR-MLP]; Azure's GB200 HBM microbenchmark 92% [AZ-GB200].
	hbmHopper = 0.90
	// hbmAmpere: vidur's 1-token GEMMs reach 74–80% on A100 [VIDUR-MLP].
	hbmAmpere = 0.80
	// mfuHopper: vidur H100 GEMMs at 4096 tokens reach 71–85% of BF16 peak
	// [VIDUR-MLP].
	mfuHopper = 0.72
	// mfuAmpere: vidur A100 GEMMs reach 69–75%; fits TRT-LLM A100 TTFT
	// (§6.8 VC5) [VIDUR-MLP] [TRT-PERF].
	mfuAmpere = 0.70
	// mfuFP8Hopper: FP8 GEMMs on H100 have no per-kernel measurement, so
	// the factor is calibrated on TRT-LLM's H100 FP8 LLaMA-7B TTFT at 2048
	// tokens, 36 ms [TRT-PERF], and checked out
	// of sample on 70B TP4 TTFT and the M8 throughputs. The 0.40 a
	// whole-model shortcut gives comes from it, which charges every FLOP at the FP8
	// rate and has no non-GEMM kernels, t0 or T_fixed; this model charges
	// those separately, and the same calibration gives 0.54 (1,069 TFLOPS,
	// 1.5× the BF16 GEMM rate). TestMFUFP8Calibration re-derives it.
	mfuFP8Hopper = 0.54
	// mfuFP8Ada: 0.50 on L40S, §6.7's whole-model figure from TRT-LLM
	// L40S 7B TTFT (§6.8 VC8) [TRT-PERF]. Recalibrating it in this model
	// would need 0.80, which no GEMM reaches: the excess lies in the
	// memory-side figures, unmeasured for L40S (see the VC8 case).
	mfuFP8Ada = 0.50
	// kernelFixed: t0 = 4 µs fits vidur's small GEMMs and 4–7 µs
	// elementwise ops [VIDUR-MLP]; it includes Hazy's 1.3 µs in-graph gap
	// [HAZY].
	kernelFixed = 4e-6
)

// DefaultEfficiency returns the §6.7 factors of a GPU: its profile's Eff.
// Figures measured on one part are carried to its siblings where the
// sources have none of their own; each profile in GPUs says so.
func DefaultEfficiency(g GPU) Efficiency { return g.Eff }

// AllReduce models one tensor-parallel all-reduce of a message of m bytes
// over p GPUs (docs/SOURCES.md#allreduce-model):
//
//	T = Latency + 2(p−1)/p · m / BusBW
//
// Decode messages are a few KB, so Latency dominates: it is a first-order
// parameter of TP decode (§6.8 VC4).
type AllReduce struct {
	// Latency is α in seconds.
	Latency float64
	// BusBW is the NCCL bus bandwidth in bytes per second.
	BusBW float64
	// CustomMaxBytes, when above zero, sends all-reduces of up to that
	// many bytes through the engine's custom kernel, which starts in
	// CustomLatency instead of Latency (see VLLMAllReduce). Gathers and
	// larger messages stay on NCCL.
	CustomMaxBytes, CustomLatency float64
}

// Time returns the all-reduce time for m bytes over p GPUs; 0 when p ≤ 1.
func (a AllReduce) Time(m float64, p int) float64 {
	if p <= 1 {
		return 0
	}
	if a.CustomMaxBytes > 0 && m <= a.CustomMaxBytes {
		return a.CustomLatency + 2*float64(p-1)/float64(p)*m/a.BusBW
	}
	return a.Latency + 2*float64(p-1)/float64(p)*m/a.BusBW
}

// GatherTime is an all-gather of m bytes in total: each GPU receives the
// (p−1)/p it lacks.
func (a AllReduce) GatherTime(m float64, p int) float64 {
	if p <= 1 {
		return 0
	}
	return a.Latency + float64(p-1)/float64(p)*m/a.BusBW
}

// All-reduce constants (docs/SOURCES.md#allreduce-model).
const (
	// AllReduceLatencyCustom is a one-shot custom all-reduce kernel on
	// H100 for messages ≤ 32 KB, 6–12 µs (vLLM, SGLang) [SGL-2904].
	AllReduceLatencyCustom = 10e-6
	// allReduceLatencyNCCLH100: NCCL through torch.distributed, 8×H100,
	// 2 KB–1 MB median 34–38 µs [VIDUR-NET].
	allReduceLatencyNCCLH100 = 35e-6
	// allReduceLatencyNCCLA100: the same on a DGX A100, 62–64 µs
	// [VIDUR-NET]; §6.5 rounds to 60.
	allReduceLatencyNCCLA100 = 60e-6
	// Bus bandwidths at 64 MiB [VIDUR-NET].
	busBWH100x8 = 365e9
	busBWH100x4 = 317e9
	busBWA100x8 = 174e9
	busBWA100x4 = 167e9
	// nvlinkBusFraction is what the 8×H100 measurement gets of NVLink4's
	// 450 GB/s per direction, 365/450 (derived from [VIDUR-NET]); used for
	// parts without their own measurement.
	nvlinkBusFraction = busBWH100x8 / nvlink4
	// pcieEfficiency: PCIe Gen4 DMA reaches 25 of 31.5 GB/s [NVBW-42]
	// [AZ-NHC]; used for collectives of parts without NVLink.
	pcieEfficiency = 0.80
)

// DefaultAllReduce returns NCCL all-reduce figures for tp GPUs of the given
// part, from its profile's NCCL field: the measured ones (docs/SOURCES.md#allreduce-model)
// where they exist (the 4-GPU figure serves tp = 2, which was not measured),
// otherwise the link bandwidth scaled by what H100 achieves of NVLink, or
// PCIe at η 0.80. Engines with a custom all-reduce (vLLM, SGLang, TRT-LLM)
// reach about AllReduceLatencyCustom instead of the NCCL latency.
func DefaultAllReduce(g GPU, tp int) AllReduce {
	if tp >= 8 {
		return AllReduce{Latency: g.NCCL.Latency, BusBW: g.NCCL.BusBW8}
	}
	return AllReduce{Latency: g.NCCL.Latency, BusBW: g.NCCL.BusBW}
}

// vLLM's custom all-reduce (vllm/distributed/device_communicators/
// custom_all_reduce.py [VLLM-CAR]): a one-shot or two-shot kernel over
// peer-mapped buffers, used for tensors up to max_size = 8 MiB on 2, 4, 6
// or 8 GPUs when every pair is linked by NVLink (or two PCIe GPUs with peer
// access); NCCL otherwise.
const vllmCustomARMaxBytes = 8 << 20

// VLLMAllReduce is the all-reduce of a vLLM engine on tp GPUs of g:
// DefaultAllReduce's NCCL figures, with vLLM's custom kernel for messages
// up to 8 MiB where vLLM enables it (tp of 2, 4, 6 or 8 within the part's
// NVLink domain) at AllReduceLatencyCustom [SGL-2904] and NCCL's bus
// bandwidth. Two GPUs on PCIe, where vLLM also enables it, keep NCCL here:
// there is no measurement of the kernel over PCIe. docs/VALIDATION.md
// compares the choice with vLLM's measured custom all-reduce and with the
// end-to-end latency it saved [VLLM-2192].
func VLLMAllReduce(g GPU, tp int) AllReduce {
	a := DefaultAllReduce(g, tp)
	switch tp {
	case 2, 4, 6, 8:
		if tp <= g.NVLinkDomain {
			a.CustomMaxBytes, a.CustomLatency = vllmCustomARMaxBytes, AllReduceLatencyCustom
		}
	}
	return a
}

// HostOverhead is the engine's CPU work around each forward pass:
// scheduling, input preparation, sampling bookkeeping, output processing
// (docs/SOURCES.md#host-overhead).
type HostOverhead struct {
	// PerStep is the fixed part per step, in seconds.
	PerStep float64
	// PerSeq is added per scheduled sequence, in seconds.
	PerSeq float64
	// FirstToken is T_fixed, the once-per-request path to the first token
	// (scheduling, input upload, first sampling, non-graph launches). TTFT
	// adds it; Step does not, since a step does not know which of its
	// sequences are new.
	FirstToken float64
}

// Time is the host overhead of one step over b.
func (h HostOverhead) Time(b Batch) float64 {
	return h.PerStep + h.PerSeq*float64(len(b.Seqs))
}

// Host overhead constants.
const (
	// vLLM 0.2/0.3 on A100, Llama-2-7B TP1: T_host ≈ 0.9 ms + 32 µs × B
	// (schedule and output processing ≈ 16 µs per request each)
	// [VIDUR-CPU] (derived in docs/SOURCES.md#host-overhead).
	vllmHostPerStep = 0.9e-3
	vllmHostPerSeq  = 32e-6
	// TFixedTRTLLM is the low end of the 4–8 ms per-request floor of
	// TRT-LLM v0.5 TTFT (§6.7, §6.8 VC7) [TRT-PERF]. The low end, because
	// the note's range is the residual of a roofline without the per-kernel
	// t0, which this model counts.
	TFixedTRTLLM = 4e-3
)

// VLLMHostOverhead is vLLM 0.2/0.3's measured host overhead, which adds
// serially to every step [VIDUR-CPU]. Modern engines overlap most of it
// with the GPU — SGLang's zero-overhead scheduler, TRT-LLM's overlap
// scheduler [TRT-OVERLAP], vLLM multi-step and async scheduling — which
// StepModel.OverlapHost models.
func VLLMHostOverhead() HostOverhead {
	return HostOverhead{PerStep: vllmHostPerStep, PerSeq: vllmHostPerSeq}
}

// Dispatch is how the CPU issues one step's kernels.
type Dispatch struct {
	// Mode names the dispatch mode, e.g. "eager", "replay".
	Mode string
	// CPUTime is the CPU time spent issuing the step, in seconds.
	CPUTime float64
	// Launches[i] is when kernel i has been issued and may start on the
	// GPU, in seconds from the start of the step. Missing entries are 0.
	Launches []float64
	// PaddedTokens is the token count the GPU computes when the dispatcher
	// pads the batch to a captured graph size; 0 or ≤ the batch's tokens
	// means no padding.
	PaddedTokens int
}

// Dispatcher turns a step's kernel list into CPU dispatch time and launch
// times. Eager and Replay are provided here; the CUDA-graph package
// implements vLLM's graph modes, capture sizes and padding.
type Dispatcher interface {
	Dispatch(b Batch, kernels []Kernel) Dispatch
}

// Per-launch CPU costs of eager dispatch (docs/SOURCES.md#dispatch-costs).
const (
	// PerLaunchCPP: cudaLaunchKernel from a C++/Rust engine, 4–6 µs
	// [PEGA-3].
	PerLaunchCPP = 5e-6
	// PerLaunchPython: one eagerly launched op from a PyTorch engine, 24
	// µs: PyTorch's per-op dispatch on top of the launch itself (an empty
	// kernel launched from Python takes 20.5 µs [NUMBA-3003]; §3.3 puts
	// eager PyTorch at 5–30 µs per op). Calibrated on three eager
	// measurements: vLLM V0 and V1 benchmark_latency without graphs
	// (Llama-3.1-8B, batch 8, 32 in / 128 out: 1.10 and 1.26 s
	// [VLLM-10058]) and gpt-fast's plain eager decode (25.5 tok/s
	// [GPTFAST-BLOG]), which need 22, 25.7 and 24.6 µs; docs/VALIDATION.md
	// lists them with the out-of-sample cases.
	PerLaunchPython = 24e-6
	// GraphLaunch: vLLM's model_execution_launch with CUDA graphs on,
	// 0.07–0.09 ms per step [VIDUR-CPU].
	GraphLaunch = 80e-6
)

// Eager launches every kernel from the CPU, one after another, PerLaunch
// seconds each. The GPU cannot start a kernel before it is launched, so a
// step of many short kernels is CPU-bound.
type Eager struct {
	PerLaunch float64
}

// Dispatch implements Dispatcher.
func (e Eager) Dispatch(b Batch, kernels []Kernel) Dispatch {
	d := Dispatch{Mode: "eager", Launches: make([]float64, len(kernels))}
	for i := range kernels {
		d.Launches[i] = float64(i+1) * e.PerLaunch
	}
	d.CPUTime = float64(len(kernels)) * e.PerLaunch
	return d
}

// Replay issues the whole step as one captured CUDA graph of exactly the
// batch's shape: one launch of Launch seconds, after which every kernel is
// on the GPU's queue. It is what torch.compile(mode="reduce-overhead")
// does for gpt-fast's batch-1 decode; vLLM's capture sizes and padding live
// in the CUDA-graph package.
type Replay struct {
	Launch float64
}

// Dispatch implements Dispatcher.
func (r Replay) Dispatch(b Batch, kernels []Kernel) Dispatch {
	d := Dispatch{Mode: "replay", CPUTime: r.Launch, Launches: make([]float64, len(kernels))}
	for i := range d.Launches {
		d.Launches[i] = r.Launch
	}
	return d
}

// StepModel prices engine steps for one model on one GPU of a TP group.
// NewStepModel fills in the defaults; every field may be changed after.
type StepModel struct {
	GPU   GPU
	Model Model
	// TP is the tensor-parallel degree; 0 means 1.
	TP int
	// Precision selects BF16 or FP8 GEMMs.
	Precision Precision
	// WeightBytesPerParam is 2 for BF16, 1 for FP8, about 0.5 for 4-bit.
	WeightBytesPerParam float64
	// KVBytesPerElement is 2 for a BF16 cache, 1 for FP8.
	KVBytesPerElement int
	// EdgesBF16 keeps the embedding and the output projection (lm_head)
	// in BF16, weights and math, whatever Precision says: what FP8
	// serving checkpoints do (SetWeights). False prices them like every
	// other GEMM, as the TRT-LLM engines of the validation cases are.
	EdgesBF16 bool
	Eff       Efficiency
	AllReduce AllReduce
	// Dispatcher issues the kernels; nil means Eager{PerLaunchPython}.
	Dispatcher Dispatcher
	Host       HostOverhead
	// OverlapHost runs host work for the next step while the GPU runs this
	// one, so a step takes max(device, host) instead of their sum.
	OverlapHost bool
	// SeqDevice is device time per scheduled sequence per step beyond the
	// kernels the model lists, added to the device part of every step
	// (VLLMSeqDevice for vLLM v1; 0 leaves the kernels alone).
	SeqDevice float64
	// NoEmbedding and NoOutput price one pipeline-parallel stage: a stage
	// after the first has no embedding, one before the last no final norm,
	// lm_head, logits gather or sampler, as vLLM's PPMissingLayer leaves
	// them out; Model.Layers is then the stage's layers (core/parallel
	// sets both).
	NoEmbedding, NoOutput bool
}

// activationBytes is the size of one activation element: BF16/FP16 in
// every engine modelled here, FP8 GEMMs included.
const activationBytes = 2

// NewStepModel returns a step model with the sourced defaults: weights
// and KV in the precision's format, DefaultEfficiency, DefaultAllReduce,
// eager Python launches and vLLM 0.2/0.3's serial host overhead — a
// vLLM-like engine without CUDA graphs. It rejects a TP degree that does not
// split the heads and MLP evenly.
func NewStepModel(g GPU, m Model, tp int, p Precision) (StepModel, error) {
	if tp < 1 {
		return StepModel{}, fmt.Errorf("hardware: tp = %d, want tp ≥ 1", tp)
	}
	if err := g.checkCostFigures(); err != nil {
		return StepModel{}, err
	}
	if m.QHeads%tp != 0 || m.Intermediate%tp != 0 || (m.KVHeads%tp != 0 && tp%m.KVHeads != 0) {
		return StepModel{}, fmt.Errorf("hardware: tp = %d does not split %s (%d query heads, %d KV heads, intermediate %d)", tp, m.ID, m.QHeads, m.KVHeads, m.Intermediate)
	}
	s := StepModel{
		GPU: g, Model: m, TP: tp, Precision: p,
		WeightBytesPerParam: 2, KVBytesPerElement: 2,
		Eff:        DefaultEfficiency(g),
		AllReduce:  DefaultAllReduce(g, tp),
		Dispatcher: Eager{PerLaunch: PerLaunchPython},
		Host:       VLLMHostOverhead(),
	}
	switch p {
	case BF16:
	case FP8:
		s.WeightBytesPerParam, s.KVBytesPerElement = 1, 1
	default:
		return StepModel{}, fmt.Errorf("hardware: precision %q, want %q or %q", p, BF16, FP8)
	}
	return s, nil
}

func (m *StepModel) tp() int { return max(m.TP, 1) }

// SetWeights loads the weights in format f as a serving engine loads the
// checkpoint, leaving the KV cache's format as it is. WeightsBF16 is BF16
// weights and math. WeightsFP8 is an FP8 checkpoint (llm-compressor's
// FP8_DYNAMIC, the format of the -FP8 and -FP8-dynamic models vLLM
// serves): the linear layers in 1 byte with FP8 tensor-core GEMMs, the
// embedding and lm_head in BF16 (EdgesBF16), as LoadedWeightBytes counts
// them. On a GPU without FP8 tensor cores (A100) the linear layers still
// read 1 byte per weight but multiply in BF16: vLLM runs FP8 checkpoints
// there as weight-only W8A16 through its FP8 Marlin kernels
// (docs/SOURCES.md#weight-precision).
func (m *StepModel) SetWeights(f WeightFormat) error {
	switch f {
	case WeightsBF16:
		m.Precision, m.WeightBytesPerParam, m.EdgesBF16 = BF16, 2, false
	case WeightsFP8:
		m.Precision, m.WeightBytesPerParam, m.EdgesBF16 = FP8, 1, true
	default:
		return fmt.Errorf("hardware: weight format %q, want %q or %q", f, WeightsBF16, WeightsFP8)
	}
	return nil
}

// FP8Math reports whether the step's linear layers multiply in FP8: FP8
// precision on a GPU with FP8 tensor cores.
func (m StepModel) FP8Math() bool { return m.Precision == FP8 && m.GPU.PeakFP8 > 0 }

// gemmRoof is the peak and efficiency GEMMs run at.
func (m *StepModel) gemmRoof() (peak, mfu float64) {
	if m.Precision == FP8 && m.GPU.PeakFP8 > 0 {
		return m.GPU.PeakFP8, m.Eff.MFUFP8
	}
	return m.GPU.PeakBF16, m.Eff.MFU
}

// Ridge is the effective ridge point of the step's GEMMs in FLOP per byte:
// achievable compute over achievable bandwidth. Below it a GEMM is
// memory-bound.
func (m StepModel) Ridge() float64 {
	peak, mfu := m.gemmRoof()
	return peak * mfu / (m.GPU.MemBandwidth * m.Eff.HBM)
}

// roofline prices one roofline kernel; a GEMM runs at the precision's
// roof unless bf16 says it multiplies in BF16 (an lm_head EdgesBF16 keeps).
func (m *StepModel) roofline(k *Kernel, bf16 bool) {
	peak, mfu := m.GPU.PeakBF16, m.Eff.MFU
	if k.Kind == GEMM && !bf16 {
		peak, mfu = m.gemmRoof()
	}
	compute := k.FLOPs / (peak * mfu)
	memory := k.Bytes / (m.GPU.MemBandwidth * m.Eff.HBM)
	k.ComputeBound = compute > memory
	k.GPUTime = m.Eff.KernelFixed + math.Max(compute, memory)
}

// Kernels returns the kernels of one step over b on one GPU of the group,
// in launch order, priced but not yet placed on a timeline. For a
// Llama-like decoder each layer issues (docs/SOURCES.md#kernels-per-layer, [VLLM-LLAMA]):
//
//	input_norm, qkv_proj, rotary, kv_cache_write, attention, o_proj,
//	[all_reduce], post_attn_norm, gate_up_proj, silu_mul, down_proj, [all_reduce]
//
// — 10 kernels, 12 at TP > 1 — between embedding (+ all-reduce at TP > 1,
// vocabulary-parallel) and final_norm, lm_head (+ logits gather at TP > 1)
// and sampler. The lm_head runs on the last token of each sequence only.
func (m StepModel) Kernels(b Batch) []Kernel {
	return m.kernels(nil, b, b.Tokens())
}

// kernels appends to dst[:0] the list with nLin tokens through the linear
// layers, which is more than b.Tokens() when a CUDA graph pads the batch:
// the step's layout with layer 0 repeated for every layer.
func (m *StepModel) kernels(dst []Kernel, b Batch, nLin int) []Kernel {
	var l stepLayout
	m.layout(&l, b, nLin)
	n := l.count()
	ks := dst[:0]
	if cap(ks) < n {
		ks = make([]Kernel, 0, n)
	}
	ks = append(ks, l.headKernels()...)
	for layer := 0; layer < l.layers; layer++ {
		for _, k := range l.layerKernels() {
			k.Layer = layer
			ks = append(ks, k)
		}
	}
	return append(ks, l.tailKernels()...)
}

// StepCost is the priced step.
type StepCost struct {
	// Total is the wall time of the step in seconds: Device plus Host, or
	// max(Device, Host) with OverlapHost.
	Total float64
	// Device is max(GPU timeline end, CPU dispatch end).
	Device float64
	// GPU is the busy time of compute kernels, Comm that of collectives;
	// both lie on the timeline, which ends at GPU + Comm + Idle.
	GPU, Comm float64
	// Idle is the time the GPU waits for launches.
	Idle float64
	// CPU is the dispatch CPU time; Host the engine's host overhead.
	CPU, Host float64
	// Kernels are placed on the timeline (Start set).
	Kernels []Kernel
	// Mode is the dispatch mode; PaddedTokens the tokens the GPU computed.
	Mode         string
	Tokens       int
	PaddedTokens int
	// FLOPs and Bytes total the compute kernels.
	FLOPs, Bytes float64
	// ComputeBound is the dominant regime: compute-bound kernels take more
	// of the GPU time than memory-bound ones.
	ComputeBound bool
}

// Step prices one step over b. The GPU runs the kernels in order on one
// stream; kernel i starts at max(end of kernel i−1, its launch time). The
// device part of the step ends when both the GPU and the dispatching CPU
// are done; host overhead then adds serially, or overlaps with OverlapHost.
func (m StepModel) Step(b Batch) StepCost { return m.step(nil, b) }

// scratch holds kernel lists for Seconds, which discards them.
var scratch = sync.Pool{New: func() any { return new([]Kernel) }}

// Seconds is Step(b).Total without keeping the kernel list: the scheduler
// prices every step with it. A dispatcher that issues the step with one
// launch (OneLaunch) or launch by launch (Streaming) is priced from the
// step's layout, one layer's kernels walked Layers times, with the same
// additions in the same order as Step and so the same result to the last
// bit; others get Step's per-kernel path. Dispatchers must not retain the
// kernels slice.
func (m StepModel) Seconds(b Batch) float64 {
	disp := m.dispatcher()
	if o, ok := disp.(OneLaunch); ok {
		if d, ok := o.OneLaunch(b); ok {
			return m.oneLaunchSeconds(b, d)
		}
	}
	if s, ok := disp.(Streaming); ok {
		d, st := s.Stream(b)
		return m.streamSeconds(b, d, st)
	}
	return m.listSeconds(b)
}

// listSeconds is Step(b).Total, the kernel list laid out in a scratch
// buffer.
func (m *StepModel) listSeconds(b Batch) float64 {
	buf := scratch.Get().(*[]Kernel)
	c := m.step(*buf, b)
	*buf = c.Kernels[:0]
	scratch.Put(buf)
	return c.Total
}

// dispatcher is m.Dispatcher, or eager Python launches when it is nil.
func (m *StepModel) dispatcher() Dispatcher {
	if m.Dispatcher == nil {
		return Eager{PerLaunch: PerLaunchPython}
	}
	return m.Dispatcher
}

func (m *StepModel) step(dst []Kernel, b Batch) StepCost {
	disp := m.dispatcher()
	tokens := b.Tokens()
	ks := m.kernels(dst, b, tokens)
	d := disp.Dispatch(b, ks)
	padded := tokens
	if d.PaddedTokens > tokens {
		padded = d.PaddedTokens
		ks = m.kernels(ks, b, padded)
	}
	c := StepCost{Kernels: ks, Mode: d.Mode, Tokens: tokens, PaddedTokens: padded, CPU: d.CPUTime}
	var end, boundCompute, boundMemory float64
	for i := range ks {
		k := &ks[i]
		start := end
		if i < len(d.Launches) {
			start = math.Max(start, d.Launches[i])
		}
		k.Start = start
		end = start + k.GPUTime
		if k.Kind == Collective {
			c.Comm += k.GPUTime
			continue
		}
		c.GPU += k.GPUTime
		c.FLOPs += k.FLOPs
		c.Bytes += k.Bytes
		if k.ComputeBound {
			boundCompute += k.GPUTime
		} else {
			boundMemory += k.GPUTime
		}
	}
	c.Idle = end - c.GPU - c.Comm
	c.Device = math.Max(end, d.CPUTime) + m.SeqDevice*float64(len(b.Seqs))
	c.ComputeBound = boundCompute > boundMemory
	c.Host = m.Host.Time(b)
	if m.OverlapHost {
		c.Total = math.Max(c.Device, c.Host)
	} else {
		c.Total = c.Device + c.Host
	}
	return c
}

// TTFT is the time to first token of one prompt computed in a single step
// with nothing cached: that step plus Host.FirstToken.
func (m StepModel) TTFT(promptTokens int) float64 {
	return m.Step(PrefillBatch(1, promptTokens)).Total + m.Host.FirstToken
}

// ArithmeticIntensity is the step's FLOPs per byte of memory traffic over
// its compute kernels, the x coordinate of the step on a roofline.
func (m StepModel) ArithmeticIntensity(b Batch) float64 {
	var f, by float64
	for _, k := range m.Kernels(b) {
		if k.Kind != Collective {
			f += k.FLOPs
			by += k.Bytes
		}
	}
	if by == 0 {
		return 0
	}
	return f / by
}

// RooflinePoint is one operation of a step on a roofline chart, summed
// over the layers.
type RooflinePoint struct {
	Name string
	Kind KernelKind
	// Intensity is FLOP per byte; Attained is FLOPs over GPU time, FLOP/s.
	Intensity, Attained float64
	// FLOPs, Bytes and Time sum the kernels of this name.
	FLOPs, Bytes, Time float64
	ComputeBound       bool
}

// RooflinePoints aggregates the step's compute kernels by name, in first
// launch order, for a roofline chart. Plot them under Roof.
func (m StepModel) RooflinePoints(b Batch) []RooflinePoint {
	var pts []RooflinePoint
	idx := map[string]int{}
	for _, k := range m.Kernels(b) {
		if k.Kind == Collective {
			continue
		}
		i, ok := idx[k.Name]
		if !ok {
			i = len(pts)
			idx[k.Name] = i
			pts = append(pts, RooflinePoint{Name: k.Name, Kind: k.Kind})
		}
		p := &pts[i]
		p.FLOPs += k.FLOPs
		p.Bytes += k.Bytes
		p.Time += k.GPUTime
		p.ComputeBound = k.ComputeBound
	}
	for i := range pts {
		p := &pts[i]
		if p.Bytes > 0 {
			p.Intensity = p.FLOPs / p.Bytes
		}
		if p.Time > 0 {
			p.Attained = p.FLOPs / p.Time
		}
	}
	return pts
}

// Roof returns the attainable FLOP/s at arithmetic intensity x for the
// step's GEMMs: min(peak · MFU, x · bandwidth · η), and with achieved=false
// the datasheet roof min(peak, x · bandwidth).
func (m StepModel) Roof(x float64, achieved bool) float64 {
	peak, mfu := m.gemmRoof()
	bw := m.GPU.MemBandwidth
	if achieved {
		return math.Min(peak*mfu, x*bw*m.Eff.HBM)
	}
	return math.Min(peak, x*bw)
}
