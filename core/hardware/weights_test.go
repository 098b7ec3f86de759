package hardware

import (
	"errors"
	"math"
	"testing"
)

// SetWeights(WeightsFP8) halves the linear layers' weight bytes and runs
// their GEMMs on the FP8 roof where the GPU has FP8 tensor cores; the
// embedding and lm_head stay BF16, and the KV cache keeps its format.
func TestSetWeightsFP8(t *testing.T) {
	m := MustModel("llama-3.1-8b")
	for _, c := range []struct {
		gpu     string
		fp8Math bool
	}{{"h100-sxm", true}, {"h200-sxm", true}, {"b200", true}, {"l4", true}, {"l40s", true}, {"a100-80gb-sxm", false}, {"a100-40gb-sxm", false}} {
		g := MustGPU(c.gpu)
		bf, err := NewStepModel(g, m, 1, BF16)
		if err != nil {
			t.Fatal(err)
		}
		bf.Dispatcher = Replay{Launch: GraphLaunch} // a decode step GPU-bound, not launch-bound
		fp := bf
		if err := fp.SetWeights(WeightsFP8); err != nil {
			t.Fatal(err)
		}
		if fp.FP8Math() != c.fp8Math || fp.KVBytesPerElement != 2 {
			t.Errorf("%s: FP8 math %v (want %v), KV %d bytes (want 2)", c.gpu, fp.FP8Math(), c.fp8Math, fp.KVBytesPerElement)
		}
		byName := func(s StepModel, b Batch) map[string]Kernel {
			out := map[string]Kernel{}
			for _, k := range s.Kernels(b) {
				if k.Layer <= 0 {
					out[k.Name] = k
				}
			}
			return out
		}
		dec := DecodeBatch(1, 1024)
		kb, kf := byName(bf, dec), byName(fp, dec)
		// The linear layers' weight bytes halve (activations stay 2 bytes).
		d, inter := float64(m.Hidden), float64(m.Intermediate)
		if got, want := kb["gate_up_proj"].Bytes-kf["gate_up_proj"].Bytes, d*2*inter; math.Abs(got-want) > 1 {
			t.Errorf("%s: gate_up_proj bytes drop by %g, want %g (one byte per weight)", c.gpu, got, want)
		}
		// lm_head and the embedding are BF16 in both.
		for _, name := range []string{"lm_head", "embedding"} {
			if kb[name].Bytes != kf[name].Bytes || kb[name].GPUTime != kf[name].GPUTime {
				t.Errorf("%s: %s %g B %g s in FP8, %g B %g s in BF16; want the same", c.gpu, name, kf[name].Bytes, kf[name].GPUTime, kb[name].Bytes, kb[name].GPUTime)
			}
		}
		// A decode step is bound by weight bytes: FP8 is faster, not twice.
		if r := bf.Seconds(dec) / fp.Seconds(dec); r < 1.2 || r > 2 {
			t.Errorf("%s: batch-1 decode BF16/FP8 = %.2f, want in (1.2, 2): kernel overheads do not shrink", c.gpu, r)
		}
		// A long prefill is compute-bound: FP8 math speeds it up, BF16 math
		// (A100's weight-only W8A16) leaves its GEMMs as they were.
		pre := PrefillBatch(1, 4096)
		gb, gf := byName(bf, pre)["gate_up_proj"], byName(fp, pre)["gate_up_proj"]
		if !gb.ComputeBound {
			t.Fatalf("%s: a 4,096-token gate_up_proj should be compute-bound", c.gpu)
		}
		if c.fp8Math && !(gf.GPUTime < 0.8*gb.GPUTime) {
			t.Errorf("%s: FP8 prefill GEMM %g s vs BF16 %g s, want faster", c.gpu, gf.GPUTime, gb.GPUTime)
		}
		if !c.fp8Math && gf.GPUTime != gb.GPUTime {
			t.Errorf("%s: weight-only FP8 prefill GEMM %g s vs BF16 %g s, want the same BF16 math", c.gpu, gf.GPUTime, gb.GPUTime)
		}
	}
	var s StepModel
	if err := s.SetWeights("int4"); err == nil {
		t.Error("SetWeights(int4) accepted")
	}
}

// Fit.Weights counts the weights as loaded: Llama-3.1-70B's BF16 weights
// overflow one H200, its FP8 checkpoint (linear layers in 1 byte, the
// embeddings in BF16) fits with room for KV.
func TestFitWeightFormat(t *testing.T) {
	g, m := MustGPU("h200-sxm"), MustModel("llama-3.1-70b")
	var fe *FitError
	if err := (Fit{GPU: g, Model: m, Weights: WeightsBF16, KVTokens: 8192}).Check(); !errors.As(err, &fe) || fe.Limit != LimitWeights {
		t.Errorf("70B BF16 on one H200: %v, want a weights refusal", err)
	}
	f := Fit{GPU: g, Model: m, Weights: WeightsFP8, KVTokens: 8192}
	if err := f.Check(); err != nil {
		t.Errorf("70B FP8 on one H200: %v", err)
	}
	loaded, _ := LoadedWeightBytes(m, WeightsFP8)
	if b := f.Budget(16); b.WeightBytes != loaded {
		t.Errorf("FP8 budget weights %d, want LoadedWeightBytes %d", b.WeightBytes, loaded)
	}
	if _, err := (Fit{GPU: g, Model: m, Weights: "int4"}).Pool(16); err == nil {
		t.Error("an unknown weight format was sized")
	}
	if err := (Fit{GPU: g, Model: m, Weights: "int4"}).Check(); err == nil {
		t.Error("an unknown weight format was accepted")
	}
}
