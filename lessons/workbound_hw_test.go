package lessons

import (
	"strings"
	"testing"
)

// The heaviest settings of cuda-graphs, chunked-prefill, roofline and
// measuring build, and the work they count stays within the lesson's
// bound (a count, not a timing: BENCHMARKS.md has the times).
func TestHardwareLessonsHeavyCornersWithinBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds each lesson's heaviest settings")
	}
	for _, l := range []*Lesson{cudaGraphs, chunkedPrefill, roofline, measuring} {
		if l.MaxWork <= 0 || len(l.HeavyCorners) == 0 {
			t.Errorf("%s: MaxWork %d, %d heavy corners", l.Slug, l.MaxWork, len(l.HeavyCorners))
			continue
		}
		for _, set := range append([]map[string]string{nil}, l.HeavyCorners...) {
			s, _, err := l.Run(set)
			if err != nil {
				t.Errorf("%s %v: %v", l.Slug, set, err)
				continue
			}
			if s.Work <= 0 || s.Work > l.MaxWork {
				t.Errorf("%s %v: work %d, want 1…%d", l.Slug, set, s.Work, l.MaxWork)
			}
		}
	}
}

// Past the bound Check refuses, naming a knob and the bound.
func TestHardwareLessonsRefuseOverBound(t *testing.T) {
	for _, c := range []struct {
		l   *Lesson
		set map[string]string
		key string
	}{
		{measuring, map[string]string{"duration_s": "600"}, "duration_s"},
		{measuring, map[string]string{"max_num_seqs": "1"}, "max_num_seqs"}, // duration_s left at its default
		{chunkedPrefill, map[string]string{"gpu": "b200", "model": "qwen2.5-7b", "decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "8960"}, "long_prompt"},
	} {
		_, _, err := c.l.Run(c.set)
		pe, ok := err.(*ParamError)
		if !ok || pe.Key != c.key {
			t.Errorf("%s %v: error %v, want one on %s", c.l.Slug, c.set, err, c.key)
		}
	}
}

// Every GPU × model choice of these lessons either builds or is refused by
// Check with a knob error; none fails inside Build (issue 11: no lesson
// simulates what a GPU could not hold).
func TestHardwareLessonsEveryGPUAndModel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 224 combinations")
	}
	for _, l := range []*Lesson{cudaGraphs, chunkedPrefill, roofline, measuring} {
		gp, _ := l.Param("gpu")
		mp, _ := l.Param("model")
		built := 0
		for _, g := range gp.Choices {
			for _, m := range mp.Choices {
				set := map[string]string{"gpu": g, "model": m}
				if l == measuring {
					set["duration_s"] = "2"
				}
				v, err := l.resolveChecked(set)
				if err != nil {
					if _, ok := err.(*ParamError); !ok {
						t.Errorf("%s %v: refused with %T %v, want a knob error", l.Slug, set, err, err)
					}
					continue
				}
				if _, err := l.Build(v); err != nil {
					t.Errorf("%s %v: Check accepted but Build failed: %v", l.Slug, set, err)
				}
				built++
			}
		}
		if built < len(gp.Choices) {
			t.Errorf("%s: only %d combinations build", l.Slug, built)
		}
	}
}

// The reproductions of issue 11: each was accepted before.
func TestHardwareLessonsRefuseInfeasible(t *testing.T) {
	for _, c := range []struct {
		l    *Lesson
		set  map[string]string
		key  string
		want string
	}{
		{roofline, map[string]string{"gpu": "a100-40gb-sxm", "model": "llama-3.1-70b"}, "model", "llama-3.1-70b needs 141 GB of weights; a100-40gb-sxm has 40 GB"},
		{roofline, map[string]string{"model": "qwen2.5-7b", "prompt": "131072"}, "prompt", "exceed qwen2.5-7b's 32,768 positions"},
		{chunkedPrefill, map[string]string{"decodes": "256", "context": "32768"}, "decodes", "tokens of KV cache need"},
		{chunkedPrefill, map[string]string{"model": "llama-2-7b", "long_prompt": "8192"}, "long_prompt", "llama-2-7b's 4,096 positions"},
		{measuring, map[string]string{"max_num_seqs": "2048", "max_num_batched_tokens": "64"}, "max_num_batched_tokens", "at least max_num_seqs (2048)"},
		{cudaGraphs, map[string]string{"model": "llama-3.1-70b"}, "model", "llama-3.1-70b needs 141 GB of weights; h100-sxm has 85 GB as vLLM sees it: pick tp ≥ 4"},
	} {
		_, _, err := c.l.Run(c.set)
		pe, ok := err.(*ParamError)
		if !ok || pe.Key != c.key || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: error %v, want one on %s saying %q", c.l.Slug, c.set, err, c.key, c.want)
		}
	}
}

// chunked-prefill narrates what the simulation reached: every decode is
// running when the long prompt arrives, in both runs.
func TestChunkedPrefillNarratesSimulatedDecodes(t *testing.T) {
	for _, set := range []map[string]string{
		nil,
		{"decodes": "255", "chunk_size": "256", "context": "1", "long_prompt": "1024"},
		{"decodes": "64", "context": "2048", "chunk_size": "128"},
		{"gpu": "l4", "decodes": "32", "context": "4096", "long_prompt": "8000"},
	} {
		v, err := chunkedPrefill.resolveChecked(set)
		if err != nil {
			t.Logf("%v refused: %v", set, err)
			continue
		}
		r, err := runChunkedPrefill(v)
		if err != nil {
			t.Fatalf("%v: %v", set, err)
		}
		if r.whole.running != r.decodes || r.chunk.running != r.decodes || r.whole.preemptions+r.chunk.preemptions > 0 {
			t.Errorf("%v: %d and %d of %d decodes running at the prompt's arrival, %d preemptions", set, r.whole.running, r.chunk.running, r.decodes, r.whole.preemptions+r.chunk.preemptions)
		}
		// The chunked run's worst gap includes the steady one.
		if r.chunk.maxITL < r.whole.baseITL {
			t.Errorf("%v: worst chunked ITL %v below the steady ITL %v", set, r.chunk.maxITL, r.whole.baseITL)
		}
	}
}
