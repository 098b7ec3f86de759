package parallelism

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/parallel"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// Dynamo's disaggregation tuning guide (docs/SOURCES.md#dyn-perf-tuning):
// KV cache per GPU of Llama-3.3-70B NVFP4 on B200 at TP 1, 2, 4, in GB.
var dynamoKVPerGPU = [3]float64{113, 135, 144}

// gpt-fast's Llama-2-70B batch-1 decode on A100-80GB at TP 2, 4, 8, in
// tokens per second (docs/SOURCES.md#gptfast-readme).
var gptFastTokS = [3]float64{21.3, 38.0, 62.5}

func tokS(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + " tok/s" }

func (r parallelismRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims()}
	s.Steps = []lessons.Step{r.layoutStep(), r.tpStep(), r.ppStep(), r.memoryStep(), r.reportStep(), r.fitStep(), r.nodeStep(),
		{Title: "Report claim vs this model", Narration: "The report's mapping and the published figures on tensor parallelism, beside what this model computes for the same setups.", Scenes: []scene.Scene{kit.ClaimsTable(s.Claims)}}}
	kit.IndexCursors(s.Steps)
	s.Work = r.work
	return s
}

// stageName is "stage 2 (layers 64–126)".
func stageName(st parallel.Stage) string {
	return fmt.Sprintf("stage %d (layers %d–%d)", st.Index+1, st.First+1, st.End)
}

// layoutStep draws one replica: its stages as pools of GPUs, the link
// between them when there are two.
func (r parallelismRun) layoutStep() lessons.Step {
	c := r.mine
	l, rep := c.layout, c.replica
	cl := &scene.Cluster{}
	for _, st := range rep.Stages {
		p := scene.Pool{Label: stageName(st)}
		for g := range l.TP {
			p.Workers = append(p.Workers, scene.Worker{ID: fmt.Sprintf("s%dg%d", st.Index+1, g+1), Name: fmt.Sprintf("GPU %d", st.Index*l.TP+g+1),
				Lines: []string{fmt.Sprintf("%s weights · %s KV", kit.BytesText(float64(st.WeightBytes)), kit.BytesText(float64(st.Pool.UsedBytes)))}})
		}
		cl.Pools = append(cl.Pools, p)
	}
	var mentions []scene.Mention
	tpText := fmt.Sprintf("%d GPUs share every layer", l.TP)
	if l.PP == 1 {
		cl.Router = fmt.Sprintf("NVSwitch: %d all-reduces per step over NVLink", 2*r.model.Layers)
		mentions = append(mentions, kit.Mention(tpText, "layout", "pool:"+cl.Pools[0].Label))
	} else {
		first := rep.Stages[0]
		mentions = append(mentions, kit.Mention(tpText, "layout", "pool:"+cl.Pools[0].Label))
		if l.PP == 2 {
			cl.Link = &scene.Link{Label: first.Next.Name, Rate: kit.GBps(first.Next.Effective()) + " per GPU", Note: "activations of each micro-batch"}
			cl.Travel = &scene.Travel{Ref: "req:act", Label: "micro-batch 1: " + kit.BytesText(c.step.SendBytes[0]), Group: -1, From: "s1g1", To: "s2g1"}
			mentions = append(mentions, kit.Mention("activations", "layout", "link:KV"))
		}
	}
	than := "more than"
	if seen, _ := hardware.EngineMemory(r.gpu); r.weightBytes <= seen {
		than = "within what"
	}
	n := fmt.Sprintf("%s in %s weighs %s: %s one %s holds (%s). As %s, %s (tensor parallelism, %d of %d query heads each)",
		r.model.Name, kit.WeightName(r.weights), kit.BytesText(float64(r.weightBytes)), than, r.gpu.Name, memoryText(r.gpu), l.Name(), tpText, r.model.QHeads/l.TP, r.model.QHeads)
	if l.PP > 1 {
		n += fmt.Sprintf(", and %d pipeline stages hold consecutive layers (pipeline parallelism): each micro-batch's activations cross from one stage to the next over %s", l.PP, rep.Stages[0].Next.Name)
	}
	n += fmt.Sprintf(". Each GPU holds %s of weights and %s of KV cache.", kit.BytesText(float64(rep.Stages[0].WeightBytes)), kit.BytesText(float64(rep.Stages[0].Pool.UsedBytes)))
	if l.DP > 1 {
		n += fmt.Sprintf(" %d replicas of this layout (data parallelism) serve their own requests on %d GPUs in all.", l.DP, l.GPUs())
	}
	title := fmt.Sprintf("One replica: %s on %d× %s", l.Name(), l.ReplicaGPUs(), r.gpu.Name)
	marks := []scene.Mark{kit.MarkRef("pool:"+cl.Pools[0].Label, fmt.Sprintf("TP%d", l.TP))}
	if cl.Link != nil {
		marks = append(marks, kit.MarkRef("link:KV", "activations: "+kit.BytesText(c.step.SendBytes[0])))
	}
	return lessons.Step{Title: "One model on many GPUs", Narration: n, Mentions: mentions,
		Scenes: []scene.Scene{kit.MainScene(scene.Scene{Kind: scene.KindCluster, ID: "layout", Title: title, Cluster: cl}, marks...)}}
}

