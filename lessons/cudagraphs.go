package lessons

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/scene"
)

// cuda-graphs: Part 14 §3.3. One decode step is hundreds of small kernels;
// launched one by one from Python the CPU can fall behind the GPU. A
// captured CUDA graph replays them with one launch. The lesson lays the CPU
// launches against the GPU kernels, sweeps the batch to find where dispatch
// stops mattering, and shows what graphs cost: padding to capture sizes,
// eager attention between piecewise graphs, capture time and memory.
var cudaGraphs = &Lesson{
	Slug:  "cuda-graphs",
	Title: "CUDA graphs: when the CPU, not the GPU, limits decode",
	Part:  "Part 14 §3.3",
	Summary: "Launch every kernel from Python or replay one captured graph: the CPU and GPU timelines of a decode step, the batch where dispatch stops mattering, " +
		"padding to capture sizes and piecewise graphs' eager attention.",
	Engine: "vLLM v1 CUDA graphs (CUDAGraphMode, default capture sizes, padding, CudagraphDispatcher) in core/cudagraph; kernels and their GPU times from core/hardware's step-time model. " +
		"Simplified: one CUDA stream, no speculative decoding, host work (scheduling, sampling bookkeeping) left out of the step.",
	Params: []Param{
		gpuParam, modelParam,
		{Key: "batch", Label: "Decode batch", Unit: "sequences", Help: "Sequences decoding one token each in the step.", Kind: Int, Default: 1, Min: 1, Max: 512, Step: 1},
		{Key: "context", Label: "Context per sequence", Unit: "tokens", Help: "Tokens each sequence already holds in the KV cache.", Kind: Int, Default: 1024, Min: 1, Max: 131072, Step: 1},
		{Key: "mode", Label: "Graph mode", Help: "vLLM's cudagraph_mode; FULL_AND_PIECEWISE is the default.", Kind: Choice, Choices: modeKeys()},
		{Key: "tp", Label: "Tensor-parallel GPUs", Unit: "GPUs", Help: "Adds two all-reduces per layer; each GPU holds 1/tp of the weights.", Kind: Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "per_launch_us", Label: "CPU cost per eager kernel", Unit: "µs", Help: "Framework op plus cudaLaunchKernel: about 20 µs from Python, 4–6 µs from C++ (profiles.md §3.1).",
			Kind: Float, Default: hardware.PerLaunchPython * 1e6, Min: 1, Max: 200, Step: 0.5},
		{Key: "max_num_seqs", Label: "max_num_seqs", Unit: "sequences", Help: "vLLM's running-batch limit; it sets the largest capture size, min(2·max_num_seqs, 512).", Kind: Int, Default: 256, Min: 1, Max: 1024, Step: 1},
	},
	Check: checkCUDAGraphs,
	Build: buildCUDAGraphs,
}

func init() { register(cudaGraphs) }

// modeKeys lists the graph modes for the knob, vLLM's default first.
func modeKeys() []string {
	var out []string
	for _, m := range cudagraph.Modes() {
		out = append(out, m.Key())
	}
	return out
}

// graphTokenBudget is max_num_batched_tokens: vLLM's API-server default on
// a GPU of at least 70 GiB (engines.md §2.1). It only caps the capture sizes
// when it is below 512.
const graphTokenBudget = 8192

// graphSetup is the priced engine of the lesson.
type graphSetup struct {
	gpu       hardware.GPU
	model     hardware.Model
	tp        int
	step      hardware.StepModel
	cap       hardware.Capacity
	perLaunch float64
	seqs      int
	mode      cudagraph.Mode
}

func newGraphSetup(v Values) (*graphSetup, error) {
	g, m, err := chosenHardware(v)
	if err != nil {
		return nil, err
	}
	tp := v.Int("tp")
	sm, err := hardware.NewStepModel(g, m, tp, hardware.BF16)
	if err != nil {
		return nil, tpRelation(m, tp)
	}
	// The lesson times the forward pass alone: host work (scheduling,
	// output processing) overlaps it in vLLM v1 and is another lesson's.
	sm.Host = hardware.HostOverhead{}
	c, err := hardware.KVCapacity(g, m, 0.9, 16, tp, sm.KVBytesPerElement, sm.WeightBytesPerParam)
	if err != nil {
		return nil, Relation("model", m.ID, fmt.Sprintf("a model whose BF16 weights fit on %d× %s (%v)", tp, g.Name, err))
	}
	mode, err := cudagraph.ParseMode(v.Choice("mode"))
	if err != nil {
		return nil, err
	}
	return &graphSetup{gpu: g, model: m, tp: tp, step: sm, cap: c, perLaunch: v.Float("per_launch_us") * 1e-6, seqs: v.Int("max_num_seqs"), mode: mode}, nil
}

