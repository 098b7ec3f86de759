package lessons

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/scene"
)

// roofline: Part 12, formulation 1. Arithmetic intensity of prefill and
// decode steps on each GPU's roofline; decode moves toward the ridge as the
// batch grows. The model's GEMM times are checked against vidur's H100
// measurements and the published serving figures of docs/VALIDATION.md.
var roofline = &Lesson{
	Slug:    "roofline",
	Title:   "The roofline: why decode is memory-bound and prefill is not",
	Part:    "Part 12, formulation 1",
	Summary: "Place prefill and decode steps on each GPU's roofline; watch batching move decode toward the ridge, and check the model against measurements.",
	Engine: "core/hardware's step-time model: per-kernel roofline (FLOPs at peak × MFU, bytes at bandwidth × η) plus a fixed per-kernel term, " +
		"for a vLLM-style Llama decoder. Simplified: one GPU, BF16, no tensor parallelism.",
	Params: []Param{
		gpuParam, modelParam,
		{Key: "batch", Label: "Decode batch", Unit: "sequences", Help: "Sequences decoding together in one step.", Kind: Int, Default: 32, Min: 1, Max: 2048, Step: 1},
		{Key: "context", Label: "Decode context", Unit: "tokens", Kind: Int, Default: 1024, Min: 1, Max: 131072, Step: 1},
		{Key: "prompt", Label: "Prefill prompt", Unit: "tokens", Kind: Int, Default: 2048, Min: 1, Max: 131072, Step: 1},
	},
	Build: buildRoofline,
}

func init() { register(roofline) }

// stepPoint is a step's position on the roofline.
type stepPoint struct {
	intensity, attained, ms float64
	computeBound            bool
}

func pointOf(m hardware.StepModel, b hardware.Batch) stepPoint {
	c := m.Step(b)
	p := stepPoint{intensity: m.ArithmeticIntensity(b), ms: 1000 * c.GPU, computeBound: c.ComputeBound}
	if c.GPU > 0 {
		p.attained = c.FLOPs / c.GPU
	}
	return p
}

func tflops(x float64) float64 { return round2(x / 1e12) }

