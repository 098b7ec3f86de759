package kit_test

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// Consistency of memory: the simulated pool is the one vLLM would
// allocate, less vLLM's null block (kv-budget's checks compare it with that
// lesson's figure); and hardware.Fit, which every lesson checks its knobs
// with, accepts the tokens it holds and not a block more. Before, kit.NewEngine
// sized it without the activation reserve: 26,674 blocks for Llama-3.1-8B
// on an H100 (80 GB × 0.9 − weights), where Fit allowed 25,112 (the
// reserve taken off too) and vLLM allocates 27,271 (0.9 of the 79.19 GiB
// torch reports).
func TestEnginePoolIsVLLMs(t *testing.T) {
	gpu, model := kit.GPUParam, kit.ModelParam
	n := 0
	for _, g := range gpu.Choices {
		for _, m := range model.Choices {
			for _, budget := range []int{2048, 8192, 32768} {
				e, err := kit.NewEngineAt(lessontest.EngineValues(t, g, m), 16, budget)
				fit := hardware.Fit{GPU: hardware.MustGPU(g), Model: hardware.MustModel(m), FixedTP: true, BatchedTokens: budget}
				if (err == nil) != (fit.Check() == nil) {
					t.Errorf("%s on %s at %d tokens: engine error %v, Fit %v", m, g, budget, err, fit.Check())
				}
				if err != nil {
					continue
				}
				n++
				fit.KVTokens = int64(e.KVBlocks+1) * 16
				if err := fit.Check(); err != nil {
					t.Errorf("%s on %s at %d tokens: Fit refuses the pool's %d tokens: %v", m, g, budget, fit.KVTokens, err)
				}
				fit.KVTokens += 16
				if fit.Check() == nil {
					t.Errorf("%s on %s at %d tokens: Fit accepts %d tokens, a block more than the pool", m, g, budget, fit.KVTokens)
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d engines built", n)
	}
	e, err := kit.NewEngine(lessontest.EngineValues(t, "h100-sxm", "llama-3.1-8b"), 16)
	if err != nil || e.KVBlocks != 27270 {
		t.Errorf("8B on H100: %v blocks (%v), want 27,271 less the null block", e, err)
	}
}
