package lessontest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
)

// checkFloors: no latency a lesson reports can beat physics. For random
// accepted knob sets of a lesson that prices steps on a chosen GPU and
// model:
//
//   - every latency in milliseconds that includes a forward pass (TTFT, ITL,
//     TPOT, a step) is at least the time to read the weights once from HBM:
//     the non-embedding weights (the embedding table is gathered, not read)
//     over the GPU's peak bandwidth, split over the tensor-parallel degree;
//   - a latency that covers a known number of prompt tokens (promptMetrics:
//     the metric's key to the knob holding the prompt's length) is at least
//     their FLOPs (2 per non-embedding parameter per token) at the GPU's
//     dense peak.
//
// The floors are loose (peak bandwidth and FLOPs, nothing else), so a
// failure means the model priced a step faster than the hardware can run.
func checkFloors(t *testing.T, l *lessons.Lesson, promptMetrics map[string]string) {
	sets := append([]map[string]string{{}}, RandomKnobSets(l, 20, 11)...)
	checked, latencies := 0, 0
	for _, set := range sets {
		s, v, err := l.Run(set)
		if err != nil {
			continue // refused settings are the contract test's business
		}
		checked++
		for _, mt := range s.Metrics {
			if isPassLatency(mt.Key) && mt.Value > 0 {
				latencies++
			}
		}
		for _, p := range floorProblems(promptMetrics, v, s) {
			t.Errorf("%v: %s", set, p)
		}
	}
	if checked == 0 {
		t.Fatalf("no knob set was accepted")
	}
	t.Logf("%d knob sets accepted, %d latencies checked", checked, latencies)
}

// isPassLatency reports whether a metric key names a latency that includes
// at least one forward pass.
func isPassLatency(key string) bool {
	if !strings.Contains(key, "ms") {
		return false
	}
	for _, k := range []string{"ttft", "itl", "tpot", "step_ms", "prefill_ms", "compute_prefix_ms"} {
		if strings.Contains(key, k) {
			return true
		}
	}
	return false
}

// floorProblems lists the latencies of s below their physical floor;
// PromptMetrics maps the metrics that cover a whole prompt to the knob
// holding its length (Checks.promptMetrics).
func floorProblems(promptMetrics map[string]string, v lessons.Values, s *lessons.Script) (problems []string) {
	if !slices.ContainsFunc(s.Metrics, func(m lessons.Metric) bool { return isPassLatency(m.Key) }) {
		return nil // e.g. kv-budget sizes memory and reports no latency
	}
	g := hardware.MustGPU(v.Choice("gpu"))
	m := hardware.MustModel(v.Choice("model"))
	tp := 1.0
	if v.Has("tp") {
		tp = float64(v.Int("tp"))
	}
	// FP8 weights (kv-budget's weights, the serving lessons' weight_dtype)
	// are read in one byte, and FP8 tensor cores, where the GPU has them,
	// double the compute peak.
	bytesPerWeight, peak := 2.0, g.PeakBF16
	if v.Has("weights") && strings.Contains(v.Choice("weights"), "8") ||
		v.Has("weight_dtype") && v.Choice("weight_dtype") == string(hardware.WeightsFP8) {
		bytesPerWeight = 1
		peak = math.Max(peak, g.PeakFP8)
	}
	params := float64(m.Params - int64(m.Vocab)*int64(m.Hidden))
	readMs := 1000 * params * bytesPerWeight / (tp * g.MemBandwidth)
	for _, mt := range s.Metrics {
		if !isPassLatency(mt.Key) || mt.Value == 0 {
			continue // zero: no such event in this run (e.g. one-token outputs have no ITL)
		}
		floor := readMs
		if knob, ok := promptMetrics[mt.Key]; ok {
			flops := 2 * params * float64(v.Int(knob))
			floor = math.Max(floor, 1000*flops/(tp*peak))
		}
		// Metrics are rounded to 0.01 ms for display.
		if mt.Value+0.005 < floor {
			problems = append(problems, mt.Key+" = "+strconv.FormatFloat(mt.Value, 'f', -1, 64)+
				" ms, below the physical floor of "+strconv.FormatFloat(floor, 'f', 3, 64)+" ms")
		}
	}
	return problems
}

// RandomKnobSets draws n knob sets with a seeded generator: each knob keeps
// its default half of the time, otherwise takes a value between its default
// and one end of its range (a random choice for choice knobs).
func RandomKnobSets(l *lessons.Lesson, n int, seed uint64) []map[string]string {
	r := rand.New(rand.NewPCG(seed, 3))
	var out []map[string]string
	for range n {
		set := map[string]string{}
		for _, p := range l.Params {
			if r.IntN(2) == 0 {
				continue
			}
			if p.Kind == lessons.Choice {
				set[p.Key] = p.Choices[r.IntN(len(p.Choices))]
				continue
			}
			lo, hi := p.Default, p.Max
			if r.IntN(2) == 0 {
				lo, hi = p.Min, p.Default
			}
			x := lo + r.Float64()*(hi-lo)
			if p.Step > 0 {
				x = p.Min + math.Round((x-p.Min)/p.Step)*p.Step
			}
			x = math.Max(p.Min, math.Min(p.Max, x))
			if p.Kind == lessons.Int {
				x = math.Round(x)
			}
			set[p.Key] = strconv.FormatFloat(x, 'f', -1, 64)
		}
		out = append(out, set)
	}
	return out
}
