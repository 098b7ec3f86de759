package lessons

import (
	"strings"
	"testing"
)

// Hand-computed cases, B = 16, n = 4, 10 output tokens per sample.
//
// Prompt 40 (2 full blocks + 8 tokens): at the end each sample holds the 2
// shared full blocks plus 2 private ones (its 8 + 10 = 18 tokens span a copy
// of the partial block and one more), so 2 + 4·2 = 10 blocks against
// 4·⌈50/16⌉ = 16: 37.5% saved in both modes. cow makes n−1 = 3 copies; prefix
// recomputes the 8-token partial block in 3 samples: 24 tokens.
//
// Prompt 32 (block aligned): cow shares both prompt blocks and each sample
// adds one output block: 2 + 4 = 6 of 4·3 = 12, 50% saved, no copies. prefix
// hits only block 0 (the block holding the last prompt token is recomputed),
// so samples 2–4 each store their own second prompt block: 3 + 3·2 = 9 of 12,
// 25% saved, 3·16 = 48 tokens recomputed.
func TestCowForkHandComputed(t *testing.T) {
	for _, tc := range []struct {
		mode, prompt                               string
		inUse, unshared, saved, copies, recomputed float64
	}{
		{"cow", "40", 10, 16, 37.5, 3, 0},
		{"prefix", "40", 10, 16, 37.5, 0, 24},
		{"cow", "32", 6, 12, 50, 0, 0},
		{"prefix", "32", 9, 12, 25, 0, 48},
	} {
		s, _, err := cowFork.Run(map[string]string{"mode": tc.mode, "prompt": tc.prompt, "n": "4", "output": "10", "block_size": "16"})
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]float64{"blocks_shared": tc.inUse, "blocks_unshared": tc.unshared,
			"memory_saved_pct": tc.saved, "copies": tc.copies, "recomputed_tokens": tc.recomputed} {
			if got, _ := s.Metric(key); got != want {
				t.Errorf("mode %s prompt %s: %s = %v, want %v", tc.mode, tc.prompt, key, got, want)
			}
		}
	}
}

func TestCowForkStepsShowSharingAndCopy(t *testing.T) {
	s, _, _ := cowFork.Run(map[string]string{"mode": "cow"})
	var text strings.Builder
	sawShared := false
	for _, st := range s.Steps {
		text.WriteString(st.Title + " " + st.Narration)
		for _, sc := range st.Scenes {
			if sc.Grid != nil {
				for _, b := range sc.Grid.Blocks {
					sawShared = sawShared || b.Refs == 4
				}
			}
		}
	}
	if !sawShared {
		t.Error("no step shows a block with reference count n = 4")
	}
	if !strings.Contains(text.String(), "copy on write") {
		t.Error("no step narrates the copy on write")
	}
	one, _, _ := cowFork.Run(map[string]string{"n": "1"})
	if v, _ := one.Metric("memory_saved_pct"); v != 0 {
		t.Errorf("n = 1 saved %v%%, want 0", v)
	}
}

// In cow mode every decode step that copies makes n−1 copies at most, and
// the run's views agree with its final counts.
func TestCowForkRunViews(t *testing.T) {
	v, err := cowFork.resolveChecked(map[string]string{"mode": "cow", "n": "6", "prompt": "37", "output": "20"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runCowFork(v)
	if err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, d := range r.decodes {
		if d.newCopies > r.n-1 {
			t.Errorf("token %d: %d copies for %d samples", d.token+1, d.newCopies, r.n)
		}
		copies += d.newCopies
	}
	if copies != r.stats.copies || r.stats.copies != r.n-1 || r.final.inUse != r.stats.inUse || len(r.final.rows) != r.n {
		t.Errorf("copies %d shown, %d counted; final view %d blocks in %d tables, stats %+v", copies, r.stats.copies, r.final.inUse, len(r.final.rows), r.stats)
	}
}

// In prefix mode a miss is explained by what vLLM hashes: a partial last
// block is never hashed; a prompt of whole blocks misses its last one
// because a lookup stops before the last token. (Before, both were put
// down to "the block holding the last prompt token", which for a partial
// block is not the reason.)
func TestCowForkPrefixMissReason(t *testing.T) {
	for _, c := range []struct {
		prompt, want string
	}{{"40", "hashes full blocks only"}, {"48", "all tokens but the last"}} {
		v, err := cowFork.resolveChecked(map[string]string{"mode": "prefix", "prompt": c.prompt})
		if err != nil {
			t.Fatal(err)
		}
		s, err := cowFork.sim.build(v)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, st := range s.Steps {
			if strings.HasPrefix(st.Title, "Prefix hits") {
				found = true
				if !strings.Contains(st.Narration, c.want) || strings.Contains(st.Narration, "before the block holding the last prompt token") {
					t.Errorf("prompt %s: %q", c.prompt, st.Narration)
				}
			}
		}
		if !found {
			t.Errorf("prompt %s: no prefix-hit step", c.prompt)
		}
	}
}