// tpStep is one GPU's first two layers of kernels, all-reduces marked.
func (r parallelismRun) tpStep() lessons.Step {
	c := r.mine
	lane := scene.Lane{Label: "one GPU of stage 1", Key: "gpu"}
	var arRef string
	var arTime, arBytes float64
	for _, k := range r.kernels {
		if k.Layer > 1 {
			break
		}
		cls := map[hardware.KernelKind]string{hardware.GEMM: "gemm", hardware.Attention: "attn", hardware.Collective: "comm"}[k.Kind]
		if cls == "" {
			cls = "elem"
		}
		if k.Kind == hardware.Collective && arRef == "" && k.Layer == 0 {
			arRef, arTime, arBytes = kit.SpanRef("gpu", len(lane.Bars)), k.GPUTime, k.Bytes
		}
		lane.Bars = append(lane.Bars, scene.Span{Start: kit.Us(k.Start), End: kit.Us(k.Start + k.GPUTime), Label: k.Name, Class: cls, Highlight: k.Kind == hardware.Collective})
	}
	tl := &scene.Timeline{Unit: "µs", Lanes: []scene.Lane{lane}}
	sc := kit.MainScene(scene.Scene{Kind: scene.KindTimeline, ID: "tp", Title: "The first two layers on one GPU: each ends in all-reduces", Gantt: tl})
	share := c.step.CommShare()
	var n string
	var mentions []scene.Mention
	if c.layout.TP == 1 {
		n = fmt.Sprintf("With TP 1 a GPU holds whole layers and no all-reduce runs: the step is the GPU's own kernels, %s for a micro-batch of %d sequences.", kit.MsText(c.step.Compute[0][0]), c.step.Micro[0])
	} else {
		arText := fmt.Sprintf("an all-reduce of %s takes %.1f µs", kit.BytesText(arBytes), 1e6*arTime)
		n = fmt.Sprintf("Each of the %d GPUs multiplies its slice of every matrix; after the attention output and after the MLP the partial sums are added across the GPUs over NVLink: %s here. "+
			"That is two per layer, %d per step: %s of the stages' compute time is collectives. More GPUs shrink each GPU's share of the weights, not these.",
			c.layout.TP, arText, 2*r.model.Layers, kit.Pct(share))
		sc.Marks = []scene.Mark{kit.MarkRef(arRef, fmt.Sprintf("all-reduce %.1f µs", 1e6*arTime))}
		mentions = []scene.Mention{kit.Mention(arText, "tp", arRef)}
	}
	return lessons.Step{Title: "Tensor parallelism: an all-reduce per layer", Narration: n, Mentions: mentions, Scenes: []scene.Scene{sc}}
}

