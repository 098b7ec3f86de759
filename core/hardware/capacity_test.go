package hardware

import (
	"errors"
	"strings"
	"testing"
)

// Each expectation is worked by hand in the comment above it, from the
// stored figures (GB = 1e9 bytes).
func TestKVCapacity(t *testing.T) {
	tests := []struct {
		name        string
		gpu, model  string
		util        float64
		block, tp   int
		kvBPE       int
		wBPP        float64
		weightsPer  int64
		budget      int64
		bytesPerTok int64
		tokens      int64
		blocks      int64
	}{
		// H100 80 GB, Llama-3.1-8B, BF16 weights and KV, util 0.9, block 16:
		// usable 80e9 · 0.9 = 72e9; weights 8.03e9 · 2 = 16.06e9;
		// budget 55.94e9; 55.94e9 / 131,072 = 426,788.33 → 426,788 tokens
		// (426,788 · 131,072 = 55,939,956,736); / 16 = 26,674.25 → 26,674.
		{"h100 llama8b", "h100-sxm", "llama-3.1-8b", 0.9, 16, 1, 2, 2,
			16_060_000_000, 55_940_000_000, 131_072, 426_788, 26_674},
		// H200 141 GB, Llama-3.1-70B, BF16, TP 4, util 0.9, block 16:
		// usable 126.9e9; weights 70.55e9 · 2 / 4 = 35.275e9;
		// budget 91.625e9; 8 KV heads over 4 GPUs → 327,680 / 4 = 81,920 B;
		// 91.625e9 / 81,920 = 1,118,469.2 → 1,118,469 (· 81,920 =
		// 91,624,980,480); / 16 = 69,904.3 → 69,904.
		{"h200 llama70b tp4", "h200-sxm", "llama-3.1-70b", 0.9, 16, 4, 2, 2,
			35_275_000_000, 91_625_000_000, 81_920, 1_118_469, 69_904},
		// L4 24 GB, Qwen2.5-7B, FP8 weights, BF16 KV, util 0.9, block 32:
		// usable 21.6e9; weights 7.62e9 · 1 = 7.62e9; budget 13.98e9;
		// 13.98e9 / 57,344 = 243,791.9 → 243,791 (· 57,344 =
		// 13,979,951,104); / 32 = 7,618.5 → 7,618.
		{"l4 qwen7b fp8 weights", "l4", "qwen2.5-7b", 0.9, 32, 1, 2, 1,
			7_620_000_000, 13_980_000_000, 57_344, 243_791, 7_618},
		// L40S 48 GB, Qwen2.5-7B, BF16, TP 8 > 4 KV heads, util 0.9, block 16:
		// each GPU holds one replicated KV head, so 57,344 / 4 = 14,336 B;
		// usable 43.2e9; weights 15.24e9 / 8 = 1.905e9; budget 41.295e9;
		// / 14,336 = 2,880,510.6 → 2,880,510 (· 14,336 = 41,294,991,360);
		// / 16 = 180,031.9 → 180,031.
		{"l40s qwen7b tp8 replicated kv", "l40s", "qwen2.5-7b", 0.9, 16, 8, 2, 2,
			1_905_000_000, 41_295_000_000, 14_336, 2_880_510, 180_031},
		// H100 80 GB, Llama-3.1-8B with an FP8 KV cache: the same budget as
		// the first case at half the bytes per token, 65,536 B;
		// 55.94e9 / 65,536 = 853,576.66 → 853,576; / 16 = 53,348.5 → 53,348.
		{"h100 llama8b fp8 kv", "h100-sxm", "llama-3.1-8b", 0.9, 16, 1, 1, 2,
			16_060_000_000, 55_940_000_000, 65_536, 853_576, 53_348},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := KVCapacity(mustGPU(t, tt.gpu), mustModel(t, tt.model), tt.util, tt.block, tt.tp, tt.kvBPE, tt.wBPP)
			if err != nil {
				t.Fatal(err)
			}
			if c.WeightBytes != tt.weightsPer || c.KVBudgetBytes != tt.budget || c.BytesPerToken != tt.bytesPerTok || c.Tokens != tt.tokens || c.Blocks != tt.blocks {
				t.Errorf("got weights %d budget %d bytes/token %d tokens %d blocks %d\nwant weights %d budget %d bytes/token %d tokens %d blocks %d",
					c.WeightBytes, c.KVBudgetBytes, c.BytesPerToken, c.Tokens, c.Blocks,
					tt.weightsPer, tt.budget, tt.bytesPerTok, tt.tokens, tt.blocks)
			}
			if c.UsableBytes != c.WeightBytes+c.KVBudgetBytes {
				t.Errorf("usable %d != weights %d + budget %d", c.UsableBytes, c.WeightBytes, c.KVBudgetBytes)
			}
			if c.GPU.ID != tt.gpu || c.Model.ID != tt.model || c.TP != tt.tp || c.BlockSize != tt.block || c.MemUtilization != tt.util {
				t.Errorf("inputs not echoed: %+v", c)
			}
		})
	}
}

