// Package parallelism holds the lesson parallelism: Part 9's multi-node
// topologies and report 003's tensor-parallel mapping. One model laid out on
// GPUs as tensor-parallel groups inside a node, pipeline stages across nodes
// and data-parallel replicas (core/parallel), priced by core/hardware's
// step-time model.
package parallelism

import (
	"fmt"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/parallel"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "parallelism",
	Title:   "Parallelism: laying one model on many GPUs",
	Part:    "Part 9, report 003",
	Summary: "Split a model across GPUs with tensor, pipeline and data parallelism; see what fits, what each layout costs per step, and the trade between throughput per GPU and speed per user.",
	Engine: "core/parallel over core/hardware's step-time model, for a vLLM-style Llama decoder: vLLM's layer split and pipeline sends, its custom all-reduce, CUDA-graph replay. " +
		"Simplified: dense models only (no expert parallelism), communication never overlaps compute, and every step drains its micro-batches through the pipeline (vLLM v1 keeps several batches in flight instead).",
	Group: "cluster", Rank: 5, Thumb: scene.KindCluster,
	Terms: []lessons.Term{
		{Term: "tensor parallelism", Aliases: []string{"TP"}, Definition: "Every layer's weight matrices split across GPUs of one node; each layer ends in an all-reduce of the partial results.", Find: "tensor parallelism"},
		{Term: "pipeline parallelism", Aliases: []string{"PP"}, Definition: "Consecutive layers on different GPUs (stages); activations cross from one stage to the next.", Find: "pipeline parallelism"},
		{Term: "data parallelism", Aliases: []string{"DP", "replica"}, Definition: "Whole copies of the model, each serving its own requests.", Find: "replicas"},
		{Term: "all-reduce", Definition: "A collective that sums each GPU's partial tensor and gives every GPU the sum.", Find: "all-reduce"},
		{Term: "pipeline bubble", Aliases: []string{"bubble"}, Definition: "The time pipeline stages sit idle while the first micro-batches fill the pipeline and the last drain it: (p − 1) / (m + p − 1).", Find: "bubble"},
		{Term: "micro-batch", Definition: "A slice of a step's batch that crosses the pipeline on its own, so that stages can work at once.", Find: "micro-batches"},
	},
	Params: []lessons.Param{
		kit.GPUParam,
		{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: lessons.Choice, Choices: kit.ChoicesFirst(kit.ModelIDs(), "llama-3.1-405b")},
		{Key: "weight_dtype", Label: "Weights", Help: "bf16: 2 bytes per parameter. fp8: linear layers in 1 byte with FP8 GEMMs (weight-only on A100), embeddings and lm_head in bf16 (w8a8, the report's checkpoint).", Kind: lessons.Choice, Choices: []string{"fp8", "bf16"}},
		{Key: "tp", Label: "Tensor parallel (TP)", Unit: "GPUs", Help: "GPUs that split every layer, inside one node.", Kind: lessons.Int, Default: 8, Min: 1, Max: 8, Step: 1},
		{Key: "pp", Label: "Pipeline stages (PP)", Unit: "stages", Help: "Groups of consecutive layers, each on its own TP group; stages on different nodes talk over InfiniBand.", Kind: lessons.Int, Default: 2, Min: 1, Max: 4, Step: 1},
		{Key: "dp", Label: "Replicas (DP)", Unit: "copies", Help: "Whole copies of the layout, each serving its own requests.", Kind: lessons.Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "micro_batches", Label: "Micro-batches", Unit: "per step", Help: "How many slices a step's batch crosses the pipeline in (1 without PP is the same as none).", Kind: lessons.Int, Default: 2, Min: 1, Max: 16, Step: 1},
		{Key: "batch", Label: "Batch per replica", Unit: "sequences", Help: "Sequences each replica decodes at once.", Kind: lessons.Int, Default: 64, Min: 1, Max: 2048, Step: 1},
		{Key: "context", Label: "Context", Unit: "tokens", Help: "Tokens already in each sequence's KV cache.", Kind: lessons.Int, Default: 2048, Min: 1, Max: 32768, Step: 1},
		{Key: "load", Label: "Load on 8 GPUs", Unit: "sequences", Help: "Sequences decoding at once on the 8 GPUs of the 70B comparison, split evenly over its replicas.", Kind: lessons.Int, Default: 256, Min: 8, Max: 4096, Step: 8},
	},
	Check:   checkParallelism,
	Sim:     sim{},
	MaxWork: 2_000_000,
	HeavyCorners: []map[string]string{
		{"model": "llama-3.1-405b", "weight_dtype": "bf16", "tp": "8", "pp": "4", "micro_batches": "16", "batch": "2048", "context": "1", "load": "4096"},
		{"gpu": "b200", "model": "llama-3.1-405b", "tp": "8", "pp": "4", "micro_batches": "16", "batch": "256", "context": "32768", "load": "8"},
	},
}

func init() { lessons.Register(lesson) }

type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runParallelism(v))
}

// The comparisons' fixed settings: the report's Llama-3.1-405B w8a8 on
// H100s, and a 70B model on one node of 8 GPUs.
const (
	reportGPU   = "h100-sxm"
	reportModel = "llama-3.1-405b"
	nodeModel   = "llama-3.1-70b"
	nodeGPUs    = 8
)