// ppStep is the step's schedule: each stage's micro-batches, sends and
// idle time.
func (r parallelismRun) ppStep() lessons.Step {
	st, l := r.mine.step, r.mine.layout
	tl := &scene.Timeline{Unit: "ms"}
	p, m := l.PP, l.MicroBatches
	bubbleRef := ""
	for s := range p {
		lane := scene.Lane{Label: fmt.Sprintf("stage %d", s+1), Key: fmt.Sprintf("stage%d", s+1)}
		at := 0.0
		for _, sp := range st.Spans {
			if sp.Stage != s {
				continue
			}
			if sp.Start > at {
				if s == p-1 && bubbleRef == "" {
					bubbleRef = kit.SpanRef(lane.Key, len(lane.Bars))
				}
				lane.Bars = append(lane.Bars, scene.Span{Start: kit.Msr(at), End: kit.Msr(sp.Start), Label: "idle", Class: "wait"})
			}
			span := scene.Span{Start: kit.Msr(sp.Start), End: kit.Msr(sp.End), Label: fmt.Sprintf("mb %d", sp.Micro+1), Class: "decode"}
			if sp.Send {
				span.Label, span.Class = "send", "transfer"
			}
			lane.Bars = append(lane.Bars, span)
			at = sp.End
		}
		tl.Lanes = append(tl.Lanes, lane)
	}
	sc := kit.MainScene(scene.Scene{Kind: scene.KindTimeline, ID: "pipeline", Title: fmt.Sprintf("One decode step: %d micro-batches through %d stages", m, p), Gantt: tl})
	formula := fmt.Sprintf("(p − 1) / (m + p − 1) = %d / %d = %s", p-1, m+p-1, kit.Pct(st.FormulaBubble))
	n := fmt.Sprintf("The step's %d sequences cross the %d stages in %d micro-batches: a stage starts micro-batch j once it has sent j − 1 and j has arrived. "+
		"While the pipeline fills and drains the stages wait; with equal stages that bubble is %s of their time. Here the stages are idle %s and sending %s of it; the step takes %s.",
		st.Batch, p, m, formula, kit.Pct(st.Bubble), kit.Pct(st.SendShare), kit.MsText(st.Seconds))
	if p == 1 {
		n = fmt.Sprintf("With one stage there is no pipeline: the whole batch of %d sequences is one pass of %s, and no stage waits (%s).", st.Batch, kit.MsText(st.Seconds), formula)
	} else {
		n += " More micro-batches shrink the bubble, but in decode each one reads the stage's weights again."
	}
	var mentions []scene.Mention
	if bubbleRef != "" {
		sc.Marks = []scene.Mark{kit.MarkRef(bubbleRef, "bubble")}
		mentions = append(mentions, kit.Mention("that bubble", "pipeline", bubbleRef))
	}
	q := lessons.NumberQuiz(fmt.Sprintf("%d %s, %d %s per step, equal stages and free sends: what share of the stages' time is the bubble, in %%?", p, kit.Plural(p, "stage", "stages"), m, kit.Plural(m, "micro-batch", "micro-batches")),
		kit.Round1(100*st.FormulaBubble), 1, formula)
	return lessons.Step{Title: "Pipeline parallelism: micro-batches and the bubble", Narration: n, Quiz: q, Mentions: mentions, Scenes: []scene.Scene{sc}}
}

// memoryText is the memory an engine sees on g in GB (10^9 bytes), the
// unit of the lesson's weights, with GiB (2^30 bytes), the unit PyTorch
// and the memory figure use, where its figure is a logged one: an H100
// "80GB" is 85.03 GB, 79.19 GiB, as PyTorch reports it, not 80.00 GB.
func memoryText(g hardware.GPU) string {
	seen, _ := hardware.EngineMemory(g)
	if where := hardware.EngineMemoryWhere(g); where != "" && seen != g.MemoryBytes {
		return fmt.Sprintf("%s, the %.2f GiB PyTorch reports for it; a GB here is 10⁹ bytes, a GiB 2³⁰", kit.BytesText(float64(seen)), float64(seen)/hardware.GiB)
	}
	return kit.BytesText(float64(seen))
}

