package parallel

import (
	"errors"
	"fmt"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
)

// Layout is how many GPUs split one model and how: TP GPUs share every
// layer, PP stages hold consecutive layers, DP replicas each hold a whole
// copy; Schedule is how decode steps cross the stages, and under GPipe a
// step's batch crosses them in MicroBatches parts.
type Layout struct {
	TP, PP, DP   int
	MicroBatches int
	Schedule     Schedule
}

// Schedule is how a replica's decode steps cross its pipeline stages.
type Schedule int

const (
	// BatchQueue is vLLM v1's: the engine keeps as many batches in flight
	// as there are stages (max_concurrent_batches = pipeline_parallel_size,
	// vllm-project/vllm @ 00f6c9bf92aa69c72d5828d28d029129775223b7,
	// vllm/v1/executor/multiproc_executor.py), schedules a new batch
	// whenever the queue has room and waits for the oldest only when it is
	// full (EngineCore.step_with_batch_queue, vllm/v1/engine/core.py: "to
	// eliminate pipeline bubbles"). A request is scheduled again only once
	// its previous step has returned, so the batches in flight hold
	// disjoint requests: the running sequences are served as PP batches
	// taking turns, and a batch's next step enters the first stage as soon
	// as its previous one has left the last. MicroBatches is not used.
	BatchQueue Schedule = iota
	// GPipe drains every step: the step's batch crosses the stages in
	// MicroBatches micro-batches, and the next step starts once the last
	// has left the last stage, so every step pays the pipeline bubble.
	GPipe
)

// String names the schedule.
func (s Schedule) String() string {
	switch s {
	case BatchQueue:
		return "vLLM v1 batch queue"
	case GPipe:
		return "GPipe, drained every step"
	}
	return fmt.Sprintf("Schedule(%d)", int(s))
}

// GPUs is TP · PP · DP.
func (l Layout) GPUs() int { return l.TP * l.PP * l.DP }

// ReplicaGPUs is TP · PP, the GPUs of one copy of the model.
func (l Layout) ReplicaGPUs() int { return l.TP * l.PP }

// Name is the layout as engines' docs write it: "TP8", "TP8PP2",
// "4×TP2".
func (l Layout) Name() string {
	s := fmt.Sprintf("TP%d", l.TP)
	if l.PP > 1 {
		s += fmt.Sprintf("PP%d", l.PP)
	}
	if l.DP > 1 {
		s = fmt.Sprintf("%d×%s", l.DP, s)
	}
	return s
}

// Defaults of a Setup's zero fields.
const (
	defaultNodeGPUs      = 8    // an HGX board: 8 GPUs on one NVSwitch
	defaultMemUtil       = 0.9  // vLLM's gpu_memory_utilization
	defaultBatchedTokens = 8192 // vLLM's max_num_batched_tokens on H100-class parts
	defaultBlockSize     = 16   // vLLM's block size
	activationBytes      = 2    // BF16 activations crossing between stages
	sentTensors          = 2    // hidden state and residual
)

// Setup is the hardware and model a layout is made of. Zero fields take
// the defaults above; the links default to core/cluster's profiles.
type Setup struct {
	GPU               hardware.GPU
	Model             hardware.Model
	Weights           hardware.WeightFormat
	KVBytesPerElement int
	MemUtilization    float64
	BatchedTokens     int
	BlockSize         int
	// NodeGPUs is the GPUs of one node, all linked by NVLink.
	NodeGPUs int
	// InterNode is the link between nodes, per GPU (one NIC each);
	// IntraNode the link between GPUs of one node.
	InterNode, IntraNode cluster.Link
}

func (s Setup) withDefaults() Setup {
	if s.Weights == "" {
		s.Weights = hardware.WeightsBF16
	}
	if s.KVBytesPerElement <= 0 {
		s.KVBytesPerElement = 2
	}
	if s.MemUtilization <= 0 {
		s.MemUtilization = defaultMemUtil
	}
	if s.BatchedTokens <= 0 {
		s.BatchedTokens = defaultBatchedTokens
	}
	if s.BlockSize <= 0 {
		s.BlockSize = defaultBlockSize
	}
	if s.NodeGPUs <= 0 {
		s.NodeGPUs = defaultNodeGPUs
	}
	if s.InterNode.Bandwidth <= 0 {
		s.InterNode = cluster.MustLink("ib-ndr")
	}
	if s.IntraNode.Bandwidth <= 0 {
		s.IntraNode = IntraNodeLink(s.GPU)
	}
	return s
}

