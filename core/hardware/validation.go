package hardware

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// ValidationCase is one published measurement the step-time model is
// checked against. The model value is computed by Run from the profiles
// and the case's setting; nothing is typed in but the measurement.
type ValidationCase struct {
	// ID is the case's label (docs/SOURCES.md#validation-cases), e.g. "VC3".
	ID string
	// Name says what is compared, e.g. "gpt-fast decode step".
	Name string
	// Setting is the measured configuration and the model's assumptions.
	Setting string
	// Unit of Measured and Run's value: "µs", "ms" or "tok/s".
	Unit string
	// Measured is the published figure.
	Measured float64
	// Tolerance is the allowed |model − measured| / measured.
	Tolerance float64
	// Source is the citation tag of the measurement; see Cite.
	Source string
	// Calibrates names the constant fitted to this measurement, which makes
	// the case in-sample; empty for out-of-sample cases.
	Calibrates string
	// KnownMiss, when set, says why the model is expected to miss this
	// measurement by more than the tolerance; such a case is reported but
	// not asserted.
	KnownMiss string
	model     func() float64
}

// Run computes the model's value in the case's unit.
func (c ValidationCase) Run() float64 { return c.model() }

// ValidationResult is a case with its model value.
type ValidationResult struct {
	ValidationCase
	Model float64
	// Error is (model − measured) / measured.
	Error float64
}

// Within reports whether the model is within the case's tolerance.
func (r ValidationResult) Within() bool { return math.Abs(r.Error) <= r.Tolerance }

// Validate runs every case.
func Validate() []ValidationResult {
	cases := ValidationCases()
	out := make([]ValidationResult, len(cases))
	for i, c := range cases {
		v := c.Run()
		out[i] = ValidationResult{ValidationCase: c, Model: v, Error: (v - c.Measured) / c.Measured}
	}
	return out
}

// llama2_70b is Llama-2-70B, the model of the MLPerf, TRT-LLM and gpt-fast
// measurements. Shape from docs/SOURCES.md#model-shapes and the TRT-LLM build command
// (80 layers, 64 heads, 8 KV heads, hidden 8192, intermediate 28672, vocab
// 32000, 4096 positions) [TRT-PERF]; the fp16 gate+up weight of one layer
// is 940 MB = 2·8192·28672·2 B [VIDUR-MLP]. It is kept out of Models() so
// that list stays as its tests pin it; see the report to the lead.
func llama2_70b() Model {
	return Model{
		ID: "llama-2-70b", Name: "Llama-2-70B",
		Layers: 80, Hidden: 8192, QHeads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 32000, MaxPositions: 4096,
		Params: 68_980_000_000, NonEmbeddingParams: 68_450_000_000, // §4.1
		Sources: []string{"VIDUR-MLP", "TRT-PERF"},
	}
}

// Units for case values.
const (
	us = 1e-6
	ms = 1e-3
)

// validationModel returns a profile by id, including the validation-only
// Llama-2-70B. It panics on an unknown id: the cases are fixed.
func validationModel(id string) Model {
	if id == "llama-2-70b" {
		return llama2_70b()
	}
	return MustModel(id)
}

func validationGPU(id string) GPU { return MustGPU(id) }

func mustStepModel(gpu, model string, tp int, p Precision) StepModel {
	s, err := NewStepModel(validationGPU(gpu), validationModel(model), tp, p)
	if err != nil {
		panic(err)
	}
	return s
}

// vidur is the setting of microsoft/vidur's per-operator profiles: one GEMM
// timed on its own, fp16, TP 1 [VIDUR-MLP].
func vidur(gpu, model string) StepModel {
	return mustStepModel(gpu, model, 1, BF16)
}

// kernelTime is the GPU time of the first kernel with the given name in a
// step over b.
func kernelTime(s StepModel, b Batch, name string) float64 {
	for _, k := range s.Kernels(b) {
		if k.Name == name {
			return k.GPUTime
		}
	}
	panic("no kernel " + name)
}

