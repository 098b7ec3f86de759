package cowfork

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons/kit"
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
		s, _, err := lesson.Run(map[string]string{"mode": tc.mode, "prompt": tc.prompt, "n": "4", "output": "10", "block_size": "16"})
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
	s, _, _ := lesson.Run(map[string]string{"mode": "cow"})
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
	one, _, _ := lesson.Run(map[string]string{"n": "1"})
	if v, _ := one.Metric("memory_saved_pct"); v != 0 {
		t.Errorf("n = 1 saved %v%%, want 0", v)
	}
}

// In cow mode every decode step that copies makes n−1 copies at most, and
// the run's views agree with its final counts.
func TestCowForkRunViews(t *testing.T) {
	v, err := lesson.ResolveChecked(map[string]string{"mode": "cow", "n": "6", "prompt": "37", "output": "20"})
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
		s, _, err := lesson.Run(map[string]string{"mode": "prefix", "prompt": c.prompt})
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

// Beam search on vLLM v0's block manager: beams fork and die every step,
// forks share every block and copy on write, and averaged over the decode
// the saving exceeds parallel sampling's, as the vLLM paper measured
// (37.6%–55.2% against 6.1%–9.8%). Both figures are simulated.
func TestCowForkBeamSearch(t *testing.T) {
	v, err := lesson.ResolveChecked(map[string]string{"mode": "beam", "n": "4", "prompt": "40", "output": "200"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runCowFork(v)
	if err != nil {
		t.Fatal(err)
	}
	if r.stats.forks == 0 || r.stats.forks != r.stats.dropped || r.stats.copies == 0 {
		t.Errorf("forks %d, freed %d, copies %d: want beams forked as many as freed, and copies on write", r.stats.forks, r.stats.dropped, r.stats.copies)
	}
	if len(r.final.rows) != 4 || r.stats.inUse > r.stats.unshared {
		t.Errorf("%d beams at the end, %d blocks in use of %d unshared", len(r.final.rows), r.stats.inUse, r.stats.unshared)
	}
	if r.beamSaved <= r.parallelSaved+0.1 {
		t.Errorf("beam search saves %.1f%%, parallel sampling %.1f%%: want beams well ahead over a long output", 100*r.beamSaved, 100*r.parallelSaved)
	}
	s := r.Script()
	for key, want := range map[string]float64{"beam_saved_mean_pct": kit.Round2(100 * r.beamSaved), "parallel_saved_mean_pct": kit.Round2(100 * r.parallelSaved)} {
		if got, ok := s.Metric(key); !ok || got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	row := false
	for _, c := range s.Claims {
		if strings.Contains(c.Article, "37.6%–55.2%") && strings.Contains(c.Model, "beam search") {
			row = true
		}
	}
	if !row {
		t.Error("no claims row compares beam search with the paper")
	}
	// The parallel-sampling figure is cow mode's own run, averaged.
	pv, _ := lesson.ResolveChecked(map[string]string{"mode": "cow", "n": "4", "prompt": "40", "output": "200"})
	p, err := runCowFork(pv)
	if err != nil {
		t.Fatal(err)
	}
	if p.parallelSaved != r.parallelSaved || p.stats.forks != 0 {
		t.Errorf("parallel sampling %.4f in cow mode, %.4f beside beams; cow mode forked %d beams", p.parallelSaved, r.parallelSaved, p.stats.forks)
	}
}
