package hardware

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func mustGPU(t *testing.T, id string) GPU {
	t.Helper()
	g, err := GPUByID(id)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The expected ridge points are those of docs/SOURCES.md#ridge-points,
// rounded there to whole FLOP per byte.
func TestRidge(t *testing.T) {
	tests := []struct {
		id   string
		want float64
	}{
		{"a100-40gb-sxm", 201},
		{"a100-80gb-sxm", 153},
		{"h100-sxm", 295},
		{"h100-pcie", 378},
		{"h200-sxm", 206},
		{"b200", 281},
		{"l4", 403},
		{"l40s", 419},
	}
	for _, tt := range tests {
		if got := mustGPU(t, tt.id).Ridge(); math.Abs(got-tt.want) > 1 {
			t.Errorf("%s Ridge() = %.1f, want %v ± 1", tt.id, got, tt.want)
		}
	}
}

func TestRidgeZeroBandwidth(t *testing.T) {
	if got := (GPU{PeakBF16: 1e12}).Ridge(); got != 0 {
		t.Errorf("Ridge() with no bandwidth = %v, want 0", got)
	}
}

// Spot checks that units were applied: bytes, bytes/s, FLOP/s.
func TestGPUFigures(t *testing.T) {
	tests := []struct {
		id                 string
		mem                int64
		bw, bf16, fp8, nvl float64
	}{
		{"a100-80gb-sxm", 80e9, 2.039e12, 312e12, 0, 300e9},
		{"h100-sxm", 80e9, 3.35e12, 989.4e12, 1979e12, 450e9},
		{"h200-sxm", 141e9, 4.8e12, 989e12, 1979e12, 450e9},
		{"b200", 180e9, 8e12, 2250e12, 4500e12, 900e9},
		{"l4", 24e9, 0.3e12, 121e12, 242.5e12, 0},
	}
	for _, tt := range tests {
		g := mustGPU(t, tt.id)
		if g.MemoryBytes != tt.mem || g.MemBandwidth != tt.bw || g.PeakBF16 != tt.bf16 || g.PeakFP8 != tt.fp8 || g.ScaleUpBW != tt.nvl {
			t.Errorf("%s = %+v, want mem %d bw %g bf16 %g fp8 %g scale-up %g", tt.id, g, tt.mem, tt.bw, tt.bf16, tt.fp8, tt.nvl)
		}
	}
}

func TestGPUInvariants(t *testing.T) {
	for _, g := range GPUs() {
		if g.MemoryBytes <= 0 || g.MemBandwidth <= 0 || g.PeakBF16 <= 0 || g.HostLinkBW <= 0 {
			t.Errorf("%s: non-positive required figure: %+v", g.ID, g)
		}
		// Where FP8 exists it runs at about twice the BF16 rate: a ratio far
		// from 2 means a sparse figure slipped into one column. (The L40S
		// sheet's own 733 vs 362.05 gives 2.02.)
		if g.PeakFP8 != 0 && math.Abs(g.PeakFP8/g.PeakBF16-2) > 0.05 {
			t.Errorf("%s: FP8/BF16 = %.3f, want 2", g.ID, g.PeakFP8/g.PeakBF16)
		}
		// An NVLink domain exactly where there is NVLink.
		if (g.ScaleUpBW > 0) != (g.NVLinkDomain >= 2) {
			t.Errorf("%s: scale-up %g with an NVLink domain of %d GPUs", g.ID, g.ScaleUpBW, g.NVLinkDomain)
		}
		// A scale-up link, where present, is faster than the host link.
		if g.ScaleUpBW != 0 && g.ScaleUpBW <= g.HostLinkBW {
			t.Errorf("%s: scale-up %g ≤ host link %g", g.ID, g.ScaleUpBW, g.HostLinkBW)
		}
	}
}

// IDs are unique slugs and GPUByID finds each profile. No list of IDs is
// kept here: adding a GPU touches gpu.go only.
func TestGPUIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range GPUs() {
		if seen[g.ID] {
			t.Errorf("duplicate GPU id %q", g.ID)
		}
		seen[g.ID] = true
		if g.ID == "" || g.ID != strings.ToLower(g.ID) || strings.ContainsAny(g.ID, " _/") {
			t.Errorf("GPU id %q is not a lower-case slug", g.ID)
		}
		if back := mustGPU(t, g.ID); back.Name != g.Name {
			t.Errorf("GPUByID(%q) returned %q", g.ID, back.Name)
		}
	}
}