// gptFast is pytorch-labs/gpt-fast: bf16, batch 1, the decode step compiled
// with mode="reduce-overhead" into one CUDA graph, no scheduler. Its
// static KV cache makes every step attend over the whole max_seq_length,
// 5 prompt + 200 new tokens (generate.py defaults) [GPTFAST-README].
// Tensor parallelism runs with ENABLE_INTRA_NODE_COMM=1, a custom
// intra-node all-reduce: α = 20 µs, the value §6.8 VC4 takes between the
// custom kernel's 6–12 µs on H100 [SGL-2904] and NCCL's 60 µs on A100
// [VIDUR-NET].
func gptFast(model string, tp int) StepModel {
	s := mustStepModel("a100-80gb-sxm", model, tp, BF16)
	s.Dispatcher = Replay{Launch: GraphLaunch}
	s.Host = HostOverhead{}
	s.AllReduce.Latency = 20e-6
	return s
}

const gptFastContext = 5 + 200 - 1 // cached tokens when the 205th is computed

// trtllm is TensorRT-LLM's gptSessionBenchmark (v0.5 latency, v0.6.1
// throughput): a C++ runtime launching kernels without graphs [PEGA-3],
// NCCL all-reduce, a static batch, the per-request T_fixed of §6.8 VC7 and
// no per-step host overhead beyond launches. FP8 engines are built with
// --enable_fp8 --fp8_kv_cache; A100 engines are fp16 [TRT-PERF].
func trtllm(gpu, model string, tp int, p Precision) StepModel {
	s := mustStepModel(gpu, model, tp, p)
	s.Dispatcher = Eager{PerLaunch: PerLaunchCPP}
	s.Host = HostOverhead{FirstToken: TFixedTRTLLM}
	return s
}

// StaticBatchThroughput is output tokens per second per GPU of a static
// batch: one context step over batch prompts of isl tokens (which yields
// the first output token), then osl−1 decode steps with the cache growing
// by one token per step, plus Host.FirstToken once. This is how
// gptSessionBenchmark runs [TRT-PERF].
func (m StepModel) StaticBatchThroughput(batch, isl, osl int) float64 {
	t := m.Step(PrefillBatch(batch, isl)).Total + m.Host.FirstToken
	for k := 1; k < osl; k++ {
		t += m.Step(DecodeBatch(batch, isl+k-1)).Total
	}
	return float64(batch*osl) / t / float64(m.tp())
}

// vllmLambda is vLLM v0.6.0 on one H100 SXM as Lambda ran it: Llama-3.1-8B
// bf16, TP 1, max-num-seqs 256, max-seq-len 2048, multi-step scheduling
// (10 steps), chunked prefill off [LAMBDA-VLLM]. Decode batches of ≤ 256
// run as CUDA graphs; multi-step overlaps the host work (docs/SOURCES.md#host-overhead).
func vllmLambda() StepModel {
	s := mustStepModel("h100-sxm", "llama-3.1-8b", 1, BF16)
	s.Dispatcher = Replay{Launch: GraphLaunch}
	s.OverlapHost = true
	return s
}

