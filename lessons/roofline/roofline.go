// Package roofline holds the lesson roofline: Part 12, formulation 1.
// Arithmetic intensity of prefill and decode steps on each GPU's roofline;
// decode moves toward the ridge as the batch grows. The model's GEMM times
// are checked against vidur's H100 measurements and the published serving
// figures of docs/VALIDATION.md.
package roofline

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "roofline",
	Title:   "The roofline: why decode is memory-bound and prefill is not",
	Part:    "Part 12, formulation 1",
	Summary: "Place prefill and decode steps on each GPU's roofline; watch batching move decode toward the ridge, and check the model against measurements.",
	Engine: "core/hardware's step-time model: per-kernel roofline (FLOPs at peak × MFU, bytes at bandwidth × η) plus a fixed per-kernel term, " +
		"for a vLLM-style Llama decoder. Simplified: one GPU, BF16, no tensor parallelism.",
	Group: "gpu", Rank: 20, Thumb: scene.KindChart,
	Terms: []lessons.Term{
		{Term: "roofline", Definition: "Attainable FLOP/s = min(peak, arithmetic intensity × memory bandwidth)."},
		{Term: "arithmetic intensity", Definition: "FLOPs per byte of memory traffic."},
		{Term: "ridge point", Aliases: []string{"ridge"}, Definition: "The intensity where a GPU's memory roof meets its compute roof: peak FLOPS / bandwidth.", Find: "ridge"},
		{Term: "memory-bound", Definition: "Limited by bytes moved, not by arithmetic: decode at small batch."},
		{Term: "compute-bound", Definition: "Limited by tensor-core arithmetic: prefill of long prompts."},
	},
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam,
		{Key: "batch", Label: "Decode batch", Unit: "sequences", Help: "Sequences decoding together in one step.", Kind: lessons.Int, Default: 32, Min: 1, Max: 2048, Step: 1},
		{Key: "context", Label: "Decode context", Unit: "tokens", Kind: lessons.Int, Default: 1024, Min: 1, Max: 131072, Step: 1},
		{Key: "prompt", Label: "Prefill prompt", Unit: "tokens", Kind: lessons.Int, Default: 2048, Min: 1, Max: 131072, Step: 1},
	},
	Check: checkRoofline,
	Sim:   sim{},
	// Pricing only, bounded by the knobs' ranges: the heaviest setting
	// prices about 60 steps of the largest model.
	MaxWork: 1_000_000,
	HeavyCorners: []map[string]string{
		{"gpu": "b200", "model": "qwen2.5-72b", "batch": "2048", "context": "1", "prompt": "8192"},
		{"gpu": "b200", "model": "llama-3.1-8b", "batch": "1", "context": "131071", "prompt": "131072"},
		// The heaviest `make bench-corners`' seeded search found (BENCHMARKS.md,
		// "Worst settings found by search").
		{"gpu": "b200", "model": "llama-3.1-70b", "batch": "1", "context": "4012", "prompt": "3677"},
	},
}

func init() { lessons.Register(lesson) }

// stepPoint is a step's position on the roofline.
type stepPoint struct {
	intensity, attained, ms float64
	computeBound            bool
}

// pricer prices steps and counts the work for Script.Work: the kernels of
// each step priced (twice: the step and its intensity) and its sequences.
type pricer struct{ work int64 }

func (pr *pricer) pointOf(m hardware.StepModel, b hardware.Batch) stepPoint {
	c := m.Step(b)
	pr.work += 2*int64(len(c.Kernels)) + int64(len(b.Seqs))
	p := stepPoint{intensity: m.ArithmeticIntensity(b), ms: 1000 * c.GPU, computeBound: c.ComputeBound}
	if c.GPU > 0 {
		p.attained = c.FLOPs / c.GPU
	}
	return p
}

func (p stepPoint) regime() string {
	if p.computeBound {
		return "compute-bound"
	}
	return "memory-bound"
}

func tflops(x float64) float64 { return kit.Round2(x / 1e12) }

// roofCurve is a GPU's datasheet roof min(peak, I × bandwidth) at the
// chart's intensities, in FLOP/s.
type roofCurve struct {
	name       string
	intensity  []float64
	attainable []float64
}

