package hardware

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// h100Spec is an H100 SXM's datasheet figures as a reader would enter
// them, with the memory vLLM logs for it.
func h100Spec() CustomGPUSpec {
	return CustomGPUSpec{Name: "my-h100", MemoryGiB: 79.19, HBMGBps: 3350, BF16TFLOPS: 989.4, FP8TFLOPS: 1979, InterconnectGBps: 450}
}

// TestCustomGPUBounds: each figure's bounds, and the FP8-at-least-BF16
// relation, refused with an error naming the field and what is allowed.
func TestCustomGPUBounds(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(*CustomGPUSpec)
		field string // "" when accepted
		want  string // in the message
	}{
		{"an H100", func(*CustomGPUSpec) {}, "", ""},
		{"memory at its minimum", func(s *CustomGPUSpec) { s.MemoryGiB = 8 }, "", ""},
		{"memory at its maximum", func(s *CustomGPUSpec) { s.MemoryGiB = 1024 }, "", ""},
		{"memory below", func(s *CustomGPUSpec) { s.MemoryGiB = 7.99 }, "memory_gib", "from 8 to 1,024 (GiB)"},
		{"memory above", func(s *CustomGPUSpec) { s.MemoryGiB = 1025 }, "memory_gib", "from 8 to 1,024 (GiB)"},
		{"memory NaN", func(s *CustomGPUSpec) { s.MemoryGiB = math.NaN() }, "memory_gib", "NaN"},
		{"no memory", func(s *CustomGPUSpec) { s.MemoryGiB = 0 }, "memory_gib", "from 8 to 1,024"},
		{"bandwidth below", func(s *CustomGPUSpec) { s.HBMGBps = 99 }, "hbm_gbps", "from 100 to 50,000 (GB/s)"},
		{"bandwidth above", func(s *CustomGPUSpec) { s.HBMGBps = 50001 }, "hbm_gbps", "from 100 to 50,000"},
		{"an L4's bandwidth", func(s *CustomGPUSpec) { s.HBMGBps = 300 }, "", ""},
		{"BF16 below", func(s *CustomGPUSpec) { s.BF16TFLOPS = 9 }, "bf16_tflops", "from 10 to 20,000 (TFLOP/s)"},
		{"BF16 infinite", func(s *CustomGPUSpec) { s.BF16TFLOPS = math.Inf(1) }, "bf16_tflops", "+Inf"},
		{"no FP8", func(s *CustomGPUSpec) { s.FP8TFLOPS = 0 }, "", ""},
		{"FP8 below BF16", func(s *CustomGPUSpec) { s.FP8TFLOPS = 500 }, "fp8_tflops", "at least bf16_tflops (989.4)"},
		{"FP8 negative", func(s *CustomGPUSpec) { s.FP8TFLOPS = -1 }, "fp8_tflops", "0 (no FP8 tensor cores) or a number from 10 to 40,000"},
		{"FP8 above", func(s *CustomGPUSpec) { s.FP8TFLOPS = 40001 }, "fp8_tflops", "to 40,000"},
		// Once written "fp8_tflops = 0 is not allowed: want 0 (…) or …":
		// a figure three decimals round to 0 is written in full.
		{"FP8 that rounds to 0", func(s *CustomGPUSpec) { s.FP8TFLOPS = 1e-300 }, "fp8_tflops", "fp8_tflops = 1e-300 is not allowed: want 0 (no FP8 tensor cores)"},
		{"a link that rounds to 0", func(s *CustomGPUSpec) { s.InterconnectGBps = 4.9e-324 }, "interconnect_gbps", "interconnect_gbps = 5e-324 is not allowed"},
		{"no link", func(s *CustomGPUSpec) { s.InterconnectGBps = 0 }, "", ""},
		{"a link too slow", func(s *CustomGPUSpec) { s.InterconnectGBps = 5 }, "interconnect_gbps", "0 (no scale-up link: collectives over PCIe) or a number from 10 to 10,000"},
		{"a link too fast", func(s *CustomGPUSpec) { s.InterconnectGBps = 10001 }, "interconnect_gbps", "to 10,000"},
		{"no name", func(s *CustomGPUSpec) { s.Name = "" }, "name", "lower-case letters"},
		{"a name with capitals", func(s *CustomGPUSpec) { s.Name = "My-GPU" }, "name", `"My-GPU"`},
		{"a name ending in a dot", func(s *CustomGPUSpec) { s.Name = "gpu." }, "name", "starting and ending"},
		{"a name too long", func(s *CustomGPUSpec) { s.Name = strings.Repeat("a", 49) }, "name", "1 to 48"},
		{"a name of 48", func(s *CustomGPUSpec) { s.Name = strings.Repeat("a", 48) }, "", ""},
	} {
		s := h100Spec()
		c.edit(&s)
		err := s.Check()
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var fe *GPUFieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *GPUFieldError on %s saying %q", c.name, err, c.field, c.want)
		}
		if _, gerr := RegisterCustomGPU(s); gerr == nil {
			t.Errorf("%s: registered", c.name)
		}
	}
	// Every bad field is reported, not only the first.
	err := CustomGPUSpec{Name: "x", MemoryGiB: 1, HBMGBps: 1, BF16TFLOPS: 1}.Check()
	for _, f := range []string{"memory_gib", "hbm_gbps", "bf16_tflops"} {
		if err == nil || !strings.Contains(err.Error(), f+" = 1 is not allowed") {
			t.Errorf("%v does not name %s", err, f)
		}
	}
}