// ValidationCases returns the published measurements the step-time model is
// validated against (docs/SOURCES.md#validation-cases). Tolerances are the
// brief's: 10% where the data are clean single-kernel or single-step
// figures, 15% for per-operator profiles and static-batch throughput, 25%
// where a fixed term the model only bounds dominates.
func ValidationCases() []ValidationCase {
	gemm := func(id, gpu, model, op string, tokens int, measured float64, unit string) ValidationCase {
		scale := us
		if unit == "ms" {
			scale = ms
		}
		return ValidationCase{
			ID: id, Name: fmt.Sprintf("%s GEMM, %d token(s)", op, tokens),
			Setting: fmt.Sprintf("%s, %s layer shapes, fp16, TP 1, one kernel timed alone", validationGPU(gpu).Name, validationModel(model).Name),
			Unit:    unit, Measured: measured, Tolerance: 0.15, Source: "VIDUR-MLP",
			model: func() float64 {
				return kernelTime(vidur(gpu, model), PrefillBatch(1, tokens), op) / scale
			},
		}
	}
	gptFastStep := func(id, model string, tp int, tokPerSec, tol float64) ValidationCase {
		comm := ""
		if tp > 1 {
			comm = "; all-reduce α 20 µs"
		}
		return ValidationCase{
			ID: id, Name: fmt.Sprintf("gpt-fast decode step, TP %d", tp),
			Setting: fmt.Sprintf("%s bf16, batch 1, %d× A100-80GB SXM (330 W cap), compile + one CUDA graph, attention over the 205-token static cache; 1 / %.2f tok/s%s", validationModel(model).Name, tp, tokPerSec, comm),
			Unit:    "ms", Measured: 1e3 / tokPerSec, Tolerance: tol, Source: "GPTFAST-README",
			model: func() float64 {
				return gptFast(model, tp).Step(DecodeBatch(1, gptFastContext)).Total / ms
			},
		}
	}
	ttft := func(id, gpu, model string, tp int, p Precision, isl int, measured, tol float64) ValidationCase {
		return ValidationCase{
			ID: id, Name: fmt.Sprintf("TTFT, prompt %d", isl),
			Setting: fmt.Sprintf("TensorRT-LLM v0.5, %s %s, TP %d, %s, batch 1; T_fixed %.0f ms", validationModel(model).Name, p, tp, validationGPU(gpu).Name, TFixedTRTLLM/ms),
			Unit:    "ms", Measured: measured, Tolerance: tol, Source: "TRT-PERF",
			model: func() float64 {
				return trtllm(gpu, model, tp, p).TTFT(isl) / ms
			},
		}
	}
	throughput := func(id, gpu, model string, tp int, p Precision, batch, isl, osl int, measured, tol float64) ValidationCase {
		return ValidationCase{
			ID: id, Name: fmt.Sprintf("throughput, batch %d, %d in / %d out", batch, isl, osl),
			Setting: fmt.Sprintf("TensorRT-LLM v0.6.1 static batch, output tok/s per GPU, %s %s, TP %d, %s", validationModel(model).Name, p, tp, validationGPU(gpu).Name),
			Unit:    "tok/s", Measured: measured, Tolerance: tol, Source: "TRT-PERF",
			model: func() float64 {
				return trtllm(gpu, model, tp, p).StaticBatchThroughput(batch, isl, osl)
			},
		}
	}
	calibration := func(c ValidationCase, constant string) ValidationCase {
		c.Calibrates = constant
		return c
	}
	miss := func(c ValidationCase, why string) ValidationCase {
		c.KnownMiss = why
		return c
	}
	const noXQA = "The model reads each KV head once per step, as a GQA-aware decode kernel does. " +
		"TensorRT-LLM before v0.8 had no such kernel for GQA: its XQA kernel, which reduces that data loading, " +
		"brought 1.9–2.4× more Llama-70B throughput at 128 in / 2048 out [TRT-XQA], the size of the excess here; " +
		"the 7B (MHA) cases with long outputs fit."
	return []ValidationCase{
		// VC1: decode-sized GEMMs are weight reads.
		gemm("VC1", "h100-sxm", "llama-2-7b", "qkv_proj", 1, 38, "µs"),
		gemm("VC1", "h100-sxm", "llama-2-7b", "o_proj", 1, 16, "µs"),
		gemm("VC1", "h100-sxm", "llama-2-7b", "gate_up_proj", 1, 64, "µs"),
		gemm("VC1", "h100-sxm", "llama-2-7b", "down_proj", 1, 38, "µs"),
		gemm("VC1", "h100-sxm", "llama-2-70b", "gate_up_proj", 1, 311, "µs"),
		gemm("§5.2", "a100-80gb-sxm", "llama-2-7b", "qkv_proj", 1, 65, "µs"),
		gemm("§5.2", "a100-80gb-sxm", "llama-2-7b", "o_proj", 1, 25, "µs"),
		gemm("§5.2", "a100-80gb-sxm", "llama-2-7b", "gate_up_proj", 1, 116, "µs"),
		gemm("§5.2", "a100-80gb-sxm", "llama-2-7b", "down_proj", 1, 60, "µs"),
		// §6.3: between the two regimes, around the ridge.
		gemm("§6.3", "h100-sxm", "llama-2-7b", "gate_up_proj", 128, 71, "µs"),
		miss(gemm("§6.3", "h100-sxm", "llama-2-7b", "gate_up_proj", 256, 130, "µs"),
			"The knee of §5.2: vidur's H100 gate+up takes 1.11× its 1-token time at 128 tokens and 2.0× at 256, where "+
				"max(compute, memory) has both terms about equal and so stays near the 1-token time. Real GEMMs near the ridge reach "+
				"neither roof; a single MFU cannot follow that without a token-dependent efficiency fitted to vidur's curve, "+
				"which this model does not have. Decode batches of 128–512 tokens are priced low by up to this much in their GEMMs."),
		// VC2: a prefill-sized GEMM is compute-bound.
		gemm("VC2", "h100-sxm", "llama-2-7b", "gate_up_proj", 4096, 0.987, "ms"),
		gemm("§5.2", "h100-sxm", "llama-2-7b", "qkv_proj", 4096, 0.584, "ms"),

		// VC3, VC4, M10: batch-1 decode is a weight read plus fixed costs.
		gptFastStep("VC3", "llama-2-7b", 1, 104.9, 0.10),
		gptFastStep("VC4", "llama-2-70b", 8, 62.50, 0.10),
		gptFastStep("M10", "llama-2-70b", 4, 38.01, 0.10),
		gptFastStep("M10", "llama-2-70b", 2, 21.32, 0.10),
		// Tiny shards: t0 per kernel and α per all-reduce dominate, and
		// Inductor fuses more than vLLM's ten kernels per layer.
		gptFastStep("M10", "llama-2-7b", 8, 328.43, 0.25),

		// VC5, VC6: long-prompt TTFT is compute.
		ttft("VC5", "a100-80gb-sxm", "llama-2-7b", 1, BF16, 2048, 133, 0.10),
		ttft("VC6", "a100-80gb-sxm", "llama-2-70b", 4, BF16, 2048, 377, 0.10),
		calibration(ttft("VC6", "h100-sxm", "llama-2-7b", 1, FP8, 2048, 36, 0.10), "MFU_fp8 (Hopper)"),
		ttft("VC6", "h100-sxm", "llama-2-70b", 4, FP8, 2048, 109, 0.10),
		miss(ttft("VC8", "l40s", "llama-2-7b", 1, FP8, 2048, 73, 0.10),
			"§6.7's L40S MFU_fp8 of 0.50 is a whole-model figure fitted to this very point: at it the GEMMs alone take about the "+
				"measured time, and the unfused elementwise kernels add a quarter more at the A100 bandwidth efficiency that stands in "+
				"for the L40S's unmeasured GDDR6. Fitting MFU_fp8 in this model would need about 0.8, which no GEMM reaches, so the "+
				"excess is on the memory side: fused kernels and the real GDDR6 efficiency."),
		// VC7: short-prompt TTFT is a weight read plus the fixed path.
		ttft("VC7", "a100-80gb-sxm", "llama-2-7b", 1, BF16, 128, 16, 0.25),
		ttft("VC7", "h100-sxm", "llama-2-7b", 1, FP8, 128, 7, 0.25),
		ttft("VC7", "a100-80gb-sxm", "llama-2-70b", 4, BF16, 128, 47, 0.25),
		ttft("VC7", "h100-sxm", "llama-2-70b", 4, FP8, 128, 26, 0.25),

		// M8, M9: offline throughput of static batches.
		throughput("M9", "a100-80gb-sxm", "llama-2-7b", 1, BF16, 384, 128, 128, 5586, 0.15),
		throughput("M9", "a100-80gb-sxm", "llama-2-7b", 1, BF16, 60, 128, 2048, 1928, 0.15),
		throughput("M9", "a100-80gb-sxm", "llama-2-7b", 1, BF16, 52, 2048, 128, 591, 0.15),
		throughput("M8", "h100-sxm", "llama-2-7b", 1, FP8, 768, 128, 128, 19694, 0.15),
		throughput("M8", "h100-sxm", "llama-2-7b", 1, FP8, 112, 128, 2048, 6818, 0.15),
		throughput("M8", "h100-sxm", "llama-2-7b", 1, FP8, 80, 2048, 128, 2244, 0.15),
		throughput("M8", "h100-sxm", "llama-2-7b", 1, FP8, 48, 2048, 2048, 2740, 0.15),
		throughput("M8", "h100-sxm", "llama-2-70b", 2, FP8, 1024, 128, 128, 2657, 0.15),
		throughput("M8", "h100-sxm", "llama-2-70b", 2, FP8, 96, 2048, 128, 306, 0.15),
		miss(throughput("M8", "h100-sxm", "llama-2-70b", 4, FP8, 480, 128, 2048, 1486, 0.15), noXQA),
		miss(throughput("M8", "h100-sxm", "llama-2-70b", 2, FP8, 64, 2048, 2048, 547, 0.15), noXQA),

		// VC10/M11: a serving benchmark is more than one decode step.
		miss(ValidationCase{
			ID: "VC10", Name: "median TPOT, 256 running",
			Setting: "vLLM v0.6.0, multi-step 10, chunked prefill off, Llama-3.1-8B bf16, TP 1, H100 SXM, 5,000 ShareGPT prompts at rps=inf, max-num-seqs 256; " +
				"modelled as one decode step of 256 at mean context 768 (VC10's assumed 512–1,024), CUDA graph, host overhead [VIDUR-CPU] overlapped",
			Unit: "ms", Measured: 25.57, Tolerance: 0.25, Source: "LAMBDA-VLLM",
			model: func() float64 { return vllmLambda().Step(DecodeBatch(256, 768)).Total / ms },
		}, "One decode step leaves out the 7–12 ms residual between the GPU-only estimate and the measured median: the prefill steps run "+
			"between decodes (chunked prefill is off) and the host work multi-step does not hide. Reproducing the median TPOT needs "+
			"the scheduler's mix of steps, not a single step."),

		// §6.5: the all-reduce vLLM-labelled lessons use (VLLMAllReduce),
		// against vLLM's custom kernel timed alone on H100.
		vllmAR(2, 4, 8.8), vllmAR(4, 4, 8.5), vllmAR(8, 4, 9.3),
		vllmAR(2, 32, 8.7), vllmAR(4, 32, 9.2), vllmAR(8, 32, 11.8),
		miss(vllmAR(2, 1024, 27), arLarge), miss(vllmAR(4, 1024, 40), arLarge), miss(vllmAR(8, 1024, 45), arLarge),
	}
}