// roofIntensities are the x values every roof is drawn at.
var roofIntensities = kit.Logspace(0.5, 5000, 40)

func roofOf(m hardware.StepModel, name string) roofCurve {
	c := roofCurve{name: name}
	for _, x := range roofIntensities {
		c.intensity = append(c.intensity, x)
		c.attainable = append(c.attainable, m.Roof(x, false))
	}
	return c
}

// gpuRoof is one GPU profile's roof and where this step lands on it.
type gpuRoof struct {
	gpu             hardware.GPU
	roof            roofCurve
	decode, prefill stepPoint
	// decodeFits and prefillFits say whether the step fits this GPU's
	// memory (hardware.Fit); the table does not place steps that do not.
	decodeFits, prefillFits bool
}

// gemmPoint is the model's time for one GEMM over some tokens.
type gemmPoint struct {
	tokens int
	time   float64
}

// vidurGateUp is vidur's measured H100 gate+up GEMM for Llama-2-7B, µs by
// tokens (docs/SOURCES.md#ridge-points) [VIDUR-MLP].
var vidurGateUp = []struct{ tokens, us float64 }{{1, 64}, {128, 71}, {256, 130}, {4096, 987}}

// rooflineRun is what the roofline lesson computed.
type rooflineRun struct {
	gpu                    hardware.GPU
	model                  hardware.Model
	batch, context, prompt int
	roof                   roofCurve
	// decode at the chosen batch, decode at batch 1, the prefill.
	decode, decode1, prefill stepPoint
	// sweep is decode at batch 1, 2, 4, … up to 1,024 or the largest
	// batch that fits, sweepBatches their sizes.
	sweep        []stepPoint
	sweepBatches []int
	// maxBatch is the largest decode batch up to 8,192 whose KV cache fits
	// at this context.
	maxBatch int
	// crossover is the smallest compute-bound decode batch up to maxBatch,
	// 0 if none.
	crossover int
	gpus      []gpuRoof
	// gateUp is the model's Llama-2-7B gate+up GEMM on the H100, against
	// vidurGateUp.
	gateUp     []gemmPoint
	validation []hardware.ValidationResult
	work       int64
}

// checkRoofline refuses steps a real GPU could not run: the decode step's
// KV cache and the prefill's, each with the weights and the activations of
// its own step (hardware.Fit), within the model's positions.
func checkRoofline(v lessons.Values) error {
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	batch, ctx, prompt := v.Int("batch"), v.Int("context"), v.Int("prompt")
	if err := kit.CheckFit(v, decodeFit(g, m, batch, ctx), kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "batch", hardware.LimitPositions: "context"}); err != nil {
		return err
	}
	pre := hardware.Fit{GPU: g, Model: m, FixedTP: true, BatchedTokens: prompt, KVTokens: int64(prompt), Positions: prompt}
	return kit.CheckFit(v, pre, kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "prompt", hardware.LimitPositions: "prompt"})
}

// decodeFit is one decode step of batch sequences at ctx tokens of context
// on one GPU, each sequence in whole blocks of vLLM's paged pool.
func decodeFit(g hardware.GPU, m hardware.Model, batch, ctx int) hardware.Fit {
	return hardware.Fit{GPU: g, Model: m, FixedTP: true, BatchedTokens: batch, KVTokens: kit.PagedKVTokens(batch, ctx+1, 16), Positions: ctx + 1}
}

// maxDecodeBatch is the largest decode batch up to limit whose KV cache at
// ctx fits one GPU beside the weights, 0 if not even one sequence does.
func maxDecodeBatch(g hardware.GPU, m hardware.Model, ctx, limit int) int {
	return kit.MaxFitting(limit, func(n int) bool { return decodeFit(g, m, n, ctx).Check() == nil })
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runRoofline(v))
}

