package lessons

import (
	"fmt"
	"testing"
)

func TestRooflineRegimes(t *testing.T) {
	s, _, err := roofline.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) float64 { v, _ := s.Metric(k); return v }
	ridge := get("ridge_flop_per_byte")
	if d := get("decode1_intensity"); d > 2 || d >= ridge {
		t.Errorf("batch-1 decode intensity %v FLOP/B: want about 1 and below the ridge %v", d, ridge)
	}
	if p := get("prefill_intensity"); p <= ridge {
		t.Errorf("prefill intensity %v FLOP/B not above the ridge %v", p, ridge)
	}
	if get("decode_intensity") <= get("decode1_intensity") {
		t.Errorf("batching did not raise decode intensity")
	}
}

// Decode intensity rises with the batch, and with a short context a big
// enough batch crosses the ridge.
func TestRooflineBatchMovesDecodeRight(t *testing.T) {
	prev := 0.0
	for _, b := range []int{1, 4, 16, 64, 256, 1024} {
		s, _, err := roofline.Run(map[string]string{"batch": fmt.Sprint(b), "context": "16"})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := s.Metric("decode_intensity")
		if d <= prev {
			t.Errorf("batch %d: intensity %v not above %v", b, d, prev)
		}
		prev = d
	}
	s, _, _ := roofline.Run(map[string]string{"context": "16"})
	if c, _ := s.Metric("compute_bound_batch"); c < 32 || c > 2048 {
		t.Errorf("with 16-token contexts decode turns compute-bound at batch %v; want between 32 and 2048 (the ridge is ~295 on H100)", c)
	}
}