// layoutCase is one layout of a comparison: whether it fits, what it
// holds, and its decode step at one batch per replica (priced false when
// the batch does not fit).
type layoutCase struct {
	layout   parallel.Layout
	replica  *parallel.Replica
	fitErr   error
	kvTokens int64
	maxSeqs  int
	batch    int
	step     parallel.Step
	priced   bool
	// sweep is the step at batches 1, 2, 4, … up to what the replica
	// holds (and 1,024), for the trade-off chart.
	sweep []parallel.Step
}

// parallelismRun is what the lesson computed.
type parallelismRun struct {
	gpu     hardware.GPU
	model   hardware.Model
	weights hardware.WeightFormat
	batch   int
	context int
	load    int
	// mine is the chosen layout at the batch knob; kernels one GPU's
	// kernels of stage 1 for its first micro-batch.
	mine    layoutCase
	kernels []hardware.Kernel
	// weightBytes is the whole checkpoint; gpuUsable one GPU's memory at
	// 0.9 utilization.
	weightBytes int64
	// report is 405B FP8 on H100 as TP8 and TP8PP2 at the batch knob (or
	// what TP8 holds); reportFull each at the most it holds.
	report, reportFull [2]layoutCase
	// bf16 is 405B BF16 on H100 as TP8 and TP8PP2: the second is needed
	// to fit at all.
	bf16 [2]layoutCase
	// node is the 70B on 8 of the chosen GPUs: 8×TP1, 4×TP2, 2×TP4, TP8
	// at the load knob, with their sweeps.
	node []layoutCase
	// kvPerGPU is 70B FP8 on B200 at TP 1, 2, 4: KV bytes per GPU.
	kvPerGPU [3]int64
	// gptFast is 70B BF16 on A100-80GB at TP 2, 4, 8, batch 1.
	gptFast [3]float64
	work    int64
}

// knobLayout is the chosen layout.
func knobLayout(v lessons.Values) parallel.Layout {
	m := v.Int("micro_batches")
	if v.Int("pp") == 1 {
		m = 1
	}
	return parallel.Layout{TP: v.Int("tp"), PP: v.Int("pp"), DP: v.Int("dp"), MicroBatches: m, Schedule: parallel.GPipe}
}

func knobSetup(v lessons.Values) (parallel.Setup, error) {
	g, m, err := kit.ChosenHardware(v)
	return parallel.Setup{GPU: g, Model: m, Weights: hardware.WeightFormat(v.Choice("weight_dtype"))}, err
}

// checkParallelism refuses a layout engines would not build or that does
// not fit, and a batch the layout cannot hold.
func checkParallelism(v lessons.Values) error {
	s, err := knobSetup(v)
	if err != nil {
		return err
	}
	m := s.Model
	if !kit.TPSplits(m, v.Int("tp")) {
		return kit.TPRelation(m, v.Int("tp"))
	}
	if ctx := v.Int("context"); ctx+1 > m.MaxPositions {
		return lessons.Relation("context", v.TextOf("context"), fmt.Sprintf("at most %s tokens: %s has %s positions", kit.Comma(m.MaxPositions-1), m.ID, kit.Comma(m.MaxPositions)))
	}
	l := knobLayout(v)
	r, err := s.Replica(l)
	if err != nil {
		return lessons.Relation("pp", v.TextOf("pp"), err.Error())
	}
	if err := r.Fits(); err != nil {
		return lessons.Relation("tp", v.TextOf("tp"), "a layout whose weights fit: "+err.Error()+" (more TP or PP, or fp8 weights)")
	}
	if b := v.Int("batch"); b < l.MicroBatches {
		return lessons.Relation("micro_batches", v.TextOf("micro_batches"), fmt.Sprintf("at most the batch (%d): a micro-batch holds at least one sequence", b), "batch")
	}
	if most := r.MaxSeqs(v.Int("context") + 1); v.Int("batch") > most {
		return lessons.Relation("batch", v.TextOf("batch"), fmt.Sprintf("at most %s sequences: %s holds %s tokens of KV cache, %s sequences of %s tokens", kit.Comma(most), l.Name(), kit.Comma64(r.KVTokens()), kit.Comma(most), kit.Comma(v.Int("context")+1)))
	}
	return nil
}

// runParallelism lays out the chosen layout and the comparisons.
func runParallelism(v lessons.Values) (parallelismRun, error) {
	s, err := knobSetup(v)
	if err != nil {
		return parallelismRun{}, err
	}
	r := parallelismRun{gpu: s.GPU, model: s.Model, weights: s.Weights, batch: v.Int("batch"), context: v.Int("context"), load: v.Int("load")}
	if r.weightBytes, err = hardware.LoadedWeightBytes(s.Model, s.Weights); err != nil {
		return r, err
	}
	m := knobLayout(v).MicroBatches
	if r.mine, err = r.layoutAt(s, knobLayout(v), r.batch, false); err != nil {
		return r, err
	}
	if !r.mine.priced {
		return r, fmt.Errorf("parallelism: %s does not hold %d sequences", r.mine.layout.Name(), r.batch)
	}
	r.kernels = r.mine.replica.StageKernels(0, r.mine.step.Micro[0], r.context)
	if err := r.runReport(m); err != nil {
		return r, err
	}
	if err := r.runNode(s); err != nil {
		return r, err
	}
	r.kvPerGPU, r.gptFast = kvPerGPUClaim(), gptFastClaim()
	r.work += 3*int64(hardware.MustModel(nodeModel).Layers*12) + 64
	return r, nil
}

