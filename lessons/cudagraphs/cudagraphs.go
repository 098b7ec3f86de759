// Package cudagraphs holds the lesson cuda-graphs: Part 14 §3.3. One decode
// step is hundreds of small kernels; launched one by one from Python the CPU
// can fall behind the GPU. A captured CUDA graph replays them with one
// launch. The lesson lays the CPU launches against the GPU kernels, sweeps
// the batch to find where dispatch stops mattering, and shows what graphs
// cost: padding to capture sizes, eager attention between piecewise graphs,
// capture time and memory.
package cudagraphs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:  "cuda-graphs",
	Title: "CUDA graphs: when the CPU, not the GPU, limits decode",
	Part:  "Part 14 §3.3",
	Summary: "Launch every kernel from Python or replay one captured graph: the CPU and GPU timelines of a decode step, the batch where dispatch stops mattering, " +
		"padding to capture sizes and piecewise graphs' eager attention.",
	Engine: "vLLM v1 CUDA graphs (CUDAGraphMode, default capture sizes as of vLLM main @ 000fc94, padding, CudagraphDispatcher) in core/cudagraph; vLLM's custom all-reduce at TP > 1; kernels and their GPU times from core/hardware's step-time model. " +
		"Graph memory comes out of the KV pool as vLLM v0.21.0 and later estimate it (before v0.21.0 it came out of the headroom). " +
		"Simplified: one CUDA stream, no speculative decoding, host work (scheduling, sampling bookkeeping) left out of the step.",
	Group: "gpu", Rank: 10, Thumb: scene.KindTimeline,
	Terms: []lessons.Term{
		{Term: "CUDA graph", Aliases: []string{"cudagraph", "graph replay"}, Definition: "A recorded sequence of kernel launches replayed with one call, removing per-kernel CPU launch cost.", Find: "graph"},
	},
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam,
		{Key: "batch", Label: "Decode batch", Unit: "sequences", Help: "Sequences decoding one token each in the step.", Kind: lessons.Int, Default: 1, Min: 1, Max: 512, Step: 1},
		{Key: "context", Label: "Context per sequence", Unit: "tokens", Help: "Tokens each sequence already holds in the KV cache.", Kind: lessons.Int, Default: 1024, Min: 1, Max: 131072, Step: 1},
		{Key: "mode", Label: "Graph mode", Help: "vLLM's cudagraph_mode; FULL_AND_PIECEWISE is the default.", Kind: lessons.Choice, Choices: kit.GraphModes()},
		{Key: "tp", Label: "Tensor-parallel GPUs", Unit: "GPUs", Help: "Adds two all-reduces per layer; each GPU holds 1/tp of the weights.", Kind: lessons.Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "per_launch_us", Label: "CPU cost per eager kernel", Unit: "µs", Help: "Framework op plus cudaLaunchKernel: 24 µs from a PyTorch engine (fitted to vLLM's and gpt-fast's eager runs, docs/VALIDATION.md), 4–6 µs from C++ (a toy-kernel microbenchmark of a Rust engine).",
			Kind: lessons.Float, Default: hardware.PerLaunchPython * 1e6, Min: 1, Max: 200, Step: 0.5},
		{Key: "max_num_seqs", Label: "max_num_seqs", Unit: "sequences", Help: "vLLM's running-batch limit; it sets the largest capture size, min(2·max_num_seqs, 512). vLLM's default for `vllm serve` is 1,024 on H100, H200 and B200, 256 on A100, L4 and L40S.", Kind: lessons.Int, Default: 1024, Min: 1, Max: 1024, Step: 1},
	},
	Check: checkCUDAGraphs,
	Sim:   sim{},
	// Pricing only: every knob combination stays far below this (the
	// heaviest, 405B at TP 8 with 1,024 sequences, counts about 800,000:
	// 40 ms natively).
	MaxWork: 2_000_000,
	HeavyCorners: []map[string]string{
		{"gpu": "b200", "model": "llama-3.1-405b", "tp": "8", "max_num_seqs": "1024", "batch": "512", "context": "1000"},
		{"gpu": "b200", "model": "llama-3.1-70b", "tp": "8", "max_num_seqs": "1024", "batch": "512", "context": "1", "mode": "piecewise"},
	},
}

func init() { lessons.Register(lesson) }

// graphSetup is the priced engine of the lesson.
type graphSetup struct {
	gpu   hardware.GPU
	model hardware.Model
	tp    int
	step  hardware.StepModel
	// kvBytes is one token's KV on each GPU of the group.
	kvBytes   int64
	perLaunch float64
	seqs      int
	// budget is max_num_batched_tokens, vLLM's API-server default on the
	// GPU (VLLMBatch: 8,192 or 2,048); it sets the activation reserve, and
	// caps the capture sizes only below 512.
	budget int
	mode   cudagraph.Mode
}

func newGraphSetup(v lessons.Values) (*graphSetup, error) {
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return nil, err
	}
	tp := v.Int("tp")
	sm, err := hardware.NewStepModel(g, m, tp, hardware.BF16)
	if err != nil {
		return nil, kit.TPRelation(m, tp)
	}
	// The lesson times the forward pass alone: host work (scheduling,
	// output processing) overlaps it in vLLM v1 and is another lesson's.
	sm.Host = hardware.HostOverhead{}
	// vLLM's custom all-reduce at TP > 1 (NCCL where vLLM falls back).
	sm.AllReduce = hardware.VLLMAllReduce(g, tp)
	budget, _ := kit.VLLMBatch(g)
	if err := kit.CheckFit(v, hardware.Fit{GPU: g, Model: m, TP: tp, BatchedTokens: budget}, kit.FitKnobs{hardware.LimitWeights: "model"}); err != nil {
		return nil, err
	}
	mode, err := cudagraph.ParseMode(v.Choice("mode"))
	if err != nil {
		return nil, err
	}
	return &graphSetup{gpu: g, model: m, tp: tp, step: sm, kvBytes: hardware.KVBytesPerTokenPerGPU(m, tp, sm.KVBytesPerElement), perLaunch: v.Float("per_launch_us") * 1e-6, seqs: v.Int("max_num_seqs"), budget: budget, mode: mode}, nil
}

func checkCUDAGraphs(v lessons.Values) error {
	e, err := newGraphSetup(v)
	if err != nil {
		return err
	}
	b, ctx := v.Int("batch"), v.Int("context")
	if b > e.seqs {
		return lessons.Relation("batch", strconv.Itoa(b), fmt.Sprintf("at most max_num_seqs (%d): vLLM runs no more sequences at once", e.seqs), "max_num_seqs")
	}
	return kit.CheckFit(v, e.decodeFit(b, ctx), kit.FitKnobs{hardware.LimitKV: "context", hardware.LimitPositions: "context"})
}

// decodeFit is a decode step of batch sequences at ctx tokens of context
// on the lesson's TP group, with vLLM's activation reserve at the token
// budget, each sequence in whole blocks of the paged pool.
func (e *graphSetup) decodeFit(batch, ctx int) hardware.Fit {
	return hardware.Fit{GPU: e.gpu, Model: e.model, TP: e.tp, BatchedTokens: e.budget,
		KVTokens: kit.PagedKVTokens(batch, ctx+1, 16), Positions: ctx + 1}
}

// dispatcher returns vLLM's dispatcher for a mode with the lesson's launch
// costs: eager kernels and further pieces at per_launch_us.
func (e *graphSetup) dispatcher(mode cudagraph.Mode) cudagraph.Dispatcher {
	d := cudagraph.New(mode, e.seqs, e.budget)
	d.PerLaunch = e.perLaunch
	d.PieceLaunch = e.perLaunch
	return d
}

