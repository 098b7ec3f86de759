package lessons

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/specdec"
	"github.com/inferlab/inferlab/scene"
)

func runSpec(t *testing.T, set map[string]string) specRun {
	t.Helper()
	v, err := specDecoding.resolveChecked(set)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	r, err := runSpecDecoding(v)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	return r
}

// The lesson's expected tokens per pass is the formula's, and the seeded
// process's average approaches it.
func TestSpecDecodingExpectation(t *testing.T) {
	for _, set := range []map[string]string{nil, {"alpha": "0.9", "gamma": "8", "rounds": "100000"}, {"alpha": "1", "gamma": "5"}, {"alpha": "0", "gamma": "3"}} {
		r := runSpec(t, set)
		e := specdec.ExpectedTokens(r.alpha, r.gamma)
		s := r.script()
		if got, _ := s.Metric("expected_tokens_per_pass"); got != round4(e) {
			t.Errorf("%v: metric %v, formula %v", set, got, e)
		}
		tol := 0.06
		if r.roundsDrawn >= 100000 {
			tol = 0.01
		}
		if math.Abs(r.measured-e) > tol*e {
			t.Errorf("%v: %v tokens per pass over %d rounds, formula %v", set, r.measured, r.roundsDrawn, e)
		}
	}
}

// The speedup falls with the batch as the verify
// pass turns compute-bound, and the reason is visible: the verify pass
// costs more decode steps as the batch grows. CUDA-graph capture sizes pad
// decode and verify batches differently, so neighbouring sizes may wiggle
// by a few hundredths; the trend may not.
func TestSpecDecodingFadesWithBatch(t *testing.T) {
	for _, set := range []map[string]string{nil, {"model": "llama-3.1-8b", "tp": "1", "gpu": "a100-80gb-sxm"}} {
		r := runSpec(t, set)
		if len(r.sweep) < 5 {
			t.Fatalf("%v: %d batch sizes in the sweep", set, len(r.sweep))
		}
		for i := 1; i < len(r.sweep); i++ {
			a, b := r.sweep[i-1], r.sweep[i]
			if b.round.Speedup > a.round.Speedup+0.05 {
				t.Errorf("%v: speedup %v at batch %d rose from %v at %d", set, b.round.Speedup, b.batch, a.round.Speedup, a.batch)
			}
			if b.round.Verify/b.round.Decode < a.round.Verify/a.round.Decode-0.05 {
				t.Errorf("%v: verify/decode fell from batch %d to %d", set, a.batch, b.batch)
			}
		}
		first, last := r.sweep[0], r.sweep[len(r.sweep)-1]
		if first.round.Speedup < 1.2 || last.round.Speedup > first.round.Speedup-0.5 {
			t.Errorf("%v: speedup %v at batch 1 and %v at %d: want a clear gain that fades", set, first.round.Speedup, last.round.Speedup, last.batch)
		}
		if first.round.Verify/first.round.Decode > 1.3 || last.round.Verify/last.round.Decode < 2 {
			t.Errorf("%v: the verify pass costs %v decode steps at batch 1 (nearly free) and %v at %d (want ≥ 2)", set, first.round.Verify/first.round.Decode, last.round.Verify/last.round.Decode, last.batch)
		}
	}
}

// The best γ is the best of those tried, and higher acceptance never wants
// fewer drafts at batch 1.
func TestSpecDecodingBestGamma(t *testing.T) {
	r := runSpec(t, nil)
	for k, s := range r.gammas[slicesIndex(specAlphas, 0.7)] {
		if s > r.bestRound.Speedup+1e-12 {
			t.Errorf("γ = %d gives %v, more than the best γ %d's %v", k+1, s, r.best, r.bestRound.Speedup)
		}
	}
	prev := 0
	for _, a := range []string{"0.5", "0.7", "0.9"} {
		b := runSpec(t, map[string]string{"alpha": a}).best
		if b < prev {
			t.Errorf("α %s: best γ %d, below %d at a lower α", a, b, prev)
		}
		prev = b
	}
}

func slicesIndex(xs []float64, x float64) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// Bad combinations are refused on the knob that breaks them.
func TestSpecDecodingRefusals(t *testing.T) {
	for _, tt := range []struct {
		set  map[string]string
		key  string
		text string
	}{
		{map[string]string{"model": "qwen2.5-7b", "tp": "1"}, "model", "vocabulary"}, // draft left at its default
		{map[string]string{"model": "llama-3.1-8b", "tp": "1", "draft": "llama-3.1-8b"}, "draft", "smaller"},
		{map[string]string{"tp": "3"}, "tp", "splits"},
		{map[string]string{"tp": "1"}, "tp", "weights"},
		{map[string]string{"gpu": "l4", "model": "llama-3.1-8b", "tp": "1", "batch": "512", "context": "8192"}, "batch", "KV cache"},
	} {
		_, _, err := specDecoding.Run(tt.set)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Key != tt.key || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%v: %v, want a refusal of %s mentioning %q", tt.set, err, tt.key, tt.text)
		}
	}
}

// Every mark of the token strip names a row or a token it draws, and the
// strip's rows follow the drawn rounds: accepted prefix, then the target's
// token at the first rejected position (or after the last draft).
func TestSpecDecodingStrip(t *testing.T) {
	s, _, err := specDecoding.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range s.Steps {
		for _, sc := range st.Scenes {
			if sc.Kind != scene.KindTokens {
				continue
			}
			for _, m := range sc.Marks {
				if !stripDraws(sc.Tokens, m.Ref) {
					t.Errorf("step %d: mark %s names nothing the strip draws", i, m.Ref)
				}
			}
		}
	}
	r := runSpec(t, nil)
	for i, rd := range r.strip {
		row := r.stripRow(i, true)
		if len(row.Tokens) != r.gamma+1 {
			t.Fatalf("round %d: %d tokens, want γ + 1", i+1, len(row.Tokens))
		}
		last := row.Tokens[r.gamma]
		want := "t" + strconv.Itoa(rd.start+rd.accepted)
		if (rd.accepted == r.gamma) != (last.State == "bonus") || last.Text != want {
			t.Errorf("round %d: %d accepted, the target's token %+v, want %s", i+1, rd.accepted, last, want)
		}
		if i > 0 && rd.start != r.strip[i-1].start+r.strip[i-1].accepted+1 {
			t.Errorf("round %d starts at t%d after %+v", i+1, rd.start, r.strip[i-1])
		}
	}
}

func stripDraws(ts *scene.TokenStrip, ref string) bool {
	parts := strings.Split(ref, ":")
	for _, row := range ts.Rows {
		switch {
		case parts[0] == "row" && parts[1] == row.Key:
			return true
		case parts[0] == "tok" && len(parts) == 3 && parts[1] == row.Key:
			i, err := strconv.Atoi(parts[2])
			return err == nil && i >= 0 && i < len(row.Tokens)
		}
	}
	return false
}
