package measuring

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// Throughput rises with load until the server saturates; past that the TTFT
// tail explodes and fewer requests meet the SLO.
func TestMeasuringSaturates(t *testing.T) {
	v, errs := lesson.Resolve(map[string]string{"duration_s": "10", "rate_min": "2", "rate_max": "128", "points": "4"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.points) != 4 {
		t.Fatalf("%d points, want 4", len(r.points))
	}
	lo, hi := r.first().sum, r.last().sum
	if hi.TTFT.P99 < 10*lo.TTFT.P99 {
		t.Errorf("p99 TTFT %v s at the highest rate vs %v s at the lowest: want queueing to blow it up", hi.TTFT.P99, lo.TTFT.P99)
	}
	if hi.SLOAttainment > 0.5 {
		t.Errorf("%v of requests meet the SLO at 128 req/s; the server should be saturated", hi.SLOAttainment)
	}
	if r.best.rate >= 128 {
		t.Errorf("goodput peaked at the highest rate; it should peak before saturation")
	}
	// Throughput rises with the offered rate up to saturation.
	if r.points[1].sum.OutputTokensPerS <= lo.OutputTokensPerS {
		t.Errorf("throughput %v tok/s at %v req/s not above %v tok/s at %v req/s", r.points[1].sum.OutputTokensPerS, r.points[1].rate, lo.OutputTokensPerS, r.first().rate)
	}
}

func TestMeasuringRejectsInvertedRates(t *testing.T) {
	if _, _, err := lesson.Run(map[string]string{"rate_min": "50", "rate_max": "10"}); err == nil {
		t.Fatal("rate_min above rate_max accepted")
	}
}

// max_num_seqs decides where the sweep saturates, and the
// narration says why. At vLLM's H100 default (1,024) the server admits
// every request up to 64 req/s, where some miss the TPOT limit but none
// queue, and saturates at 128 req/s when the KV cache fills (preemptions);
// at 256 the batch fills first, from 64 req/s, and goodput peaks at 32.
func TestMeasuringSaturationFollowsMaxNumSeqs(t *testing.T) {
	for _, c := range []struct {
		seqs             string
		saturates, best  float64
		limit, atRateMax string
	}{
		{"1024", 128, 64, "the KV cache fills", "preemptions"},
		{"256", 64, 32, "the batch fills: max_num_seqs (256) requests run while others wait", "max_num_seqs (256)"},
	} {
		v, errs := lesson.Resolve(map[string]string{"max_num_seqs": c.seqs})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		r, err := runMeasuring(v)
		if err != nil {
			t.Fatal(err)
		}
		i := r.firstSaturated()
		near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*b } // the sweep's rates are logspace's
		if i < 0 || !near(r.points[i].rate, c.saturates) || !near(r.best.rate, c.best) {
			t.Errorf("max_num_seqs %s: saturates at point %d, best goodput at %v req/s; want saturation at %v req/s, best at %v", c.seqs, i, r.best.rate, c.saturates, c.best)
			continue
		}
		p := r.points[i]
		switch c.seqs {
		case "1024":
			if p.sum.Preemptions == 0 || p.peakRunning > 1024 {
				t.Errorf("1,024 sequences at %v req/s: %d preemptions, %d running at most", p.rate, p.sum.Preemptions, p.peakRunning)
			}
			if prev := r.points[i-1]; prev.queued != 0 || prev.missTPOT == 0 || prev.peakRunning <= 256 {
				t.Errorf("1,024 sequences at %v req/s: %d steps with a queue, %d TPOT misses, %d running at most; want no queue, TPOT misses, more than 256 running", prev.rate, prev.queued, prev.missTPOT, prev.peakRunning)
			}
		case "256":
			if p.peakRunning != 256 || p.atSeqs == 0 {
				t.Errorf("256 sequences at %v req/s: %d running at most, %d steps full with a queue", p.rate, p.peakRunning, p.atSeqs)
			}
		}
		s := r.Script()
		if n := s.Steps[i+1].Narration; !strings.Contains(n, c.limit) {
			t.Errorf("max_num_seqs %s: the %v req/s step does not say %q:\n%s", c.seqs, p.rate, c.limit, n)
		}
		if n := stepTitled(s, "Throughput against latency").Narration; !strings.Contains(n, "saturates, here from "+kit.RateText(c.saturates)) || !strings.Contains(n, c.atRateMax) {
			t.Errorf("max_num_seqs %s: the curves step does not say where and why the server saturates:\n%s", c.seqs, n)
		}
	}
}

// stepTitled is the step of s with this title (the zero Step if none).
func stepTitled(s *lessons.Script, title string) lessons.Step {
	for _, st := range s.Steps {
		if st.Title == title {
			return st
		}
	}
	return lessons.Step{}
}

// sarathiSetup is Sarathi-Serve's strict Mistral-7B setup as its paper and
// artifact state it (microsoft/sarathi-serve @ ceaa066,
// osdi-experiments/figure-5-6/mistral7b_strict.yml): one A100, batch 128,
// chunks of 512 against whole prompts (vLLM, max_num_batched_tokens =
// max_model_len 8,192), its ShareGPT chat lengths, P99 TBT ≤ 100 ms and
// (the search's default for an SLO on the gaps alone) a median scheduling
// delay ≤ 2 s. The sweep is kept short: it does not enter the capacity.
var sarathiSetup = map[string]string{"gpu": "a100-80gb-sxm", "model": "mistral-7b-v0.1", "max_num_seqs": "128", "max_num_batched_tokens": "512",
	"compare_budget": "8192", "slo_p99_tbt_ms": "100", "slo_ttft_ms": "0", "slo_tpot_ms": "0", "lengths": "sharegpt-8k", "rate_min": "1", "rate_max": "4", "points": "2", "duration_s": "10"}

