package lessons

import (
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
)

// Knobs shared by the lessons that price steps on a GPU.
var (
	gpuParam   = Param{Key: "gpu", Label: "GPU", Help: "Sets memory, bandwidth and peak FLOPS (core/hardware, with sources).", Kind: Choice, Choices: gpuIDs("h100-sxm")}
	modelParam = Param{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: Choice, Choices: modelIDs()}
)

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
	kvBlocks int
}

// newEngine builds the engine for the "gpu" and "model" knobs. It fails (with
// the GPU and model named) when the weights do not fit.
func newEngine(v Values, blockSize int) (*engine, error) {
	g, err := hardware.GPUByID(v.Choice("gpu"))
	if err != nil {
		return nil, err
	}
	m, err := hardware.ModelByID(v.Choice("model"))
	if err != nil {
		return nil, err
	}
	sm, err := hardware.NewStepModel(g, m, 1, hardware.BF16)
	if err != nil {
		return nil, err
	}
	// vLLM v1 runs decode steps as captured CUDA graphs and overlaps host
	// work with the GPU (async scheduling); the cuda-graphs lesson takes
	// these apart.
	sm.Dispatcher = hardware.Replay{Launch: hardware.GraphLaunch}
	sm.OverlapHost = true
	c, err := hardware.KVCapacity(g, m, 0.9, blockSize, 1, sm.KVBytesPerElement, sm.WeightBytesPerParam)
	if err != nil {
		return nil, Relation("model", m.ID, "a model whose BF16 weights fit on one "+g.Name+" ("+err.Error()+")")
	}
	return &engine{gpu: g, model: m, step: sm, kvBlocks: int(c.Blocks)}, nil
}

func (e *engine) timer() scheduler.Timer { return scheduler.HardwareTimer{Model: e.step} }
