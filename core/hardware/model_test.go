package hardware

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func mustModel(t *testing.T, id string) Model {
	t.Helper()
	m, err := ModelByID(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The expected values are those of docs/SOURCES.md#kv-bytes-per-token.
func TestKVBytesPerToken(t *testing.T) {
	tests := []struct {
		id   string
		bpe  int
		want int64
	}{
		{"llama-3.1-8b", 2, 131_072},
		{"llama-3.1-70b", 2, 327_680},
		{"llama-3.1-405b", 2, 516_096},
		{"mistral-7b-v0.1", 2, 131_072},
		{"qwen2.5-7b", 2, 57_344},
		{"qwen2.5-72b", 2, 327_680},
		{"llama-2-7b", 2, 524_288},
		// An FP8 cache halves every figure.
		{"llama-3.1-8b", 1, 65_536},
		{"llama-3.1-70b", 1, 163_840},
	}
	for _, tt := range tests {
		if got := mustModel(t, tt.id).KVBytesPerToken(tt.bpe); got != tt.want {
			t.Errorf("%s KVBytesPerToken(%d) = %d, want %d", tt.id, tt.bpe, got, tt.want)
		}
	}
}

func TestKVBytesPerTokenPerLayer(t *testing.T) {
	tests := []struct {
		id   string
		bpe  int
		want int64
	}{
		{"llama-3.1-8b", 2, 4_096}, // 2 · 8 · 128 · 2
		{"qwen2.5-7b", 2, 2_048},   // 2 · 4 · 128 · 2
		{"llama-2-7b", 2, 16_384},  // 2 · 32 · 128 · 2
		{"llama-3.1-8b", 1, 2_048},
	}
	for _, tt := range tests {
		m := mustModel(t, tt.id)
		got := m.KVBytesPerTokenPerLayer(tt.bpe)
		if got != tt.want {
			t.Errorf("%s KVBytesPerTokenPerLayer(%d) = %d, want %d", tt.id, tt.bpe, got, tt.want)
		}
		if all := m.KVBytesPerToken(tt.bpe); all != got*int64(m.Layers) {
			t.Errorf("%s: per-token %d != per-layer %d × %d layers", tt.id, all, got, m.Layers)
		}
	}
}

// docs/SOURCES.md#kv-bytes-per-token: a 16-token Llama-3.1-8B block is 2 MiB across all
// layers and 64 KiB per layer.
func TestBlockBytesLlama8B(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	if got := 16 * m.KVBytesPerToken(2); got != 2<<20 {
		t.Errorf("block bytes = %d, want 2 MiB", got)
	}
	if got := 16 * m.KVBytesPerTokenPerLayer(2); got != 64<<10 {
		t.Errorf("block bytes per layer = %d, want 64 KiB", got)
	}
}

func TestWeightBytes(t *testing.T) {
	tests := []struct {
		id   string
		bpw  float64
		want int64
	}{
		{"llama-3.1-8b", 2, 16_060_000_000},
		{"llama-3.1-8b", 1, 8_030_000_000},
		{"llama-3.1-70b", 0.5, 35_275_000_000},
		{"llama-3.1-405b", 2, 811_700_000_000},
	}
	for _, tt := range tests {
		if got := mustModel(t, tt.id).WeightBytes(tt.bpw); got != tt.want {
			t.Errorf("%s WeightBytes(%g) = %d, want %d", tt.id, tt.bpw, got, tt.want)
		}
	}
}

// The stored shape and the stored §4.1 counts must agree, which catches a
// mistyped dimension. The note rounds to 0.01 B and leaves out biases, so
// 1% is loose enough for both and tight enough to catch a wrong digit.
func TestDenseParamCountMatchesTable(t *testing.T) {
	for _, m := range Models() {
		if d := relDiff(m.DenseParamCount(), m.Params); d > 0.01 {
			t.Errorf("%s: DenseParamCount = %d, table %d (off by %.2f%%)", m.ID, m.DenseParamCount(), m.Params, 100*d)
		}
		if d := relDiff(m.nonEmbeddingParamCount(), m.NonEmbeddingParams); d > 0.01 {
			t.Errorf("%s: non-embedding count = %d, table %d (off by %.2f%%)", m.ID, m.nonEmbeddingParamCount(), m.NonEmbeddingParams, 100*d)
		}
	}
}

// Llama-3.1-8B worked by hand from §4.1's formula: per layer
// 4096·4096 + 2·4096·1024 + 4096·4096 + 3·4096·14336 + 2·4096 = 218,112,000;
// × 32 + 4096 = 6,979,588,096; embeddings 2 · 128256 · 4096 = 1,050,673,152.
func TestDenseParamCountLlama8BExact(t *testing.T) {
	if got, want := mustModel(t, "llama-3.1-8b").DenseParamCount(), int64(8_030_261_248); got != want {
		t.Errorf("DenseParamCount = %d, want %d", got, want)
	}
}

func TestTiedEmbeddingsCountedOnce(t *testing.T) {
	m := mustModel(t, "llama-3.1-8b")
	untied := m.DenseParamCount()
	m.TiedEmbeddings = true
	if diff := untied - m.DenseParamCount(); diff != int64(m.Vocab)*int64(m.Hidden) {
		t.Errorf("tying embeddings removed %d params, want V·d = %d", diff, int64(m.Vocab)*int64(m.Hidden))
	}
}

func TestModelShapesConsistent(t *testing.T) {
	for _, m := range Models() {
		if m.QHeads%m.KVHeads != 0 {
			t.Errorf("%s: %d query heads not a multiple of %d KV heads", m.ID, m.QHeads, m.KVHeads)
		}
		if m.Params <= m.NonEmbeddingParams {
			t.Errorf("%s: Params %d ≤ NonEmbeddingParams %d", m.ID, m.Params, m.NonEmbeddingParams)
		}
		// Every profile states its context window (max_position_embeddings,
		// from its cited config): the feasibility check relies on it.
		if m.MaxPositions < 2048 {
			t.Errorf("%s: MaxPositions %d, want the config's max_position_embeddings", m.ID, m.MaxPositions)
		}
	}
}

// IDs are unique slugs and ModelByID finds each profile; no list of IDs
// is kept here, so adding a model touches model.go only. The first profile
// stays the default of every lesson's model knob.
func TestModelIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Models() {
		if seen[m.ID] {
			t.Errorf("duplicate model id %q", m.ID)
		}
		seen[m.ID] = true
		if m.ID == "" || m.ID != strings.ToLower(m.ID) || strings.ContainsAny(m.ID, " _/") {
			t.Errorf("model id %q is not a lower-case slug", m.ID)
		}
		if back := mustModel(t, m.ID); back.Name != m.Name {
			t.Errorf("ModelByID(%q) returned %q", m.ID, back.Name)
		}
	}
	if Models()[0].ID != "llama-3.1-8b" {
		t.Errorf("first model %q, want the lessons' default llama-3.1-8b", Models()[0].ID)
	}
}

func TestModelByIDUnknown(t *testing.T) {
	_, err := ModelByID("llama-4")
	if !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("err = %v, want ErrUnknownProfile", err)
	}
	for _, m := range Models() {
		if !strings.Contains(err.Error(), m.ID) {
			t.Errorf("error %q does not list valid id %q", err, m.ID)
		}
	}
}

func TestModelsReturnsFreshValues(t *testing.T) {
	Models()[0].Sources[0] = "changed"
	if Models()[0].Sources[0] == "changed" {
		t.Error("Models() shares Sources between calls")
	}
}

func relDiff(got, want int64) float64 {
	return math.Abs(float64(got-want)) / float64(want)
}