func TestKVCapacityErrors(t *testing.T) {
	h100 := mustGPU(t, "h100-sxm")
	l8b := mustModel(t, "llama-3.1-8b")
	noShape := l8b
	noShape.KVHeads = 0
	tests := []struct {
		name      string
		gpu       GPU
		model     Model
		util      float64
		block, tp int
		kvBPE     int
		wBPP      float64
		// wantIn are substrings the message must contain: the argument's
		// name, the bad value and the allowed range.
		wantIn []string
	}{
		{"util zero", h100, l8b, 0, 16, 1, 2, 2, []string{"memUtilization = 0", "0 < memUtilization ≤ 1"}},
		{"util above one", h100, l8b, 1.2, 16, 1, 2, 2, []string{"memUtilization = 1.2", "≤ 1"}},
		{"util negative", h100, l8b, -0.5, 16, 1, 2, 2, []string{"memUtilization = -0.5"}},
		{"block zero", h100, l8b, 0.9, 0, 1, 2, 2, []string{"blockSize = 0", "blockSize ≥ 1"}},
		{"tp zero", h100, l8b, 0.9, 16, 0, 2, 2, []string{"tp = 0", "tp ≥ 1"}},
		{"kv bytes zero", h100, l8b, 0.9, 16, 1, 0, 2, []string{"kvBytesPerElement = 0", "≥ 1"}},
		{"weight bytes zero", h100, l8b, 0.9, 16, 1, 2, 0, []string{"weightBytesPerParam = 0", "> 0"}},
		{"tp not dividing kv heads", h100, l8b, 0.9, 16, 3, 2, 2, []string{"tp = 3", "8 KV heads"}},
		{"model without kv heads", h100, noShape, 0.9, 16, 1, 2, 2, []string{"kvHeads=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := KVCapacity(tt.gpu, tt.model, tt.util, tt.block, tt.tp, tt.kvBPE, tt.wBPP)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestKVCapacityWeightsDoNotFit(t *testing.T) {
	tests := []struct {
		name, gpu, model string
		tp               int
		short            string
	}{
		// Llama-3.1-405B BF16 on 8 × H100: 405.85e9 · 2 / 8 = 101.4625e9
		// per GPU against 72e9 usable: 29,462,500,000 bytes short.
		{"405b on 8 h100", "h100-sxm", "llama-3.1-405b", 8, "29462500000 bytes short"},
		// Llama-3.1-70B BF16 on one A100 40GB: 141.1e9 against 36e9
		// usable: 105,100,000,000 bytes short.
		{"70b on one a100-40", "a100-40gb-sxm", "llama-3.1-70b", 1, "105100000000 bytes short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := KVCapacity(mustGPU(t, tt.gpu), mustModel(t, tt.model), 0.9, 16, tt.tp, 2, 2)
			if !errors.Is(err, ErrWeightsDoNotFit) {
				t.Fatalf("err = %v, want ErrWeightsDoNotFit", err)
			}
			if !strings.Contains(err.Error(), tt.short) {
				t.Errorf("error %q does not say %q", err, tt.short)
			}
		})
	}
}

// More tensor parallelism never shrinks per-GPU capacity for a model whose
// KV heads it divides.
func TestKVCapacityGrowsWithTP(t *testing.T) {
	g, m := mustGPU(t, "h100-sxm"), mustModel(t, "llama-3.1-70b")
	prev := int64(-1)
	for _, tp := range []int{2, 4, 8} {
		c, err := KVCapacity(g, m, 0.9, 16, tp, 2, 2)
		if err != nil {
			t.Fatalf("tp=%d: %v", tp, err)
		}
		if c.Tokens <= prev {
			t.Errorf("tp=%d: %d tokens, not more than %d at the previous tp", tp, c.Tokens, prev)
		}
		prev = c.Tokens
	}
}