// Under a p99 TBT SLO, the small budget's capacity exceeds the large
// one's, and the capacity step says it is the long prefills' stalls; in
// every seed the capacity lies between a probe that met the SLO and one
// above it that did not.
func TestMeasuringChunkedCapacity(t *testing.T) {
	s, v, err := lesson.Run(sarathiSetup)
	if err != nil {
		t.Fatal(err)
	}
	small, _ := s.Metric("capacity_req_s")
	large, _ := s.Metric("capacity_compare_req_s")
	if !(small > 2*large && large > 0) {
		t.Fatalf("capacity %g req/s at 512 tokens, %g at 8,192: want the chunked budget well ahead", small, large)
	}
	if n := stepTitled(s, "Capacity under the SLO").Narration; !strings.Contains(n, "every decode in that step waits for it") || !strings.Contains(n, "smaller budget (512 tokens) sustains more") {
		t.Errorf("the capacity step does not say why chunks win:\n%s", n)
	}
	r, err := runMeasuring(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []capacityResult{r.capacity, *r.compare} {
		if c.cap.BelowRange() || c.cap.AboveRange() || c.cap.Truncated || c.cap.Complete() != kit.SearchSeeds {
			t.Errorf("budget %d: capacity %+v not inside the range, or not every seed searched", c.budget, c.cap)
		}
		for _, sc := range c.cap.Seeds {
			if !(sc.Met <= sc.Rate && sc.Rate <= sc.Above) {
				t.Errorf("budget %d seed %d: capacity %g outside [%g, %g]", c.budget, sc.Seed, sc.Rate, sc.Met, sc.Above)
			}
			for _, p := range sc.Runs {
				if p.Rate > sc.Rate && p.Meets || p.Rate < sc.Met && !p.Meets {
					t.Errorf("budget %d seed %d: %g req/s met %v against the capacity %g", c.budget, sc.Seed, p.Rate, p.Meets, sc.Rate)
				}
			}
		}
	}
	// The large budget's stalls: a gap between tokens longer than the
	// p99 limit, which chunks of 512 never reach.
	if !(r.compare.maxGap > 0.1 && r.capacity.maxGap < 0.1) {
		t.Errorf("longest gaps %g s (512) and %g s (8,192): want only the large budget's over 100 ms", r.capacity.maxGap, r.compare.maxGap)
	}
}

// A 70B model is measured on a TP group: refused on one H100, accepted on
// four, its capacity per GPU divided by the group's GPUs.
func TestMeasuringTensorParallel(t *testing.T) {
	set := map[string]string{"model": "llama-3.1-70b", "duration_s": "5", "points": "3", "rate_min": "1", "rate_max": "8"}
	if _, _, err := lesson.Run(set); err == nil {
		t.Error("Llama-3.1-70B accepted on one H100")
	}
	set["tp"] = "4"
	s, _, err := lesson.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	if c, per := lessontest.MetricOf(t, s, "capacity_req_s"), lessontest.MetricOf(t, s, "capacity_per_gpu_req_s"); math.Abs(c/4-per) > 0.01 {
		t.Errorf("capacity %v req/s, %v per GPU on TP 4; want a quarter", c, per)
	}
}

// The capacity belongs to the system, not to how the question is put: in
// Sarathi-Serve's setup at its SLO, doubling duration_s, doubling rate_max
// and the seeds 1 to 5 move the capacity at each budget, and their ratio,
// by less than 5%.
func TestMeasuringCapacityStable(t *testing.T) {
	if testing.Short() {
		t.Skip("eight capacity searches of Sarathi-Serve's setup, about 15 s of CPU")
	}
	run := func(change map[string]string) (small, large float64) {
		set := maps.Clone(sarathiSetup)
		maps.Copy(set, change)
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		return lessontest.MetricOf(t, s, "capacity_req_s"), lessontest.MetricOf(t, s, "capacity_compare_req_s")
	}
	baseSmall, baseLarge := run(nil)
	changes := []map[string]string{
		{"duration_s": "20"},
		{"rate_max": "8"},
	}
	for seed := 1; seed <= 5; seed++ {
		changes = append(changes, map[string]string{"seed": strconv.Itoa(seed)})
	}
	var smalls, larges, ratios []float64
	for _, ch := range changes {
		small, large := run(ch)
		t.Logf("%v: %.3f and %.3f req/s, %.2f×", ch, small, large, small/large)
		smalls, larges, ratios = append(smalls, small), append(larges, large), append(ratios, small/large)
	}
	for _, c := range []struct {
		name string
		base float64
		got  []float64
	}{{"capacity at 512 tokens", baseSmall, smalls}, {"capacity at 8,192 tokens", baseLarge, larges}, {"their ratio", baseSmall / baseLarge, ratios}} {
		lo, hi := slices.Min(append(c.got, c.base)), slices.Max(append(c.got, c.base))
		if hi/lo-1 >= 0.05 {
			t.Errorf("%s moves %.1f%% (%.3f to %.3f) over duration_s ×2, rate_max ×2 and seeds 1–5", c.name, 100*(hi/lo-1), lo, hi)
		}
	}
}
