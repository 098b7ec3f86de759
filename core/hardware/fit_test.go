package hardware

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestFitCheck(t *testing.T) {
	tests := []struct {
		name  string
		fit   Fit
		limit FitLimit // "" means it fits
		want  []string // substrings of the message
	}{
		{"70B on one A100-40GB, no TP knob", Fit{GPU: MustGPU("a100-40gb-sxm"), Model: MustModel("llama-3.1-70b"), FixedTP: true},
			LimitWeights, []string{"llama-3.1-70b needs 141 GB of weights; a100-40gb-sxm has 40 GB: pick a larger GPU or a smaller model"}},
		// At tp 4 the weights take 35.3 GB of the 36 GB usable, leaving
		// nothing for activations: tp 8 is the first that runs.
		{"70B on one A100-40GB with a TP knob", Fit{GPU: MustGPU("a100-40gb-sxm"), Model: MustModel("llama-3.1-70b")},
			LimitWeights, []string{"a100-40gb-sxm has 40 GB: pick tp ≥ 8 or a larger GPU"}},
		{"70B at tp 4 on A100-40GB", Fit{GPU: MustGPU("a100-40gb-sxm"), Model: MustModel("llama-3.1-70b"), TP: 4},
			LimitWeights, []string{"needs 35.3 GB of weights and 6.55 GB for activations per GPU; each of 4× a100-40gb-sxm has 36 GB usable", "pick tp ≥ 8"}},
		{"70B at tp 4 on H100", Fit{GPU: MustGPU("h100-sxm"), Model: MustModel("llama-3.1-70b"), TP: 4, KVTokens: 100_000}, "", nil},
		{"8B on L4", Fit{GPU: MustGPU("l4"), Model: MustModel("llama-3.1-8b"), FixedTP: true, KVTokens: 1000}, "", nil},
		{"Qwen2.5-7B past its window", Fit{GPU: MustGPU("h100-sxm"), Model: MustModel("qwen2.5-7b"), Positions: 131072 + 1},
			LimitPositions, []string{"131,073 tokens (prompt + output) exceed qwen2.5-7b's 32,768 positions"}},
		{"Llama-2-7B past 4,096", Fit{GPU: MustGPU("h100-sxm"), Model: MustModel("llama-2-7b"), Positions: 33000},
			LimitPositions, []string{"llama-2-7b's 4,096 positions"}},
		{"256 decodes of 32k context on one H100", Fit{GPU: MustGPU("h100-sxm"), Model: MustModel("llama-3.1-8b"), FixedTP: true, KVTokens: 256 * 32769},
			LimitKV, []string{"8,388,864 tokens of KV cache need 1100 GB per GPU; h100-sxm has 52.7 GB left", "fewer or shorter sequences"}},
	}
	for _, tt := range tests {
		err := tt.fit.Check()
		if tt.limit == "" {
			if err != nil {
				t.Errorf("%s: %v, want it to fit", tt.name, err)
			}
			continue
		}
		var fe *FitError
		if !errors.As(err, &fe) || fe.Limit != tt.limit {
			t.Errorf("%s: error %v, want a %s FitError", tt.name, err, tt.limit)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tt.name, err, w)
			}
		}
	}
}

// The reserve reproduces the measurement it comes from: Meta-Llama-3-8B at
// 8,192 batched tokens, TP 1: 1.79 + 1.26 GiB [VLLM-10511].
func TestActivationReserve(t *testing.T) {
	m := MustModel("llama-3.1-8b")
	if got, want := ActivationReserve(m, 1, 8192), (1.79+1.26)*float64(1<<30); math.Abs(float64(got)-want) > 1 {
		t.Errorf("reserve = %d, want %.0f", got, want)
	}
	if ActivationReserve(m, 2, 8192) <= ActivationReserve(m, 1, 8192) || ActivationReserve(m, 1, 16384) <= ActivationReserve(m, 1, 8192) {
		t.Error("reserve does not grow with TP buffers and tokens")
	}
}

// Fit is stricter than KVCapacity, which leaves activations out: whatever
// KV Fit accepts, the pool KVCapacity sizes holds.
func TestFitWithinKVCapacity(t *testing.T) {
	for _, g := range GPUs() {
		for _, m := range Models() {
			c, err := KVCapacity(g, m, 0.9, 16, 1, 2, 2)
			if err != nil {
				if (Fit{GPU: g, Model: m}).Check() == nil {
					t.Errorf("%s on %s: Fit accepts weights KVCapacity refuses", m.ID, g.ID)
				}
				continue
			}
			if (Fit{GPU: g, Model: m, KVTokens: c.Tokens + 1}).Check() == nil {
				t.Errorf("%s on %s: Fit accepts %d KV tokens, more than KVCapacity's %d", m.ID, g.ID, c.Tokens+1, c.Tokens)
			}
		}
	}
}