func buildRoofline(v Values) (*Script, error) {
	g, md, err := chosenHardware(v)
	if err != nil {
		return nil, err
	}
	m, err := hardware.NewStepModel(g, md, 1, hardware.BF16)
	if err != nil {
		return nil, err
	}
	batch, ctx, prompt := v.Int("batch"), v.Int("context"), v.Int("prompt")
	roofSeries := func(gm hardware.StepModel, name string) scene.Series {
		sr := scene.Series{Name: name, Type: scene.Line}
		for _, x := range logspace(0.5, 5000, 40) {
			sr.X = append(sr.X, round2(x))
			sr.Y = append(sr.Y, tflops(gm.Roof(x, false)))
		}
		return sr
	}
	dec := pointOf(m, hardware.DecodeBatch(batch, ctx))
	pre := pointOf(m, hardware.PrefillBatch(1, prompt))
	one := pointOf(m, hardware.DecodeBatch(1, ctx))
	ridge := g.Ridge()

	decodeSweep := scene.Series{Name: "decode, batch 1 → 1,024", Type: scene.Scatter}
	for b := 1; b <= 1024; b *= 2 {
		p := pointOf(m, hardware.DecodeBatch(b, ctx))
		decodeSweep.X = append(decodeSweep.X, round2(p.intensity))
		decodeSweep.Y = append(decodeSweep.Y, tflops(p.attained))
	}
	// The smallest batch whose decode step is compute-bound, if any ≤ 8192:
	// double until it is, then bisect (the regime only moves one way as the
	// batch grows).
	crossover := 0
	bound := func(b int) bool { return pointOf(m, hardware.DecodeBatch(b, ctx)).computeBound }
	for hi := 1; hi <= 8192; hi *= 2 {
		if bound(hi) {
			lo := hi / 2 // not bound (or 0)
			for hi-lo > 1 {
				if mid := (lo + hi) / 2; bound(mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			crossover = hi
			break
		}
	}
	chart := func(extra ...scene.Series) *scene.Chart {
		c := &scene.Chart{Type: scene.Line, XLabel: "arithmetic intensity", XUnit: "FLOP/byte", YLabel: "attainable", YUnit: "TFLOP/s", XLog: true, YLog: true}
		c.Series = append([]scene.Series{roofSeries(m, g.Name+" roof")}, extra...)
		return c
	}
	pointSeries := func(name string, p stepPoint) scene.Series {
		return scene.Series{Name: name, Type: scene.Scatter, X: []float64{round2(p.intensity)}, Y: []float64{tflops(p.attained)}}
	}
	regime := func(p stepPoint) string {
		if p.computeBound {
			return "compute-bound"
		}
		return "memory-bound"
	}
	allGPUs := &scene.Chart{Type: scene.Line, XLabel: "arithmetic intensity", XUnit: "FLOP/byte", YLabel: "attainable", YUnit: "TFLOP/s", XLog: true, YLog: true}
	ridges := &scene.Table{Columns: []string{"GPU", "HBM bandwidth", "dense BF16 peak", "ridge (FLOP/byte)", fmt.Sprintf("decode batch %d", batch), fmt.Sprintf("prefill %s", comma(prompt))}}
	for _, gg := range hardware.GPUs() {
		gm, err := hardware.NewStepModel(gg, md, 1, hardware.BF16)
		if err != nil {
			continue
		}
		allGPUs.Series = append(allGPUs.Series, roofSeries(gm, gg.Name))
		ridges.Rows = append(ridges.Rows, []string{gg.Name, fmt.Sprintf("%.2f TB/s", gg.MemBandwidth/1e12), fmt.Sprintf("%.0f TFLOP/s", gg.PeakBF16/1e12),
			fmt.Sprintf("%.0f", gg.Ridge()), regime(pointOf(gm, hardware.DecodeBatch(batch, ctx))), regime(pointOf(gm, hardware.PrefillBatch(1, prompt)))})
	}

	// vidur's measured H100 gate+up GEMM for Llama-2-7B against the model
	// (profiles.md §5.2, §6.3) [VIDUR-MLP].
	vidurH100, _ := hardware.GPUByID("h100-sxm")
	l27, _ := hardware.ModelByID("llama-2-7b")
	vm, _ := hardware.NewStepModel(vidurH100, l27, 1, hardware.BF16)
	measured := scene.Series{Name: "vidur measured (H100, Llama-2-7B gate+up)", Type: scene.Scatter}
	modelled := scene.Series{Name: "this model", Type: scene.Line}
	for _, pt := range []struct{ tokens, us float64 }{{1, 64}, {128, 71}, {256, 130}, {4096, 987}} {
		measured.X, measured.Y = append(measured.X, pt.tokens), append(measured.Y, pt.us)
	}
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096} {
		modelled.X = append(modelled.X, float64(n))
		modelled.Y = append(modelled.Y, round2(1e6*gemmTime(vm, n, "gate_up_proj")))
	}
	vidur := &scene.Chart{Type: scene.Line, XLabel: "tokens in the GEMM", XUnit: "tokens", YLabel: "gate+up GEMM time", YUnit: "µs", XLog: true, YLog: true, Series: []scene.Series{measured, modelled}}

	val := validation()
	valTable := &scene.Table{Columns: []string{"case", "what", "measured", "model", "error", "tolerance", "source"}}
	within := 0
	for _, r := range val {
		if r.Within() {
			within++
		}
		valTable.Rows = append(valTable.Rows, []string{r.ID, r.Name, fmt.Sprintf("%.4g %s", r.Measured, r.Unit), fmt.Sprintf("%.4g %s", r.Model, r.Unit),
			fmt.Sprintf("%+.1f%%", 100*r.Error), fmt.Sprintf("±%.0f%%", 100*r.Tolerance), "[" + r.Source + "]"})
	}

	s := &Script{}
	s.Metrics = []Metric{
		{Key: "ridge_flop_per_byte", Label: g.Name + " ridge: dense BF16 peak / HBM bandwidth", Unit: "FLOP/B", Value: round2(ridge)},
		{Key: "decode_intensity", Label: fmt.Sprintf("Decode step intensity, batch %d", batch), Unit: "FLOP/B", Value: round2(dec.intensity)},
		{Key: "decode1_intensity", Label: "Decode step intensity, batch 1", Unit: "FLOP/B", Value: round2(one.intensity)},
		{Key: "prefill_intensity", Label: fmt.Sprintf("Prefill intensity, %s tokens", comma(prompt)), Unit: "FLOP/B", Value: round2(pre.intensity)},
		{Key: "decode_step_ms", Label: fmt.Sprintf("Decode step GPU time, batch %d", batch), Unit: "ms", Value: round2(dec.ms)},
		{Key: "decode_tokens_per_s", Label: fmt.Sprintf("Decode throughput at batch %d (GPU time only)", batch), Unit: "tok/s", Value: round2(float64(batch) / dec.ms * 1000)},
		{Key: "prefill_ms", Label: "Prefill GPU time", Unit: "ms", Value: round2(pre.ms)},
		{Key: "compute_bound_batch", Label: "Smallest decode batch whose step is compute-bound (0: none up to 8,192)", Unit: "sequences", Value: float64(crossover)},
		{Key: "validation_within", Label: "Validation cases within tolerance", Unit: "of " + strconv.Itoa(len(val)), Value: float64(within)},
	}
	s.Claims = []Claim{{
		What:    "Prefill intensity grows with S; decode is O(1)",
		Article: "I_prefill = O(S), compute-bound; I_decode = O(1), memory-bound",
		Model:   fmt.Sprintf("prefill of %s tokens: %.0f FLOP/B (%s); decode batch 1: %.1f FLOP/B (%s); ridge %.0f", comma(prompt), pre.intensity, regime(pre), one.intensity, regime(one), ridge),
		Why:     "Agrees. The article's formula omits that decode's intensity grows with the batch (weights are read once per step for every sequence) until attention's KV reads, which do not batch, hold it back.",
	}}

	s.Steps = []Step{{
		Title: "A roofline",
		Narration: fmt.Sprintf("A kernel that does F FLOPs while moving B bytes has arithmetic intensity I = F/B. On the %s it can run no faster than min(peak, I × bandwidth): "+
			"%.0f TFLOP/s of dense BF16 and %.2f TB/s of HBM meet at the ridge, I = %.0f FLOP/byte. Left of the ridge a kernel waits on memory; right of it, on the tensor cores.",
			g.Name, g.PeakBF16/1e12, g.MemBandwidth/1e12, ridge),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "roof", Title: g.Name + " roofline", Chart: chart()}},
	}, {
		Quiz: choiceQuiz(fmt.Sprintf("One decode step of %s at batch 1 on the %s: memory-bound or compute-bound?", md.Name, g.Name),
			[]string{"memory-bound", "compute-bound"}, regime(one), fmt.Sprintf("Its intensity is %.1f FLOP/byte; the ridge is at %.0f.", one.intensity, ridge)),
		Title: "Decode at batch 1",
		Narration: fmt.Sprintf("One decode step of %s reads every weight once to produce a single token: %.1f FLOP per byte, far left of the ridge. It is %s: the GPU reaches %.1f TFLOP/s of its %.0f, and the step takes %.2f ms of GPU time.",
			md.Name, one.intensity, regime(one), one.attained/1e12, g.PeakBF16/1e12, one.ms),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "roof", Title: g.Name + " roofline", Chart: chart(pointSeries("decode, batch 1", one))}},
	}, {
		Title: "Batching moves decode to the right",
		Narration: fmt.Sprintf("Batching B sequences reuses each weight read B times, so the step's intensity grows with B until the KV cache reads, which every sequence pays alone, dominate. At batch %d: %.1f FLOP/B, %s, %.2f ms per step (%s tokens/s). %s",
			batch, dec.intensity, regime(dec), dec.ms, comma(int(float64(batch)/dec.ms*1000)), crossoverText(crossover, ctx)),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "roof", Title: g.Name + " roofline", Chart: chart(decodeSweep, pointSeries(fmt.Sprintf("decode, batch %d", batch), dec))}},
	}, {
		Title: "Prefill is compute-bound",
		Narration: fmt.Sprintf("A %s-token prefill multiplies every weight by %s token vectors: %.0f FLOP/B, %s. It takes %.1f ms of GPU time at %.0f TFLOP/s attained.",
			comma(prompt), comma(prompt), pre.intensity, regime(pre), pre.ms, pre.attained/1e12),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "roof", Title: g.Name + " roofline", Chart: chart(decodeSweep, pointSeries(fmt.Sprintf("prefill %d", prompt), pre))}},
	}, {
		Title:     "Every GPU has its own ridge",
		Narration: "Memory bandwidth grew more slowly than tensor-core FLOPS, so newer GPUs have ridges further right and need bigger batches before decode stops being memory-bound. " + h200Note(),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "gpus", Title: "Rooflines of every GPU profile", Chart: allGPUs},
			{Kind: scene.KindTable, ID: "ridges", Title: "Ridge points and the regime of this step on each GPU", Table: ridges}},
	}, {
		Title:     "Checked against measurements",
		Narration: fmt.Sprintf("vidur's measured H100 GEMM times are flat from 1 to about 128 tokens, then rise: the memory-bound floor, then the compute roof. The model gives the same shape. Below, the model against %d published measurements: %d within their stated tolerance.", len(val), within),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "vidur", Title: "H100 gate+up GEMM (Llama-2-7B): vidur measured vs this model", Chart: vidur},
			{Kind: scene.KindTable, ID: "validation", Title: "Model vs published measurements (docs/VALIDATION.md)", Table: valTable}},
	}, {
		Title:     "Article claim vs this model",
		Narration: "Part 12's formulation 1, evaluated.",
		Scenes:    []scene.Scene{claimsTable(s.Claims)},
	}}
	indexCursors(s.Steps)
	return s, nil
}

