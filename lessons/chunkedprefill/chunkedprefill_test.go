package chunkedprefill

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// runChunked runs the lesson's simulation on resolved knobs.
func runChunked(t *testing.T, set map[string]string) chunkedPrefillRun {
	t.Helper()
	v, errs := lesson.Resolve(set)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runChunkedPrefill(v)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	return r
}

func TestChunkedPrefillTradeOff(t *testing.T) {
	for _, set := range []map[string]string{
		nil,
		{"gpu": "a100-80gb-sxm", "decodes": "32", "chunk_size": "1024"},
		{"model": "qwen2.5-7b", "long_prompt": "8000", "chunk_size": "256"},
	} {
		r := runChunked(t, set)
		// Without chunking the whole prompt is one step: decodes wait for all of it.
		if r.whole.maxITL < 3*r.chunk.maxITL {
			t.Errorf("%v: worst ITL %v s whole vs %v s chunked: chunking should remove the stall", set, r.whole.maxITL, r.chunk.maxITL)
		}
		if r.chunk.ttftLong <= r.whole.ttftLong {
			t.Errorf("%v: chunked TTFT %v s not above whole-prefill TTFT %v s", set, r.chunk.ttftLong, r.whole.ttftLong)
		}
		if r.stall() < 5*r.whole.baseITL {
			t.Errorf("%v: the whole-prefill step (%v s) is not much longer than a decode step (%v s)", set, r.stall(), r.whole.baseITL)
		}
		// No step holds more than the budget, so the prompt needs at least
		// long / budget chunks.
		if want := (r.long + r.budget - 1) / r.budget; r.chunk.chunks < want {
			t.Errorf("%v: %d chunks, want at least %d", set, r.chunk.chunks, want)
		}
	}
}

// The sweep's two curves move in opposite directions as the budget grows.
func TestChunkedPrefillSweep(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range s.Steps {
		for _, sc := range st.Scenes {
			if sc.ID != "sweep" {
				continue
			}
			ttft, itl := sc.Chart.Series[0].Y, sc.Chart.Series[1].Y
			if ttft[0] <= ttft[len(ttft)-1] {
				t.Errorf("TTFT at the smallest budget %v ms is not above the largest %v ms", ttft[0], ttft[len(ttft)-1])
			}
			if itl[0] >= itl[len(itl)-1] {
				t.Errorf("worst ITL at the smallest budget %v ms is not below the largest %v ms", itl[0], itl[len(itl)-1])
			}
			return
		}
	}
	t.Fatal("no sweep chart")
}

func TestChunkedPrefillDeterministic(t *testing.T) {
	a, _, _ := lesson.Run(map[string]string{"decodes": "8"})
	b, _, _ := lesson.Run(map[string]string{"decodes": "8"})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("same parameters gave different scripts")
	}
}

// The CUDA-graph mode reaches the scheduler lessons: eager dispatch makes
// decode steps CPU-bound where the GPU work is short (B200, 8B model).
func TestSchedulerLessonsFollowGraphMode(t *testing.T) {
	get := func(l *lessons.Lesson, mode, key string) float64 {
		s, _, err := l.Run(map[string]string{"gpu": "b200", "graph_mode": mode, "decodes": "8"})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := s.Metric(key)
		return v
	}
	eager, graphs := get(lesson, "none", "decode_itl_ms"), get(lesson, "full_and_piecewise", "decode_itl_ms")
	if eager < 1.5*graphs {
		t.Errorf("B200 decode ITL: eager %v ms vs graphs %v ms; eager launches should dominate", eager, graphs)
	}
}

// The chunks the timeline draws are the ones the narration counts ("9
// chunks of up to 496 tokens"), and the first step shows nothing of the
// stall to come: no bar after the prompt's arrival, no worst ITL.
func TestChunkedPrefillPictureMatchesNarration(t *testing.T) {
	for _, set := range []map[string]string{nil, {"decodes": "32", "chunk_size": "1024"}, {"long_prompt": "8000", "chunk_size": "256"}} {
		r := runChunked(t, set)
		s := r.Script()
		var chunks []int
		for _, sc := range s.Steps[2].Scenes {
			if sc.ID != "gpu" {
				continue
			}
			for _, b := range sc.Gantt.Lanes[1].Bars {
				if b.Class == "prefill" {
					n, err := strconv.Atoi(strings.ReplaceAll(b.Label, ",", ""))
					if err != nil {
						t.Fatalf("%v: chunk label %q", set, b.Label)
					}
					chunks = append(chunks, n)
				}
			}
		}
		if len(chunks) != r.chunk.chunks || slices.Max(chunks) != r.budget-r.chunk.running {
			t.Errorf("%v: the timeline draws chunks %v; the run counts %d chunks of up to %d", set, chunks, r.chunk.chunks, r.budget-r.chunk.running)
		}
		sum := 0
		for _, c := range chunks {
			sum += c
		}
		if sum != r.long {
			t.Errorf("%v: the chunks drawn add up to %d tokens, the prompt has %d", set, sum, r.long)
		}
		if want := fmt.Sprintf("%d chunks of up to %d tokens", len(chunks), slices.Max(chunks)); !strings.Contains(s.Steps[2].Narration, want) {
			t.Errorf("%v: step 3 does not say %q: %s", set, want, s.Steps[2].Narration)
		}
		for _, sc := range s.Steps[0].Scenes {
			for _, c := range sc.Cards {
				if strings.Contains(c.Label, "worst") {
					t.Errorf("%v: step 1 already shows %q = %v", set, c.Label, c.Value)
				}
			}
			if sc.Gantt == nil {
				continue
			}
			for _, l := range sc.Gantt.Lanes {
				for _, b := range l.Bars {
					if b.End > 0 {
						t.Errorf("%v: step 1 draws %s bar %q ending at %v ms, after the prompt arrives", set, l.Key, b.Label, b.End)
					}
				}
			}
		}
	}
}

// The chunks step's sentence about step lengths is chosen by the run: a
// small budget keeps every step near a decode step, a 2,048-token budget
// leaves a step about 7 times as long, which the narration must not call
// "not much longer".
func TestChunkedPrefillLongestStepSentence(t *testing.T) {
	for _, c := range []struct {
		budget string
		near   bool
	}{{"128", true}, {"256", true}, {"2048", false}, {"4096", false}} {
		s, _, err := lesson.Run(map[string]string{"chunk_size": c.budget})
		if err != nil {
			t.Fatal(err)
		}
		r := runChunked(t, map[string]string{"chunk_size": c.budget})
		text := s.Steps[2].Narration
		if near := r.chunk.longest <= 1.5*r.whole.baseITL; near != c.near {
			t.Fatalf("budget %s: longest step %.1f ms against a decode step of %.1f ms: the case no longer tests what it says", c.budget, 1000*r.chunk.longest, 1000*r.whole.baseITL)
		}
		if says := strings.Contains(text, "No step is much longer"); says != c.near {
			t.Errorf("budget %s: longest step %.1f ms, decode step %.1f ms, yet the narration says so=%v: %q", c.budget, 1000*r.chunk.longest, 1000*r.whole.baseITL, says, text)
		}
		if ms := fmt.Sprintf("%.1f ms", 1000*r.chunk.longest); !strings.Contains(text, ms) {
			t.Errorf("budget %s: the narration does not give the longest step's %s: %q", c.budget, ms, text)
		}
	}
}