// vllmAR is one size of vLLM's custom all-reduce timed alone on H100 SXM
// in SGLang PR #2904's comparison ([SGL-2904]) against VLLMAllReduce.
func vllmAR(tp int, kib, measured float64) ValidationCase {
	size := fmt.Sprintf("%.0f KB", kib)
	if kib >= 1024 {
		size = fmt.Sprintf("%.0f MB", kib/1024)
	}
	return ValidationCase{
		ID: "§6.5", Name: fmt.Sprintf("vLLM custom all-reduce, %s, TP %d", size, tp),
		Setting: "vLLM's custom all-reduce kernel timed alone, H100 SXM; model: VLLMAllReduce, α 10 µs + 2(p−1)/p · m / NCCL bus bandwidth [VIDUR-NET]",
		Unit:    "µs", Measured: measured, Tolerance: 0.25, Source: "SGL-2904",
		model: func() float64 {
			return VLLMAllReduce(validationGPU("h100-sxm"), tp).Time(kib*1024, tp) / us
		},
	}
}

// arLarge explains the 1 MB all-reduce misses.
const arLarge = "At 1 MB vLLM's custom kernel took 27–45 µs in this microbenchmark, 2–3× the α + m / bus bandwidth the model charges " +
	"(13–15 µs): its bandwidth there is about 54 GB/s, not NCCL's 317–365 GB/s. The end-to-end latency vLLM's custom all-reduce saved " +
	"with 1 MB decode messages on A100 [VLLM-2192] fits within 15% with NCCL's bandwidth (CUDA-graph table), so the model keeps it; " +
	"decode steps whose messages reach 1 MB (64 sequences of a 8,192-wide model) may be priced low at TP > 1 by up to 30 µs per all-reduce."