func checkCUDAGraphs(v Values) error {
	e, err := newGraphSetup(v)
	if err != nil {
		return err
	}
	b, ctx := v.Int("batch"), v.Int("context")
	if b > e.seqs {
		return Relation("batch", strconv.Itoa(b), fmt.Sprintf("at most max_num_seqs (%d): vLLM runs no more sequences at once", e.seqs))
	}
	if need := int64(b) * int64(ctx+1); need > e.cap.Tokens {
		return Relation("context", strconv.Itoa(ctx), fmt.Sprintf("a context whose KV cache for %d sequences fits the %s tokens %s leaves on %d× %s", b, comma(int(e.cap.Tokens)), e.model.Name, e.tp, e.gpu.Name))
	}
	return nil
}

// dispatcher returns vLLM's dispatcher for a mode with the lesson's launch
// costs: eager kernels and further pieces at per_launch_us.
func (e *graphSetup) dispatcher(mode cudagraph.Mode) cudagraph.Dispatcher {
	d := cudagraph.New(mode, e.seqs, graphTokenBudget)
	d.PerLaunch = e.perLaunch
	d.PieceLaunch = e.perLaunch
	return d
}

// run is one priced step in one mode.
type run struct {
	cost hardware.StepCost
	plan cudagraph.Plan
}

func (e *graphSetup) run(mode cudagraph.Mode, b hardware.Batch) run {
	d := e.dispatcher(mode)
	sm := e.step
	sm.Dispatcher = d
	c := sm.Step(b)
	return run{cost: c, plan: d.Plan(b, c.Kernels)}
}