// runRoofline prices the steps the lesson places on the rooflines.
func runRoofline(v lessons.Values) (rooflineRun, error) {
	g, md, err := kit.ChosenHardware(v)
	if err != nil {
		return rooflineRun{}, err
	}
	m, err := hardware.NewStepModel(g, md, 1, hardware.BF16)
	if err != nil {
		return rooflineRun{}, err
	}
	r := rooflineRun{gpu: g, model: md, batch: v.Int("batch"), context: v.Int("context"), prompt: v.Int("prompt")}
	r.roof = roofOf(m, g.Name+" roof")
	pr := &pricer{}
	r.decode = pr.pointOf(m, hardware.DecodeBatch(r.batch, r.context))
	r.prefill = pr.pointOf(m, hardware.PrefillBatch(1, r.prompt))
	r.decode1 = pr.pointOf(m, hardware.DecodeBatch(1, r.context))
	r.maxBatch = maxDecodeBatch(g, md, r.context, maxCrossoverBatch)
	for b := 1; b <= min(1024, r.maxBatch); b *= 2 {
		r.sweep = append(r.sweep, pr.pointOf(m, hardware.DecodeBatch(b, r.context)))
		r.sweepBatches = append(r.sweepBatches, b)
	}
	r.crossover = pr.computeBoundBatch(m, r.context, r.maxBatch)
	for _, gg := range hardware.GPUs() {
		gm, err := hardware.NewStepModel(gg, md, 1, hardware.BF16)
		if err != nil {
			continue
		}
		r.gpus = append(r.gpus, gpuRoof{gpu: gg, roof: roofOf(gm, gg.Name),
			decode: pr.pointOf(gm, hardware.DecodeBatch(r.batch, r.context)), prefill: pr.pointOf(gm, hardware.PrefillBatch(1, r.prompt)),
			decodeFits:  decodeFit(gg, md, r.batch, r.context).Check() == nil,
			prefillFits: hardware.Fit{GPU: gg, Model: md, FixedTP: true, BatchedTokens: r.prompt, KVTokens: int64(r.prompt), Positions: r.prompt}.Check() == nil})
	}
	vm, err := hardware.NewStepModel(hardware.MustGPU("h100-sxm"), hardware.MustModel("llama-2-7b"), 1, hardware.BF16)
	if err != nil {
		return rooflineRun{}, err
	}
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 384, 512, 1024, 2048, 4096} {
		r.gateUp = append(r.gateUp, gemmPoint{tokens: n, time: gemmTime(vm, n, "gate_up_proj")})
		pr.work += int64(vm.Model.Layers*10 + 4)
	}
	r.work = pr.work
	r.validation = validation()
	return r, nil
}

// maxCrossoverBatch bounds the search for the compute-bound batch.
const maxCrossoverBatch = 8192

// computeBoundBatch is the smallest batch whose decode step is
// compute-bound, if any ≤ limit: double until it is (trying limit last),
// then bisect (the regime only moves one way as the batch grows). 0 when
// none is.
func (pr *pricer) computeBoundBatch(m hardware.StepModel, ctx, limit int) int {
	bound := func(b int) bool { return pr.pointOf(m, hardware.DecodeBatch(b, ctx)).computeBound }
	lo := 0 // not bound (or 0)
	for hi := 1; lo < limit; hi *= 2 {
		hi = min(hi, limit)
		if bound(hi) {
			for hi-lo > 1 {
				if mid := (lo + hi) / 2; bound(mid) {
					hi = mid
				} else {
					lo = mid
				}
			}
			return hi
		}
		lo = hi
	}
	return 0
}

// series draws a roof as a line in TFLOP/s: a model curve, no markers.
func (c roofCurve) series() scene.Series {
	sr := scene.Series{Name: c.name, Type: scene.Line, Curve: true}
	for i, x := range c.intensity {
		sr.X = append(sr.X, kit.Round2(x))
		sr.Y = append(sr.Y, tflops(c.attainable[i]))
	}
	return sr
}

// The roofline chart's series names (marks refer to them): the lesson's
// decode step and prefill, and the decode sweep.
const (
	seriesDecode  = "decode step"
	seriesPrefill = "prefill"
	seriesSweep   = "decode steps, labelled by batch size"
)

// pointSeries is one step on the roofline, labelled.
func pointSeries(name, label string, p stepPoint) scene.Series {
	return scene.Series{Name: name, Type: scene.Scatter, X: []float64{kit.Round2(p.intensity)}, Y: []float64{tflops(p.attained)}, Labels: []string{label}}
}