// memoryStep is one GPU's memory: its share of the weights, the reserve,
// the KV pool.
func (r parallelismRun) memoryStep() lessons.Step {
	c := r.mine
	st := c.replica.Stages[0]
	b, p := st.Budget, st.Pool
	gib := func(x int64) float64 { return kit.Round2(float64(x) / hardware.GiB) }
	ms := &scene.MemoryStack{Unit: "GiB", Total: gib(b.TotalBytes),
		Lines: []scene.MemLine{{At: gib(p.Requested), Label: fmt.Sprintf("× %g utilization", b.MemUtilization)}},
		Parts: []scene.MemPart{
			{Key: "weights", Label: "weights " + kit.BytesText(float64(b.WeightBytes)), Size: gib(b.WeightBytes), Class: "weights", Highlight: true},
			{Key: "activation", Label: "activations", Size: gib(b.ActivationBytes), Class: "reserve"},
			{Key: "nontorch", Label: "non-torch", Size: gib(b.NonTorchBytes), Class: "reserve"},
			{Key: "kv", Label: "KV pool " + kit.BytesText(float64(p.UsedBytes)), Size: gib(p.UsedBytes), Class: "kv"},
			{Key: "headroom", Label: "headroom", Size: gib(b.TotalBytes - b.WeightBytes - b.ActivationBytes - b.NonTorchBytes - p.UsedBytes), Class: "headroom"},
		}}
	tbl := &scene.Table{Columns: []string{"stage", "layers", "weights per GPU", "KV pool per GPU", "KV tokens"}}
	for _, s := range c.replica.Stages {
		tbl.Rows = append(tbl.Rows, []string{strconv.Itoa(s.Index + 1), fmt.Sprintf("%d–%d", s.First+1, s.End), kit.BytesText(float64(s.WeightBytes)), kit.BytesText(float64(s.Pool.UsedBytes)), kit.Comma64(s.Pool.Tokens)})
	}
	holds := fmt.Sprintf("holds %s tokens of KV cache", kit.Comma64(c.kvTokens))
	n := fmt.Sprintf("On each GPU of stage 1: %s of weights (1/%d of %d layers' share), the activation and NCCL reserve, and the KV pool in what is left of %s × %g (gpu_memory_utilization; the chart counts in GiB, %.2f GiB in all). "+
		"Each stage caches every token for its own layers, so the replica %s, the smallest stage's: %s sequences of %s tokens. The batch of %d uses %s of it.",
		kit.BytesText(float64(st.WeightBytes)), c.layout.TP, st.Layers(), kit.BytesText(float64(b.TotalBytes)), b.MemUtilization, float64(b.TotalBytes)/hardware.GiB, holds, kit.Comma(c.maxSeqs), kit.Comma(r.context+1), r.batch, kit.Pct(float64(r.batch)/float64(max(c.maxSeqs, 1))))
	return lessons.Step{Title: "Memory per GPU: does it fit?", Narration: n, Mentions: []scene.Mention{kit.Mention(holds, "memory", "part:kv")},
		Scenes: []scene.Scene{kit.MainScene(scene.Scene{Kind: scene.KindMemoryStack, ID: "memory", Title: "One GPU of stage 1", Memory: ms}, kit.MarkRef("part:kv", "KV pool")),
			{Kind: scene.KindTable, ID: "stages", Title: "Every stage", Table: tbl}}}
}

// tradeSeries is a layout's sweep as points (tokens/s per user, per GPU),
// labelled by batch.
func tradeSeries(name string, c layoutCase) scene.Series {
	sr := scene.Series{Name: name, Type: scene.Line}
	for _, st := range c.sweep {
		sr.X = append(sr.X, kit.Round1(st.PerUser()))
		sr.Y = append(sr.Y, kit.Round1(st.PerGPU(c.layout.ReplicaGPUs())))
		sr.Labels = append(sr.Labels, kit.Comma(st.Batch))
	}
	return sr
}

func tradeChart(note string, series ...scene.Series) *scene.Chart {
	return &scene.Chart{Type: scene.Line, XLabel: "speed per user", XUnit: "tok/s", YLabel: "throughput per GPU", YUnit: "tok/s", XLog: true, YLog: true, Series: series, Note: note}
}

