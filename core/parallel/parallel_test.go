package parallel

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
)

func TestStageLayersFollowsVLLM(t *testing.T) {
	for _, c := range []struct {
		layers, pp int
		want       []int
	}{
		{126, 1, []int{126}},
		{126, 2, []int{63, 63}},
		{80, 3, []int{27, 27, 26}}, // remainder 2: partitions[-2] and [-3]
		{10, 4, []int{2, 3, 3, 2}}, // remainder 2 ≤ pp − 2: the middle stages
		{32, 5, []int{6, 6, 7, 7, 6}},
		{7, 4, []int{2, 2, 2, 1}}, // remainder 3: every stage but the last
	} {
		if got := StageLayers(c.layers, c.pp); !slices.Equal(got, c.want) {
			t.Errorf("StageLayers(%d, %d) = %v, want %v", c.layers, c.pp, got, c.want)
		}
	}
}

func TestCrossesNode(t *testing.T) {
	for _, c := range []struct {
		stage, tp int
		want      bool
	}{
		{0, 8, true},  // TP8PP2: stage 1 fills node 1
		{0, 4, false}, // TP4PP2 on one node
		{1, 4, true},  // TP4PP4: stages 1–2 on node 1, 3–4 on node 2
		{2, 4, false},
		{3, 2, true}, // TP2PP8: the fourth boundary
		{2, 2, false},
	} {
		if got := crossesNode(c.stage, c.tp, 8); got != c.want {
			t.Errorf("crossesNode(stage %d, tp %d) = %v, want %v", c.stage, c.tp, got, c.want)
		}
	}
}

// The stages' weights add up to the whole checkpoint, whatever the split.
func TestStageWeightsAddUp(t *testing.T) {
	g := hardware.MustGPU("h100-sxm")
	for _, id := range []string{"llama-3.1-405b", "llama-3.1-70b", "llama-3.1-8b"} {
		m := hardware.MustModel(id)
		for _, w := range []hardware.WeightFormat{hardware.WeightsBF16, hardware.WeightsFP8} {
			want, err := hardware.LoadedWeightBytes(m, w)
			if err != nil {
				t.Fatal(err)
			}
			for _, pp := range []int{1, 2, 3, 4} {
				s := Setup{GPU: g, Model: m, Weights: w}.withDefaults()
				var sum int64
				for i, n := range StageLayers(m.Layers, pp) {
					sum += s.stageWeights(Layout{TP: 1, PP: pp, DP: 1, MicroBatches: 1}, i, n)
				}
				// Linear weights pro rata round down once per stage.
				if d := want - sum; d < 0 || d >= int64(pp) {
					t.Errorf("%s %s PP%d: stages hold %d bytes, checkpoint %d", id, w, pp, sum, want)
				}
			}
		}
	}
}