// chart is the chosen GPU's roof with its ridge and extra series on it.
func (r rooflineRun) chart(extra ...scene.Series) *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "arithmetic intensity", XUnit: "FLOP/byte", YLabel: "attainable", YUnit: "TFLOP/s", XLog: true, YLog: true,
		Note:   "The roof is the most a kernel can reach at its intensity: memory-bound on the slope, compute-bound on the flat.",
		Guides: []scene.Guide{{ID: "ridge", Axis: "x", From: kit.Round2(r.gpu.Ridge()), To: kit.Round2(r.gpu.Ridge()), Label: fmt.Sprintf("ridge %.0f FLOP/B", r.gpu.Ridge())}}}
	c.Series = append([]scene.Series{r.roof.series()}, extra...)
	return c
}

// sweepSeries is decode at batch 1, 2, 4, …, each point labelled with its
// batch.
func (r rooflineRun) sweepSeries() scene.Series {
	sr := scene.Series{Name: seriesSweep, Type: scene.Scatter}
	for i, p := range r.sweep {
		sr.X = append(sr.X, kit.Round2(p.intensity))
		sr.Y = append(sr.Y, tflops(p.attained))
		sr.Labels = append(sr.Labels, kit.Comma(r.sweepBatches[i]))
	}
	return sr
}

// gpuScenes are the rooflines of every GPU and the table of their ridges.
func (r rooflineRun) gpuScenes() ([]scene.Scene, []scene.Mention) {
	all := &scene.Chart{Type: scene.Line, XLabel: "arithmetic intensity", XUnit: "FLOP/byte", YLabel: "attainable", YUnit: "TFLOP/s", XLog: true, YLog: true}
	ridges := &scene.Table{Columns: []string{"GPU", "HBM bandwidth", "dense BF16 peak", "ridge (FLOP/byte)", fmt.Sprintf("decode batch %d", r.batch), fmt.Sprintf("prefill %s", kit.Comma(r.prompt))}}
	ridgePts := scene.Series{Name: seriesRidges, Type: scene.Scatter}
	for _, gr := range r.gpus {
		gg := gr.gpu
		all.Series = append(all.Series, gr.roof.series())
		ridgePts.X = append(ridgePts.X, kit.Round2(gg.Ridge()))
		ridgePts.Y = append(ridgePts.Y, tflops(gg.PeakBF16))
		ridgePts.Labels = append(ridgePts.Labels, gg.ID)
		dec, pre := gr.decode.regime(), gr.prefill.regime()
		if !gr.decodeFits {
			dec = "does not fit"
		}
		if !gr.prefillFits {
			pre = "does not fit"
		}
		ridges.Rows = append(ridges.Rows, []string{gg.Name, fmt.Sprintf("%.2f TB/s", gg.MemBandwidth/1e12), fmt.Sprintf("%.0f TFLOP/s", gg.PeakBF16/1e12),
			fmt.Sprintf("%.0f", gg.Ridge()), dec, pre})
	}
	all.Series = append(all.Series, ridgePts)
	all.Note = "Each GPU's roof and its ridge, where the slope meets the flat: newer GPUs' ridges sit further right."
	gpus := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "gpus", Title: "Rooflines of every GPU profile", Chart: all})
	var mentions []scene.Mention
	for i, id := range ridgePts.Labels {
		if id == "h200-sxm" {
			ref := "point:" + seriesRidges + ":" + strconv.Itoa(i)
			gpus.Marks = append(gpus.Marks, kit.MarkRef(ref, fmt.Sprintf("H200 ridge: %.0f FLOP/B", ridgePts.X[i])))
			mentions = append(mentions, kit.Mention("its ridge sits further left", "gpus", ref))
		}
	}
	return []scene.Scene{gpus, {Kind: scene.KindTable, ID: "ridges", Title: "Ridge points and the regime of this step on each GPU", Table: ridges}}, mentions
}

// seriesRidges names the ridge points of every GPU's roofline.
const seriesRidges = "ridge of each GPU"