// reportStep compares the report's TP8 and TP8PP2 for 405B FP8 on H100s.
func (r parallelismRun) reportStep() lessons.Step {
	a, b := r.report[0], r.report[1]
	fa, fb := r.reportFull[0], r.reportFull[1]
	ch := tradeChart("Each point is a batch size: higher is more throughput per GPU, further right is faster per user.",
		tradeSeries("TP8, 8 GPUs", a), tradeSeries(fmt.Sprintf("TP8PP2, 16 GPUs, %d micro-batches", b.layout.MicroBatches), b))
	tbl := &scene.Table{Columns: []string{"layout", "KV tokens", "sequences of " + kit.Comma(r.context+1), fmt.Sprintf("batch %d: per user", a.batch), "per GPU", "at its largest batch: per GPU"}}
	for _, c := range []struct{ at, full layoutCase }{{a, fa}, {b, fb}} {
		tbl.Rows = append(tbl.Rows, []string{c.at.layout.Name(), kit.Comma64(c.at.kvTokens), kit.Comma(c.at.maxSeqs), tokS(c.at.step.PerUser()), tokS(c.at.step.PerGPU(c.at.layout.ReplicaGPUs())),
			fmt.Sprintf("%s (batch %s)", tokS(c.full.step.PerGPU(c.full.layout.ReplicaGPUs())), kit.Comma(c.full.batch))})
	}
	lowerText := fmt.Sprintf("%s per GPU instead of %s", tokS(b.step.PerGPU(16)), tokS(a.step.PerGPU(8)))
	verdict := "lowers"
	if b.step.PerGPU(16) >= a.step.PerGPU(8) {
		verdict = "does not lower"
	}
	n := fmt.Sprintf("The report's mapping for Llama-3.1-405B w8a8 on H100: TP8 on one node or TP8PP2 on two. Both fit. At the same batch of %d the second node %s throughput per GPU: %s, at %s per user against %s, because the stages take turns. "+
		"What it buys is memory: %s KV tokens against %s, %s sequences of %s tokens against %s, and at their largest batches %s per GPU against %s.",
		a.batch, verdict, lowerText, tokS(b.step.PerUser()), tokS(a.step.PerUser()), kit.Comma64(b.kvTokens), kit.Comma64(a.kvTokens), kit.Comma(b.maxSeqs), kit.Comma(r.context+1), kit.Comma(a.maxSeqs),
		tokS(fb.step.PerGPU(16)), tokS(fa.step.PerGPU(8)))
	sc := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "report", Title: "Llama-3.1-405B FP8 on H100: TP8 vs TP8PP2", Chart: ch})
	return lessons.Step{Title: "The report's mapping: 405B on one node or two", Narration: n,
		Scenes: []scene.Scene{sc, {Kind: scene.KindTable, ID: "report-table", Title: "TP8 vs TP8PP2 (context " + kit.Comma(r.context) + ")", Table: tbl}}}
}

// fitText is a layout's memory verdict in a few words.
func fitText(c layoutCase) string {
	if c.fitErr != nil {
		b := c.replica.Stages[0].Budget
		return fmt.Sprintf("%s: %s of weights per GPU plus %s of activations and non-torch reserve leave no room for a KV cache in the %s usable (%s × %g), so it does not fit", c.layout.Name(),
			kit.BytesText(float64(b.WeightBytes)), kit.BytesText(float64(b.ActivationBytes+b.NonTorchBytes)), kit.BytesText(b.MemUtilization*float64(b.TotalBytes)), kit.BytesText(float64(b.TotalBytes)), b.MemUtilization)
	}
	return fmt.Sprintf("%s: %s of weights per GPU, holds %s KV tokens", c.layout.Name(), kit.BytesText(float64(c.replica.Stages[0].WeightBytes)), kit.Comma64(c.kvTokens))
}

// fitStep shows layouts that more parallelism makes fit at all.
func (r parallelismRun) fitStep() lessons.Step {
	cards := []scene.Card{}
	for _, c := range append(r.bf16[:], r.node[:2]...) {
		v := "fits: " + kit.Comma64(c.kvTokens) + " KV tokens"
		if c.fitErr != nil {
			v = "does not fit"
		}
		cards = append(cards, scene.Card{Label: fmt.Sprintf("%s %s %s on %s", c.replica.Setup.Model.Name, kit.WeightName(c.replica.Setup.Weights), c.layout.Name(), c.replica.Setup.GPU.Name),
			Value: kit.Round1(float64(c.replica.Stages[0].WeightBytes) / 1e9), Unit: "GB of weights per GPU", Note: v})
	}
	h100 := hardware.MustGPU(reportGPU)
	n := fmt.Sprintf("In BF16 the 405B model's %s does not go on one node of %ss: %s. Two nodes do it: %s. ",
		kit.BytesText(float64(hardware.MustModel(reportModel).WeightBytes(2))), h100.Name, fitText(r.bf16[0]), fitText(r.bf16[1]))
	if r.bf16[0].fitErr == nil || r.bf16[1].fitErr != nil {
		n = fmt.Sprintf("405B in BF16 on H100s: %s; %s. ", fitText(r.bf16[0]), fitText(r.bf16[1]))
	}
	n += fmt.Sprintf("On %ss, %s in %s: %s; %s.", r.gpu.Name, r.node[0].replica.Setup.Model.Name, kit.WeightName(r.weights), fitText(r.node[0]), fitText(r.node[1]))
	return lessons.Step{Title: "Parallelism needed to fit at all", Narration: n, Scenes: []scene.Scene{kit.MainScene(scene.Scene{Kind: scene.KindCards, ID: "fit", Title: "What fits", Cards: cards})}}
}

