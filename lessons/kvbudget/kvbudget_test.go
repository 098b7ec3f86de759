package kvbudget

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
	"github.com/inferlab/inferlab/scene"
)

func runKV(t *testing.T, set map[string]string) kvBudgetRun {
	t.Helper()
	v, err := lesson.ResolveChecked(set)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	r, err := runKVBudget(v)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	return r
}

// The pool adds up: requested − weights − reserve = available; the blocks
// fill it to within one block per layer; tokens, concurrency and the fp8
// pool follow from the blocks.
func TestKVBudgetAddsUp(t *testing.T) {
	for _, set := range []map[string]string{
		nil,
		{"model": "qwen2.5-7b", "kv_cache_dtype": "fp8", "gpu_memory_utilization": "0.95"},
		{"model": "llama-3.1-70b", "tp": "4"},
		{"model": "deepseek-v2-lite", "max_model_len": "32768"},
		{"model": "falcon-7b", "max_model_len": "2048", "gpu": "a100-80gb-sxm"},
		{"gpu": "h200-sxm", "model": "deepseek-v3", "tp": "8", "weights": "fp8"},
	} {
		r := runKV(t, set)
		b, p, m := r.budget, r.pool, r.s.model
		if p.Available != p.Requested-b.WeightBytes-b.ActivationBytes-b.NonTorchBytes {
			t.Errorf("%v: available %d ≠ %d − %d − %d − %d", set, p.Available, p.Requested, b.WeightBytes, b.ActivationBytes, b.NonTorchBytes)
		}
		used := p.Blocks * p.PageBytes * int64(m.Layers)
		if used > p.Available || p.Available-used >= p.PageBytes*int64(m.Layers) {
			t.Errorf("%v: %d blocks use %d of %d bytes", set, p.Blocks, used, p.Available)
		}
		if p.Tokens != 16*p.Blocks || p.Concurrency != float64(p.Blocks)/float64((r.s.maxLen+15)/16) {
			t.Errorf("%v: tokens %d, concurrency %v from %d blocks", set, p.Tokens, p.Concurrency, p.Blocks)
		}
		// The other dtype: the same pool, the bytes per token halved or doubled.
		if r.other.Available != p.Available || r.other.BytesPerToken*int64(r.s.kvBPE) != p.BytesPerToken*int64(3-r.s.kvBPE) {
			t.Errorf("%v: other dtype pool %d (want %d), %d B/token vs %d", set, r.other.Available, p.Available, r.other.BytesPerToken, p.BytesPerToken)
		}
		if lo, hi := min(p.Tokens, r.other.Tokens), max(p.Tokens, r.other.Tokens); hi < 2*lo || hi > 2*lo+16 {
			t.Errorf("%v: %d and %d tokens: fp8 should hold twice bf16's, to one block", set, p.Tokens, r.other.Tokens)
		}
	}
}

// TP grows the pool of a GQA model (weights shrink, heads split) and
// stops splitting at one head per GPU; MLA's per-GPU bytes do not shrink.
func TestKVBudgetTensorParallel(t *testing.T) {
	r := runKV(t, nil) // Llama-3.1-8B, 8 KV heads
	if len(r.tps) != 4 {
		t.Fatalf("%d TP degrees", len(r.tps))
	}
	for i := 1; i < len(r.tps); i++ {
		a, b := r.tps[i-1], r.tps[i]
		if !b.fits || b.tokens <= 2*a.tokens {
			t.Errorf("TP %d holds %d tokens, TP %d %d: want more than double (fewer bytes per token and more memory)", a.tp, a.tokens, b.tp, b.tokens)
		}
		if b.bytes*2 != a.bytes || b.weights >= a.weights {
			t.Errorf("TP %d: %d B/token and %d B of weights after %d and %d", b.tp, b.bytes, b.weights, a.bytes, a.weights)
		}
	}
	if r.tps[1].reserve <= r.tps[0].reserve {
		t.Error("the reserve should grow at TP 2 (communication buffers)")
	}
	if r.mla[0] != r.mla[1] || r.mla[0] != 31_104 || r.gqa[1]*2 != r.gqa[0] {
		t.Errorf("MLA %v (want 31,104 at both TP), GQA %v (want halved)", r.mla, r.gqa)
	}
	q := runKV(t, map[string]string{"model": "qwen2.5-7b", "tp": "4"}) // 4 KV heads: TP 4 and 8 both keep one
	if last := q.tps[len(q.tps)-1]; last.tp != 4 || last.headsPerGPU != 1 {
		t.Errorf("Qwen2.5-7B: last TP %d with %d heads per GPU; 28 heads do not split 8 ways", last.tp, last.headsPerGPU)
	}
}

// The attention kinds in order of bytes per token: MHA > GQA > MLA > MQA
// for the four reference models, and the pool's tokens in the reverse
// order among those of similar weights.
func TestKVBudgetKinds(t *testing.T) {
	r := runKV(t, nil)
	want := []string{hardware.MHA, hardware.GQA, hardware.MQA, hardware.MLA}
	for i, k := range r.kinds {
		if k.model.AttentionKind() != want[i] || !k.fits {
			t.Errorf("reference %d: %s (%s), fits %v", i, k.model.ID, k.model.AttentionKind(), k.fits)
		}
	}
	mha, gqa, mqa, mla := r.kinds[0], r.kinds[1], r.kinds[2], r.kinds[3]
	if !(mha.bytes > gqa.bytes && gqa.bytes > mla.bytes && mla.bytes > mqa.bytes) {
		t.Errorf("bytes per token MHA %d, GQA %d, MLA %d, MQA %d", mha.bytes, gqa.bytes, mla.bytes, mqa.bytes)
	}
	if !(mqa.tokens > gqa.tokens && gqa.tokens > mha.tokens && mla.tokens > gqa.tokens) {
		t.Errorf("tokens MHA %d, GQA %d, MQA %d, MLA %d", mha.tokens, gqa.tokens, mqa.tokens, mla.tokens)
	}
}

