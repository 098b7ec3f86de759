package modelconfig

import (
	"errors"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// TestTokenRoundTrip: every published config's token decodes to the same
// model (shape, parameter counts, KV bytes; only the display name becomes
// the id's slug) and the same mixture of experts, and writes back the same
// token.
func TestTokenRoundTrip(t *testing.T) {
	for _, p := range published {
		c, err := Parse(readTestdata(t, p.file), strings.TrimSuffix(p.file, ".json"))
		if err != nil {
			t.Fatalf("%s: %v", p.file, err)
		}
		tok := c.Token()
		if len(tok) > 160 {
			t.Errorf("%s: the token is %d characters: %s", p.file, len(tok), tok)
		}
		d, err := DecodeToken(tok)
		if err != nil {
			t.Errorf("%s: %s: %v", p.file, tok, err)
			continue
		}
		want := c.Model
		want.Name = strings.TrimPrefix(want.ID, hardware.CustomModelPrefix)
		if got := d.Model; got.ID != want.ID || got.Name != want.Name || got.Params != want.Params ||
			got.NonEmbeddingParams != want.NonEmbeddingParams || got.KVBytesPerToken(2) != want.KVBytesPerToken(2) ||
			got.Layers != want.Layers || got.HeadDim != want.HeadDim || got.KVHeads != want.KVHeads ||
			got.MaxPositions != want.MaxPositions || got.TiedEmbeddings != want.TiedEmbeddings || got.KVLoraRank != want.KVLoraRank {
			t.Errorf("%s: decoded %+v, want %+v", p.file, got, want)
		}
		if d.Dense() != c.Dense() || d.Experts != c.Experts || d.SparseLayers != c.SparseLayers || d.SharedExperts != c.SharedExperts || d.ModelType != c.ModelType {
			t.Errorf("%s: decoded experts %d/%d/%d, want %d/%d/%d", p.file, d.Experts, d.SparseLayers, d.SharedExperts, c.Experts, c.SparseLayers, c.SharedExperts)
		}
		if again := d.Token(); again != tok {
			t.Errorf("%s: %s decodes and encodes as %s", p.file, tok, again)
		}
	}
	c, err := Parse(readTestdata(t, "llama-3.1-8b.json"), "llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	if tok := c.Token(); tok != llamaToken {
		t.Errorf("Llama-3.1-8B's token is %s, want %s (the example the errors and README show)", tok, llamaToken)
	}
}

// TestTokenRefused: malformed tokens are refused with a *hardware.TokenError
// naming the part at fault, the value and what is allowed.
func TestTokenRefused(t *testing.T) {
	// llama swaps one part of Llama-3.1-8B's token (index 0 is the version).
	llama := func(i int, v string) string {
		parts := strings.SplitN(llamaToken, ".", len(tokenFields)+3)
		parts[i] = v
		return strings.Join(parts, ".")
	}
	field := func(name string) int {
		for i, f := range tokenFields {
			if f == name {
				return i + 2
			}
		}
		t.Fatalf("no token field %s", name)
		return 0
	}
	for _, c := range []struct{ tok, part, want string }{
		{"", "token", "separated by dots"},
		{"v1.llama.32", "token", "19 figures and a name"},
		{llama(0, "v2"), "version", "want v1"},
		{llama(1, "gpt2"), "model_type", `"gpt2" is not allowed: want one of llama`},
		{llama(field("num_key_value_heads"), "7"), "num_key_value_heads", "a divisor of num_attention_heads (32)"},
		{llama(field("num_hidden_layers"), "0"), "num_hidden_layers", "from 1 to 512"},
		{llama(field("num_hidden_layers"), "999999999"), "num_hidden_layers", "from 1 to 512"},
		{llama(field("hidden_size"), "04096"), "hidden_size", "written plainly"},
		{llama(field("hidden_size"), "-1"), "hidden_size", "written plainly"},
		{llama(field("hidden_size"), "4e3"), "hidden_size", "written plainly"},
		{llama(field("vocab_size"), "9999999"), "vocab_size", "from 1 to 4,194,304"},
		{llama(field("flags"), "16"), "flags", "from 0 to 15"},
		{llama(field("flags"), "8"), "flags", "0, what model_type llama gives"},
		{llama(field("experts"), "8"), "experts", "0, what model_type llama gives"},
		{llama(field("kv_lora_rank"), "512"), "kv_lora_rank", "0, what model_type llama gives"},
		{llama(field("sparse_layers"), "33"), "sparse_layers", "at most num_hidden_layers (32)"},
		{llama(len(tokenFields)+2, "Llama 8B"), "name", "lower-case letters"},
		{llama(len(tokenFields)+2, ""), "name", "lower-case letters"},
		{llamaToken + strings.Repeat("x", MaxToken), "token", "at most 320 characters"},
		// Mixtral's expert MLP is its intermediate_size, on every layer.
		{"v1.mixtral.32.4096.32.8.128.14336.32000.32768.0.8.2.0.14336.31.0.0.0.0.0.m", "sparse_layers", "32, what model_type mixtral gives"},
		{"v1.mixtral.32.4096.32.8.128.14336.32000.32768.0.8.9.0.14336.32.0.0.0.0.0.m", "num_experts_per_tok", "at most the number of routed experts (8)"},
		// A latent-attention model caches one KV head; its head is nope + rope.
		{"v1.deepseek_v2.27.2048.16.16.192.10944.102400.163840.0.64.6.2.1408.26.0.512.0.64.128.d", "num_key_value_heads", "1, what model_type deepseek_v2 gives"},
		{"v1.deepseek_v2.27.2048.16.1.32.10944.102400.163840.0.64.6.2.1408.26.0.512.0.64.128.d", "head_dim", "at least qk_rope_head_dim (64)"},
	} {
		_, err := DecodeToken(c.tok)
		var te *hardware.TokenError
		if !errors.As(err, &te) || te.Param != "mc" || te.Part != c.part || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "mc: "+c.part+" = ") {
			t.Errorf("%q:\n  %v\n  want a TokenError on %s saying %q", c.tok, err, c.part, c.want)
		}
	}
}