// run is one priced step in one mode.
type run struct {
	cost hardware.StepCost
	plan cudagraph.Plan
	work int64 // the kernels and sequences priced and planned (Script.Work)
}

func (e *graphSetup) run(mode cudagraph.Mode, b hardware.Batch) run {
	d := e.dispatcher(mode)
	sm := e.step
	sm.Dispatcher = d
	c := sm.Step(b)
	return run{cost: c, plan: d.Plan(b, c.Kernels), work: 2*int64(len(c.Kernels)) + int64(len(b.Seqs))} // the step and its plan
}

// gpuStep is a step's GPU time with nothing to wait for, and the work of
// pricing it (Script.Work).
type gpuStep struct {
	seconds float64
	work    int64
}

// gpuOnly is the step's GPU work at its real token count, with nothing to
// wait for.
func (e *graphSetup) gpuOnly(b hardware.Batch) gpuStep {
	sm := e.step
	sm.Dispatcher = hardware.Replay{}
	c := sm.Step(b)
	return gpuStep{seconds: c.GPU + c.Comm, work: int64(len(c.Kernels)) + int64(len(b.Seqs))}
}

// tokenBatch is a batch of n tokens: n decodes while max_num_seqs allows,
// otherwise max_num_seqs−1 decodes and one prefill chunk with the rest.
func (e *graphSetup) tokenBatch(n, ctx int) hardware.Batch {
	if n <= e.seqs {
		return hardware.DecodeBatch(n, ctx)
	}
	b := hardware.DecodeBatch(e.seqs-1, ctx)
	b.Seqs = append(b.Seqs, hardware.Chunk{NewTokens: n - (e.seqs - 1)})
	return b
}

// ganttLanes draws one priced step as a CPU lane of launches and a GPU lane
// of kernels, keyed cpu-KEY and gpu-KEY. The head, the first `detail`
// layers and the tail are drawn kernel by kernel; later layers as one bar
// per layer. markEager highlights the eager launches and kernels that
// split a piecewise graph.
func ganttLanes(name, key string, r run, detail int, markEager bool) []scene.Lane {
	return []scene.Lane{cpuLane(name, key, r, detail, markEager), gpuLane(name, key, r, detail, markEager)}
}

// kernelClass is a kernel's bar class: matrix multiply, attention,
// all-reduce or elementwise.
func kernelClass(k hardware.Kernel) string {
	switch k.Kind {
	case hardware.GEMM:
		return "gemm"
	case hardware.Attention:
		return "attn"
	case hardware.Collective:
		return "comm"
	}
	return "elem"
}

// cpuLane draws the launches of a step: one bar per launch, or per layer
// past the detailed ones.
func cpuLane(name, key string, r run, detail int, markEager bool) scene.Lane {
	ks, ls := r.cost.Kernels, r.plan.Launches
	cpu := scene.Lane{Label: "CPU · " + name, Key: "cpu-" + key}
	for i := 0; i < len(ls); {
		l := ls[i]
		first := ks[l.First]
		if l.Kind == cudagraph.GraphReplay || first.Layer < detail {
			label, cls := "launch "+first.Name, "cpu"
			switch l.Kind {
			case cudagraph.GraphReplay:
				label, cls = fmt.Sprintf("replay graph (%d kernels)", l.Last-l.First+1), "replay"
			case cudagraph.PieceReplay:
				label, cls = fmt.Sprintf("replay piece (%d kernels)", l.Last-l.First+1), "replay"
			}
			cpu.Bars = append(cpu.Bars, scene.Span{Start: kit.Msr(l.Start), End: kit.Msr(l.End), Label: label, Class: cls, Highlight: markEager && l.Kind == cudagraph.KernelLaunch})
			i++
			continue
		}
		j, pieces, eager := i, 0, 0
		grp := layerGroup(first.Layer, detail, len(ks))
		for ; j < len(ls) && ls[j].Kind != cudagraph.GraphReplay && ks[ls[j].First].Layer >= detail && layerGroup(ks[ls[j].First].Layer, detail, len(ks)) == grp; j++ {
			if ls[j].Kind == cudagraph.PieceReplay {
				pieces++
			} else {
				eager++
			}
		}
		name := layersName(first.Layer, ks[ls[j-1].First].Layer)
		label := fmt.Sprintf("%s: %d launches", name, eager)
		if pieces > 0 {
			label = fmt.Sprintf("%s: %d piece + %d eager", name, pieces, eager)
		}
		cpu.Bars = append(cpu.Bars, scene.Span{Start: kit.Msr(l.Start), End: kit.Msr(ls[j-1].End), Label: label, Class: "cpu"})
		i = j
	}
	return cpu
}

// gpuLane draws the kernels of a step and the gaps where the GPU waits for
// a launch; layers past the detailed ones are one bar each.
func gpuLane(name, key string, r run, detail int, markEager bool) scene.Lane {
	ks := r.cost.Kernels
	gpu := scene.Lane{Label: "GPU · " + name, Key: "gpu-" + key}
	prevEnd := 0.0
	for i := 0; i < len(ks); {
		k := ks[i]
		j := i
		if k.Layer >= detail {
			grp := layerGroup(k.Layer, detail, len(ks))
			for j+1 < len(ks) && ks[j+1].Layer >= detail && layerGroup(ks[j+1].Layer, detail, len(ks)) == grp {
				j++
			}
		}
		start, end := k.Start, ks[j].Start+ks[j].GPUTime
		if start-prevEnd > 1e-8 {
			gpu.Bars = append(gpu.Bars, scene.Span{Start: kit.Msr(prevEnd), End: kit.Msr(start), Label: "idle", Class: "idle"})
		}
		label, cls := k.Name, kernelClass(k)
		if j > i {
			busy := 0.0
			for _, x := range ks[i : j+1] {
				busy += x.GPUTime
			}
			label, cls = layersName(k.Layer, ks[j].Layer), "gpu"
			if idle := end - start - busy; idle > 1e-7 {
				label += fmt.Sprintf(" (%.1f µs idle)", 1e6*idle)
			}
		}
		gpu.Bars = append(gpu.Bars, scene.Span{Start: kit.Msr(start), End: kit.Msr(end), Label: label, Class: cls, Highlight: markEager && j == i && cudagraph.Splitting(k)})
		prevEnd = end
		i = j + 1
	}
	return gpu
}

// maxLayerBars bounds the bars a lane spends on the layers past the
// detailed ones: deeper models draw several layers per bar.
const maxLayerBars = 24

// layerGroup is the bar a layer past the detailed ones falls in, for a
// step of n kernels (about 10 per layer).
func layerGroup(layer, detail, n int) int {
	per := max(1, (n/10-detail+maxLayerBars-1)/maxLayerBars)
	return (layer - detail) / per
}

// layersName names the layers from a to b.
func layersName(a, b int) string {
	if a == b {
		return fmt.Sprintf("layer %d", a)
	}
	return fmt.Sprintf("layers %d–%d", a, b)
}

// layerSpan is when layer l runs on the GPU: the start of its first kernel
// and the end of its last (layer -1: the embedding and the output head).
func layerSpan(r run, l int) (start, end float64) {
	start = -1
	for _, k := range r.cost.Kernels {
		if k.Layer == l {
			if start < 0 {
				start = k.Start
			}
			end = k.Start + k.GPUTime
		}
	}
	return max(start, 0), end
}

// layerEnd is the end of the last GPU kernel of layer l.
func layerEnd(r run, l int) float64 {
	_, end := layerSpan(r, l)
	return end
}