// IntraNodeLink is the link between two GPUs of one node: NVLink at the
// part's own per-direction rate with the efficiency and latency measured
// on H100 (core/cluster's nvlink4), or PCIe at its measured efficiency on
// a part without NVLink.
func IntraNodeLink(g hardware.GPU) cluster.Link {
	nv := cluster.MustLink("nvlink4")
	if g.ScaleUpBW > 0 {
		return cluster.Link{ID: "nvlink", Name: "NVLink (same node)", Alpha: nv.Alpha, Bandwidth: g.ScaleUpBW, Eff: nv.Eff, Sources: nv.Sources}
	}
	pcie := cluster.MustLink("pcie4")
	return cluster.Link{ID: "pcie", Name: "PCIe (same node)", Alpha: nv.Alpha, Bandwidth: g.HostLinkBW, Eff: pcie.Eff, Sources: pcie.Sources}
}

// Stage is one pipeline stage of a replica: its layers, its memory on
// each of its TP GPUs, and how its activations leave it.
type Stage struct {
	Index int
	// First and End bound its layers, [First, End).
	First, End int
	// WeightBytes is each GPU's share of the stage's weights.
	WeightBytes int64
	// Budget is vLLM's start-up sizing on each GPU of the stage; Pool its
	// result, Err its refusal (the stage does not fit).
	Budget hardware.KVBudget
	Pool   hardware.KVPool
	Err    error
	// Next is the link to the next stage (zero on the last), CrossesNode
	// whether it leaves the node.
	Next        cluster.Link
	CrossesNode bool
	step        hardware.StepModel
}

// Layers is the stage's layer count.
func (s Stage) Layers() int { return s.End - s.First }

// Replica is one copy of the model on TP · PP GPUs.
type Replica struct {
	Setup  Setup
	Layout Layout
	Stages []Stage
}

// ErrLayout is wrapped by Replica for a layout it cannot build.
var ErrLayout = errors.New("parallel: layout")

// StageLayers splits layers over pp stages as vLLM's get_pp_indices: L /
// pp each, and the remainder one apiece to the stages before the last
// (partitions[-2], [-3], …), which carries the final norm and lm_head.
func StageLayers(layers, pp int) []int {
	parts := make([]int, pp)
	for i := range parts {
		parts[i] = layers / pp
	}
	for i := 2; i < layers%pp+2; i++ {
		parts[pp-i]++
	}
	return parts
}

// Replica lays one copy of the model out as l.TP × l.PP GPUs. It fails for
// a layout no engine would build (TP that does not split the heads, TP
// beyond a node, more stages than layers); a layout whose memory does not
// fit is built, with each stage's Err set (Fits reports it).
func (s Setup) Replica(l Layout) (*Replica, error) {
	s = s.withDefaults()
	m := s.Model
	switch {
	case l.TP < 1 || l.PP < 1 || l.DP < 1:
		return nil, fmt.Errorf("%w: TP %d, PP %d, DP %d, want each ≥ 1", ErrLayout, l.TP, l.PP, l.DP)
	case l.Schedule != BatchQueue && l.Schedule != GPipe:
		return nil, fmt.Errorf("%w: %v, want BatchQueue or GPipe", ErrLayout, l.Schedule)
	case l.Schedule == GPipe && l.MicroBatches < 1:
		return nil, fmt.Errorf("%w: %d micro-batches, want ≥ 1", ErrLayout, l.MicroBatches)
	case l.TP > s.NodeGPUs:
		return nil, fmt.Errorf("%w: TP %d spans more than a node of %d GPUs: its all-reduces would cross the network", ErrLayout, l.TP, s.NodeGPUs)
	case l.PP > m.Layers:
		return nil, fmt.Errorf("%w: PP %d exceeds %s's %d layers", ErrLayout, l.PP, m.ID, m.Layers)
	}
	r := &Replica{Setup: s, Layout: l}
	first := 0
	for i, n := range StageLayers(m.Layers, l.PP) {
		st, err := s.stage(l, i, first, first+n)
		if err != nil {
			return nil, err
		}
		r.Stages = append(r.Stages, st)
		first += n
	}
	return r, nil
}