// nodeStep compares the 70B on 8 GPUs as one TP8 or as replicas of
// smaller TP, at the load knob.
func (r parallelismRun) nodeStep() lessons.Step {
	var series []scene.Series
	tbl := &scene.Table{Columns: []string{"layout", "KV tokens per replica", fmt.Sprintf("%d sequences: per replica", r.load), "per user", "per GPU"}}
	var parts []string
	var fitting []layoutCase
	for _, c := range r.node {
		if c.fitErr != nil {
			tbl.Rows = append(tbl.Rows, []string{c.layout.Name(), "does not fit", "", "", ""})
			parts = append(parts, c.layout.Name()+" does not fit (its weights and reserve fill each GPU)")
			continue
		}
		series = append(series, tradeSeries(c.layout.Name(), c))
		if !c.priced {
			tbl.Rows = append(tbl.Rows, []string{c.layout.Name(), kit.Comma64(c.kvTokens), fmt.Sprintf("%d: holds only %d", c.batch, c.maxSeqs), "", ""})
			parts = append(parts, fmt.Sprintf("%s cannot hold %d sequences per replica (at most %d)", c.layout.Name(), c.batch, c.maxSeqs))
			continue
		}
		fitting = append(fitting, c)
		tbl.Rows = append(tbl.Rows, []string{c.layout.Name(), kit.Comma64(c.kvTokens), kit.Comma(c.batch), tokS(c.step.PerUser()), tokS(c.step.PerGPU(c.layout.ReplicaGPUs()))})
		parts = append(parts, fmt.Sprintf("%s gives %s per user and %s per GPU", c.layout.Name(), tokS(c.step.PerUser()), tokS(c.step.PerGPU(c.layout.ReplicaGPUs()))))
	}
	n := fmt.Sprintf("The same 8 %ss can serve %s as one TP8 or as replicas of smaller TP, with the %d sequences split evenly: ", r.gpu.Name, r.node[0].replica.Setup.Model.Name, r.load) + strings.Join(parts, "; ") + ". "
	n += nodeVerdict(fitting) + " " + peakText(r.node)
	sc := kit.MainScene(scene.Scene{Kind: scene.KindChart, ID: "node", Title: fmt.Sprintf("%s on 8× %s: throughput per GPU against speed per user", r.node[0].replica.Setup.Model.Name, r.gpu.Name),
		Chart: tradeChart("Each line is a layout, each point a batch per replica.", series...)})
	return lessons.Step{Title: "One TP8 or replicas of smaller TP", Narration: n, Scenes: []scene.Scene{sc, {Kind: scene.KindTable, ID: "node-table", Title: fmt.Sprintf("At %d sequences on the 8 GPUs", r.load), Table: tbl}}}
}

// nodeVerdict says which layout leads per GPU and per user at the load.
func nodeVerdict(cs []layoutCase) string {
	if len(cs) == 0 {
		return "No layout of these GPUs holds this load."
	}
	bestGPU, bestUser := cs[0], cs[0]
	for _, c := range cs {
		if c.step.PerGPU(c.layout.ReplicaGPUs()) > bestGPU.step.PerGPU(bestGPU.layout.ReplicaGPUs()) {
			bestGPU = c
		}
		if c.step.PerUser() > bestUser.step.PerUser() {
			bestUser = c
		}
	}
	if bestGPU.layout == bestUser.layout {
		var smaller, larger []string
		for _, c := range cs {
			switch {
			case c.layout.TP < bestGPU.layout.TP:
				smaller = append(smaller, c.layout.Name())
			case c.layout.TP > bestGPU.layout.TP:
				larger = append(larger, c.layout.Name())
			}
		}
		out := bestGPU.layout.Name() + " leads on both."
		if len(smaller) > 0 {
			out += fmt.Sprintf(" Smaller groups (%s) each read a whole copy of the weights every step for fewer sequences.", strings.Join(smaller, ", "))
		}
		if len(larger) > 0 {
			out += fmt.Sprintf(" Larger ones (%s) run more sequences in one batch and all-reduce them across more GPUs.", strings.Join(larger, ", "))
		}
		return out
	}
	return fmt.Sprintf("%s leads per GPU, %s per user: the trade between throughput per GPU and speed per user that the choice of TP makes.", bestGPU.layout.Name(), bestUser.layout.Name())
}