// vidurScene is the GEMM check, vidur's 128-token point marked: where the
// measured times stop being flat.
func (r rooflineRun) vidurScene() (scene.Scene, []scene.Mention) {
	sc := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "vidur", Title: "H100 gate+up GEMM (Llama-2-7B): vidur measured vs this model", Chart: r.vidurChart()})
	measured := sc.Chart.Series[0]
	for i, x := range measured.X {
		if x == 128 {
			ref := "point:" + measured.Name + ":" + strconv.Itoa(i)
			sc.Marks = []scene.Mark{kit.MarkRef(ref, fmt.Sprintf("128 tokens: %.0f µs", measured.Y[i]))}
			return sc, []scene.Mention{kit.Mention("about 128 tokens", "vidur", ref)}
		}
	}
	return sc, nil
}

// vidurChart puts the model's gate+up GEMM beside vidur's measurement.
func (r rooflineRun) vidurChart() *scene.Chart {
	measured := scene.Series{Name: "vidur measured (H100, Llama-2-7B gate+up)", Type: scene.Scatter}
	modelled := scene.Series{Name: "this model", Type: scene.Line, Curve: true}
	for _, pt := range vidurGateUp {
		measured.X, measured.Y = append(measured.X, pt.tokens), append(measured.Y, pt.us)
	}
	for _, p := range r.gateUp {
		modelled.X = append(modelled.X, float64(p.tokens))
		modelled.Y = append(modelled.Y, kit.Round2(1e6*p.time))
	}
	return &scene.Chart{Type: scene.Line, XLabel: "tokens in the GEMM", XUnit: "tokens", YLabel: "gate+up GEMM time", YUnit: "µs", XLog: true, YLog: true, Series: []scene.Series{measured, modelled},
		Note: "Flat while the GEMM waits on reading its weights, then rising once it is compute-bound: measured and modelled."}
}

// validationTable lists the step-time model's validation cases and counts
// those within tolerance.
func (r rooflineRun) validationTable() (*scene.Table, int) {
	tbl := &scene.Table{Columns: []string{"case", "what", "measured", "model", "error", "tolerance", "source"}}
	within := 0
	for _, c := range r.validation {
		if c.Within() {
			within++
		}
		tbl.Rows = append(tbl.Rows, []string{c.ID, c.Name, fmt.Sprintf("%.4g %s", c.Measured, c.Unit), fmt.Sprintf("%.4g %s", c.Model, c.Unit),
			fmt.Sprintf("%+.1f%%", 100*c.Error), fmt.Sprintf("±%.0f%%", 100*c.Tolerance), "[" + c.Source + "]"})
	}
	return tbl, within
}

func (r rooflineRun) metrics() []lessons.Metric {
	g, dec, one, pre := r.gpu, r.decode, r.decode1, r.prefill
	return []lessons.Metric{
		{Key: "ridge_flop_per_byte", Label: g.Name + " ridge: dense BF16 peak / HBM bandwidth", Unit: "FLOP/B", Value: kit.Round2(g.Ridge())},
		{Key: "decode_intensity", Label: fmt.Sprintf("Decode step intensity, batch %d", r.batch), Unit: "FLOP/B", Value: kit.Round2(dec.intensity)},
		{Key: "decode1_intensity", Label: "Decode step intensity, batch 1", Unit: "FLOP/B", Value: kit.Round2(one.intensity)},
		{Key: "prefill_intensity", Label: fmt.Sprintf("Prefill intensity, %s tokens", kit.Comma(r.prompt)), Unit: "FLOP/B", Value: kit.Round2(pre.intensity)},
		{Key: "decode_step_ms", Label: fmt.Sprintf("Decode step GPU time, batch %d", r.batch), Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round2(dec.ms)},
		{Key: "decode_tokens_per_s", Label: fmt.Sprintf("Decode throughput at batch %d (GPU time only)", r.batch), Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round2(float64(r.batch) / dec.ms * 1000)},
		{Key: "prefill_ms", Label: "Prefill GPU time", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round2(pre.ms)},
		{Key: "compute_bound_batch", Label: "Smallest decode batch whose step is compute-bound (0: none that fits, up to 8,192)", Unit: "sequences", Value: float64(r.crossover)},
	}
}

