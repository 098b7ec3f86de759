package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
)

// Knobs shared by the lessons that price steps on a GPU.
var (
	gpuParam   = Param{Key: "gpu", Label: "GPU", Help: "Sets memory, bandwidth and peak FLOPS (core/hardware, with sources).", Kind: Choice, Choices: gpuIDs("h100-sxm")}
	modelParam = Param{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: Choice, Choices: modelIDs()}
	graphParam = Param{Key: "graph_mode", Label: "CUDA graphs", Help: "vLLM's CUDAGraphMode: how the CPU issues each step's kernels (the cuda-graphs lesson takes it apart).", Kind: Choice, Choices: graphModes()}
)

// graphModes lists vLLM's CUDA-graph modes, the default first.
func graphModes() []string {
	var out []string
	for _, m := range cudagraph.Modes() {
		out = append(out, m.Key())
	}
	return out
}

// gpuIDs lists the GPU profiles with first as the default.
func gpuIDs(first string) []string {
	ids := []string{first}
	for _, g := range hardware.GPUs() {
		if g.ID != first {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// engine is a priced single-GPU serving setup: the step model with CUDA-graph
// replay and overlapped host work (a modern vLLM), and its KV capacity.
type engine struct {
	gpu      hardware.GPU
	model    hardware.Model
	step     hardware.StepModel
	mode     cudagraph.Mode
	kvBlocks int
}

// chosenHardware resolves the "gpu" and "model" knobs to their profiles.
func chosenHardware(v Values) (hardware.GPU, hardware.Model, error) {
	g, err := hardware.GPUByID(v.Choice("gpu"))
	if err != nil {
		return hardware.GPU{}, hardware.Model{}, err
	}
	m, err := hardware.ModelByID(v.Choice("model"))
	return g, m, err
}

// tpRelation is the error for a tensor-parallel degree that does not split
// the model evenly.
func tpRelation(m hardware.Model, tp int) error {
	return Relation("tp", strconv.Itoa(tp), fmt.Sprintf("a degree that splits %s's %d query heads, %d KV heads and MLP evenly (1, 2, 4 or 8)", m.Name, m.QHeads, m.KVHeads))
}

// newEngine builds the engine for the "gpu" and "model" knobs and, when the
// lesson has it, the "graph_mode" knob. It fails (with the GPU and model
// named) when the weights do not fit.
func newEngine(v Values, blockSize int) (*engine, error) {
	g, m, err := chosenHardware(v)
	if err != nil {
		return nil, err
	}
	sm, err := hardware.NewStepModel(g, m, 1, hardware.BF16)
	if err != nil {
		return nil, err
	}
	// vLLM v1 dispatches with CUDA graphs (FULL_AND_PIECEWISE by default)
	// and overlaps host work with the GPU (async scheduling).
	mode := cudagraph.Default
	if v.Has("graph_mode") {
		if mode, err = cudagraph.ParseMode(v.Choice("graph_mode")); err != nil {
			return nil, err
		}
	}
	sm.OverlapHost = true
	c, err := hardware.KVCapacity(g, m, 0.9, blockSize, 1, sm.KVBytesPerElement, sm.WeightBytesPerParam)
	if err != nil {
		return nil, Relation("model", m.ID, "a model whose BF16 weights fit on one "+g.Name+" ("+err.Error()+")")
	}
	return &engine{gpu: g, model: m, step: sm, mode: mode, kvBlocks: int(c.Blocks)}, nil
}

// timer prices the steps of a scheduler with these max_num_seqs and token
// budget, which set vLLM's CUDA-graph capture sizes.
func (e *engine) timer(maxNumSeqs, budget int) scheduler.Timer {
	sm := e.step
	sm.Dispatcher = cudagraph.New(e.mode, maxNumSeqs, budget)
	return scheduler.HardwareTimer{Model: sm}
}
