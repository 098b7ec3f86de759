package lessontest

import (
	"maps"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// engineKnobs is a lesson with the shared engine knobs only (gpu, model,
// graph_mode), for tests of kit.NewEngine.
var engineKnobs = &lessons.Lesson{Slug: "engine", Params: []lessons.Param{kit.GPUParam, kit.ModelParam, kit.GraphParam}}

// EngineValues resolves the engine knobs for kit.NewEngineAt.
func EngineValues(t *testing.T, gpu, model string) lessons.Values {
	t.Helper()
	v, errs := engineKnobs.Resolve(map[string]string{"gpu": gpu, "model": model})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// checkBatchDefaults: the engines run vLLM's batch defaults
// (scheduler.BatchDefaults for `vllm serve`): the lessons with
// Checks.BatchDefaults default their knobs to the default GPU's (1,024
// sequences, 8,192 tokens on an H100) and say what vLLM would pick on a GPU
// whose defaults differ, and only there (step BatchNoteStep of a run with
// BatchNoteKnobs, on an L4). Before, every one of them ran 256 sequences.
func checkBatchDefaults(t *testing.T, l *lessons.Lesson, c Checks) {
	budget, seqs := kit.VLLMBatch(hardware.MustGPU("h100-sxm"))
	if budget != 8192 || seqs != 1024 {
		t.Fatalf("H100 defaults %d / %d, want 8,192 / 1,024", budget, seqs)
	}
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