// layoutAt builds layout l of s and prices its decode step at batch
// sequences per replica when they fit; sweep adds the trade-off curve.
func (r *parallelismRun) layoutAt(s parallel.Setup, l parallel.Layout, batch int, sweep bool) (layoutCase, error) {
	rep, err := s.Replica(l)
	if err != nil {
		return layoutCase{}, err
	}
	c := layoutCase{layout: l, replica: rep, fitErr: rep.Fits(), kvTokens: rep.KVTokens(), maxSeqs: rep.MaxSeqs(r.context + 1), batch: batch}
	if c.fitErr != nil {
		return c, nil
	}
	if batch >= l.MicroBatches && batch <= c.maxSeqs {
		if c.step, err = rep.Decode(batch, r.context); err != nil {
			return c, err
		}
		c.priced = true
		r.work += c.step.Work
	}
	for b := 1; sweep && b <= min(c.maxSeqs, 1024); b *= 2 {
		if b < l.MicroBatches {
			continue
		}
		st, err := rep.Decode(b, r.context)
		if err != nil {
			return c, err
		}
		r.work += st.Work
		c.sweep = append(c.sweep, st)
	}
	return c, nil
}

// runReport compares the report's two layouts of 405B FP8 on H100: at the
// batch knob (no more than TP8 holds), at their capacity, and in BF16.
func (r *parallelismRun) runReport(m int) error {
	s := parallel.Setup{GPU: hardware.MustGPU(reportGPU), Model: hardware.MustModel(reportModel), Weights: hardware.WeightsFP8}
	layouts := [2]parallel.Layout{{TP: 8, PP: 1, DP: 1, MicroBatches: 1, Schedule: parallel.GPipe}, {TP: 8, PP: 2, DP: 1, MicroBatches: m, Schedule: parallel.GPipe}}
	probe, err := s.Replica(layouts[0])
	if err != nil {
		return err
	}
	batch := max(min(r.batch, probe.MaxSeqs(r.context+1)), m)
	for i, l := range layouts {
		if r.report[i], err = r.layoutAt(s, l, batch, true); err != nil {
			return err
		}
		if r.reportFull[i], err = r.layoutAt(s, l, min(r.report[i].maxSeqs, 4096), false); err != nil {
			return err
		}
		bs := s
		bs.Weights = hardware.WeightsBF16
		if r.bf16[i], err = r.layoutAt(bs, l, 0, false); err != nil {
			return err
		}
	}
	return nil
}

// runNode lays the 70B on 8 of the chosen GPUs, in the chosen weights: as
// 8 replicas of TP1 down to one TP8, the load split evenly.
func (r *parallelismRun) runNode(s parallel.Setup) error {
	s.Model = hardware.MustModel(nodeModel)
	for _, tp := range []int{1, 2, 4, 8} {
		l := parallel.Layout{TP: tp, PP: 1, DP: nodeGPUs / tp, MicroBatches: 1}
		c, err := r.layoutAt(s, l, r.load/l.DP, true)
		if err != nil {
			return err
		}
		r.node = append(r.node, c)
	}
	return nil
}

// kvPerGPUClaim is the KV pool per GPU of Llama-3.1-70B FP8 on B200 at TP
// 1, 2 and 4, beside Dynamo's NVFP4 figures.
func kvPerGPUClaim() (out [3]int64) {
	s := parallel.Setup{GPU: hardware.MustGPU("b200"), Model: hardware.MustModel(nodeModel), Weights: hardware.WeightsFP8}
	for i, tp := range []int{1, 2, 4} {
		rep, err := s.Replica(parallel.Layout{TP: tp, PP: 1, DP: 1, MicroBatches: 1})
		if err == nil && rep.Fits() == nil {
			out[i] = rep.Stages[0].Pool.UsedBytes
		}
	}
	return out
}

// gptFastClaim is Llama-3.1-70B BF16 on A100-80GB at TP 2, 4, 8, batch 1,
// in tokens per second, beside gpt-fast's Llama-2-70B.
func gptFastClaim() (out [3]float64) {
	s := parallel.Setup{GPU: hardware.MustGPU("a100-80gb-sxm"), Model: hardware.MustModel(nodeModel), Weights: hardware.WeightsBF16}
	for i, tp := range []int{2, 4, 8} {
		rep, err := s.Replica(parallel.Layout{TP: tp, PP: 1, DP: 1, MicroBatches: 1})
		if err != nil || rep.Fits() != nil {
			continue
		}
		if st, err := rep.Decode(1, 128); err == nil {
			out[i] = st.PerUser()
		}
	}
	return out
}