// TestCustomGPUPricesLikeItsProfile: an H100 SXM entered by hand prices a
// single-GPU step exactly as the h100-sxm profile does (the same peaks,
// Hopper's factors), and its memory is what the engine sees of the
// profile's; so the derived defaults are the profile's own where it has
// measurements.
func TestCustomGPUPricesLikeItsProfile(t *testing.T) {
	g, err := RegisterCustomGPU(h100Spec())
	if err != nil {
		t.Fatal(err)
	}
	defer UnregisterCustomGPU(g.ID)
	if got, err := GPUByID("custom:my-h100"); err != nil || got.ID != g.ID || got.MemBandwidth != 3.35e12 {
		t.Fatalf("GPUByID: %+v, %v", got, err)
	}
	h := MustGPU("h100-sxm")
	if mem, _ := EngineMemory(h); mem != g.MemoryBytes {
		t.Errorf("79.19 GiB is %d bytes; the engine sees %d of an H100", g.MemoryBytes, mem)
	}
	m := MustModel("llama-3.1-8b")
	for _, b := range []Batch{DecodeBatch(64, 2048), PrefillBatch(1, 4096)} {
		mine, err := NewStepModel(g, m, 1, BF16)
		if err != nil {
			t.Fatal(err)
		}
		theirs, _ := NewStepModel(h, m, 1, BF16)
		if a, b2 := mine.Seconds(b), theirs.Seconds(b); a != b2 {
			t.Errorf("%d tokens: %g s on the custom H100, %g s on h100-sxm", b.Tokens(), a, b2)
		}
	}
	// Without a link, collectives go over PCIe and no custom all-reduce runs.
	s := h100Spec()
	s.Name, s.InterconnectGBps, s.FP8TFLOPS = "pcie-part", 0, 0
	p, err := s.GPU()
	if err != nil {
		t.Fatal(err)
	}
	if p.NVLinkDomain != 0 || p.NCCL.BusBW != 63e9*0.8 || p.Eff.MFUFP8 != 0 || VLLMAllReduce(p, 2).CustomMaxBytes != 0 {
		t.Errorf("a part without a link: %+v", p)
	}
	if _, err := GPUByID("custom:pcie-part"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("GPU() registered the part: %v", err)
	}
}

func TestGPUTokenRoundTrip(t *testing.T) {
	for _, s := range []CustomGPUSpec{
		h100Spec(),
		{Name: "a.b-1", MemoryGiB: 8, HBMGBps: 100, BF16TFLOPS: 10, FP8TFLOPS: 0, InterconnectGBps: 0},
		{Name: "big", MemoryGiB: 1024, HBMGBps: 50000, BF16TFLOPS: 20000, FP8TFLOPS: 40000, InterconnectGBps: 10000},
		{Name: "odd", MemoryGiB: 74.50580596923828, HBMGBps: 3350.5, BF16TFLOPS: 989.4, FP8TFLOPS: 1978.9, InterconnectGBps: 450.25},
	} {
		tok := s.Token()
		got, err := ParseGPUToken(tok)
		if err != nil || got != s {
			t.Errorf("%s: %+v, %v; want %+v", tok, got, err, s)
		}
	}
	if tok := h100Spec().Token(); tok != "v1_79.19_3350_989.4_1979_450_my-h100" {
		t.Errorf("token %s", tok)
	}
}

// TestGPUTokenRefused: malformed tokens are refused with an error naming
// the part at fault.
func TestGPUTokenRefused(t *testing.T) {
	for _, c := range []struct{ tok, part, want string }{
		{"", "token", "v1 followed by 5 figures"},
		{"v1_80_3350_989_1979_450", "token", "a name"},
		{"v1_80_3350_989_1979_450_x_y", "token", "separated by underscores"},
		{"v1.80.3350.989.1979.450.x", "token", "separated by underscores"},
		{"v2_80_3350_989_1979_450_x", "version", "want v1"},
		{"v1_80_0_989_1979_450_x", "hbm_gbps", "hbm_gbps = 0"},
		{"v1_080_3350_989_1979_450_x", "memory_gib", "shortest form"},
		{"v1_80.0_3350_989_1979_450_x", "memory_gib", "shortest form"},
		{"v1_80_3350_989_1979_450_", "name", `name = ""`},
		{"v1_80_3350_989_1979_450_My", "name", `"My"`},
		{"v1_80_3e3_989_1979_450_x", "hbm_gbps", "plain decimal"},
		{"v1_-80_3350_989_1979_450_x", "memory_gib", "plain decimal"},
		{"v1_80_3350_989_1979_450_x" + strings.Repeat("y", 200), "token", "at most 200"},
		{"v1_4_3350_989_1979_450_x", "memory_gib", "from 8 to 1,024"},
		{"v1_80_3350_989_500_450_x", "fp8_tflops", "at least bf16_tflops"},
	} {
		_, err := ParseGPUToken(c.tok)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "gc: ") {
			t.Errorf("%q: %v, want an error starting gc: and saying %q", c.tok, err, c.want)
			continue
		}
		var te *TokenError
		var fe *GPUFieldError
		switch {
		case errors.As(err, &te):
			if te.Part != c.part {
				t.Errorf("%q: part %s, want %s", c.tok, te.Part, c.part)
			}
		case errors.As(err, &fe):
			if c.part != "" && fe.Field != c.part {
				t.Errorf("%q: field %s, want %s", c.tok, fe.Field, c.part)
			}
		default:
			t.Errorf("%q: %T", c.tok, err)
		}
	}
}
