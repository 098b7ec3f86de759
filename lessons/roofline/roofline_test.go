package roofline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

func TestRooflineRegimes(t *testing.T) {
	r, err := runRoofline(lesson.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	ridge := r.gpu.Ridge()
	if d := r.decode1.intensity; d > 2 || d >= ridge || r.decode1.computeBound {
		t.Errorf("batch-1 decode intensity %v FLOP/B: want about 1, memory-bound, below the ridge %v", d, ridge)
	}
	if p := r.prefill.intensity; p <= ridge || !r.prefill.computeBound {
		t.Errorf("prefill intensity %v FLOP/B not above the ridge %v", p, ridge)
	}
	if r.decode.intensity <= r.decode1.intensity {
		t.Errorf("batching did not raise decode intensity")
	}
	// Every GPU whose step model builds is on the chart, each roof capped by
	// its own peak.
	if len(r.gpus) != len(hardware.GPUs()) {
		t.Errorf("%d of %d GPUs drawn", len(r.gpus), len(hardware.GPUs()))
	}
	for _, g := range r.gpus {
		if top := g.roof.attainable[len(g.roof.attainable)-1]; top != g.gpu.PeakBF16 {
			t.Errorf("%s roof tops at %v, want the dense BF16 peak %v", g.gpu.ID, top, g.gpu.PeakBF16)
		}
	}
}

// Decode intensity rises with the batch, and with a short context a big
// enough batch crosses the ridge.
func TestRooflineBatchMovesDecodeRight(t *testing.T) {
	prev := 0.0
	for _, b := range []int{1, 4, 16, 64, 256, 1024} {
		s, _, err := lesson.Run(map[string]string{"batch": fmt.Sprint(b), "context": "16"})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := s.Metric("decode_intensity")
		if d <= prev {
			t.Errorf("batch %d: intensity %v not above %v", b, d, prev)
		}
		prev = d
	}
	s, _, _ := lesson.Run(map[string]string{"context": "16"})
	if c, _ := s.Metric("compute_bound_batch"); c < 32 || c > 2048 {
		t.Errorf("with 16-token contexts decode turns compute-bound at batch %v; want between 32 and 2048 (the ridge is ~295 on H100)", c)
	}
}

// The validation table's count belongs to the repository, not to the run:
// no knob moves it, so the table shows it and no run metric reports it.
func TestRooflineNoRepositoryCountAsMetric(t *testing.T) {
	for _, set := range []map[string]string{nil, {"batch": "256"}} {
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range s.Metrics {
			if strings.HasPrefix(m.Key, "validation") {
				t.Errorf("%v: %s (%s), a count of the repository's validation rows, reported as a run metric", set, m.Key, m.Label)
			}
		}
	}
}