// layerGroups brackets a run's embedding, its first layers one by one and
// the rest of the layers together; prefix names the run when several
// share the timeline.
func (r graphsRun) layerGroups(x run, prefix string) []scene.Span {
	L := r.e.model.Layers
	first, _ := layerSpan(x, 0)
	g := []scene.Span{{Start: 0, End: kit.Msr(first), Label: prefix + "embedding", Class: "layer"}}
	for l := 0; l < min(detailLayers, L); l++ {
		a, b := layerSpan(x, l)
		g = append(g, scene.Span{Start: kit.Msr(a), End: kit.Msr(b), Label: fmt.Sprintf("%slayer %d", prefix, l), Class: "layer"})
	}
	if L > detailLayers {
		a, _ := layerSpan(x, detailLayers)
		g = append(g, scene.Span{Start: kit.Msr(a), End: kit.Msr(layerEnd(x, L-1)), Label: fmt.Sprintf("%slayers %d–%d", prefix, detailLayers, L-1), Class: "layer"})
	}
	return g
}

// stepTimeline is one timeline of runs (each a CPU lane over a GPU lane),
// zoomed on the first layers of the slowest, with the first run's layers
// bracketed.
func (r graphsRun) stepTimeline(title string, names, keys []string, rs []run, markEager []bool) scene.Scene {
	tl := &scene.Timeline{Unit: "ms"}
	for i, x := range rs {
		tl.Lanes = append(tl.Lanes, ganttLanes(names[i], keys[i], x, detailLayers, markEager[i])...)
	}
	tl.Zoom = &scene.Window{Start: 0, End: kit.Msr(r.zoomTo(rs...)), Label: fmt.Sprintf("the first %d layers", min(detailLayers, r.e.model.Layers))}
	prefix := ""
	if len(rs) > 1 {
		prefix = names[0] + " "
	}
	tl.Groups = r.layerGroups(rs[0], prefix)
	return scene.Scene{Kind: scene.KindTimeline, ID: "step", Title: title, Gantt: tl, Main: true}
}

// firstBar is the index of the first bar of a lane with class cls, or -1.
func firstBar(l scene.Lane, cls string) int {
	for i, b := range l.Bars {
		if b.Class == cls {
			return i
		}
	}
	return -1
}

// detailLayers is how many layers the zoomed timelines draw kernel by kernel.
const detailLayers = 3

func runtimeName(rt cudagraph.Runtime) string {
	switch rt {
	case cudagraph.RunFull:
		return "full graph"
	case cudagraph.RunPiecewise:
		return "piecewise graph"
	}
	return "eager"
}

// sweepPoint is one decode batch of the sweep: step times by mode.
type sweepPoint struct {
	batch                  int
	eager, piecewise, full float64
	gpu                    float64 // GPU work alone, unpadded
	cpp                    float64 // eager with C++ launches; 0 when the knob already is the C++ cost
	work                   int64   // the pricing of the three modes and the GPU alone (Script.Work)
}

// padCase is what padding costs one batch of n tokens in the chosen mode.
type padCase struct {
	n, padded int
	rt        cudagraph.Runtime
	extra     float64 // GPU seconds spent on padding
	thisBatch bool    // the lesson's own batch
	work      int64   // the pricing (Script.Work)
}

// modeShape is one batch shape run in every mode (cudagraph.Modes order).
type modeShape struct {
	name  string
	batch hardware.Batch
	runs  []run
}

// graphsRun is what the cuda-graphs lesson computed: one decode step priced
// in every mode, the batch sweep, padding and capture costs.
type graphsRun struct {
	e              *graphSetup
	batch, context int
	// The lesson's step in each mode, and in the chosen one.
	eager, full, piecewise, chosen run
	// gpuWork is the step's GPU time with nothing to wait for, unpadded.
	gpuWork gpuStep
	// short counts kernels whose GPU time is below one eager launch;
	// layerGPU is one layer's GPU time.
	short    int
	layerGPU float64
	// sizes are FULL_AND_PIECEWISE's capture sizes; padTo[n-1] the size
	// n tokens pad to, for n up to the largest.
	sizes []int
	padTo []int
	sweep []sweepPoint
	// crossover is the smallest captured batch where eager is within 2% of
	// the full graph, 0 if none up to max_num_seqs.
	crossover int
	// kvFit is how many sequences of this context the KV cache holds.
	kvFit      int
	padding    []padCase
	capture    cudagraph.Capture
	captureKV  int // KV tokens the graph memory would hold
	shapes     []modeShape
	validation []cudagraph.ValidationResult
}

// work is Script.Work: every step the run priced, in every mode.
func (r graphsRun) work() int64 {
	n := r.eager.work + r.full.work + r.piecewise.work + r.chosen.work + r.gpuWork.work
	for _, p := range r.sweep {
		n += p.work
	}
	for _, p := range r.padding {
		n += p.work
	}
	for _, sh := range r.shapes {
		for _, x := range sh.runs {
			n += x.work
		}
	}
	return n
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runCUDAGraphs(v))
}

// runCUDAGraphs prices the lesson's decode step in every mode, sweeps the
// batch, and costs padding and capture.
func runCUDAGraphs(v lessons.Values) (graphsRun, error) {
	e, err := newGraphSetup(v)
	if err != nil {
		return graphsRun{}, err
	}
	r := graphsRun{e: e, batch: v.Int("batch"), context: v.Int("context")}
	b := hardware.DecodeBatch(r.batch, r.context)
	r.eager = e.run(cudagraph.None, b)
	r.full = e.run(cudagraph.Full, b)
	r.piecewise = e.run(cudagraph.Piecewise, b)
	r.chosen = e.run(e.mode, b)
	r.gpuWork = e.gpuOnly(b)
	for _, k := range r.eager.cost.Kernels {
		if k.GPUTime < e.perLaunch {
			r.short++
		}
		if k.Layer == 0 {
			r.layerGPU += k.GPUTime
		}
	}
	d := e.dispatcher(cudagraph.FullAndPiecewise)
	r.sizes = d.Sizes
	for n := 1; n <= d.MaxCaptureSize(); n++ {
		p, _ := d.Pad(n)
		r.padTo = append(r.padTo, p)
	}
	r.sweep, r.crossover = e.sweep(d, r.context)
	r.kvFit = kit.MaxFitting(e.seqs, func(n int) bool { return e.decodeFit(n, r.context).Check() == nil })
	r.padding = e.paddingCases(r.batch, r.context)
	r.capture = e.dispatcher(e.mode).Capture()
	if e.kvBytes > 0 {
		r.captureKV = int(r.capture.Bytes / float64(e.kvBytes))
	}
	r.shapes = e.modeShapes(b, r.batch, r.context)
	r.validation = graphValidation()
	return r, nil
}

// sweepBatches are the decode batches the sweep prices: every captured size
// up to max_num_seqs, and below 64 the size after it, where padding jumps.
func (e *graphSetup) sweepBatches(d cudagraph.Dispatcher) []int {
	var xs []int
	for _, s := range d.Sizes {
		if s > e.seqs {
			break
		}
		xs = append(xs, s)
		if s < 64 && s+1 <= e.seqs {
			xs = append(xs, s+1)
		}
	}
	return dedupSorted(xs)
}

// sweep prices decode steps over the sweep's batches in each mode and finds
// the smallest captured batch where eager comes within 2% of the graph.
func (e *graphSetup) sweep(d cudagraph.Dispatcher, ctx int) ([]sweepPoint, int) {
	cpp := *e
	cpp.perLaunch = hardware.PerLaunchCPP
	var pts []sweepPoint
	crossover := 0
	for _, n := range e.sweepBatches(d) {
		bn := hardware.DecodeBatch(n, ctx)
		eager, full, piecewise, gpu := e.run(cudagraph.None, bn), e.run(cudagraph.Full, bn), e.run(cudagraph.Piecewise, bn), e.gpuOnly(bn)
		p := sweepPoint{batch: n, eager: eager.cost.Total, full: full.cost.Total, piecewise: piecewise.cost.Total, gpu: gpu.seconds,
			work: eager.work + full.work + piecewise.work + gpu.work}
		if e.perLaunch != hardware.PerLaunchCPP {
			p.cpp = cpp.run(cudagraph.None, bn).cost.Total
		}
		if _, ok := d.Pad(n); ok && crossover == 0 && slices.Contains(d.Sizes, n) && p.eager <= 1.02*p.full {
			crossover = n
		}
		pts = append(pts, p)
	}
	return pts, crossover
}

