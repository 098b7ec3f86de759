package lessontest

import (
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// The floor check must catch a step priced faster than reading the weights:
// 0.5 ms for Llama-3.1-8B on an H100 (16 GB at 3.35 TB/s takes about 4.5 ms),
// and a prefill of a registered prompt knob faster than its FLOPs.
func TestPhysicalFloorCatchesTooFastSteps(t *testing.T) {
	l := &lessons.Lesson{Slug: "floor", Params: []lessons.Param{kit.GPUParam, kit.ModelParam,
		{Key: "prompt", Label: "Prompt", Unit: "tokens", Kind: lessons.Int, Default: 8192, Min: 1, Max: 8192, Step: 1}}}
	v, errs := l.Resolve(map[string]string{"gpu": "h100-sxm", "model": "llama-3.1-8b"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fast := &lessons.Script{Metrics: []lessons.Metric{{Key: "decode_step_ms", Label: "fake", Unit: "ms", Value: 0.5}}}
	if p := floorProblems(nil, v, fast); len(p) != 1 {
		t.Errorf("a 0.5 ms decode step on %s passed the floor: %v", v.Choice("model"), p)
	}
	slow := &lessons.Script{Metrics: []lessons.Metric{{Key: "decode_step_ms", Label: "fake", Unit: "ms", Value: 5}}}
	if p := floorProblems(nil, v, slow); len(p) != 0 {
		t.Errorf("a 5 ms decode step fails the floor: %v", p)
	}
	// 8,192 tokens × 2 FLOPs × about 7 G non-embedding parameters at the
	// H100's dense peak take over 100 ms.
	prefill := &lessons.Script{Metrics: []lessons.Metric{{Key: "prefill_ms", Label: "fake", Unit: "ms", Value: 20}}}
	if p := floorProblems(map[string]string{"prefill_ms": "prompt"}, v, prefill); len(p) != 1 {
		t.Errorf("a 20 ms prefill of 8,192 tokens passed the floor: %v", p)
	}
	if p := floorProblems(nil, v, prefill); len(p) != 0 {
		t.Errorf("without its prompt knob a 20 ms prefill is held to the weights' read only: %v", p)
	}
}
