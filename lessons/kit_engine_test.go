package lessons

import (
	"maps"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// engineKnobs is a lesson with the shared engine knobs only (gpu, model,
// graph_mode), for tests of NewEngine.
var engineKnobs = &Lesson{Slug: "engine", Params: []Param{GPUParam, ModelParam, GraphParam}}

// EngineValues resolves the engine knobs for NewEngineAt.
func EngineValues(t *testing.T, gpu, model string) Values {
	t.Helper()
	v, errs := engineKnobs.Resolve(map[string]string{"gpu": gpu, "model": model})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// Consistency of memory: the simulated pool is the one vLLM would
// allocate, less vLLM's null block (kv-budget's checks compare it with that
// lesson's figure); and hardware.Fit, which every lesson checks its knobs
// with, accepts the tokens it holds and not a block more. Before, NewEngine
// sized it without the activation reserve: 26,674 blocks for Llama-3.1-8B
// on an H100 (80 GB × 0.9 − weights), where Fit allowed 25,112 (the
// reserve taken off too) and vLLM allocates 27,271 (0.9 of the 79.19 GiB
// torch reports).
func TestEnginePoolIsVLLMs(t *testing.T) {
	gpu, model := GPUParam, ModelParam
	n := 0
	for _, g := range gpu.Choices {
		for _, m := range model.Choices {
			for _, budget := range []int{2048, 8192, 32768} {
				e, err := NewEngineAt(EngineValues(t, g, m), 16, budget)
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
	e, err := NewEngine(EngineValues(t, "h100-sxm", "llama-3.1-8b"), 16)
	if err != nil || e.KVBlocks != 27270 {
		t.Errorf("8B on H100: %v blocks (%v), want 27,271 less the null block", e, err)
	}
}

// The engines run vLLM's batch defaults (scheduler.BatchDefaults for `vllm
// serve`): the lessons that register BatchDefaults default their knobs to
// the default GPU's (1,024 sequences, 8,192 tokens on an H100) and say what
// vLLM would pick on a GPU whose defaults differ. Before, every one of them
// ran 256 sequences.
func TestLessonsRunVLLMBatchDefaults(t *testing.T) {
	h100 := hardware.MustGPU("h100-sxm")
	budget, seqs := VLLMBatch(h100)
	if budget != 8192 || seqs != 1024 {
		t.Fatalf("H100 defaults %d / %d, want 8,192 / 1,024", budget, seqs)
	}
	for _, l := range All() {
		c := lessonTests[l.Slug]
		if c.BatchDefaults {
			t.Run(l.Slug, func(t *testing.T) { checkBatchDefaults(t, l, c, budget, seqs) })
		}
	}
}

// checkBatchDefaults checks l's batch knobs and its note on an L4
// (TestLessonsRunVLLMBatchDefaults).
func checkBatchDefaults(t *testing.T, l *Lesson, c Checks, budget, seqs int) {
	// The narration names vLLM's defaults for the chosen GPU, where the
	// knobs differ from them.
	const l4Note = "On an NVIDIA L4 vLLM would default to max_num_seqs 256 and max_num_batched_tokens 2,048 (get_batch_defaults)"
	if g, _ := l.Param("gpu"); g.Choices[0] != "h100-sxm" {
		t.Errorf("%s: default GPU %s", l.Slug, g.Choices[0])
	}
	if p, _ := l.Param("max_num_seqs"); int(p.Default) != seqs {
		t.Errorf("%s: max_num_seqs defaults to %v, want vLLM's %d", l.Slug, p.Default, seqs)
	}
	if p, ok := l.Param("max_num_batched_tokens"); ok && int(p.Default) != budget {
		t.Errorf("%s: max_num_batched_tokens defaults to %v, want vLLM's %d", l.Slug, p.Default, budget)
	}
	for _, gpu := range []string{"h100-sxm", "l4"} {
		set := map[string]string{"gpu": gpu}
		maps.Copy(set, c.BatchNoteKnobs)
		s, _, err := l.Run(set)
		if err != nil {
			t.Fatalf("%s %v: %v", l.Slug, set, err)
		}
		n := s.Steps[c.BatchNoteStep].Narration
		if hasNote := strings.Contains(n, l4Note); hasNote != (gpu == "l4") {
			t.Errorf("%s on %s: step %d says vLLM's L4 defaults: %v\n%s", l.Slug, gpu, c.BatchNoteStep+1, hasNote, n)
		}
	}
}