// paddingCases are 250 and 257 tokens (either side of the 256 size) and
// the lesson's own batch, run in the chosen mode.
func (e *graphSetup) paddingCases(batch, ctx int) []padCase {
	var out []padCase
	for i, n := range []int{250, 257, batch} {
		if i == 2 && (n == 250 || n == 257) {
			continue
		}
		bn := e.tokenBatch(n, ctx)
		r, gpu := e.run(e.mode, bn), e.gpuOnly(bn)
		out = append(out, padCase{n: n, padded: r.plan.Padded, rt: r.plan.Runtime, extra: r.cost.GPU + r.cost.Comm - gpu.seconds, thisBatch: i == 2, work: r.work + gpu.work})
	}
	return out
}

// modeShapes runs a few batch shapes in every mode: which runtime each
// picks, with what padding and step time.
func (e *graphSetup) modeShapes(b hardware.Batch, batch, ctx int) []modeShape {
	shapes := []modeShape{
		{name: fmt.Sprintf("%d decodes (this step)", batch), batch: b},
		{name: "3 decodes", batch: hardware.DecodeBatch(3, ctx)},
		{name: fmt.Sprintf("%d decodes", min(e.seqs, 250)), batch: hardware.DecodeBatch(min(e.seqs, 250), ctx)},
		{name: fmt.Sprintf("%d decodes + 100-token prefill chunk", min(7, e.seqs-1)), batch: mixedBatch(min(7, e.seqs-1), ctx, 100)},
		{name: fmt.Sprintf("%d decodes + 512-token prefill chunk", min(16, e.seqs-1)), batch: mixedBatch(min(16, e.seqs-1), ctx, 512)},
	}
	for i := range shapes {
		for _, m := range cudagraph.Modes() {
			shapes[i].runs = append(shapes[i].runs, e.run(m, shapes[i].batch))
		}
	}
	return shapes
}

// The article's figures: typed into its simulator, for no stated model or
// GPU (Part 14 §3.3).
const articleEagerMS, articleReplayMS = 0.85, 0.04

func (r graphsRun) kernels() int { return len(r.eager.cost.Kernels) }

func (r graphsRun) perLayer() int {
	if r.e.tp > 1 {
		return 12
	}
	return 10
}

// setup names the model and GPUs, e.g. "Llama-3.1-8B on NVIDIA H100 SXM5 80GB".
func (r graphsRun) setup() string {
	e := r.e
	if e.tp > 1 {
		return fmt.Sprintf("%s on %d× %s", e.model.Name, e.tp, e.gpu.Name)
	}
	return fmt.Sprintf("%s on %s", e.model.Name, e.gpu.Name)
}

func (r graphsRun) perUS() float64 { return 1e6 * r.e.perLaunch }

// Dispatch CPU times of the step, in ms.
func (r graphsRun) eagerMS() float64 { return 1e3 * r.eager.plan.CPU }
func (r graphsRun) fullMS() float64  { return 1e3 * r.full.plan.CPU }
func (r graphsRun) pwMS() float64    { return 1e3 * r.piecewise.plan.CPU }

func (r graphsRun) within() int {
	n := 0
	for _, c := range r.validation {
		if c.Within() {
			n++
		}
	}
	return n
}

func (r graphsRun) metrics() []lessons.Metric {
	e := r.e
	return []lessons.Metric{
		{Key: "dispatch_ms_eager", Label: "CPU dispatch, eager (NONE)", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(r.eagerMS())},
		{Key: "dispatch_ms_graph", Label: "CPU dispatch, full graph replay", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(r.fullMS())},
		{Key: "dispatch_ms_piecewise", Label: "CPU dispatch, piecewise graphs", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(r.pwMS())},
		{Key: "step_ms_eager", Label: "Step time, eager", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1e3 * r.eager.cost.Total)},
		{Key: "step_ms_graph", Label: "Step time, full graph", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1e3 * r.full.cost.Total)},
		{Key: "step_ms_piecewise", Label: "Step time, piecewise", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1e3 * r.piecewise.cost.Total)},
		{Key: "step_ms_mode", Label: "Step time in the chosen mode (" + e.mode.String() + ")", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1e3 * r.chosen.cost.Total)},
		{Key: "gpu_ms", Label: "GPU work of the step, unpadded", Unit: "ms", Value: kit.Round4(1e3 * r.gpuWork.seconds)},
		{Key: "gpu_idle_ms_eager", Label: "GPU waiting for launches, eager", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1e3 * r.eager.cost.Idle)},
		{Key: "padded_tokens", Label: "Tokens the GPU computes in the chosen mode (padded)", Unit: "tokens", Value: float64(r.chosen.cost.PaddedTokens)},
		{Key: "kernels_per_step", Label: "Kernels per step", Unit: "kernels", Value: float64(r.kernels())},
		{Key: "kernels_shorter_than_launch", Label: "Kernels whose GPU time is below one eager launch", Unit: "kernels", Value: float64(r.short)},
		{Key: "dispatch_ratio", Label: "Eager dispatch ÷ graph replay", Unit: "×", Value: kit.Round2(r.eager.plan.CPU / r.full.plan.CPU)},
		{Key: "speedup_graph", Label: "Step time eager ÷ full graph", Unit: "×", Value: kit.Round4(r.eager.cost.Total / r.full.cost.Total)},
		{Key: "dispatch_matters_below_batch", Label: "Smallest captured batch where eager is within 2% of the graph (0: none)", Unit: "sequences", Value: float64(r.crossover)},
		{Key: "capture_graphs", Label: "Graphs captured at start-up", Unit: "graphs", Value: float64(r.capture.FullGraphs + r.capture.PiecewiseGraphs)},
		{Key: "capture_s", Label: "Capture time (published rate)", Unit: "s", Better: lessons.LowerIsBetter, Value: kit.Round2(r.capture.Seconds)},
		{Key: "capture_gib", Label: "Graph memory (published rate)", Unit: "GiB", Better: lessons.LowerIsBetter, Value: kit.Round2(r.capture.Bytes / (1 << 30))},
	}
}