// peak is a layout's highest throughput per GPU over its sweep and the
// step that reached it.
func (c layoutCase) peak() parallel.Step {
	var best parallel.Step
	for _, st := range c.sweep {
		if best.Seconds == 0 || st.PerGPU(c.layout.ReplicaGPUs()) > best.PerGPU(c.layout.ReplicaGPUs()) {
			best = st
		}
	}
	return best
}

// peakText compares the layouts at their own best: the highest throughput
// per GPU over their batches, and their speed per user at batch 1.
func peakText(cs []layoutCase) string {
	var peaks, solo []string
	var top, fast layoutCase
	for _, c := range cs {
		if c.fitErr != nil || len(c.sweep) == 0 {
			continue
		}
		p := c.peak()
		peaks = append(peaks, fmt.Sprintf("%s %s (batch %s)", c.layout.Name(), tokS(p.PerGPU(c.layout.ReplicaGPUs())), kit.Comma(p.Batch)))
		solo = append(solo, fmt.Sprintf("%s %s", c.layout.Name(), tokS(c.sweep[0].PerUser())))
		if top.replica == nil || p.PerGPU(c.layout.ReplicaGPUs()) > top.peak().PerGPU(top.layout.ReplicaGPUs()) {
			top = c
		}
		if fast.replica == nil || c.sweep[0].PerUser() > fast.sweep[0].PerUser() {
			fast = c
		}
	}
	if len(peaks) == 0 {
		return ""
	}
	return fmt.Sprintf("Each at its own best, up to what its KV holds: the most per GPU is %s; alone, a sequence runs at %s. %s peaks highest per GPU, %s is fastest per user.",
		strings.Join(peaks, ", "), strings.Join(solo, ", "), top.layout.Name(), fast.layout.Name())
}

// peakWhy reads the 70B comparison against the guide's table.
func peakWhy(cs []layoutCase) string {
	var top, fast layoutCase
	for _, c := range cs {
		if c.fitErr != nil || len(c.sweep) == 0 {
			continue
		}
		if top.replica == nil || c.peak().PerGPU(c.layout.ReplicaGPUs()) > top.peak().PerGPU(top.layout.ReplicaGPUs()) {
			top = c
		}
		if fast.replica == nil || c.sweep[0].PerUser() > fast.sweep[0].PerUser() {
			fast = c
		}
	}
	if top.replica == nil {
		return "No layout of these GPUs fits."
	}
	if top.layout.TP < fast.layout.TP {
		return fmt.Sprintf("The guide's shape, at each layout's own best: %s, fewer GPUs per copy, peaks per GPU; %s, the most, is fastest per user. A TP that barely holds the weights has too little KV to batch and peaks lower.", top.layout.Name(), fast.layout.Name())
	}
	return fmt.Sprintf("Here %s leads both per GPU and per user, as the guide's note on decode engines allows: a larger TP frees KV for bigger batches.", top.layout.Name())
}

func (r parallelismRun) metrics() []lessons.Metric {
	c := r.mine
	a, b := r.report[0], r.report[1]
	return []lessons.Metric{
		{Key: "step_ms", Label: "Decode step of the chosen layout", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(c.step.Seconds)},
		{Key: "per_user_tok_s", Label: "Speed per user", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round1(c.step.PerUser())},
		{Key: "per_gpu_tok_s", Label: "Throughput per GPU", Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round1(c.step.PerGPU(c.layout.ReplicaGPUs()))},
		{Key: "total_tok_s", Label: fmt.Sprintf("Throughput of %d replicas", c.layout.DP), Unit: "tok/s", Better: lessons.HigherIsBetter, Value: kit.Round1(c.step.PerReplica() * float64(c.layout.DP))},
		{Key: "bubble_pct", Label: "Pipeline bubble (stages idle)", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round1(100 * c.step.Bubble)},
		{Key: "comm_pct", Label: "Share of compute time in all-reduces", Unit: "%", Better: lessons.LowerIsBetter, Value: kit.Round1(100 * c.step.CommShare())},
		{Key: "kv_tokens", Label: "KV tokens one replica holds", Unit: "tokens", Better: lessons.HigherIsBetter, Value: float64(c.kvTokens)},
		{Key: "weights_per_gpu_gb", Label: "Weights per GPU (stage 1)", Unit: "GB", Value: kit.Round2(float64(c.replica.Stages[0].WeightBytes) / 1e9)},
		{Key: "report_tp8_per_gpu", Label: fmt.Sprintf("405B FP8 TP8 at batch %d, per GPU", a.batch), Unit: "tok/s", Value: kit.Round1(a.step.PerGPU(8))},
		{Key: "report_tp8pp2_per_gpu", Label: fmt.Sprintf("405B FP8 TP8PP2 at batch %d, per GPU", b.batch), Unit: "tok/s", Value: kit.Round1(b.step.PerGPU(16))},
	}
}