func (r rooflineRun) Script() *lessons.Script {
	g, md, ridge := r.gpu, r.model, r.gpu.Ridge()
	dec, one, pre := r.decode, r.decode1, r.prefill
	valTable, within := r.validationTable()
	s := &lessons.Script{Metrics: r.metrics()}
	s.Claims = []lessons.Claim{{
		What:    "Prefill intensity grows with S; decode is O(1)",
		Article: "I_prefill = O(S), compute-bound; I_decode = O(1), memory-bound",
		Model:   fmt.Sprintf("prefill of %s tokens: %.0f FLOP/B (%s); decode batch 1: %.1f FLOP/B (%s); ridge %.0f", kit.Comma(r.prompt), pre.intensity, pre.regime(), one.intensity, one.regime(), ridge),
		Why:     "Agrees. The article's formula omits that decode's intensity grows with the batch (weights are read once per step for every sequence) until attention's KV reads, which do not batch, hold it back.",
	}}
	roofScene := func(extra ...scene.Series) scene.Scene {
		return kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "roof", Title: g.Name + " roofline", Chart: r.chart(extra...)})
	}
	ridgeText := "meet at the ridge"
	roof := roofScene()
	roof.Marks = []scene.Mark{kit.MarkRef("guide:ridge", fmt.Sprintf("ridge: %.0f FLOP/byte", ridge))}
	decRef, preRef := "point:"+seriesDecode+":0", "point:"+seriesPrefill+":0"
	oneText := fmt.Sprintf("%.1f FLOP per byte, far left of the ridge", one.intensity)
	oneScene := roofScene(pointSeries(seriesDecode, "batch 1", one))
	oneScene.Marks = []scene.Mark{kit.MarkRef(decRef, fmt.Sprintf("batch 1: %.1f FLOP/B", one.intensity))}
	decText := fmt.Sprintf("At batch %d: %.1f FLOP/B", r.batch, dec.intensity)
	decScene := roofScene(r.sweepSeries(), pointSeries(seriesDecode, "batch "+kit.Comma(r.batch), dec))
	decScene.Marks = []scene.Mark{kit.MarkRef(decRef, fmt.Sprintf("batch %s: %.1f FLOP/B", kit.Comma(r.batch), dec.intensity))}
	preText := fmt.Sprintf("%.0f FLOP/B, %s", pre.intensity, pre.regime())
	preScene := roofScene(r.sweepSeries(), pointSeries(seriesPrefill, "prefill "+kit.Comma(r.prompt), pre))
	preScene.Marks = []scene.Mark{kit.MarkRef(preRef, fmt.Sprintf("prefill: %.0f FLOP/B", pre.intensity))}
	gpus, gpuMentions := r.gpuScenes()
	vidur, vidurMentions := r.vidurScene()
	s.Steps = []lessons.Step{{
		Title: "A roofline",
		Narration: fmt.Sprintf("A kernel that does F FLOPs while moving B bytes has arithmetic intensity I = F/B. On the %s it can run no faster than min(peak, I × bandwidth): "+
			"%.0f TFLOP/s of dense BF16 and %.2f TB/s of HBM %s, I = %.0f FLOP/byte. Left of the ridge a kernel waits on memory; right of it, on the tensor cores.",
			g.Name, g.PeakBF16/1e12, g.MemBandwidth/1e12, ridgeText, ridge),
		Scenes:   []scene.Scene{roof},
		Mentions: []scene.Mention{kit.Mention(ridgeText, "roof", "guide:ridge")},
	}, {
		Quiz: lessons.ChoiceQuiz(fmt.Sprintf("One decode step of %s at batch 1 on the %s: memory-bound or compute-bound?", md.Name, g.Name),
			[]string{"memory-bound", "compute-bound"}, one.regime(), fmt.Sprintf("Its intensity is %.1f FLOP/byte; the ridge is at %.0f.", one.intensity, ridge)),
		Title: "Decode at batch 1",
		Narration: fmt.Sprintf("One decode step of %s reads every weight once to produce a single token: %s. It is %s: the GPU reaches %.1f TFLOP/s of its %.0f, and the step takes %.2f ms of GPU time.",
			md.Name, oneText, one.regime(), one.attained/1e12, g.PeakBF16/1e12, one.ms),
		Scenes:   []scene.Scene{oneScene},
		Mentions: []scene.Mention{kit.Mention(oneText, "roof", decRef)},
	}, {
		Title: "Batching moves decode to the right",
		Narration: fmt.Sprintf("Batching B sequences reuses each weight read B times, so the step's intensity grows with B until the KV cache reads, which every sequence pays alone, dominate. %s, %s, %.2f ms per step (%s tokens/s). %s",
			decText, dec.regime(), dec.ms, kit.Comma(int(float64(r.batch)/dec.ms*1000)), crossoverText(r.crossover, r.context, r.maxBatch, r.gpu.Name)),
		Scenes:   []scene.Scene{decScene},
		Mentions: []scene.Mention{kit.Mention(decText, "roof", decRef)},
	}, {
		Title: "Prefill is compute-bound",
		Narration: fmt.Sprintf("A %s-token prefill multiplies every weight by %s token vectors: %s. It takes %.1f ms of GPU time at %.0f TFLOP/s attained.",
			kit.Comma(r.prompt), kit.Comma(r.prompt), preText, pre.ms, pre.attained/1e12),
		Scenes:   []scene.Scene{preScene},
		Mentions: []scene.Mention{kit.Mention(preText, "roof", preRef)},
	}, {
		Title:     "Every GPU has its own ridge",
		Narration: "Memory bandwidth grew more slowly than tensor-core FLOPS, so newer GPUs have ridges further right and need bigger batches before decode stops being memory-bound. " + h200Note(),
		Scenes:    gpus,
		Mentions:  gpuMentions,
	}, {
		Title:     "Checked against measurements",
		Narration: fmt.Sprintf("vidur's measured H100 GEMM times are flat from 1 to about 128 tokens, then rise: the memory-bound floor, then the compute roof. The model gives the same shape. Below, the model against %d published measurements: %d within their stated tolerance.", len(r.validation), within),
		Scenes: []scene.Scene{vidur,
			{Kind: scene.KindTable, ID: "validation", Title: "Model vs published measurements (docs/VALIDATION.md)", Table: valTable}},
		Mentions: vidurMentions,
	}, {
		Title:     "Article claim vs this model",
		Narration: "Part 12's formulation 1, evaluated.",
		Scenes:    []scene.Scene{kit.ClaimsTable(s.Claims)},
	}}
	kit.IndexCursors(s.Steps)
	s.Work = r.work
	return s
}