func (r graphsRun) claims() []lessons.Claim {
	nk, L := r.kernels(), r.e.model.Layers
	cppDispatch := float64(nk) * hardware.PerLaunchCPP
	return []lessons.Claim{{
		What:    "CPU dispatch of one eager step",
		Article: fmt.Sprintf("~%.2f ms per step (model and GPU not stated)", articleEagerMS),
		Model:   fmt.Sprintf("%.2f ms: %d kernels × %.4g µs for %s (%.2f ms with C++ launches at %.0f µs)", r.eagerMS(), nk, r.perUS(), r.setup(), 1e3*cppDispatch, 1e6*hardware.PerLaunchCPP),
		Why: fmt.Sprintf("The article types its figure in. Spread over this step's %d kernels, 0.85 ms is %.1f µs a kernel, below even a C++ cudaLaunchKernel (4–6 µs [PEGA-3]); "+
			"an empty launch from Python costs 20.5 µs [NUMBA-3003], an eager PyTorch op about 24 µs (fitted to vLLM's and gpt-fast's eager runs, docs/VALIDATION.md), and plain PyTorch issues several ops per fused kernel.", nk, 850/float64(nk)),
	}, {
		What:    "CPU cost of a graph replay",
		Article: fmt.Sprintf("~%.2f ms per step, called piecewise", articleReplayMS),
		Model:   fmt.Sprintf("%.2f ms for one full graph; %.2f ms for piecewise (%d pieces and %d eager attention kernels)", r.fullMS(), r.pwMS(), cudagraph.Pieces(r.eager.cost.Kernels), 2*L),
		Why: "The full-graph figure is vLLM's measured model_execution_launch with graphs on, 0.07–0.09 ms [VIDUR-CPU], input copy included. " +
			"A piecewise step is not one replay: vLLM replays the L+1 pieces between attention ops and launches attention eagerly, so its CPU cost grows with the layers.",
	}, {
		What:    "Graphs cut CPU dispatch 20×",
		Article: fmt.Sprintf("20× (%.2f / %.2f ms = %.4g)", articleEagerMS, articleReplayMS, articleEagerMS/articleReplayMS),
		Model: fmt.Sprintf("dispatch %.0f× (%.2f → %.2f ms), but the step only %.2f× (%.2f → %.2f ms) at batch %d",
			r.eager.plan.CPU/r.full.plan.CPU, r.eagerMS(), r.fullMS(), r.eager.cost.Total/r.full.cost.Total, 1e3*r.eager.cost.Total, 1e3*r.full.cost.Total, r.batch),
		Why: fmt.Sprintf("A step takes the later of the CPU's last launch and the GPU's last kernel. Graphs remove launches, not GPU work (%.2f ms here), "+
			"so they pay off only where kernels are shorter than their launches: small batches, small or tensor-parallel models, fast GPUs.", 1e3*r.gpuWork.seconds),
	}}
}

// layerTable lists layer 0's kernels against the eager launch cost.
func (r graphsRun) layerTable() *scene.Table {
	tbl := &scene.Table{Columns: []string{"kernel (layer 0)", "kind", "GPU time", "eager launch", "shorter than its launch?"}}
	for _, k := range r.eager.cost.Kernels {
		if k.Layer != 0 {
			continue
		}
		yes := "no"
		if k.GPUTime < r.e.perLaunch {
			yes = "yes"
		}
		tbl.Rows = append(tbl.Rows, []string{k.Name, k.Kind.String(), fmt.Sprintf("%.1f µs", 1e6*k.GPUTime), fmt.Sprintf("%.1f µs", r.perUS()), yes})
	}
	return tbl
}

// sweepChart plots what each mode adds to the GPU's own work (step time
// minus the unpadded kernels), on a log axis: the step times themselves
// differ by under 2% beyond the crossover, so on a step-time axis four of
// five lines lay on one another.
func (r graphsRun) sweepChart() *scene.Chart {
	gpuFirst, gpuLast := 0.0, 0.0
	if n := len(r.sweep); n > 0 {
		gpuFirst, gpuLast = r.sweep[0].gpu, r.sweep[n-1].gpu
	}
	sw := &scene.Chart{Type: scene.Line, XLabel: "decode batch", XUnit: "sequences", YLabel: "step time − GPU work", YUnit: "ms", XLog: true, YLog: true,
		Note: fmt.Sprintf("What each mode adds to the GPU's own kernels (%.1f ms at the smallest batch, %.1f ms at the largest): as the batch grows, eager launches hide behind longer kernels and the eager curve comes down onto the graphs'.",
			1e3*gpuFirst, 1e3*gpuLast)}
	sEager := scene.Series{Name: fmt.Sprintf("NONE: eager, %.4g µs per launch", r.perUS())}
	sPW := scene.Series{Name: "PIECEWISE"}
	sFull := scene.Series{Name: "FULL (= FULL_AND_PIECEWISE for decode)"}
	sCPP := scene.Series{Name: fmt.Sprintf("NONE from C++, %.0f µs per launch", 1e6*hardware.PerLaunchCPP)}
	// over is what a mode adds, floored at a microsecond for the log axis
	over := func(t, gpu float64) float64 { return max(0.001, kit.Round4(1e3*(t-gpu))) }
	for _, p := range r.sweep {
		x := float64(p.batch)
		sEager.X, sEager.Y = append(sEager.X, x), append(sEager.Y, over(p.eager, p.gpu))
		sPW.X, sPW.Y = append(sPW.X, x), append(sPW.Y, over(p.piecewise, p.gpu))
		sFull.X, sFull.Y = append(sFull.X, x), append(sFull.Y, over(p.full, p.gpu))
		if r.e.perLaunch != hardware.PerLaunchCPP {
			sCPP.X, sCPP.Y = append(sCPP.X, x), append(sCPP.Y, over(p.cpp, p.gpu))
		}
	}
	sw.Series = []scene.Series{sEager, sPW, sFull}
	if len(sCPP.X) > 0 {
		sw.Series = append(sw.Series, sCPP)
	}
	return sw
}

// paddingScenes are the padding chart, the padding cases as cards and the
// capture cost; notes are the cases as narration.
func (r graphsRun) paddingScenes() (scenes []scene.Scene, notes []string) {
	padChart := &scene.Chart{Type: scene.Bar, XLabel: "tokens in the batch", XUnit: "tokens", YLabel: "padding tokens computed for nothing", YUnit: "tokens",
		Note: "Each batch pads up to the next captured size: nothing at a captured size, the most just past one."}
	padS := scene.Series{Name: "padded − actual"}
	for i, p := range r.padTo {
		n := i + 1
		padS.X, padS.Y = append(padS.X, float64(n)), append(padS.Y, float64(p-n))
	}
	padChart.Series = []scene.Series{padS}
	padCards := []scene.Card{}
	for _, pc := range r.padding {
		label := fmt.Sprintf("%d tokens → %d", pc.n, pc.padded)
		note := fmt.Sprintf("%d → %d tokens (%s, %.1f µs more GPU work)", pc.n, pc.padded, runtimeName(pc.rt), 1e6*pc.extra)
		if pc.padded == pc.n {
			label = fmt.Sprintf("%d tokens: no padding", pc.n)
			note = fmt.Sprintf("%d %s: no padding (%s)", pc.n, kit.Plural(pc.n, "token", "tokens"), runtimeName(pc.rt))
		}
		if pc.thisBatch {
			label = "this batch, " + label
			note = "this batch, " + note
		}
		padCards = append(padCards, scene.Card{Label: label, Value: kit.Us(pc.extra), Unit: "µs extra GPU", Note: runtimeName(pc.rt)})
		notes = append(notes, note)
	}
	c := r.capture
	capCards := []scene.Card{
		{Label: "graphs captured (" + r.e.mode.String() + ")", Value: float64(c.FullGraphs + c.PiecewiseGraphs), Note: fmt.Sprintf("%d full + %d piecewise", c.FullGraphs, c.PiecewiseGraphs)},
		{Label: "capture time", Value: kit.Round2(c.Seconds), Unit: "s", Note: "at the published 2 s per 53 shapes"},
		{Label: "graph memory", Value: kit.Round2(c.Bytes / (1 << 30)), Unit: "GiB", Note: "at the published 0.45 GiB per 53 shapes"},
		{Label: "KV cache given up", Value: float64(r.captureKV), Unit: "tokens", Note: "graph memory ÷ KV bytes per token"},
	}
	pad := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "padding", Title: "Padding to the next captured size", Chart: padChart})
	for _, pc := range r.padding {
		if pc.padded > pc.n && pc.n <= len(padS.X) {
			pad.Marks = append(pad.Marks, kit.MarkRef("point:"+padS.Name+":"+strconv.Itoa(pc.n-1), fmt.Sprintf("%d → %d tokens", pc.n, pc.padded)))
		}
	}
	return []scene.Scene{pad,
		{Kind: scene.KindCards, ID: "padcards", Title: "Padding cost at this context", Cards: padCards},
		{Kind: scene.KindCards, ID: "capture", Title: "Capture cost (vLLM log: 53 shapes, 2 s, 0.45 GiB)", Cards: capCards}}, notes
}