func (r parallelismRun) claims() []lessons.Claim {
	a, b := r.report[0], r.report[1]
	kv := make([]string, 3)
	for i, x := range r.kvPerGPU {
		kv[i] = kit.BytesText(float64(x))
	}
	gf := make([]string, 3)
	for i, x := range r.gptFast {
		gf[i] = "does not fit"
		if x > 0 {
			gf[i] = tokS(x)
		}
	}
	var node []string
	for _, c := range r.node {
		if c.fitErr != nil {
			node = append(node, c.layout.Name()+" does not fit")
			continue
		}
		if len(c.sweep) > 0 {
			node = append(node, fmt.Sprintf("%s (%s sequences) peaks at %s/GPU, %s/user at batch 1", c.layout.Name(), kit.Comma(c.maxSeqs), tokS(c.peak().PerGPU(c.layout.ReplicaGPUs())), tokS(c.sweep[0].PerUser())))
		}
	}
	return []lessons.Claim{{
		What:    "Llama-3.1-405B w8a8 on H100",
		Article: "TP8 on a single node or TP8PP2 on two nodes is usually the best choice (report 003; Dynamo's tuning guide)",
		Model:   fmt.Sprintf("both fit; TP8 holds %s KV tokens, TP8PP2 %s; at batch %d: %s vs %s per GPU", kit.Comma64(a.kvTokens), kit.Comma64(b.kvTokens), a.batch, tokS(a.step.PerGPU(8)), tokS(b.step.PerGPU(16))),
		Why:     "Agrees that both are sound. The guide gives no figures; here the second node buys KV capacity (longer contexts, bigger batches) and costs throughput per GPU at the same batch, since this model drains the pipeline every step.",
	}, {
		What:    "GPUs per engine: throughput per GPU against latency per user",
		Article: "the minimum number of GPUs with fair KV cache gives the best throughput/GPU and worst latency/user; the maximum the reverse",
		Model:   fmt.Sprintf("%s on 8× %s, context %s: %s", r.node[0].replica.Setup.Model.Name, r.gpu.Name, kit.Comma(r.context), strings.Join(node, "; ")),
		Why:     peakWhy(r.node),
	}, {
		What:    "KV cache per GPU grows with TP (70B, B200)",
		Article: fmt.Sprintf("Llama-3.3-70B NVFP4 on B200, vLLM: %.0f / %.0f / %.0f GB per GPU at TP 1 / 2 / 4", dynamoKVPerGPU[0], dynamoKVPerGPU[1], dynamoKVPerGPU[2]),
		Model:   fmt.Sprintf("Llama-3.1-70B FP8: %s / %s / %s", kv[0], kv[1], kv[2]),
		Why:     "Same trend: each GPU's share of the weights shrinks. Less KV here because FP8 weights take twice NVFP4's bytes, most of all at TP 1.",
	}, {
		What:    "Batch-1 decode speed with TP (70B, A100-80GB)",
		Article: fmt.Sprintf("gpt-fast, Llama-2-70B BF16: %.1f / %.1f / %.1f tok/s at TP 2 / 4 / 8", gptFastTokS[0], gptFastTokS[1], gptFastTokS[2]),
		Model:   fmt.Sprintf("Llama-3.1-70B BF16: %s / %s / %s", gf[0], gf[1], gf[2]),
		Why:     "Speed grows with TP but less than in proportion: all-reduces do not shrink. TP2 leaves no room for vLLM's reserve here; gpt-fast keeps none and runs Llama-2-70B (a 32k vocabulary).",
	}}
}