// validation runs core/hardware's validation cases once per process: they
// do not depend on the lesson's knobs, and some simulate whole batches.
var validation = sync.OnceValue(hardware.Validate)

// h200Note compares the H100 and H200 profiles: same compute, more bandwidth.
func h200Note() string {
	a, errA := hardware.GPUByID("h100-sxm")
	b, errB := hardware.GPUByID("h200-sxm")
	if errA != nil || errB != nil {
		return ""
	}
	return fmt.Sprintf("The H200 has the H100's %.0f TFLOP/s with %.0f%% more bandwidth (%.2f vs %.2f TB/s), so its ridge sits further left: %.0f vs %.0f FLOP/byte.",
		b.PeakBF16/1e12, 100*(b.MemBandwidth/a.MemBandwidth-1), b.MemBandwidth/1e12, a.MemBandwidth/1e12, b.Ridge(), a.Ridge())
}

func crossoverText(b, ctx int) string {
	if b == 0 {
		return fmt.Sprintf("With %s tokens of context per sequence, no batch up to 8,192 makes the decode step compute-bound: KV reads grow as fast as the FLOPs.", comma(ctx))
	}
	return fmt.Sprintf("From batch %d on (at %s tokens of context) the step is compute-bound.", b, comma(ctx))
}

// gemmTime is the model's GPU time of one kernel of a prefill of n tokens,
// in the first layer.
func gemmTime(m hardware.StepModel, n int, name string) float64 {
	for _, k := range m.Kernels(hardware.PrefillBatch(1, n)) {
		if k.Name == name && k.Layer == 0 {
			return k.GPUTime
		}
	}
	return 0
}