// modeTable shows which runtime each mode picks for each shape.
func (r graphsRun) modeTable() *scene.Table {
	tbl := &scene.Table{Columns: []string{"batch"}}
	for _, m := range cudagraph.Modes() {
		tbl.Columns = append(tbl.Columns, m.String())
	}
	for _, sh := range r.shapes {
		row := []string{fmt.Sprintf("%s: %d tokens", sh.name, sh.batch.Tokens())}
		for _, x := range sh.runs {
			cell := fmt.Sprintf("%s, %.2f ms", runtimeName(x.plan.Runtime), 1e3*x.cost.Total)
			if x.plan.Padded > x.plan.Tokens {
				cell = fmt.Sprintf("%s ↑%d, %.2f ms", runtimeName(x.plan.Runtime), x.plan.Padded, 1e3*x.cost.Total)
			}
			row = append(row, cell)
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return tbl
}

func (r graphsRun) validationTable() *scene.Table {
	tbl := &scene.Table{Columns: []string{"what", "measured", "model", "error", "tolerance", "source"}}
	for _, c := range r.validation {
		tbl.Rows = append(tbl.Rows, []string{c.Name, fmt.Sprintf("%.3g %s", c.Measured, c.Unit), fmt.Sprintf("%.3g %s", c.Value, c.Unit),
			fmt.Sprintf("%+.1f%%", 100*c.Error), fmt.Sprintf("±%.0f%%", 100*c.Tolerance), "[" + c.Source + "]"})
	}
	return tbl
}

// zoomTo is where the slower of the compared runs finishes layer
// detailLayers−1: the zoomed timelines end there.
func (r graphsRun) zoomTo(rs ...run) float64 {
	w := 0.0
	for _, x := range rs {
		w = max(w, layerEnd(x, min(detailLayers, r.e.model.Layers)-1))
	}
	return w
}

// stepCards are the dispatch and step times of the named runs.
func stepCards(names []string, rs ...run) scene.Scene {
	var cs []scene.Card
	for i, x := range rs {
		cs = append(cs,
			scene.Card{Label: names[i] + ": CPU dispatch", Value: kit.Round4(1e3 * x.plan.CPU), Unit: "ms"},
			scene.Card{Label: names[i] + ": step", Value: kit.Round4(1e3 * x.cost.Total), Unit: "ms", Note: fmt.Sprintf("GPU waits %.3f ms", 1e3*x.cost.Idle)})
	}
	return scene.Scene{Kind: scene.KindCards, ID: "cards", Title: "This step", Cards: cs}
}

// layerScene lays layer 0's kernels back to back, as the GPU would run
// them with nothing to wait for, against one eager launch: most kernels
// are shorter than the launch. It marks the launch.
func (r graphsRun) layerScene() (scene.Scene, string) {
	gpu := scene.Lane{Label: "GPU · layer 0", Key: "layer0"}
	at := 0.0
	for _, k := range r.eager.cost.Kernels {
		if k.Layer != 0 {
			continue
		}
		gpu.Bars = append(gpu.Bars, scene.Span{Start: kit.Round4(1e6 * at), End: kit.Round4(1e6 * (at + k.GPUTime)), Label: k.Name, Class: kernelClass(k)})
		at += k.GPUTime
	}
	launch := scene.Lane{Label: "CPU · one launch", Key: "launch", Bars: []scene.Span{{Start: 0, End: kit.Round4(r.perUS()), Label: "launch", Class: "cpu"}}}
	ref := kit.SpanRef("launch", 0)
	tl := &scene.Timeline{Unit: "µs", Lanes: []scene.Lane{gpu, launch}}
	return kit.MainScene(scene.Scene{Kind: scene.KindTimeline, ID: "layer", Title: "Layer 0's kernels back to back on the GPU, against one eager launch (µs)", Gantt: tl},
		kit.MarkRef(ref, fmt.Sprintf("one launch: %.4g µs", r.perUS()))), ref
}

// pair draws two runs in one timeline, zoomed on the first layers.
func (r graphsRun) pair(title, nameA, keyA, nameB, keyB string, a, b run, markA bool) scene.Scene {
	return r.stepTimeline(title, []string{nameA, nameB}, []string{keyA, keyB}, []run{a, b}, []bool{markA, false})
}

func (r graphsRun) stepFormula() scene.Scene {
	nk := r.kernels()
	return scene.Scene{Kind: scene.KindFormula, ID: "formula", Title: "When dispatch dominates", Formula: &scene.Formula{
		Expr: "t_step = max(CPU end, GPU end); kernel i starts at max(end of kernel i−1, launch_i)",
		Terms: []scene.Term{
			{Symbol: "N", Meaning: "kernels in the step", Value: strconv.Itoa(nk)},
			{Symbol: "t_launch", Meaning: "CPU per eager kernel", Value: fmt.Sprintf("%.4g µs", r.perUS())},
			{Symbol: "N · t_launch", Meaning: "eager CPU dispatch", Value: fmt.Sprintf("%.3f ms", r.eagerMS())},
			{Symbol: "GPU work", Meaning: "sum of kernel times", Value: fmt.Sprintf("%.3f ms", 1e3*r.gpuWork.seconds)},
		},
		Result: fmt.Sprintf("eager step %.3f ms; %d of %d kernels are shorter than their launch", 1e3*r.eager.cost.Total, r.short, nk),
	}}
}

// gapText says whether the CPU keeps ahead of a piecewise layer: one
// piece and two eager kernels per layer against the layer's GPU work.
func (r graphsRun) gapText() string {
	pwLayerCPU := 3 * r.e.perLaunch
	pw := r.piecewise
	if pwLayerCPU > r.layerGPU {
		return fmt.Sprintf("Here a layer's GPU work is only %.1f µs but the CPU needs %.1f µs per layer (a piece and two eager kernels): the GPU waits at every attention, %.3f ms in all, and the step takes %.3f ms instead of %.3f ms with one full graph.",
			1e6*r.layerGPU, 1e6*pwLayerCPU, 1e3*pw.cost.Idle, 1e3*pw.cost.Total, 1e3*r.full.cost.Total)
	}
	return fmt.Sprintf("Here a layer's GPU work is %.1f µs and the CPU needs %.1f µs per layer (a piece and two eager kernels), so the CPU stays ahead and the GPU waits only %.3f ms in all.",
		1e6*r.layerGPU, 1e6*pwLayerCPU, 1e3*pw.cost.Idle)
}

// crossText says from which batch eager launches stop mattering.
func (r graphsRun) crossText() string {
	t := fmt.Sprintf("From batch %d on, eager launches cost less than 2%% over the graph: the GPU work per kernel has outgrown the launch.", r.crossover)
	switch r.crossover {
	case 0:
		last := 0
		if len(r.sweep) > 0 {
			last = r.sweep[len(r.sweep)-1].batch
		}
		t = fmt.Sprintf("Up to batch %d, the largest captured size within max_num_seqs (%s), eager launches never come within 2%% of the graph: the kernels stay shorter than their launches.", last, kit.Comma(r.e.seqs))
	case 1:
		t = "Even at batch 1 eager launches cost less than 2% over the graph: the GPU work per kernel already exceeds the launch."
	}
	if r.kvFit < r.e.seqs {
		t += fmt.Sprintf(" Beyond batch %d the KV cache at %s tokens of context would not fit; those points show the dispatch arithmetic alone.", r.kvFit, kit.Comma(r.context))
	}
	return t
}

func (r graphsRun) captureText() string {
	if r.e.mode == cudagraph.None {
		return "NONE captures nothing and pads nothing: it pays every launch instead."
	}
	c := r.capture
	return fmt.Sprintf("Capturing the %s graphs costs %d graphs, about %.1f s and %.2f GiB at start-up at the rate of a published vLLM log [VLLM-23739]; "+
		"since vLLM v0.21.0 that memory comes out of the KV cache (its profiler estimates it), before v0.21.0 out of the headroom.",
		r.e.mode, c.FullGraphs+c.PiecewiseGraphs, c.Seconds, c.Bytes/(1<<30))
}

func (r graphsRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	s.Steps = append(r.dispatchSteps(), r.graphSteps(s.Claims)...)
	kit.IndexCursors(s.Steps)
	s.Work = r.work()
	return s
}

// dispatchSteps are the first four steps: the kernels, eager, full graph
// and piecewise.
func (r graphsRun) dispatchSteps() []lessons.Step {
	e, nk, L := r.e, r.kernels(), r.e.model.Layers
	eager, full, pw := r.eager, r.full, r.piecewise
	regime := "The GPU work is longer than the launches on the whole, so only the stretches of short kernels wait."
	if eager.plan.CPU > r.gpuWork.seconds {
		regime = "The launches alone take longer than the GPU work: the CPU, not the GPU, sets the pace."
	}
	layer, launchRef := r.layerScene()
	launchText := fmt.Sprintf("the %.4g µs the CPU needs to launch one from Python", r.perUS())

	eagerTL := r.stepTimeline(fmt.Sprintf("Eager: CPU launches over GPU kernels, the first %d layers kernel by kernel (ms)", detailLayers),
		[]string{"eager"}, []string{"eager"}, []run{eager}, []bool{false})
	idleText := "the GPU sits idle"
	var eagerMentions []scene.Mention
	if ref, w, ok := r.longestIdle(eagerTL, "gpu-eager"); ok {
		eagerTL.Marks = append(eagerTL.Marks, kit.MarkRef(ref, fmt.Sprintf("GPU idle %.1f µs", w)))
		eagerMentions = append(eagerMentions, kit.Mention(idleText, "step", ref))
	}

	both := r.pair(fmt.Sprintf("Eager vs full graph: the first %d layers (ms)", detailLayers), "eager", "eager", "full graph", "full", eager, full, false)
	replayText := "replaying it is one call"
	var bothMentions []scene.Mention
	if i := firstBar(both.Gantt.Lanes[2], "replay"); i >= 0 {
		ref := kit.SpanRef("cpu-full", i)
		both.Marks = append(both.Marks, kit.MarkRef(ref, fmt.Sprintf("one replay: %.2f ms", r.fullMS())))
		bothMentions = append(bothMentions, kit.Mention(replayText, "step", ref))
	}

	pwTL := r.pair(fmt.Sprintf("Piecewise vs full graph: the first %d layers; eager launches highlighted (ms)", detailLayers), "piecewise", "piecewise", "full graph", "full", pw, full, true)
	eagerText := "launched eagerly between them"
	var pwMentions []scene.Mention
	if i := firstEagerAttention(pwTL.Gantt.Lanes[0]); i >= 0 {
		ref := kit.SpanRef("cpu-piecewise", i)
		pwTL.Marks = append(pwTL.Marks, kit.MarkRef(ref, "eager attention"))
		pwMentions = append(pwMentions, kit.Mention(eagerText, "step", ref))
	}
	return []lessons.Step{{
		Title: fmt.Sprintf("One decode step is %d kernels", nk),
		Narration: fmt.Sprintf("A decode step of %s runs %d layers of %d kernels each (norm, QKV projection, rotary, KV-cache write, attention, output projection, norm, gate/up, SiLU, down%s) plus embedding, final norm, lm_head and sampler: %d kernels. "+
			"At batch %d most are tiny: %d of them take less GPU time than %s.",
			r.setup(), L, r.perLayer(), tpText(e.tp), nk, r.batch, r.short, launchText),
		Scenes:   []scene.Scene{layer, r.stepFormula(), {Kind: scene.KindTable, ID: "kernels", Title: "The kernels of one layer", Table: r.layerTable()}},
		Mentions: []scene.Mention{kit.Mention(launchText, "layer", launchRef)},
	}, {
		Title: "Eager: the GPU waits for the CPU",
		Narration: fmt.Sprintf("Without graphs (vLLM's NONE mode) the CPU launches the %d kernels one after another, %.4g µs each: %.3f ms of CPU per step. A kernel cannot start before it is launched, so "+
			"whenever a run of short kernels outpaces the launches %s: %.3f ms in this step, which takes %.3f ms against %.3f ms of GPU work. %s",
			nk, r.perUS(), r.eagerMS(), idleText, 1e3*eager.cost.Idle, 1e3*eager.cost.Total, 1e3*r.gpuWork.seconds, regime),
		Scenes:   []scene.Scene{eagerTL, stepCards([]string{"eager"}, eager)},
		Mentions: eagerMentions,
	}, {
		Quiz: lessons.NumberQuiz(fmt.Sprintf("Now replay the whole step as one captured CUDA graph: %.2f ms of CPU instead of %.2f ms. How long does the step take, in ms?", r.fullMS(), r.eagerMS()),
			kit.Round2(1e3*full.cost.Total), 0.1, fmt.Sprintf("The GPU work (%.2f ms) does not shrink; the graph only removes the wait for launches.", 1e3*r.gpuWork.seconds)),
		Title: "Full graph replay: one launch",
		Narration: fmt.Sprintf("A CUDA graph records the step's kernels once; %s: %.2f ms of CPU, measured for vLLM [VIDUR-CPU], after which every kernel is queued on the GPU. "+
			"The step now takes %.3f ms, the GPU work plus the replay, against %.3f ms eager: %.2f× faster, although dispatch shrank %.0f×.",
			replayText, r.fullMS(), 1e3*full.cost.Total, 1e3*eager.cost.Total, eager.cost.Total/full.cost.Total, eager.plan.CPU/full.plan.CPU),
		Scenes:   []scene.Scene{both, stepCards([]string{"eager", "full graph"}, eager, full)},
		Mentions: bothMentions,
	}, {
		Title: "Piecewise graphs: attention launched eagerly",
		Narration: fmt.Sprintf("Attention's shapes change with every batch's context lengths, so vLLM's PIECEWISE mode captures only what lies between attention ops: %d pieces per step, with each layer's KV-cache write and attention %s. "+
			"That costs %.3f ms of CPU per step. %s", cudagraph.Pieces(eager.cost.Kernels), eagerText, r.pwMS(), r.gapText()),
		Scenes:   []scene.Scene{pwTL, stepCards([]string{"piecewise", "full graph"}, pw, full)},
		Mentions: pwMentions,
	}}
}

// padMentions links each padding note the chart marks to its bar.
func padMentions(pad scene.Scene, notes []string) []scene.Mention {
	var out []scene.Mention
	for _, m := range pad.Marks {
		for _, n := range notes {
			if strings.Contains(n, m.Label) {
				out = append(out, kit.Mention(m.Label, pad.ID, m.Ref))
				break
			}
		}
	}
	return out
}

// runtimeMark marks what the chosen runtime does in its timeline: the
// graph replay, an eager attention launch between pieces, or the longest
// idle stretch of an eager step.
func (r graphsRun) runtimeMark(sc scene.Scene, rt cudagraph.Runtime) (ref, label string, ok bool) {
	switch rt {
	case cudagraph.RunFull:
		if i := firstBar(sc.Gantt.Lanes[0], "replay"); i >= 0 {
			return kit.SpanRef("cpu-mode", i), "one graph replay", true
		}
	case cudagraph.RunPiecewise:
		if i := firstEagerAttention(sc.Gantt.Lanes[0]); i >= 0 {
			return kit.SpanRef("cpu-mode", i), "eager attention", true
		}
	default:
		if ref, w, ok := r.longestIdle(sc, "gpu-mode"); ok {
			return ref, fmt.Sprintf("GPU idle %.1f µs", w), true
		}
	}
	return "", "", false
}

// sweepScene is the batch sweep with the crossover marked on the eager
// curve.
func (r graphsRun) sweepScene() (scene.Scene, []scene.Mention) {
	sc := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "sweep", Title: fmt.Sprintf("What dispatch adds to the GPU's work, by decode batch, %s, %s tokens of context", r.setup(), kit.Comma(r.context)), Chart: r.sweepChart()})
	if r.crossover <= 1 {
		return sc, nil
	}
	eager := sc.Chart.Series[0]
	for i, x := range eager.X {
		if int(x) == r.crossover {
			ref := "point:" + eager.Name + ":" + strconv.Itoa(i)
			sc.Marks = []scene.Mark{kit.MarkRef(ref, fmt.Sprintf("batch %d: eager within 2%%", r.crossover))}
			return sc, []scene.Mention{kit.Mention(fmt.Sprintf("From batch %d on", r.crossover), "sweep", ref)}
		}
	}
	return sc, nil
}

