package lessons

import (
	"strconv"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// engineValues resolves the sandbox's knobs (gpu, model and a token budget)
// for newEngineAt.
func engineValues(t *testing.T, gpu, model string) Values {
	t.Helper()
	v, errs := sandbox.Resolve(map[string]string{"gpu": gpu, "model": model})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// Issue 11, consistency of memory: the simulated pool is the one vLLM
// would allocate, the kv-budget lesson's figure for the same GPU, model
// and token budget (0.9 utilization, BF16, TP 1), less vLLM's null block;
// and hardware.Fit, which every lesson checks its knobs with, accepts the
// tokens it holds and not a block more. Before, newEngine sized it without
// the activation reserve: 26,674 blocks for Llama-3.1-8B on an H100 (80 GB
// × 0.9 − weights), where Fit allowed 25,112 (the reserve taken off too)
// and vLLM allocates 27,271 (0.9 of the 79.19 GiB torch reports).
func TestEnginePoolIsVLLMs(t *testing.T) {
	gpu, _ := sandbox.Param("gpu")
	model, _ := sandbox.Param("model")
	n := 0
	for _, g := range gpu.Choices {
		for _, m := range model.Choices {
			for _, budget := range []int{2048, 8192, 32768} {
				e, err := newEngineAt(engineValues(t, g, m), 16, budget)
				fit := hardware.Fit{GPU: hardware.MustGPU(g), Model: hardware.MustModel(m), FixedTP: true, BatchedTokens: budget}
				if (err == nil) != (fit.Check() == nil) {
					t.Errorf("%s on %s at %d tokens: engine error %v, Fit %v", m, g, budget, err, fit.Check())
				}
				if err != nil {
					continue
				}
				n++
				s, _, err := kvBudget.Run(map[string]string{"gpu": g, "model": m, "max_num_batched_tokens": strconv.Itoa(budget), "max_model_len": "16"})
				if err != nil {
					t.Errorf("%s on %s at %d tokens: the engine runs, kv-budget refuses: %v", m, g, budget, err)
					continue
				}
				if blocks, _ := s.Metric("kv_blocks"); int(blocks) != e.kvBlocks+1 {
					t.Errorf("%s on %s at %d tokens: engine %d blocks + the null block, kv-budget %v", m, g, budget, e.kvBlocks, blocks)
				}
				fit.KVTokens = int64(e.kvBlocks+1) * 16
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
	e, err := newEngine(engineValues(t, "h100-sxm", "llama-3.1-8b"), 16)
	if err != nil || e.kvBlocks != 27270 {
		t.Errorf("8B on H100: %v blocks (%v), want 27,271 less the null block", e, err)
	}
}
