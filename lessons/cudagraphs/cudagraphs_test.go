package cudagraphs

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/scene"
)

func runGraphs(t *testing.T, set map[string]string) *lessons.Script {
	t.Helper()
	s, _, err := lesson.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func graphsRunOf(t *testing.T, set map[string]string) graphsRun {
	t.Helper()
	v, err := lesson.ResolveChecked(set)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runCUDAGraphs(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func graphMetric(t *testing.T, s *lessons.Script, key string) float64 {
	t.Helper()
	v, ok := s.Metric(key)
	if !ok {
		t.Fatalf("no metric %s", key)
	}
	return v
}

// The figures at the defaults, and their relations.
func TestCUDAGraphsDefaults(t *testing.T) {
	s := runGraphs(t, nil)
	get := func(k string) float64 { return graphMetric(t, s, k) }
	if get("kernels_per_step") != 324 {
		t.Errorf("Llama-3.1-8B step: %v kernels, want 32·10 + 4", get("kernels_per_step"))
	}
	if e, g := get("dispatch_ms_eager"), get("dispatch_ms_graph"); e != 7.776 || g != 0.08 {
		t.Errorf("dispatch eager %v ms, graph %v ms; want 324 × 24 µs and 0.08 ms", e, g)
	}
	if get("step_ms_graph") >= get("step_ms_eager") || get("step_ms_graph") < get("gpu_ms") {
		t.Errorf("step graph %v, eager %v, GPU %v", get("step_ms_graph"), get("step_ms_eager"), get("gpu_ms"))
	}
	for _, k := range []string{"step_ms_eager", "step_ms_graph", "step_ms_piecewise", "step_ms_mode"} {
		if get(k) < get("gpu_ms") {
			t.Errorf("%s %v below the GPU work %v", k, get(k), get("gpu_ms"))
		}
	}
	if get("step_ms_eager") < get("dispatch_ms_eager") || get("step_ms_piecewise") < get("dispatch_ms_piecewise") {
		t.Error("a step shorter than its dispatch")
	}
	if get("padded_tokens") != 1 || get("step_ms_mode") != get("step_ms_graph") {
		t.Errorf("batch 1 in FULL_AND_PIECEWISE: padded %v, step %v vs full %v", get("padded_tokens"), get("step_ms_mode"), get("step_ms_graph"))
	}
	if c := get("dispatch_matters_below_batch"); c < 2 || c > 64 {
		t.Errorf("eager catches up with graphs at batch %v on an H100; want a small batch", c)
	}
	if within := graphsRunOf(t, nil).within(); within < 9 {
		t.Errorf("validation: %v of the 9 dispatch cases within tolerance", within)
	}
	// The validation table's count belongs to the repository, not to the
	// run: no knob moves it, so it is no run metric.
	if _, ok := s.Metric("validation_within"); ok {
		t.Error("validation_within, a count of the repository's validation rows, reported as a run metric")
	}
	if len(s.Claims) != 3 || !strings.Contains(s.Claims[0].Article, "0.85") || !strings.Contains(s.Claims[1].Article, "0.04") {
		t.Errorf("claims %+v", s.Claims)
	}
}

// Padding follows the capture list: 250 → 256 in a full decode graph,
// and a batch above the largest size runs eagerly.
func TestCUDAGraphsPadding(t *testing.T) {
	for _, c := range []struct {
		batch, seqs string
		want        int
	}{
		{"250", "256", 256},
		{"3", "256", 4},
		{"9", "256", 16},
		{"256", "256", 256},
		{"100", "100", 104}, // 104 > max_num_seqs: piecewise, still padded
	} {
		r := graphsRunOf(t, map[string]string{"batch": c.batch, "max_num_seqs": c.seqs})
		if got := r.chosen.cost.PaddedTokens; got != c.want {
			t.Errorf("batch %s, max_num_seqs %s: padded %v, want %v", c.batch, c.seqs, got, c.want)
		}
		// The padding chart agrees with the dispatcher.
		if n, _ := strconv.Atoi(c.batch); n <= len(r.padTo) && r.padTo[n-1] != c.want {
			t.Errorf("batch %s: chart pads to %d, want %d", c.batch, r.padTo[n-1], c.want)
		}
	}
	s := runGraphs(t, map[string]string{"batch": "3", "mode": "none"})
	if graphMetric(t, s, "padded_tokens") != 3 || graphMetric(t, s, "step_ms_mode") != graphMetric(t, s, "step_ms_eager") {
		t.Error("NONE pads or differs from eager")
	}
}

// Bad knobs are named: a batch above max_num_seqs, a TP degree that does
// not split the model, weights that do not fit, a cache that does not.
func TestCUDAGraphsRejects(t *testing.T) {
	for _, c := range []struct {
		set map[string]string
		key string
	}{
		{map[string]string{"batch": "300", "max_num_seqs": "256"}, "batch"},
		{map[string]string{"tp": "3"}, "tp"},
		{map[string]string{"model": "llama-3.1-405b"}, "model"},
		{map[string]string{"batch": "512", "max_num_seqs": "512", "context": "131072"}, "context"},
		{map[string]string{"mode": "fast"}, "mode"},
	} {
		_, _, err := lesson.Run(c.set)
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%v: error %v, want one naming %s", c.set, err, c.key)
		}
	}
}

// Where kernels are shorter than launches graphs pay: a B200 at batch 1
// with 100 µs launches; TP 2 adds the all-reduces to the kernel count.
func TestCUDAGraphsCPUBound(t *testing.T) {
	s := runGraphs(t, map[string]string{"gpu": "b200", "per_launch_us": "100"})
	if sp := graphMetric(t, s, "speedup_graph"); sp < 3 {
		t.Errorf("B200 with 100 µs launches: graphs only %v× faster", sp)
	}
	if graphMetric(t, s, "step_ms_piecewise") <= graphMetric(t, s, "step_ms_graph")*1.05 {
		t.Error("piecewise shows no eager-attention gaps with 100 µs launches on a B200")
	}
	if graphMetric(t, s, "dispatch_matters_below_batch") != 0 {
		t.Error("eager caught up with graphs despite 100 µs launches")
	}
	tp := runGraphs(t, map[string]string{"tp": "2"})
	if graphMetric(t, tp, "kernels_per_step") != 32*12+6 {
		t.Errorf("TP 2: %v kernels", graphMetric(t, tp, "kernels_per_step"))
	}
}

// The timelines stay small enough for the browser, bars lie in order within
// each lane, and the same knobs give the same script.
func TestCUDAGraphsScenes(t *testing.T) {
	for _, set := range []map[string]string{nil, {"model": "llama-3.1-70b", "tp": "8", "batch": "64"}, {"mode": "piecewise", "batch": "257", "max_num_seqs": "512"}} {
		s := runGraphs(t, set)
		timelines := 0
		for _, st := range s.Steps {
			for _, sc := range st.Scenes {
				if sc.Kind != scene.KindTimeline {
					continue
				}
				timelines++
				n := 0
				for _, l := range sc.Gantt.Lanes {
					n += len(l.Bars)
					for i, b := range l.Bars {
						if b.End < b.Start || (i > 0 && b.Start < l.Bars[i-1].End-1e-9) {
							t.Fatalf("%v %s lane %s: bar %d %+v overlaps or is reversed", set, sc.ID, l.Label, i, b)
						}
					}
				}
				if n > 400 {
					t.Errorf("%v %s: %d bars", set, sc.ID, n)
				}
			}
		}
		if timelines < 5 {
			t.Errorf("%d timelines", timelines)
		}
	}
	a, _ := json.Marshal(runGraphs(t, nil))
	b, _ := json.Marshal(runGraphs(t, nil))
	if string(a) != string(b) {
		t.Error("two builds differ")
	}
}

// Where graph memory comes from depends on vLLM's version: the capture
// step says so, naming v0.21.0, whose profiler estimate takes it off the
// KV cache, and the headroom before it.
func TestCUDAGraphsMemoryVersion(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range s.Steps {
		if strings.Contains(st.Narration, "comes out of the KV cache") {
			found = true
			if !strings.Contains(st.Narration, "v0.21.0") || !strings.Contains(st.Narration, "headroom") {
				t.Errorf("graph memory narrated without the version it holds for: %q", st.Narration)
			}
		}
	}
	if !found {
		t.Error("no step says where graph memory comes from")
	}
}