// longestIdle finds the longest idle bar of a lane within the timeline's
// zoom window: its reference and length in µs.
func (r graphsRun) longestIdle(sc scene.Scene, key string) (string, float64, bool) {
	for _, l := range sc.Gantt.Lanes {
		if l.Key != key {
			continue
		}
		best, w := -1, 0.0
		for i, b := range l.Bars {
			if b.Class == "idle" && b.End <= sc.Gantt.Zoom.End && b.End-b.Start > w {
				best, w = i, b.End-b.Start
			}
		}
		if best >= 0 {
			return kit.SpanRef(key, best), 1000 * w, true
		}
	}
	return "", 0, false
}

// firstEagerAttention is the index of a CPU lane's first eager launch of
// an attention kernel, or -1.
func firstEagerAttention(l scene.Lane) int {
	for i, b := range l.Bars {
		if b.Class == "cpu" && strings.HasSuffix(b.Label, "attention") {
			return i
		}
	}
	return -1
}

// graphSteps are the last four steps: the chosen mode, the batch sweep,
// padding and capture, and the article's claims.
func (r graphsRun) graphSteps(claims []lessons.Claim) []lessons.Step {
	e, chosen := r.e, r.chosen
	maxCapture := r.sizes[len(r.sizes)-1]
	mode := strings.ToLower(e.mode.String())
	chosenTL := r.stepTimeline(fmt.Sprintf("%s at batch %d: runs as %s (ms)", e.mode, r.batch, runtimeName(chosen.plan.Runtime)),
		[]string{mode}, []string{"mode"}, []run{chosen}, []bool{chosen.plan.Runtime == cudagraph.RunPiecewise})
	runsText := "runs " + runtimePhrase(chosen.plan)
	var chosenMentions []scene.Mention
	if ref, label, ok := r.runtimeMark(chosenTL, chosen.plan.Runtime); ok {
		chosenTL.Marks = append(chosenTL.Marks, kit.MarkRef(ref, label))
		chosenMentions = append(chosenMentions, kit.Mention(runsText, "step", ref))
	}
	sweep, sweepMentions := r.sweepScene()
	padScenes, padNotes := r.paddingScenes()
	return []lessons.Step{{
		Title: fmt.Sprintf("%s: which graph runs when", e.mode),
		Narration: fmt.Sprintf("vLLM's dispatcher pads a batch's tokens to the next captured size and picks a graph: a full graph for a decode-only batch within max_num_seqs (under FULL, FULL_DECODE_ONLY and FULL_AND_PIECEWISE), "+
			"a piecewise graph for mixed batches (PIECEWISE, FULL_AND_PIECEWISE), eager above the largest captured size (%d tokens) or without graphs. Your step in %s %s and takes %.3f ms.",
			maxCapture, e.mode, runsText, 1e3*chosen.cost.Total),
		Scenes:   []scene.Scene{chosenTL, {Kind: scene.KindTable, ID: "modes", Title: "Runtime per mode: graph kind, ↑ padded tokens, step time", Table: r.modeTable()}},
		Mentions: chosenMentions,
	}, {
		Title: "Where dispatch stops mattering",
		Narration: fmt.Sprintf("Growing the batch makes every GEMM and attention kernel longer while the launch cost stays put. Once the GPU time per kernel exceeds the launch, the CPU runs ahead and eager costs nothing extra. %s "+
			"With launches from a C++ engine (%.0f µs) the crossover comes much earlier.", r.crossText(), 1e6*hardware.PerLaunchCPP),
		Scenes:   []scene.Scene{sweep},
		Mentions: sweepMentions,
	}, {
		Title: "Capture sizes and padding",
		Narration: fmt.Sprintf("Graphs have fixed shapes, so vLLM captures %d sizes (1, 2, 4, every 8 up to 248, every 16 up to %d, that is min(2 × max_num_seqs (%s), 512)) and pads each batch to the next one; the padded tokens run through every linear layer for nothing.%s "+
			"In %s: %s. %s",
			len(r.sizes), maxCapture, kit.Comma(e.seqs), kit.VLLMBatchNote(e.gpu, e.seqs, e.budget), e.mode, strings.Join(padNotes, "; "), r.captureText()),
		Scenes:   padScenes,
		Mentions: padMentions(padScenes[0], padNotes),
	}, {
		Title: "Article claim vs this model",
		Narration: fmt.Sprintf("The article's 0.85 ms, 0.04 ms and 20× are typed into its simulator. Here they are computed for %s at batch %d, and the dispatch model is checked against %d published measurements: %d within tolerance.",
			r.setup(), r.batch, len(r.validation), r.within()),
		Scenes: []scene.Scene{kit.ClaimsTable(claims), {Kind: scene.KindTable, ID: "validation", Title: "Dispatch model vs measurements (docs/VALIDATION.md)", Table: r.validationTable()}},
	}}
}

