package lessons

import (
	"maps"
	"strconv"
	"strings"
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

// Issue 11 item 8: the engines run vLLM's batch defaults
// (scheduler.BatchDefaults for `vllm serve`). measuring, sandbox and
// cuda-graphs default their knobs to the default GPU's (1,024 sequences,
// 8,192 tokens on an H100) and say what vLLM would pick on a GPU whose
// defaults differ; smart-routing and disaggregation take the chosen GPU's.
// Before, every one of them ran 256 sequences.
func TestLessonsRunVLLMBatchDefaults(t *testing.T) {
	h100 := hardware.MustGPU("h100-sxm")
	budget, seqs := vllmBatch(h100)
	if budget != 8192 || seqs != 1024 {
		t.Fatalf("H100 defaults %d / %d, want 8,192 / 1,024", budget, seqs)
	}
	for _, l := range []*Lesson{measuring, sandbox, cudaGraphs} {
		if g, _ := l.Param("gpu"); g.Choices[0] != "h100-sxm" {
			t.Errorf("%s: default GPU %s", l.Slug, g.Choices[0])
		}
		if p, _ := l.Param("max_num_seqs"); int(p.Default) != seqs {
			t.Errorf("%s: max_num_seqs defaults to %v, want vLLM's %d", l.Slug, p.Default, seqs)
		}
		if p, ok := l.Param("max_num_batched_tokens"); ok && int(p.Default) != budget {
			t.Errorf("%s: max_num_batched_tokens defaults to %v, want vLLM's %d", l.Slug, p.Default, budget)
		}
	}
	// The narration names vLLM's defaults for the chosen GPU, where the
	// knobs differ from them.
	const l4Note = "On an NVIDIA L4 vLLM would default to max_num_seqs 256 and max_num_batched_tokens 2,048 (get_batch_defaults)"
	for _, c := range []struct {
		l    *Lesson
		set  map[string]string
		step int
	}{
		{measuring, map[string]string{"duration_s": "1", "points": "2", "rate_max": "4"}, 0},
		{sandbox, map[string]string{"requests": "8"}, 0},
		{cudaGraphs, nil, 6},
	} {
		for _, gpu := range []string{"h100-sxm", "l4"} {
			set := map[string]string{"gpu": gpu}
			maps.Copy(set, c.set)
			s, _, err := c.l.Run(set)
			if err != nil {
				t.Fatalf("%s %v: %v", c.l.Slug, set, err)
			}
			n := s.Steps[c.step].Narration
			if hasNote := strings.Contains(n, l4Note); hasNote != (gpu == "l4") {
				t.Errorf("%s on %s: step %d says vLLM's L4 defaults: %v\n%s", c.l.Slug, gpu, c.step+1, hasNote, n)
			}
		}
	}
	// smart-routing's workers and disaggregation's take the GPU's
	// defaults; disaggregation caps max_num_seqs at its budget, as vLLM does.
	for _, gpu := range []string{"h100-sxm", "l4", "a100-80gb-sxm"} {
		v, errs := smartRouting.Resolve(map[string]string{"gpu": gpu, "requests": "8", "overload_requests": "8"})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runSmartRouting(v)
		if err != nil {
			t.Fatal(err)
		}
		if b, s := vllmBatch(hardware.MustGPU(gpu)); r.budget != b || r.seqs != s {
			t.Errorf("smart-routing on %s: workers run %d tokens / %d sequences, vLLM %d / %d", gpu, r.budget, r.seqs, b, s)
		}
	}
	for _, c := range []struct {
		gpu, budget string
		seqs        int
	}{{"h100-sxm", "8192", 1024}, {"h100-sxm", "512", 512}, {"l40s", "8192", 256}} {
		v, errs := disaggregation.Resolve(map[string]string{"gpu": c.gpu, "budget": c.budget, "requests": "4"})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runDisaggregation(v)
		if err != nil {
			t.Fatal(err)
		}
		if r.seqs != c.seqs {
			t.Errorf("disaggregation on %s with budget %s: max_num_seqs %d, want %d", c.gpu, c.budget, r.seqs, c.seqs)
		}
	}
}