// Bad combinations are refused on the knob that breaks them.
func TestKVBudgetRefusals(t *testing.T) {
	for _, tt := range []struct {
		set  map[string]string
		key  string
		text string
	}{
		{map[string]string{"model": "falcon-7b", "tp": "2"}, "tp", "71 query heads"},
		{map[string]string{"model": "llama-3.1-70b"}, "model", "pick tp ≥ 4"}, // tp left at its default: the refusal names the knob set
		{map[string]string{"model": "deepseek-v3", "tp": "8"}, "model", "weights"},
		{map[string]string{"max_model_len": "200000"}, "max_model_len", "131,072 positions"},
		{map[string]string{"gpu": "l4", "max_model_len": "131072"}, "max_model_len", "KV cache"},
		{map[string]string{"tp": "3"}, "tp", "splits"},
	} {
		_, _, err := lesson.Run(tt.set)
		var pe *lessons.ParamError
		if !errors.As(err, &pe) || pe.Key != tt.key || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%v: %v, want a refusal of %s mentioning %q", tt.set, err, tt.key, tt.text)
		}
	}
}

// Every mark of a memory stack names a part, a per-token entry or the
// requests row the scene draws, and every step but the closing table
// links its narration to its main figure.
func TestKVBudgetMarksResolve(t *testing.T) {
	for _, set := range []map[string]string{nil, {"kv_cache_dtype": "fp8", "model": "deepseek-v2-lite"}} {
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range s.Steps {
			for _, sc := range st.Scenes {
				if sc.Kind == scene.KindMemoryStack {
					for _, m := range sc.Marks {
						if !memoryDraws(sc.Memory, m.Ref) {
							t.Errorf("%v step %d: mark %s names nothing the memory stack draws", set, i, m.Ref)
						}
					}
				}
			}
			if i < 10 && len(st.Mentions) == 0 && !strings.Contains(st.Title, "utilization") {
				t.Errorf("%v step %d (%s) links nothing", set, i, st.Title)
			}
		}
	}
}

func memoryDraws(ms *scene.MemoryStack, ref string) bool {
	kind, key, _ := strings.Cut(ref, ":")
	switch kind {
	case "part":
		for _, p := range ms.Parts {
			if p.Key == key {
				return true
			}
		}
	case "attn":
		for _, c := range ms.PerToken {
			if c.Key == key {
				return true
			}
		}
	case "fit":
		return ms.Fit != nil
	}
	return false
}

// The validation figures the lesson shows are core/hardware's, and its
// narration counts those within 5%; the count belongs to the repository,
// not to the run (no knob moves it), so it is no run metric.
func TestKVBudgetValidationCount(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range hardware.ValidateKV() {
		if c.Within() {
			want++
		}
	}
	if want < 3 || !lessontest.Narrates(s, fmt.Sprintf("on %d of %d", want, len(hardware.ValidateKV()))) {
		t.Errorf("the narration does not count %d of %d published figures within 5%% (≥ 3)", want, len(hardware.ValidateKV()))
	}
	if _, ok := s.Metric("validation_within"); ok {
		t.Error("validation_within, a count of the repository's validation rows, reported as a run metric")
	}
}

// Device memory is what PyTorch reports where a log gives it: on an H200
// 139.80 GiB, not the datasheet's 141 GB (131.32 GiB), so the pool is that
// much larger, and the narration names where the figure was read.
func TestKVBudgetEngineMemoryH200(t *testing.T) {
	v, err := lesson.ResolveChecked(map[string]string{"gpu": "h200-sxm"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runKVBudget(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(r.budget.TotalBytes) / hardware.GiB; math.Abs(got-139.80) > 1e-9 {
		t.Errorf("total %.2f GiB, want PyTorch's 139.80", got)
	}
	n := r.Script().Steps[0].Narration
	if !strings.Contains(n, "139.80 GiB") || strings.Contains(n, "a little less") {
		t.Errorf("step 1: %q", n)
	}
}

// With vLLM's CUDA-graph estimate on (the default since v0.21.0) the graphs
// come off the pool; off (before v0.21.0) they sit in the headroom. The
// narration says which, with the version.
func TestKVBudgetCUDAGraphEstimate(t *testing.T) {
	run := func(est string) kvBudgetRun {
		v, err := lesson.ResolveChecked(map[string]string{"cudagraph_estimate": est})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runKVBudget(v)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	off, on := run("off"), run("on")
	if off.budget.CUDAGraphBytes != 0 || on.budget.CUDAGraphBytes <= 0 {
		t.Fatalf("graph estimate off %d, on %d bytes", off.budget.CUDAGraphBytes, on.budget.CUDAGraphBytes)
	}
	if d := off.pool.Available - on.pool.Available; d != on.budget.CUDAGraphBytes {
		t.Errorf("the estimate took %d bytes off the pool, want its %d", d, on.budget.CUDAGraphBytes)
	}
	for _, c := range []struct {
		r    kvBudgetRun
		want string
	}{{off, "before v0.21.0"}, {on, "since vLLM v0.21.0"}} {
		if n := c.r.Script().Steps[0].Narration; !strings.Contains(n, c.want) {
			t.Errorf("step 1 does not say %q: %q", c.want, n)
		}
	}
	// vLLM's current default utilization, with the change that set it.
	if n := off.utilStep().Narration; !strings.Contains(n, "0.92") || !strings.Contains(n, "38284") {
		t.Errorf("the utilization step does not name vLLM's current default: %q", n)
	}
}