// ValidationMarkdown renders the validation table as the markdown of
// docs/VALIDATION.md.
func ValidationMarkdown() string {
	var sb strings.Builder
	sb.WriteString("# Step-time model validation\n\n")
	sb.WriteString("Generated by `go run ./cmd/validation > docs/VALIDATION.md`; do not edit by hand.\n\n")
	sb.WriteString("Each row compares the step-time model of `core/hardware` ([the model](SOURCES.md#step-time-model)) with a\n")
	sb.WriteString("published measurement ([the cases](SOURCES.md#validation-cases)). Error is (model − measured) / measured; the test fails\n")
	sb.WriteString("when a row exceeds its tolerance, except rows marked *known miss*, whose reasons follow the table.\n")
	sb.WriteString("Rows marked *calibration* fitted a constant and are in-sample.\n\n")
	sb.WriteString("| Case | What | Setting | Measured | Model | Error | Tolerance | Source |\n")
	sb.WriteString("|---|---|---|---:|---:|---:|---:|---|\n")
	var notes []string
	for _, r := range Validate() {
		mark := ""
		switch {
		case r.KnownMiss != "":
			n := slices.Index(notes, r.KnownMiss)
			if n < 0 {
				notes = append(notes, r.KnownMiss)
				n = len(notes) - 1
			}
			mark = fmt.Sprintf(" (known miss %d)", n+1)
		case r.Calibrates != "":
			mark = " (calibration: " + r.Calibrates + ")"
		}
		fmt.Fprintf(&sb, "| %s | %s%s | %s | %s %s | %s %s | %+.1f%% | ±%.0f%% | [%s] |\n",
			r.ID, r.Name, mark, r.Setting, Sig3(r.Measured), r.Unit, Sig3(r.Model), r.Unit, 100*r.Error, 100*r.Tolerance, r.Source)
	}
	if len(notes) > 0 {
		sb.WriteString("\n## Known misses\n\n")
		for i, n := range notes {
			fmt.Fprintf(&sb, "%d. %s\n", i+1, n)
		}
	}
	sb.WriteString("\n## Sources\n\n")
	for _, tag := range citedTags() {
		if s, ok := Cite(tag); ok {
			fmt.Fprintf(&sb, "- [%s] %s — %s\n", s.Tag, s.Ref, s.Note)
		}
	}
	return sb.String()
}

// citedTags are the tags the validation table names, sorted.
func citedTags() []string {
	seen := map[string]bool{}
	var tags []string
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	for _, c := range ValidationCases() {
		add(c.Source)
		for _, t := range BracketTags(c.Setting + " " + c.KnownMiss) {
			add(t)
		}
	}
	slices.Sort(tags)
	return tags
}

// BracketTags returns the bracketed citation tags in s, in order.
func BracketTags(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '[')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+j])
		s = s[i+j+1:]
	}
}

// Sig3 prints a value with three significant figures, or as an integer
// when it is 100 or more (the validation tables' format).
func Sig3(v float64) string {
	if v == 0 || math.Abs(v) >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.*f", 2-int(math.Floor(math.Log10(math.Abs(v)))), v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