// stage builds stage i of layout l over layers [first, end).
func (s Setup) stage(l Layout, i, first, end int) (Stage, error) {
	m := s.Model
	sm := m
	sm.Layers = end - first
	step, err := hardware.NewStepModel(s.GPU, sm, l.TP, hardware.BF16)
	if err != nil {
		return Stage{}, fmt.Errorf("%w: %v", ErrLayout, err)
	}
	if err := step.SetWeights(s.Weights); err != nil {
		return Stage{}, err
	}
	step.KVBytesPerElement = s.KVBytesPerElement
	step.OverlapHost = true
	step.Dispatcher = hardware.Replay{Launch: hardware.GraphLaunch}
	if l.TP > 1 {
		step.AllReduce = hardware.VLLMAllReduce(s.GPU, l.TP)
	}
	step.NoEmbedding, step.NoOutput = i > 0, i < l.PP-1
	st := Stage{Index: i, First: first, End: end, step: step}
	st.WeightBytes = ceilDiv(s.stageWeights(l, i, sm.Layers), int64(l.TP))
	// The NCCL buffers of the non-torch reserve exist on every GPU that
	// talks to another, a pipeline's too.
	reserveTP := l.TP
	if reserveTP == 1 && l.PP > 1 {
		reserveTP = 2
	}
	act, nonTorch := hardware.ReserveParts(m, reserveTP, s.BatchedTokens)
	total, _ := hardware.EngineMemory(s.GPU)
	st.Budget = hardware.KVBudget{Model: sm, TP: l.TP, TotalBytes: total, MemUtilization: s.MemUtilization,
		WeightBytes: st.WeightBytes, ActivationBytes: act, NonTorchBytes: nonTorch,
		KVBytesPerElement: s.KVBytesPerElement, BlockSize: s.BlockSize, MaxModelLen: 1}
	st.Pool, st.Err = st.Budget.Size()
	if i < l.PP-1 {
		st.CrossesNode = crossesNode(i, l.TP, s.NodeGPUs)
		st.Next = s.IntraNode
		if st.CrossesNode {
			st.Next = s.InterNode
		}
	}
	return st, nil
}

// crossesNode reports whether the boundary after stage i leaves the node:
// stage i holds the replica's GPUs [i·tp, (i+1)·tp), packed from the start
// of a node.
func crossesNode(i, tp, nodeGPUs int) bool {
	last, next := (i+1)*tp-1, (i+1)*tp
	return last/nodeGPUs != next/nodeGPUs
}

// stageWeights is the weights of stage i (layers of them), all its GPUs
// together: the linear layers pro rata, the embedding on the first stage,
// the output projection on the last (in BF16 in an FP8 checkpoint, as
// hardware.LoadedWeightBytes counts them). Tied embeddings are stored once
// on one stage, but the last stage of a pipeline needs its own copy.
func (s Setup) stageWeights(l Layout, i, layers int) int64 {
	m := s.Model
	linearBPW := int64(2)
	if s.Weights == hardware.WeightsFP8 {
		linearBPW = 1
	}
	edge := int64(m.Vocab) * int64(m.Hidden)
	edges := m.Params - m.NonEmbeddingParams // embedding, and lm_head when untied
	head := edges - edge
	if m.TiedEmbeddings && l.PP > 1 {
		head = edge
	}
	w := m.NonEmbeddingParams * linearBPW * int64(layers) / int64(m.Layers)
	if i == 0 {
		w += 2 * edge
	}
	if i == l.PP-1 {
		w += 2 * head
	}
	return w
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// Fits is nil when every stage's weights and reserve leave room for KV
// cache, else the first stage's refusal.
func (r *Replica) Fits() error {
	for _, st := range r.Stages {
		if st.Err != nil {
			return fmt.Errorf("stage %d of %s: %w", st.Index+1, r.Layout.Name(), st.Err)
		}
	}
	return nil
}

// KVTokens is the tokens of KV cache the replica holds: its smallest
// stage pool, less vLLM's null block; 0 when it does not fit.
func (r *Replica) KVTokens() int64 {
	if r.Fits() != nil {
		return 0
	}
	low := r.Stages[0].Pool.Blocks
	for _, st := range r.Stages[1:] {
		low = min(low, st.Pool.Blocks)
	}
	return max(low-1, 0) * int64(r.Setup.BlockSize)
}

// MaxSeqs is the most sequences of context tokens each whose KV the
// replica holds at once, in whole blocks.
func (r *Replica) MaxSeqs(context int) int {
	bs := int64(r.Setup.BlockSize)
	per := (int64(context) + bs - 1) / bs
	return int(r.KVTokens() / bs / max(per, 1))
}