// Without pipeline parallelism a replica is the serving engine the other
// lessons build: the same pool as hardware.Fit.Pool, the same step time.
func TestOneStageIsTheEngine(t *testing.T) {
	g, m := hardware.MustGPU("h100-sxm"), hardware.MustModel("llama-3.1-70b")
	for _, tp := range []int{2, 4, 8} {
		r, err := Setup{GPU: g, Model: m, Weights: hardware.WeightsFP8}.Replica(Layout{TP: tp, PP: 1, DP: 1, MicroBatches: 1})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := hardware.Fit{GPU: g, Model: m, TP: tp, Weights: hardware.WeightsFP8, BatchedTokens: 8192}.Pool(16)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Stages[0].Pool.Blocks; got != pool.Blocks {
			t.Errorf("TP%d: %d blocks, Fit.Pool %d", tp, got, pool.Blocks)
		}
		sm, _ := hardware.NewStepModel(g, m, tp, hardware.BF16)
		_ = sm.SetWeights(hardware.WeightsFP8)
		sm.OverlapHost, sm.Dispatcher, sm.AllReduce = true, hardware.Replay{Launch: hardware.GraphLaunch}, hardware.VLLMAllReduce(g, tp)
		st, err := r.Decode(32, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if want := sm.Seconds(hardware.DecodeBatch(32, 1024)); st.Seconds != want {
			t.Errorf("TP%d: step %g s, StepModel %g s", tp, st.Seconds, want)
		}
	}
}

// The GPipe schedule of equal stages with free sends takes m + p − 1
// slots and idles (p − 1) / (m + p − 1) of the stages' time.
func TestScheduleBubble(t *testing.T) {
	for _, c := range []struct{ p, m int }{{1, 1}, {2, 1}, {2, 2}, {2, 8}, {4, 4}, {4, 1}, {3, 16}} {
		st := Step{Micro: make([]int, c.m), Compute: grid(c.p, c.m), Comm: grid(c.p, c.m), Send: grid(c.p, c.m)}
		for s := range c.p {
			for j := range c.m {
				st.Compute[s][j] = 0.01
			}
		}
		st.schedule()
		if want := float64(c.m+c.p-1) * 0.01; math.Abs(st.Seconds-want) > 1e-12 {
			t.Errorf("p %d m %d: %g s, want %g", c.p, c.m, st.Seconds, want)
		}
		if math.Abs(st.Bubble-st.FormulaBubble) > 1e-12 || math.Abs(st.FormulaBubble-float64(c.p-1)/float64(c.m+c.p-1)) > 1e-12 {
			t.Errorf("p %d m %d: bubble %g, formula %g", c.p, c.m, st.Bubble, st.FormulaBubble)
		}
	}
}

// The batch queue's steady state: b batches in flight over p equal stages
// of 10 ms, with free sends, come round every max(p, b) slots (a batch's
// trip, or a stage serving every batch), and the stages idle 1 − b/p of
// the time when b < p; a stage three times slower sets the period alone.
func TestBatchQueuePeriod(t *testing.T) {
	for _, c := range []struct {
		p, b   int
		slow   float64 // stage 0's time, s
		period float64
	}{
		{2, 2, 0.01, 0.02}, {4, 4, 0.01, 0.04}, {4, 1, 0.01, 0.04}, {4, 2, 0.01, 0.04}, {3, 3, 0.03, 0.09},
	} {
		st := Step{Micro: make([]int, c.b), Compute: grid(c.p, c.b), Comm: grid(c.p, c.b), Send: grid(c.p, c.b)}
		for s := range c.p {
			for j := range c.b {
				st.Compute[s][j] = 0.01
			}
		}
		for j := range c.b {
			st.Compute[0][j] = c.slow
		}
		st.scheduleQueue()
		if math.Abs(st.Seconds-c.period) > 1e-12 {
			t.Errorf("p %d b %d: period %g s, want %g", c.p, c.b, st.Seconds, c.period)
		}
		busy := float64(c.b) * (c.slow + 0.01*float64(c.p-1))
		if want := 1 - busy/(float64(c.p)*c.period); math.Abs(st.Bubble-want) > 1e-9 {
			t.Errorf("p %d b %d: bubble %g, want %g", c.p, c.b, st.Bubble, want)
		}
		if c.slow == 0.01 && math.Abs(st.Bubble-st.FormulaBubble) > 1e-9 {
			t.Errorf("p %d b %d: equal stages idle %g, formula %g", c.p, c.b, st.Bubble, st.FormulaBubble)
		}
	}
}

// A send holds its stage: a slow link lengthens the step by more than one
// send when several micro-batches wait behind it.
func TestSendsHoldTheStage(t *testing.T) {
	st := Step{Micro: make([]int, 3), Compute: grid(2, 3), Comm: grid(2, 3), Send: grid(2, 3)}
	for j := range 3 {
		st.Compute[0][j], st.Compute[1][j], st.Send[0][j] = 0.01, 0.01, 0.005
	}
	st.schedule()
	// Stage 1 is busy 15 ms per micro-batch: the third leaves it at 45 ms
	// and stage 2 ends it at 55 ms.
	if math.Abs(st.Seconds-0.055) > 1e-12 {
		t.Errorf("step %g s, want 0.055", st.Seconds)
	}
	if math.Abs(st.SendShare-0.015/0.11) > 1e-12 {
		t.Errorf("send share %g", st.SendShare)
	}
}

// The layouts the lesson narrates: what fits on H100s.
func TestWhatFitsOnH100(t *testing.T) {
	g := hardware.MustGPU("h100-sxm")
	for _, c := range []struct {
		model string
		w     hardware.WeightFormat
		l     Layout
		fits  bool
	}{
		{"llama-3.1-405b", hardware.WeightsFP8, Layout{TP: 8, PP: 1, DP: 1, MicroBatches: 1}, true},
		{"llama-3.1-405b", hardware.WeightsFP8, Layout{TP: 8, PP: 2, DP: 1, MicroBatches: 2}, true},
		{"llama-3.1-405b", hardware.WeightsBF16, Layout{TP: 8, PP: 1, DP: 1, MicroBatches: 1}, false}, // 101.5 GB of weights per GPU
		{"llama-3.1-405b", hardware.WeightsBF16, Layout{TP: 8, PP: 2, DP: 1, MicroBatches: 2}, true},
		{"llama-3.1-70b", hardware.WeightsFP8, Layout{TP: 1, PP: 1, DP: 8, MicroBatches: 1}, false},
		{"llama-3.1-70b", hardware.WeightsFP8, Layout{TP: 2, PP: 1, DP: 4, MicroBatches: 1}, true},
		{"llama-3.1-70b", hardware.WeightsBF16, Layout{TP: 2, PP: 1, DP: 4, MicroBatches: 1}, false},
	} {
		r, err := Setup{GPU: g, Model: hardware.MustModel(c.model), Weights: c.w}.Replica(c.l)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Fits() == nil; got != c.fits {
			t.Errorf("%s %s %s: fits %v, want %v (%v)", c.model, c.w, c.l.Name(), got, c.fits, r.Fits())
		}
		if !c.fits && r.KVTokens() != 0 {
			t.Errorf("%s %s: %d KV tokens in a layout that does not fit", c.model, c.l.Name(), r.KVTokens())
		}
	}
}

// A second stage halves each GPU's weights and KV bytes per token, so the
// replica holds more tokens. With its two batches in flight a sequence's
// tokens come about as often as on TP8 at the same batch (each period
// still reads every weight once per GPU column and every KV byte once), so
// per GPU it makes about half as much: its gain is the batch it can hold.
func TestPipelineTradesSpeedForCapacity(t *testing.T) {
	s := Setup{GPU: hardware.MustGPU("h100-sxm"), Model: hardware.MustModel("llama-3.1-405b"), Weights: hardware.WeightsFP8}
	tp8, _ := s.Replica(Layout{TP: 8, PP: 1, DP: 1})
	pp2, _ := s.Replica(Layout{TP: 8, PP: 2, DP: 1})
	if pp2.KVTokens() < 2*tp8.KVTokens() {
		t.Errorf("TP8PP2 holds %d tokens, TP8 %d: want more than twice", pp2.KVTokens(), tp8.KVTokens())
	}
	a, _ := tp8.Decode(64, 2048)
	b, _ := pp2.Decode(64, 2048)
	if ratio := b.PerGPU(16) / a.PerGPU(8); math.Abs(b.Seconds/a.Seconds-1) > 0.15 || ratio < 0.4 || ratio > 0.6 {
		t.Errorf("TP8 %g s %g tok/s/GPU, TP8PP2 %g s %g tok/s/GPU", a.Seconds, a.PerGPU(8), b.Seconds, b.PerGPU(16))
	}
	if !pp2.Stages[0].CrossesNode || pp2.Stages[0].Next.ID != "ib-ndr" {
		t.Errorf("TP8PP2's boundary: %+v", pp2.Stages[0].Next)
	}
	ib := cluster.MustLink("ib-ndr")
	bytes := b.SendBytes[0]
	if got, want := b.Send[0][0], ib.Transfer(bytes/8)+pp2.Stages[0].step.AllReduce.GatherTime(bytes, 8); got != want {
		t.Errorf("send %g s, want %g", got, want)
	}
}

func TestRefusals(t *testing.T) {
	s := Setup{GPU: hardware.MustGPU("h100-sxm"), Model: hardware.MustModel("llama-3.1-70b")}
	for _, l := range []Layout{{TP: 16, PP: 1, DP: 1}, {TP: 3, PP: 1, DP: 1}, {TP: 8, PP: 81, DP: 1}, {TP: 8, PP: 1, DP: 1, Schedule: GPipe}, {TP: 8, PP: 1, DP: 0}, {TP: 8, PP: 1, DP: 1, Schedule: 7}} {
		if _, err := s.Replica(l); !errors.Is(err, ErrLayout) {
			t.Errorf("%+v: %v, want ErrLayout", l, err)
		}
	}
	r, _ := s.Replica(Layout{TP: 8, PP: 2, DP: 1, MicroBatches: 4, Schedule: GPipe})
	if _, err := r.Decode(3, 100); !errors.Is(err, ErrLayout) {
		t.Errorf("3 sequences in 4 micro-batches: %v", err)
	}
}

func TestLayoutName(t *testing.T) {
	for l, want := range map[Layout]string{{TP: 8, PP: 1, DP: 1}: "TP8", {TP: 8, PP: 2, DP: 1}: "TP8PP2", {TP: 2, PP: 1, DP: 4}: "4×TP2", {TP: 4, PP: 2, DP: 2}: "2×TP4PP2"} {
		if got := l.Name(); got != want {
			t.Errorf("%+v: %q, want %q", l, got, want)
		}
	}
}

// vLLM v1 keeps PP batches in flight (its batch queue), so in steady state
// a stage waits only while it sends: TP8PP2 of Llama-3.1-405B serves 64
// sequences as two batches of 32 taking turns, and a sequence's tokens
// come one period apart, the period being the busier stage's time for
// both batches (or a batch's trip through both stages, if longer). A
// drained pipeline would idle a third of the stages' time instead.
func TestBatchQueueKeepsPPBatchesInFlight(t *testing.T) {
	s := Setup{GPU: hardware.MustGPU("h100-sxm"), Model: hardware.MustModel("llama-3.1-405b"), Weights: hardware.WeightsFP8}
	r, err := s.Replica(Layout{TP: 8, PP: 2, DP: 1, MicroBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Decode(64, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Micro) != 2 || st.Micro[0] != 32 || st.Micro[1] != 32 {
		t.Fatalf("batches in flight %v, want two of 32", st.Micro)
	}
	var load [2]float64
	trip := 0.0
	for j := range 2 {
		load[0] += st.Compute[0][j] + st.Send[0][j]
		load[1] += st.Compute[1][j]
		trip = max(trip, st.Compute[0][j]+st.Send[0][j]+st.Compute[1][j])
	}
	if want := max(load[0], load[1], trip); math.Abs(st.Seconds-want) > 1e-9*want {
		t.Errorf("period %.6g s, want %.6g (stage loads %v, trip %g)", st.Seconds, want, load, trip)
	}
	// The stages are unequal (the last holds lm_head), so the lighter one
	// waits for the heavier: the bubble is that difference, and far from
	// the drained pipeline's third.
	if idle := (2*st.Seconds - load[0] - load[1]) / (2 * st.Seconds); math.Abs(st.Bubble-idle) > 1e-9 || st.Bubble > 0.05 {
		t.Errorf("bubble %.4g, want the stages' imbalance %.4g", st.Bubble, idle)
	}
}

// One sequence cannot fill two stages: the batch queue then has one batch
// in flight, which crosses both stages every token, and half the stages'
// time is idle.
func TestBatchQueueOneSequence(t *testing.T) {
	s := Setup{GPU: hardware.MustGPU("h100-sxm"), Model: hardware.MustModel("llama-3.1-405b"), Weights: hardware.WeightsFP8}
	r, err := s.Replica(Layout{TP: 8, PP: 2, DP: 1, MicroBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Decode(1, 2048)
	if err != nil {
		t.Fatal(err)
	}
	trip := st.Compute[0][0] + st.Send[0][0] + st.Compute[1][0]
	if len(st.Micro) != 1 || math.Abs(st.Seconds-trip) > 1e-12 || st.FormulaBubble != 0.5 {
		t.Errorf("batches %v, period %g s (trip %g), formula bubble %g", st.Micro, st.Seconds, trip, st.FormulaBubble)
	}
}