// Every profile carries the figures the step-time model needs: efficiency
// factors and NCCL all-reduce figures. A profile without them is refused by
// NewStepModel instead of running on zeros or on another part's factors.
func TestGPUsHaveCostFigures(t *testing.T) {
	m := MustModel("llama-3.1-8b")
	for _, g := range GPUs() {
		if err := g.checkCostFigures(); err != nil {
			t.Error(err)
		}
		if _, err := NewStepModel(g, m, 1, BF16); err != nil {
			t.Errorf("%s: %v", g.ID, err)
		}
	}
	for name, broken := range map[string]func(*GPU){
		"no efficiency":   func(g *GPU) { g.Eff = Efficiency{} },
		"no FP8 MFU":      func(g *GPU) { g.Eff.MFUFP8 = 0 },
		"no kernel t0":    func(g *GPU) { g.Eff.KernelFixed = 0 },
		"no NCCL":         func(g *GPU) { g.NCCL = AllReduceFigures{} },
		"no 8-GPU bus BW": func(g *GPU) { g.NCCL.BusBW8 = 0 },
		"HBM η above one": func(g *GPU) { g.Eff.HBM = 1.2 },
	} {
		g := MustGPU("h100-sxm")
		broken(&g)
		if _, err := NewStepModel(g, m, 1, BF16); err == nil || !strings.Contains(err.Error(), "h100-sxm") {
			t.Errorf("%s: NewStepModel error %v, want one naming the GPU", name, err)
		}
	}
}

func TestMustPanicsWithID(t *testing.T) {
	for _, f := range []func(){func() { MustGPU("h100") }, func() { MustModel("llama-9") }} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !(strings.Contains(fmt.Sprint(r), `"h100"`) || strings.Contains(fmt.Sprint(r), `"llama-9"`)) {
					t.Errorf("recovered %v, want a panic naming the id", r)
				}
			}()
			f()
		}()
	}
	if MustGPU("l4").ID != "l4" || MustModel("qwen2.5-7b").ID != "qwen2.5-7b" {
		t.Error("Must helpers return the wrong profile")
	}
}

func TestGPUByIDUnknown(t *testing.T) {
	_, err := GPUByID("h100")
	if !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("err = %v, want ErrUnknownProfile", err)
	}
	for _, g := range GPUs() {
		if !strings.Contains(err.Error(), g.ID) {
			t.Errorf("error %q does not list valid id %q", err, g.ID)
		}
	}
}

// Every GPU carries a cited price and board power, both within sane bounds,
// and the tags behind them are among its Sources; the board powers are the
// datasheets'.
func TestGPUPriceAndPower(t *testing.T) {
	tdp := map[string]float64{
		"a100-40gb-sxm": 400, "a100-80gb-sxm": 400, "h100-sxm": 700, "h100-pcie": 350,
		"h200-sxm": 700, "b200": 1000, "l4": 72, "l40s": 350,
	}
	for _, g := range GPUs() {
		if !(g.USDPerHour > 0 && g.USDPerHour < 100) {
			t.Errorf("%s: USDPerHour = %g, want a list price between 0 and $100", g.ID, g.USDPerHour)
		}
		if want, ok := tdp[g.ID]; !ok || g.BoardPowerW != want {
			t.Errorf("%s: BoardPowerW = %g, want the datasheet's %g W", g.ID, g.BoardPowerW, want)
		}
		for _, tag := range []string{g.PriceSource, g.PowerSource} {
			if _, ok := SourceByTag(tag); !ok {
				t.Errorf("%s: price or power source %q does not resolve", g.ID, tag)
			}
			found := false
			for _, s := range g.Sources {
				found = found || s == tag
			}
			if !found {
				t.Errorf("%s: %q is not among its Sources %v", g.ID, tag, g.Sources)
			}
		}
	}
}