// graphValidation runs core/cudagraph's validation cases once per process:
// they do not depend on the knobs.
var graphValidation = sync.OnceValue(cudagraph.Validate)

// runtimePhrase says how a step runs, e.g. "as one full graph of 256
// tokens (250 padded)".
func runtimePhrase(p cudagraph.Plan) string {
	pad := fmt.Sprintf("%d %s", p.Padded, kit.Plural(p.Padded, "token", "tokens"))
	if p.Padded > p.Tokens {
		pad = fmt.Sprintf("%d tokens (%d padded to the captured size)", p.Padded, p.Tokens)
	}
	switch p.Runtime {
	case cudagraph.RunFull:
		return "as one full graph of " + pad
	case cudagraph.RunPiecewise:
		return "as piecewise graphs of " + pad
	}
	return "eagerly, " + pad + " launched kernel by kernel"
}

func tpText(tp int) string {
	if tp > 1 {
		return fmt.Sprintf(", and two all-reduces across the %d GPUs", tp)
	}
	return ""
}

func mixedBatch(decodes, ctx, chunk int) hardware.Batch {
	b := hardware.DecodeBatch(decodes, ctx)
	b.Seqs = append(b.Seqs, hardware.Chunk{NewTokens: chunk})
	return b
}

func dedupSorted(xs []int) []int {
	var out []int
	for _, x := range xs {
		if len(out) == 0 || out[len(out)-1] < x {
			out = append(out, x)
		}
	}
	return out
}
