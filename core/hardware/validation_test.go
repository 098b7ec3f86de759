package hardware

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each published measurement must be matched within its stated tolerance,
// except known misses, which must still miss (when one starts to fit,
// promote it to an asserted case).
func TestValidation(t *testing.T) {
	results := Validate()
	asserted := 0
	for _, r := range results {
		name := r.ID + " " + r.Name + " — " + r.Setting
		if !(r.Tolerance > 0 && r.Tolerance <= 0.25) {
			t.Errorf("%s: tolerance %v, want 0 < tolerance ≤ 25%%", name, r.Tolerance)
		}
		if math.IsNaN(r.Model) || r.Model <= 0 {
			t.Errorf("%s: model value %v", name, r.Model)
			continue
		}
		if r.KnownMiss != "" {
			if r.Within() {
				t.Errorf("%s: known miss now within tolerance (model %.4g vs %.4g %s, %+.1f%%): make it an asserted case", name, r.Model, r.Measured, r.Unit, 100*r.Error)
			}
			continue
		}
		asserted++
		if !r.Within() {
			t.Errorf("%s: model %.4g %s vs measured %.4g %s: %+.1f%%, tolerance ±%.0f%% [%s]", name, r.Model, r.Unit, r.Measured, r.Unit, 100*r.Error, 100*r.Tolerance, r.Source)
		}
	}
	if asserted < 10 {
		t.Errorf("%d asserted validation cases, want at least 10", asserted)
	}
}

// docs/VALIDATION.md is generated; it must match the model. It opens with
// this package's table; core/cudagraph's section follows and is checked
// there.
func TestValidationDocUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "VALIDATION.md")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run `go run ./cmd/validation > docs/VALIDATION.md` from the repository root", err)
	}
	if !strings.HasPrefix(string(got), ValidationMarkdown()) {
		t.Errorf("%s is out of date; run `go run ./cmd/validation > docs/VALIDATION.md` from the repository root", path)
	}
}

// The validation-only Llama-2-70B profile agrees with its §4.1 counts.
func TestLlama2_70BProfile(t *testing.T) {
	m := llama2_70b()
	if d := relDiff(m.DenseParamCount(), m.Params); d > 0.01 {
		t.Errorf("DenseParamCount = %d, table %d", m.DenseParamCount(), m.Params)
	}
	if d := relDiff(m.nonEmbeddingParamCount(), m.NonEmbeddingParams); d > 0.01 {
		t.Errorf("non-embedding = %d, table %d", m.nonEmbeddingParamCount(), m.NonEmbeddingParams)
	}
	// §4.2 style: 2 · 80 · 8 · 128 · 2 = 327,680 B per token.
	if got := m.KVBytesPerToken(2); got != 327_680 {
		t.Errorf("KV bytes per token = %d", got)
	}
	for _, tag := range m.Sources {
		if _, ok := Cite(tag); !ok {
			t.Errorf("source %q does not resolve", tag)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{38: "38", 37.42: "37.4", 0.987: "0.987", 16: "16", 100: "100", 311.4: "311", 5586: "5586", 9.5328: "9.53", 0.5: "0.5", 0: "0"} {
		if got := Sig3(v); got != want {
			t.Errorf("Sig3(%v) = %q, want %q", v, got, want)
		}
	}
}