// gpuOnly is the step's GPU work at its real token count, with nothing to
// wait for.
func (e *graphSetup) gpuOnly(b hardware.Batch) float64 {
	sm := e.step
	sm.Dispatcher = hardware.Replay{}
	c := sm.Step(b)
	return c.GPU + c.Comm
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
// of kernels. The head, the first `detail` layers and the tail are drawn
// kernel by kernel; later layers as one bar per layer. Bars ending after
// window (seconds, 0: no limit) are clipped to it.
func ganttLanes(name string, r run, detail int, window float64, eagerMark bool) []scene.Lane {
	ks := r.cost.Kernels
	aggregated := func(k hardware.Kernel) bool { return k.Layer >= detail }
	clip := func(lane *scene.Lane, s scene.Span) {
		if window > 0 {
			w := msr(window)
			if s.Start >= w {
				return
			}
			s.End = min(s.End, w)
		}
		lane.Bars = append(lane.Bars, s)
	}
	cpu := scene.Lane{Label: "CPU · " + name}
	for i := 0; i < len(r.plan.Launches); {
		l := r.plan.Launches[i]
		first := ks[l.First]
		if l.Kind == cudagraph.GraphReplay || !aggregated(first) {
			label := first.Name
			switch l.Kind {
			case cudagraph.GraphReplay:
				label = fmt.Sprintf("replay graph (%d kernels)", l.Last-l.First+1)
			case cudagraph.PieceReplay:
				label = fmt.Sprintf("replay piece (%d kernels)", l.Last-l.First+1)
			}
			clip(&cpu, scene.Span{Start: msr(l.Start), End: msr(l.End), Label: label, Class: "cpu", Highlight: eagerMark && l.Kind == cudagraph.KernelLaunch})
			i++
			continue
		}
		j, pieces, eager := i, 0, 0
		for ; j < len(r.plan.Launches) && r.plan.Launches[j].Kind != cudagraph.GraphReplay && ks[r.plan.Launches[j].First].Layer == first.Layer; j++ {
			if r.plan.Launches[j].Kind == cudagraph.PieceReplay {
				pieces++
			} else {
				eager++
			}
		}
		label := fmt.Sprintf("layer %d: %d launches", first.Layer, eager)
		if pieces > 0 {
			label = fmt.Sprintf("layer %d: %d piece + %d eager", first.Layer, pieces, eager)
		}
		clip(&cpu, scene.Span{Start: msr(l.Start), End: msr(r.plan.Launches[j-1].End), Label: label, Class: "cpu"})
		i = j
	}
	gpu := scene.Lane{Label: "GPU · " + name}
	prevEnd := 0.0
	for i := 0; i < len(ks); {
		k := ks[i]
		j := i
		if aggregated(k) {
			for j+1 < len(ks) && ks[j+1].Layer == k.Layer {
				j++
			}
		}
		start, end := k.Start, ks[j].Start+ks[j].GPUTime
		if start-prevEnd > 1e-8 {
			clip(&gpu, scene.Span{Start: msr(prevEnd), End: msr(start), Label: "waits for a launch", Class: "idle"})
		}
		label := k.Name
		if j > i {
			busy := 0.0
			for _, x := range ks[i : j+1] {
				busy += x.GPUTime
			}
			label = fmt.Sprintf("layer %d", k.Layer)
			if idle := end - start - busy; idle > 1e-7 {
				label += fmt.Sprintf(" (%.1f µs waiting)", 1e6*idle)
			}
		}
		clip(&gpu, scene.Span{Start: msr(start), End: msr(end), Label: label, Class: "gpu", Highlight: eagerMark && j == i && cudagraph.Splitting(k)})
		prevEnd = end
		i = j + 1
	}
	return []scene.Lane{cpu, gpu}
}

// layerEnd is the end of the last GPU kernel of layer l.
func layerEnd(r run, l int) float64 {
	end := 0.0
	for _, k := range r.cost.Kernels {
		if k.Layer == l {
			end = k.Start + k.GPUTime
		}
	}
	return end
}

func timelineScene(id, title string, lanes ...[]scene.Lane) scene.Scene {
	tl := &scene.Timeline{Unit: "ms"}
	for _, l := range lanes {
		tl.Lanes = append(tl.Lanes, l...)
	}
	return scene.Scene{Kind: scene.KindTimeline, ID: id, Title: title, Gantt: tl}
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

func buildCUDAGraphs(v Values) (*Script, error) {
	e, err := newGraphSetup(v)
	if err != nil {
		return nil, err
	}
	batch, ctx := v.Int("batch"), v.Int("context")
	b := hardware.DecodeBatch(batch, ctx)
	eager := e.run(cudagraph.None, b)
	full := e.run(cudagraph.Full, b)
	pw := e.run(cudagraph.Piecewise, b)
	chosen := e.run(e.mode, b)
	ks := eager.cost.Kernels
	nk := len(ks)
	L := e.model.Layers
	perLayer := 10
	if e.tp > 1 {
		perLayer = 12
	}
	gpuWork := e.gpuOnly(b)
	perUS := 1e6 * e.perLaunch

	// Kernels whose GPU time is shorter than their launch.
	short := 0
	for _, k := range ks {
		if k.GPUTime < e.perLaunch {
			short++
		}
	}
	layerTable := &scene.Table{Columns: []string{"kernel (layer 0)", "kind", "GPU time", "eager launch", "shorter than its launch?"}}
	for _, k := range ks {
		if k.Layer != 0 {
			continue
		}
		yes := "no"
		if k.GPUTime < e.perLaunch {
			yes = "yes"
		}
		layerTable.Rows = append(layerTable.Rows, []string{k.Name, k.Kind.String(), fmt.Sprintf("%.1f µs", 1e6*k.GPUTime), fmt.Sprintf("%.1f µs", perUS), yes})
	}

	// Per-layer GPU time against the CPU time a piecewise layer needs: one
	// piece and two eager kernels.
	layerGPU := 0.0
	for _, k := range ks {
		if k.Layer == 0 {
			layerGPU += k.GPUTime
		}
	}
	pwLayerCPU := 3 * e.perLaunch

	// The sweep over decode batch sizes: every captured size up to
	// max_num_seqs, and below 64 the size after it, where padding jumps.
	d := e.dispatcher(cudagraph.FullAndPiecewise)
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
	xs = dedupSorted(xs)
	sw := &scene.Chart{Type: scene.Line, XLabel: "decode batch", XUnit: "sequences", YLabel: "step time", YUnit: "ms", XLog: true}
	sEager := scene.Series{Name: fmt.Sprintf("NONE: eager, %.4g µs per launch", perUS)}
	sPW := scene.Series{Name: "PIECEWISE"}
	sFull := scene.Series{Name: "FULL (= FULL_AND_PIECEWISE for decode)"}
	sGPU := scene.Series{Name: "GPU work alone, unpadded"}
	sCPP := scene.Series{Name: fmt.Sprintf("NONE from C++, %.0f µs per launch", 1e6*hardware.PerLaunchCPP)}
	cpp := *e
	cpp.perLaunch = hardware.PerLaunchCPP
	crossover := 0
	for _, n := range xs {
		bn := hardware.DecodeBatch(n, ctx)
		x := float64(n)
		te := e.run(cudagraph.None, bn).cost.Total
		tf := e.run(cudagraph.Full, bn).cost.Total
		sEager.X, sEager.Y = append(sEager.X, x), append(sEager.Y, ms(te))
		sPW.X, sPW.Y = append(sPW.X, x), append(sPW.Y, ms(e.run(cudagraph.Piecewise, bn).cost.Total))
		sFull.X, sFull.Y = append(sFull.X, x), append(sFull.Y, ms(tf))
		sGPU.X, sGPU.Y = append(sGPU.X, x), append(sGPU.Y, ms(e.gpuOnly(bn)))
		if e.perLaunch != hardware.PerLaunchCPP {
			sCPP.X, sCPP.Y = append(sCPP.X, x), append(sCPP.Y, ms(cpp.run(cudagraph.None, bn).cost.Total))
		}
		if _, ok := d.Pad(n); ok && crossover == 0 && slices.Contains(d.Sizes, n) && te <= 1.02*tf {
			crossover = n
		}
	}
	sw.Series = []scene.Series{sEager, sPW, sFull, sGPU}
	if len(sCPP.X) > 0 {
		sw.Series = append(sw.Series, sCPP)
	}
	kvFit := int(e.cap.Tokens / int64(ctx+1))

	// Padding: the waste for every token count up to the largest size, and
	// what it costs for the chosen context.
	padChart := &scene.Chart{Type: scene.Bar, XLabel: "tokens in the batch", XUnit: "tokens", YLabel: "padding tokens computed for nothing", YUnit: "tokens"}
	padS := scene.Series{Name: "padded − actual"}
	for n := 1; n <= d.MaxCaptureSize(); n++ {
		p, _ := d.Pad(n)
		padS.X, padS.Y = append(padS.X, float64(n)), append(padS.Y, float64(p-n))
	}
	padChart.Series = []scene.Series{padS}
	type padCase struct {
		n, padded int
		rt        cudagraph.Runtime
		extra     float64
	}
	padOf := func(n int) padCase {
		bn := e.tokenBatch(n, ctx)
		r := e.run(e.mode, bn)
		return padCase{n: n, padded: r.plan.Padded, rt: r.plan.Runtime, extra: r.cost.GPU + r.cost.Comm - e.gpuOnly(bn)}
	}
	padCards := []scene.Card{}
	var padNotes []string
	for i, n := range []int{250, 257, batch} {
		if i == 2 && (n == 250 || n == 257) {
			continue
		}
		pc := padOf(n)
		label := fmt.Sprintf("%d tokens → %d", pc.n, pc.padded)
		note := fmt.Sprintf("%d → %d tokens (%s, %.1f µs more GPU work)", pc.n, pc.padded, runtimeName(pc.rt), 1e6*pc.extra)
		if pc.padded == pc.n {
			label = fmt.Sprintf("%d tokens: no padding", pc.n)
			note = fmt.Sprintf("%d %s: no padding (%s)", pc.n, plural(pc.n, "token", "tokens"), runtimeName(pc.rt))
		}
		if i == 2 {
			label = "this batch, " + label
			note = "this batch, " + note
		}
		padCards = append(padCards, scene.Card{Label: label, Value: us(pc.extra), Unit: "µs extra GPU", Note: runtimeName(pc.rt)})
		padNotes = append(padNotes, note)
	}
	capCost := e.dispatcher(e.mode).Capture()
	capKV := 0
	if e.cap.BytesPerToken > 0 {
		capKV = int(capCost.Bytes / float64(e.cap.BytesPerToken))
	}
	capCards := []scene.Card{
		{Label: "graphs captured (" + e.mode.String() + ")", Value: float64(capCost.FullGraphs + capCost.PiecewiseGraphs), Note: fmt.Sprintf("%d full + %d piecewise", capCost.FullGraphs, capCost.PiecewiseGraphs)},
		{Label: "capture time", Value: round2(capCost.Seconds), Unit: "s", Note: "at the published 2 s per 53 shapes"},
		{Label: "graph memory", Value: round2(capCost.Bytes / (1 << 30)), Unit: "GiB", Note: "at the published 0.45 GiB per 53 shapes"},
		{Label: "KV cache given up", Value: float64(capKV), Unit: "tokens", Note: "graph memory ÷ KV bytes per token"},
	}

	// Which runtime each mode picks for a few batch shapes.
	shapes := []struct {
		name string
		b    hardware.Batch
	}{
		{fmt.Sprintf("%d decodes (this step)", batch), b},
		{"3 decodes", hardware.DecodeBatch(3, ctx)},
		{fmt.Sprintf("%d decodes", min(e.seqs, 250)), hardware.DecodeBatch(min(e.seqs, 250), ctx)},
		{fmt.Sprintf("%d decodes + 100-token prefill chunk", min(7, e.seqs-1)), mixedBatch(min(7, e.seqs-1), ctx, 100)},
		{fmt.Sprintf("%d decodes + 512-token prefill chunk", min(16, e.seqs-1)), mixedBatch(min(16, e.seqs-1), ctx, 512)},
	}
	modeTable := &scene.Table{Columns: []string{"batch"}}
	for _, m := range cudagraph.Modes() {
		modeTable.Columns = append(modeTable.Columns, m.String())
	}
	for _, sh := range shapes {
		row := []string{fmt.Sprintf("%s: %d tokens", sh.name, sh.b.Tokens())}
		for _, m := range cudagraph.Modes() {
			r := e.run(m, sh.b)
			cell := fmt.Sprintf("%s, %.2f ms", runtimeName(r.plan.Runtime), 1e3*r.cost.Total)
			if r.plan.Padded > r.plan.Tokens {
				cell = fmt.Sprintf("%s ↑%d, %.2f ms", runtimeName(r.plan.Runtime), r.plan.Padded, 1e3*r.cost.Total)
			}
			row = append(row, cell)
		}
		modeTable.Rows = append(modeTable.Rows, row)
	}

	val := graphValidation()
	valTable := &scene.Table{Columns: []string{"what", "measured", "model", "error", "tolerance", "source"}}
	within := 0
	for _, r := range val {
		if r.Within() {
			within++
		}
		valTable.Rows = append(valTable.Rows, []string{r.Name, fmt.Sprintf("%.3g %s", r.Measured, r.Unit), fmt.Sprintf("%.3g %s", r.Value, r.Unit),
			fmt.Sprintf("%+.1f%%", 100*r.Error), fmt.Sprintf("±%.0f%%", 100*r.Tolerance), "[" + r.Source + "]"})
	}

	// The article's figures: typed into its simulator, for no stated model
	// or GPU (Part 14 §3.3).
	const articleEagerMS, articleReplayMS = 0.85, 0.04
	cppDispatch := float64(nk) * hardware.PerLaunchCPP
	eagerMS, fullMS, pwMS := 1e3*eager.plan.CPU, 1e3*full.plan.CPU, 1e3*pw.plan.CPU
	setup := fmt.Sprintf("%s on %s", e.model.Name, e.gpu.Name)
	if e.tp > 1 {
		setup = fmt.Sprintf("%s on %d× %s", e.model.Name, e.tp, e.gpu.Name)
	}

	s := &Script{}
	s.Metrics = []Metric{
		{Key: "dispatch_ms_eager", Label: "CPU dispatch, eager (NONE)", Unit: "ms", Value: round4(eagerMS)},
		{Key: "dispatch_ms_graph", Label: "CPU dispatch, full graph replay", Unit: "ms", Value: round4(fullMS)},
		{Key: "dispatch_ms_piecewise", Label: "CPU dispatch, piecewise graphs", Unit: "ms", Value: round4(pwMS)},
		{Key: "step_ms_eager", Label: "Step time, eager", Unit: "ms", Value: round4(1e3 * eager.cost.Total)},
		{Key: "step_ms_graph", Label: "Step time, full graph", Unit: "ms", Value: round4(1e3 * full.cost.Total)},
		{Key: "step_ms_piecewise", Label: "Step time, piecewise", Unit: "ms", Value: round4(1e3 * pw.cost.Total)},
		{Key: "step_ms_mode", Label: "Step time in the chosen mode (" + e.mode.String() + ")", Unit: "ms", Value: round4(1e3 * chosen.cost.Total)},
		{Key: "gpu_ms", Label: "GPU work of the step, unpadded", Unit: "ms", Value: round4(1e3 * gpuWork)},
		{Key: "gpu_idle_ms_eager", Label: "GPU waiting for launches, eager", Unit: "ms", Value: round4(1e3 * eager.cost.Idle)},
		{Key: "padded_tokens", Label: "Tokens the GPU computes in the chosen mode (padded)", Unit: "tokens", Value: float64(chosen.cost.PaddedTokens)},
		{Key: "kernels_per_step", Label: "Kernels per step", Unit: "kernels", Value: float64(nk)},
		{Key: "kernels_shorter_than_launch", Label: "Kernels whose GPU time is below one eager launch", Unit: "kernels", Value: float64(short)},
		{Key: "dispatch_ratio", Label: "Eager dispatch ÷ graph replay", Unit: "×", Value: round2(eager.plan.CPU / full.plan.CPU)},
		{Key: "speedup_graph", Label: "Step time eager ÷ full graph", Unit: "×", Value: round4(eager.cost.Total / full.cost.Total)},
		{Key: "dispatch_matters_below_batch", Label: "Smallest captured batch where eager is within 2% of the graph (0: none)", Unit: "sequences", Value: float64(crossover)},
		{Key: "capture_graphs", Label: "Graphs captured at start-up", Unit: "graphs", Value: float64(capCost.FullGraphs + capCost.PiecewiseGraphs)},
		{Key: "capture_s", Label: "Capture time (published rate)", Unit: "s", Value: round2(capCost.Seconds)},
		{Key: "capture_gib", Label: "Graph memory (published rate)", Unit: "GiB", Value: round2(capCost.Bytes / (1 << 30))},
		{Key: "validation_within", Label: "Dispatch validation cases within tolerance", Unit: "of " + strconv.Itoa(len(val)), Value: float64(within)},
	}
	s.Claims = []Claim{{
		What:    "CPU dispatch of one eager step",
		Article: fmt.Sprintf("~%.2f ms per step (model and GPU not stated)", articleEagerMS),
		Model:   fmt.Sprintf("%.2f ms: %d kernels × %.4g µs for %s (%.2f ms with C++ launches at %.0f µs)", eagerMS, nk, perUS, setup, 1e3*cppDispatch, 1e6*hardware.PerLaunchCPP),
		Why: fmt.Sprintf("The article types its figure in. Spread over this step's %d kernels, 0.85 ms is %.1f µs a kernel, below even a C++ cudaLaunchKernel (4–6 µs [PEGA-3]); "+
			"a launch from Python costs about 20 µs [NUMBA-3003], and plain PyTorch issues several ops per fused kernel.", nk, 850/float64(nk)),
	}, {
		What:    "CPU cost of a graph replay",
		Article: fmt.Sprintf("~%.2f ms per step, called piecewise", articleReplayMS),
		Model:   fmt.Sprintf("%.2f ms for one full graph; %.2f ms for piecewise (%d pieces and %d eager attention kernels)", fullMS, pwMS, cudagraph.Pieces(ks), 2*L),
		Why: "The full-graph figure is vLLM's measured model_execution_launch with graphs on, 0.07–0.09 ms [VIDUR-CPU], input copy included. " +
			"A piecewise step is not one replay: vLLM replays the L+1 pieces between attention ops and launches attention eagerly, so its CPU cost grows with the layers.",
	}, {
		What:    "Graphs cut CPU dispatch 20×",
		Article: fmt.Sprintf("20× (%.2f / %.2f ms = %.4g)", articleEagerMS, articleReplayMS, articleEagerMS/articleReplayMS),
		Model: fmt.Sprintf("dispatch %.0f× (%.2f → %.2f ms), but the step only %.2f× (%.2f → %.2f ms) at batch %d",
			eager.plan.CPU/full.plan.CPU, eagerMS, fullMS, eager.cost.Total/full.cost.Total, 1e3*eager.cost.Total, 1e3*full.cost.Total, batch),
		Why: fmt.Sprintf("A step takes the later of the CPU's last launch and the GPU's last kernel. Graphs remove launches, not GPU work (%.2f ms here), "+
			"so they pay off only where kernels are shorter than their launches: small batches, small or tensor-parallel models, fast GPUs.", 1e3*gpuWork),
	}}

	// Timelines. Zoomed: the head and the first layers kernel by kernel, up
	// to where the slower of the compared runs finishes layer detail−1.
	zoomTo := func(rs ...run) float64 {
		w := 0.0
		for _, r := range rs {
			w = max(w, layerEnd(r, min(detailLayers, L)-1))
		}
		return w
	}
	eagerZoom := timelineScene("zoom", fmt.Sprintf("Eager: the first %d layers, kernel by kernel (ms)", detailLayers),
		ganttLanes("eager", eager, detailLayers, zoomTo(eager), false))
	eagerWhole := timelineScene("whole", "Eager: the whole step, one bar per layer (ms)", ganttLanes("eager", eager, 0, 0, false))
	bothZoom := timelineScene("zoom", fmt.Sprintf("Eager vs full graph: the first %d layers (ms)", detailLayers),
		ganttLanes("eager", eager, detailLayers, zoomTo(eager, full), false), ganttLanes("full graph", full, detailLayers, zoomTo(eager, full), false))
	bothWhole := timelineScene("whole", "Eager vs full graph: the whole step (ms)", ganttLanes("eager", eager, 0, 0, false), ganttLanes("full graph", full, 0, 0, false))
	pwZoom := timelineScene("zoom", fmt.Sprintf("Piecewise vs full graph: the first %d layers; eager attention highlighted (ms)", detailLayers),
		ganttLanes("piecewise", pw, detailLayers, zoomTo(pw, full), true), ganttLanes("full graph", full, detailLayers, zoomTo(pw, full), false))
	pwWhole := timelineScene("whole", "Piecewise vs full graph: the whole step (ms)", ganttLanes("piecewise", pw, 0, 0, true), ganttLanes("full graph", full, 0, 0, false))
	chosenWhole := timelineScene("whole", fmt.Sprintf("%s at batch %d: runs as %s (ms)", e.mode, batch, runtimeName(chosen.plan.Runtime)),
		ganttLanes(strings.ToLower(e.mode.String()), chosen, 0, 0, chosen.plan.Runtime == cudagraph.RunPiecewise))

	cards := func(rs ...struct {
		name string
		r    run
	}) scene.Scene {
		var cs []scene.Card
		for _, x := range rs {
			cs = append(cs,
				scene.Card{Label: x.name + ": CPU dispatch", Value: round4(1e3 * x.r.plan.CPU), Unit: "ms"},
				scene.Card{Label: x.name + ": step", Value: round4(1e3 * x.r.cost.Total), Unit: "ms", Note: fmt.Sprintf("GPU waits %.3f ms", 1e3*x.r.cost.Idle)})
		}
		return scene.Scene{Kind: scene.KindCards, ID: "cards", Title: "This step", Cards: cs}
	}
	type named = struct {
		name string
		r    run
	}
	stepFormula := scene.Scene{Kind: scene.KindFormula, ID: "formula", Title: "When dispatch dominates", Formula: &scene.Formula{
		Expr: "t_step = max(CPU end, GPU end); kernel i starts at max(end of kernel i−1, launch_i)",
		Terms: []scene.Term{
			{Symbol: "N", Meaning: "kernels in the step", Value: strconv.Itoa(nk)},
			{Symbol: "t_launch", Meaning: "CPU per eager kernel", Value: fmt.Sprintf("%.4g µs", perUS)},
			{Symbol: "N · t_launch", Meaning: "eager CPU dispatch", Value: fmt.Sprintf("%.3f ms", eagerMS)},
			{Symbol: "GPU work", Meaning: "sum of kernel times", Value: fmt.Sprintf("%.3f ms", 1e3*gpuWork)},
		},
		Result: fmt.Sprintf("eager step %.3f ms; %d of %d kernels are shorter than their launch", 1e3*eager.cost.Total, short, nk),
	}}

	regime := "The GPU work is longer than the launches on the whole, so only the stretches of short kernels wait."
	if eager.plan.CPU > gpuWork {
		regime = "The launches alone take longer than the GPU work: the CPU, not the GPU, sets the pace."
	}
	gapText := fmt.Sprintf("Here a layer's GPU work is %.1f µs and the CPU needs %.1f µs per layer (a piece and two eager kernels), so the CPU stays ahead and the GPU waits only %.3f ms in all.",
		1e6*layerGPU, 1e6*pwLayerCPU, 1e3*pw.cost.Idle)
	if pwLayerCPU > layerGPU {
		gapText = fmt.Sprintf("Here a layer's GPU work is only %.1f µs but the CPU needs %.1f µs per layer (a piece and two eager kernels): the GPU waits at every attention, %.3f ms in all, and the step takes %.3f ms instead of %.3f ms with one full graph.",
			1e6*layerGPU, 1e6*pwLayerCPU, 1e3*pw.cost.Idle, 1e3*pw.cost.Total, 1e3*full.cost.Total)
	}
	crossText := fmt.Sprintf("From batch %d on, eager launches cost less than 2%% over the graph: the GPU work per kernel has outgrown the launch.", crossover)
	if crossover == 0 {
		crossText = fmt.Sprintf("Up to max_num_seqs (%d) eager launches never come within 2%% of the graph: the kernels stay shorter than their launches.", e.seqs)
	}
	if crossover == 1 {
		crossText = "Even at batch 1 eager launches cost less than 2% over the graph: the GPU work per kernel already exceeds the launch."
	}
	if kvFit < e.seqs {
		crossText += fmt.Sprintf(" Beyond batch %d the KV cache at %s tokens of context would not fit; those points show the dispatch arithmetic alone.", kvFit, comma(ctx))
	}

	captureText := fmt.Sprintf("Capturing the %s graphs takes time and memory at start-up, and the memory comes out of the KV cache: %d graphs, about %.1f s and %.2f GiB at the rate of a published vLLM log [VLLM-23739].",
		e.mode, capCost.FullGraphs+capCost.PiecewiseGraphs, capCost.Seconds, capCost.Bytes/(1<<30))
	if e.mode == cudagraph.None {
		captureText = "NONE captures nothing and pads nothing: it pays every launch instead."
	}
	quizAnswer := round2(1e3 * full.cost.Total)
	s.Steps = []Step{{
		Title: fmt.Sprintf("One decode step is %d kernels", nk),
		Narration: fmt.Sprintf("A decode step of %s runs %d layers of %d kernels each (norm, QKV projection, rotary, KV-cache write, attention, output projection, norm, gate/up, SiLU, down%s) plus embedding, final norm, lm_head and sampler: %d kernels. "+
			"At batch %d most are tiny: %d of them take less GPU time than the %.4g µs the CPU needs to launch one from Python.",
			setup, L, perLayer, tpText(e.tp), nk, batch, short, perUS),
		Scenes: []scene.Scene{stepFormula, {Kind: scene.KindTable, ID: "layer", Title: "The kernels of one layer", Table: layerTable}},
	}, {
		Title: "Eager: the GPU waits for the CPU",
		Narration: fmt.Sprintf("Without graphs (vLLM's NONE mode) the CPU launches the %d kernels one after another, %.4g µs each: %.3f ms of CPU per step. A kernel cannot start before it is launched, so "+
			"whenever a run of short kernels outpaces the launches the GPU sits idle: %.3f ms in this step, which takes %.3f ms against %.3f ms of GPU work. %s",
			nk, perUS, eagerMS, 1e3*eager.cost.Idle, 1e3*eager.cost.Total, 1e3*gpuWork, regime),
		Scenes: []scene.Scene{eagerZoom, eagerWhole, cards(named{"eager", eager})},
	}, {
		Quiz: numberQuiz(fmt.Sprintf("Now replay the whole step as one captured CUDA graph: %.2f ms of CPU instead of %.2f ms. How long does the step take, in ms?", fullMS, eagerMS),
			quizAnswer, 0.1, fmt.Sprintf("The GPU work (%.2f ms) does not shrink; the graph only removes the wait for launches.", 1e3*gpuWork)),
		Title: "Full graph replay: one launch",
		Narration: fmt.Sprintf("A CUDA graph records the step's kernels once; replaying it is one call: %.2f ms of CPU, measured for vLLM [VIDUR-CPU], after which every kernel is queued on the GPU. "+
			"The step now takes %.3f ms, the GPU work plus the replay, against %.3f ms eager: %.2f× faster, although dispatch shrank %.0f×.",
			fullMS, 1e3*full.cost.Total, 1e3*eager.cost.Total, eager.cost.Total/full.cost.Total, eager.plan.CPU/full.plan.CPU),
		Scenes: []scene.Scene{bothZoom, bothWhole, cards(named{"eager", eager}, named{"full graph", full})},
	}, {
		Title: "Piecewise graphs: attention launched eagerly",
		Narration: fmt.Sprintf("Attention's shapes change with every batch's context lengths, so vLLM's PIECEWISE mode captures only what lies between attention ops: %d pieces per step, with each layer's KV-cache write and attention launched eagerly between them. "+
			"That costs %.3f ms of CPU per step. %s", cudagraph.Pieces(ks), pwMS, gapText),
		Scenes: []scene.Scene{pwZoom, pwWhole, cards(named{"piecewise", pw}, named{"full graph", full})},
	}, {
		Title: fmt.Sprintf("%s: which graph runs when", e.mode),
		Narration: fmt.Sprintf("vLLM's dispatcher pads a batch's tokens to the next captured size and picks a graph: a full graph for a decode-only batch within max_num_seqs (under FULL, FULL_DECODE_ONLY and FULL_AND_PIECEWISE), "+
			"a piecewise graph for mixed batches (PIECEWISE, FULL_AND_PIECEWISE), eager above the largest captured size (%d tokens) or without graphs. Your step in %s runs %s and takes %.3f ms.",
			d.MaxCaptureSize(), e.mode, runtimePhrase(chosen.plan), 1e3*chosen.cost.Total),
		Scenes: []scene.Scene{chosenWhole, {Kind: scene.KindTable, ID: "modes", Title: "Runtime per mode: graph kind, ↑ padded tokens, step time", Table: modeTable}},
	}, {
		Title: "Where dispatch stops mattering",
		Narration: fmt.Sprintf("Growing the batch makes every GEMM and attention kernel longer while the launch cost stays put. Once the GPU time per kernel exceeds the launch, the CPU runs ahead and eager costs nothing extra. %s "+
			"With launches from a C++ engine (%.0f µs) the crossover comes much earlier.", crossText, 1e6*hardware.PerLaunchCPP),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "sweep", Title: fmt.Sprintf("Step time by decode batch, %s, %s tokens of context", setup, comma(ctx)), Chart: sw}},
	}, {
		Title: "Capture sizes and padding",
		Narration: fmt.Sprintf("Graphs have fixed shapes, so vLLM captures %d sizes (1, 2, 4, every 8 up to 248, every 16 up to %d) and pads each batch to the next one; the padded tokens run through every linear layer for nothing. "+
			"In %s: %s. %s",
			len(d.Sizes), d.MaxCaptureSize(), e.mode, strings.Join(padNotes, "; "), captureText),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "padding", Title: "Padding to the next captured size", Chart: padChart},
			{Kind: scene.KindCards, ID: "padcards", Title: "Padding cost at this context", Cards: padCards},
			{Kind: scene.KindCards, ID: "capture", Title: "Capture cost (vLLM log: 53 shapes, 2 s, 0.45 GiB)", Cards: capCards}},
	}, {
		Title: "Article claim vs this model",
		Narration: fmt.Sprintf("The article's 0.85 ms, 0.04 ms and 20× are typed into its simulator. Here they are computed for %s at batch %d, and the dispatch model is checked against %d published measurements: %d within tolerance.",
			setup, batch, len(val), within),
		Scenes: []scene.Scene{claimsTable(s.Claims), {Kind: scene.KindTable, ID: "validation", Title: "Dispatch model vs measurements (docs/VALIDATION.md)", Table: valTable}},
	}}
	indexCursors(s.Steps)
	return s, nil
}

// graphValidation runs core/cudagraph's validation cases once per process:
// they do not depend on the knobs.
var graphValidation = sync.OnceValue(cudagraph.Validate)

// runtimePhrase says how a step runs, e.g. "as one full graph of 256
// tokens (250 padded)".
func runtimePhrase(p cudagraph.Plan) string {
	pad := fmt.Sprintf("%d %s", p.Padded, plural(p.Padded, "token", "tokens"))
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
