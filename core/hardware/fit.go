package hardware

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Fit is a serving setup to check before simulating it: a model on TP GPUs
// of one kind, the KV cache it must hold at once, the most tokens one step
// computes and the longest sequence it runs. Check says whether a real GPU
// could run it; every lesson checks its knobs with it, so that none
// simulates (or narrates) a setup that could not exist.
//
//	err := hardware.Fit{
//		GPU: g, Model: m, TP: tp,
//		KVTokens:      int64(batch) * int64(context+1), // resident at once
//		BatchedTokens: 8192,                            // the largest step
//		Positions:     context + 1,                     // the longest sequence
//	}.Check()
//	var fe *hardware.FitError
//	if errors.As(err, &fe) { /* fe.Limit says which limit: weights, KV or positions */ }
//
// The message names the model, the GPU, what is needed and what is there,
// and what to change, e.g. "llama-3.1-70b needs 141 GB of weights;
// a100-40gb-sxm has 40 GB: pick tp ≥ 4 or a larger GPU". Lessons put it
// after the knob it concerns.
type Fit struct {
	GPU   GPU
	Model Model
	// TP is the tensor-parallel degree; 0 means 1. FixedTP says the caller
	// has no TP knob, so the advice does not suggest one.
	TP      int
	FixedTP bool
	// WeightBytesPerParam is 2 for BF16 weights (the default when 0), 1
	// for FP8. KVBytesPerElement is 2 for a BF16 cache (the default), 1
	// for FP8.
	WeightBytesPerParam float64
	KVBytesPerElement   int
	// Weights, when set, is the checkpoint's format and overrides
	// WeightBytesPerParam with LoadedWeightBytes (FP8 keeps the embeddings
	// in BF16).
	Weights WeightFormat
	// MemUtilization is vLLM's gpu_memory_utilization; 0 means 0.9.
	MemUtilization float64
	// MemoryBytes is the device memory the engine sees on each GPU; 0
	// means EngineMemory(GPU): torch's total where an engine log gives
	// it (79.19 GiB on an H100 SXM), else the datasheet's.
	MemoryBytes int64
	// BatchedTokens is the most tokens one step computes, where vLLM
	// measures its activation peak (max_num_batched_tokens); 0 means
	// 8,192.
	BatchedTokens int
	// KVTokens is the KV cache that must be resident at once, in tokens
	// summed over all sequences; 0 checks the weights alone.
	KVTokens int64
	// Positions is the longest sequence, prompt + output tokens; 0 skips
	// the check.
	Positions int
}

// FitLimit names the limit a setup broke.
type FitLimit string

// The limits Check enforces.
const (
	LimitWeights   FitLimit = "weights"   // weights + activation reserve exceed the usable memory
	LimitKV        FitLimit = "kv"        // the requested KV cache does not fit beside them
	LimitPositions FitLimit = "positions" // a sequence is longer than the model's context
)

// FitError is Check's refusal. Need and Have are bytes per GPU for
// LimitWeights and LimitKV, tokens for LimitPositions.
type FitError struct {
	Limit      FitLimit
	Need, Have int64
	// MinTP is the smallest TP degree (up to 8, splitting the model) at
	// which the setup would fit, 0 if none does; only for memory limits.
	MinTP int
	msg   string
}

func (e *FitError) Error() string { return e.msg }

// Activation reserve: the memory vLLM's profiling run finds besides weights
// and KV cache, for Meta-Llama-3-8B on an H100 at 8,192 batched tokens
// [VLLM-10511]: "non_torch_memory 1.79GiB" at TP 1 and 3.58 GiB at TP 2
// (CUDA context, NCCL and custom all-reduce buffers), "PyTorch activation
// peak memory 1.26GiB" at both.
const (
	nonTorchTP1      = 1.79 * (1 << 30)
	nonTorchTPMulti  = 3.58 * (1 << 30)
	activationPeak   = 1.26 * (1 << 30)
	activationTokens = 8192
	activationHidden = 4096
	defaultBatched   = 8192
	defaultMemUtil   = 0.9
)