// validation runs core/hardware's validation cases once per process: they
// do not depend on the lesson's knobs, and some simulate whole batches.
var validation = sync.OnceValue(hardware.Validate)

// h200Note compares the H100 and H200 profiles: same compute, more bandwidth.
func h200Note() string {
	a, b := hardware.MustGPU("h100-sxm"), hardware.MustGPU("h200-sxm")
	return fmt.Sprintf("The H200 has the H100's %.0f TFLOP/s with %.0f%% more bandwidth (%.2f vs %.2f TB/s), so its ridge sits further left: %.0f vs %.0f FLOP/byte.",
		b.PeakBF16/1e12, 100*(b.MemBandwidth/a.MemBandwidth-1), b.MemBandwidth/1e12, a.MemBandwidth/1e12, b.Ridge(), a.Ridge())
}

func crossoverText(b, ctx, maxBatch int, gpu string) string {
	switch {
	case b == 0 && maxBatch < maxCrossoverBatch:
		return fmt.Sprintf("With %s tokens of context per sequence the %s holds the KV cache of at most %s sequences, and no batch that fits makes the decode step compute-bound.", kit.Comma(ctx), gpu, kit.Comma(maxBatch))
	case b == 0:
		return fmt.Sprintf("With %s tokens of context per sequence, no batch up to 8,192 makes the decode step compute-bound: KV reads grow as fast as the FLOPs.", kit.Comma(ctx))
	}
	return fmt.Sprintf("From batch %d on (at %s tokens of context) the step is compute-bound.", b, kit.Comma(ctx))
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
