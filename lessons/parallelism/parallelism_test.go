package parallelism

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/lessons"
)

// The lesson's two required figures at its defaults: a layout where more
// parallelism lowers throughput per GPU, and one it takes to fit at all.
func TestParallelismShowsTheTrade(t *testing.T) {
	r, err := runParallelism(lesson.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	a, b := r.report[0], r.report[1]
	if !a.priced || !b.priced || a.batch != b.batch {
		t.Fatalf("report layouts not priced at one batch: %+v %+v", a.batch, b.batch)
	}
	if b.step.PerGPU(16) >= a.step.PerGPU(8) {
		t.Errorf("TP8PP2 %v tok/s/GPU, TP8 %v: the second node should lower it at the same batch", b.step.PerGPU(16), a.step.PerGPU(8))
	}
	if b.kvTokens <= 2*a.kvTokens {
		t.Errorf("TP8PP2 holds %d tokens, TP8 %d", b.kvTokens, a.kvTokens)
	}
	if r.bf16[0].fitErr == nil || r.bf16[1].fitErr != nil {
		t.Errorf("405B BF16: TP8 fits %v, TP8PP2 fits %v; want only the second", r.bf16[0].fitErr == nil, r.bf16[1].fitErr == nil)
	}
	// 70B on 8 H100s: TP1 does not fit, TP8 is fastest alone, and a
	// smaller TP peaks higher per GPU.
	if r.node[0].fitErr == nil {
		t.Error("70B FP8 fits one H100")
	}
	tp4, tp8 := r.node[2], r.node[3]
	if tp8.sweep[0].PerUser() <= tp4.sweep[0].PerUser() || tp8.peak().PerGPU(8) >= tp4.peak().PerGPU(4) {
		t.Errorf("TP8 %v tok/s alone, peak %v/GPU; TP4 %v, %v", tp8.sweep[0].PerUser(), tp8.peak().PerGPU(8), tp4.sweep[0].PerUser(), tp4.peak().PerGPU(4))
	}
}

// Per-user speed is one token per step, per-GPU throughput the batch
// over the step and the replica's GPUs.
func TestParallelismRates(t *testing.T) {
	r, err := runParallelism(lesson.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	st := r.mine.step
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"per user", st.PerUser(), 1 / st.Seconds},
		{"per GPU", st.PerGPU(16), float64(r.batch) / st.Seconds / 16},
		{"bubble formula", st.FormulaBubble, 1.0 / 3},
	} {
		if math.Abs(c.got-c.want) > 1e-9*c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}

// A batch the layout cannot hold, and a layout that does not fit, are
// refused on their knobs.
func TestParallelismRefuses(t *testing.T) {
	for _, c := range []struct {
		set map[string]string
		key string
	}{
		{map[string]string{"weight_dtype": "bf16", "pp": "1"}, "weight_dtype"},
		{map[string]string{"pp": "1", "batch": "2048"}, "batch"},
		{map[string]string{"micro_batches": "16", "batch": "8"}, "micro_batches"},
		{map[string]string{"tp": "3"}, "tp"},
	} {
		_, err := lesson.ResolveChecked(c.set)
		pe, ok := err.(*lessons.ParamError)
		if !ok || pe.Key != c.key {
			t.Errorf("%v: %v, want a refusal on %s", c.set, err, c.key)
		}
	}
}