// ActivationReserve is the non-weight, non-KV memory one GPU of a TP group
// needs for m at batchedTokens tokens per step: the measured non-torch
// memory plus the activation peak, scaled linearly with the tokens and
// with the hidden size, the one width the TP 1 and TP 2 measurements share
// (their peaks are equal, so the peak does not shrink with TP). A derived
// estimate from one measurement [VLLM-10511].
func ActivationReserve(m Model, tp, batchedTokens int) int64 {
	nonTorch := nonTorchTP1
	if tp > 1 {
		nonTorch = nonTorchTPMulti
	}
	act := activationPeak * float64(batchedTokens) / activationTokens * float64(m.Hidden) / activationHidden
	return int64(math.Round(nonTorch + act))
}

// Check reports whether the setup fits: the model's positions hold the
// longest sequence, this GPU's share of the weights and the activation
// reserve fit in memory × utilization, and the KV cache fits beside them
// (the memory vLLM's start-up sizing leaves for it: Budget). The error is a
// *FitError.
func (f Fit) Check() error {
	f = f.withDefaults()
	m := f.Model
	if _, err := f.weightBytes(); err != nil {
		return err
	}
	if f.Positions > 0 && m.MaxPositions > 0 && f.Positions > m.MaxPositions {
		return &FitError{Limit: LimitPositions, Need: int64(f.Positions), Have: int64(m.MaxPositions),
			msg: fmt.Sprintf("%s tokens (prompt + output) exceed %s's %s positions", comma(int64(f.Positions)), m.ID, comma(int64(m.MaxPositions)))}
	}
	usable, fixed, left := f.budget(f.TP)
	if left < 0 {
		return f.weightsError(usable, fixed)
	}
	if need := f.kvBytes(f.TP); need > left {
		e := &FitError{Limit: LimitKV, Need: need, Have: left, MinTP: f.minTP()}
		e.msg = fmt.Sprintf("%s tokens of KV cache need %s per GPU; %s has %s left after weights and activations: fewer or shorter sequences, or %s",
			comma(f.KVTokens), gbText(need), f.gpus(), gbText(left), f.advice(e.MinTP))
		return e
	}
	return nil
}

// weightsError is the refusal when weights and activations alone overflow.
func (f Fit) weightsError(usable, fixed int64) *FitError {
	m, g, tp := f.Model, f.GPU, int64(f.TP)
	e := &FitError{Limit: LimitWeights, Need: fixed, Have: usable, MinTP: f.minTP()}
	weights, _ := f.weightBytes()
	if mem := f.memory(); weights > mem*tp {
		// The weights alone exceed the memory: the plain statement.
		have := fmt.Sprintf("%s has %s", g.ID, f.memText(1))
		if tp > 1 {
			have = fmt.Sprintf("%d× %s have %s", tp, g.ID, f.memText(int(tp)))
		}
		e.msg = fmt.Sprintf("%s needs %s of weights; %s: %s", m.ID, gbText(weights), have, f.advice(e.MinTP))
		return e
	}
	share := ceilDiv(weights, tp)
	e.msg = fmt.Sprintf("%s needs %s of weights and %s for activations per GPU; %s has %s usable (%s, at %g utilization): %s",
		m.ID, gbText(share), gbText(fixed-share), f.gpus(), gbText(usable), f.memText(1), f.MemUtilization, f.advice(e.MinTP))
	return e
}

func (f Fit) withDefaults() Fit {
	if f.TP < 1 {
		f.TP = 1
	}
	if f.WeightBytesPerParam <= 0 {
		f.WeightBytesPerParam = 2
	}
	if f.KVBytesPerElement <= 0 {
		f.KVBytesPerElement = 2
	}
	if f.MemUtilization <= 0 {
		f.MemUtilization = defaultMemUtil
	}
	if f.BatchedTokens <= 0 {
		f.BatchedTokens = defaultBatched
	}
	return f
}

// weightBytes is the weights' memory over all GPUs: LoadedWeightBytes of
// Weights when set, else every parameter at WeightBytesPerParam.
func (f Fit) weightBytes() (int64, error) {
	if f.Weights != "" {
		return LoadedWeightBytes(f.Model, f.Weights)
	}
	return f.Model.WeightBytes(f.WeightBytesPerParam), nil
}

// memory is the device memory the engine sees on each GPU.
func (f Fit) memory() int64 {
	if f.MemoryBytes > 0 {
		return f.MemoryBytes
	}
	mem, _ := EngineMemory(f.GPU)
	return mem
}

// memText is n GPUs' memory in GB, said to be what vLLM sees where that
// is not the datasheet's figure (torch reports an H100 SXM's "80 GB" as
// 79.19 GiB, 85 GB).
func (f Fit) memText(n int) string {
	mem := f.memory()
	if mem == f.GPU.MemoryBytes {
		return gbText(mem * int64(n))
	}
	return gbText(mem*int64(n)) + " as vLLM sees it"
}

// Budget is the setup as vLLM v1's start-up sizing (KVBudget) on one GPU
// at the setup's TP: the engine's memory, this GPU's share of the weights
// (rounded up) and the activation reserve at BatchedTokens, with pages of
// blockSize tokens and max_model_len the longest sequence (Positions, 1
// when 0). Check's memory limits and Pool are this one budget.
func (f Fit) Budget(blockSize int) KVBudget {
	return f.withDefaults().budgetAt(f.TP, blockSize)
}

// Pool is the KV-cache pool vLLM would allocate for the setup on each GPU:
// Budget(blockSize).Size(). Its blocks hold every KV token Check accepts,
// to within one block.
func (f Fit) Pool(blockSize int) (KVPool, error) {
	if _, err := f.weightBytes(); err != nil {
		return KVPool{}, err
	}
	return f.Budget(blockSize).Size()
}

// budgetAt is Budget at tp GPUs; f has its defaults.
func (f Fit) budgetAt(tp, blockSize int) KVBudget {
	if tp < 1 {
		tp = 1
	}
	act, nonTorch := ReserveParts(f.Model, tp, f.BatchedTokens)
	weights, _ := f.weightBytes() // Check and Pool refuse an unknown format
	return KVBudget{Model: f.Model, TP: tp, TotalBytes: f.memory(), MemUtilization: f.MemUtilization,
		WeightBytes: ceilDiv(weights, int64(tp)), ActivationBytes: act, NonTorchBytes: nonTorch,
		KVBytesPerElement: f.KVBytesPerElement, BlockSize: blockSize, MaxModelLen: max(f.Positions, 1)}
}

// budget is, per GPU at tp, the usable memory, the weights plus the
// activation reserve, and what is left for KV cache: KVBudget's own
// arithmetic (memory).
func (f Fit) budget(tp int) (usable, fixed, kv int64) {
	usable, fixed = f.budgetAt(tp, 16).memory()
	return usable, fixed, usable - fixed
}

// kvBytes is this GPU's share of KVTokens at tp (KVBytesPerTokenPerGPU:
// KV heads split over tp GPUs, an MLA latent never split).
func (f Fit) kvBytes(tp int) int64 {
	return f.KVTokens * KVBytesPerTokenPerGPU(f.Model, tp, f.KVBytesPerElement)
}

// minTP is the smallest TP degree of 1, 2, 4, 8 that splits the model and
// fits the setup; 0 if none does.
func (f Fit) minTP() int {
	m := f.Model
	for _, tp := range []int{1, 2, 4, 8} {
		if m.QHeads%tp != 0 || m.Intermediate%tp != 0 || (m.KVHeads%tp != 0 && tp%m.KVHeads != 0) {
			continue
		}
		if _, _, kv := f.budget(tp); kv >= 0 && f.kvBytes(tp) <= kv {
			return tp
		}
	}
	return 0
}

// advice says what to change.
func (f Fit) advice(minTP int) string {
	switch {
	case f.FixedTP:
		return "pick a larger GPU or a smaller model"
	case minTP > f.TP:
		return fmt.Sprintf("pick tp ≥ %d or a larger GPU", minTP)
	}
	return "pick a larger GPU or a smaller model"
}

func (f Fit) gpus() string {
	if f.TP > 1 {
		return fmt.Sprintf("each of %d× %s", f.TP, f.GPU.ID)
	}
	return f.GPU.ID
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// gbText is bytes in GB (1e9), to three significant digits.
func gbText(b int64) string {
	x := float64(b) / 1e9
	d := 2
	switch {
	case x >= 100:
		d = 0
	case x >= 10:
		d = 1
	}
	t := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return t + " GB"
}

// comma formats n with thousands separators.
func comma(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
