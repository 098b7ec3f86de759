package disaggregation

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// Separate pools remove the ITL spikes monolithic workers get from
// prefilling beside their decodes; the KV transfer is α + bytes/(BW·η).
func TestDisaggregationDefaults(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) float64 { return lessontest.MetricOf(t, s, k) }
	if get("itl_p99_ms_disagg") > get("itl_p99_ms_monolithic")/3 {
		t.Errorf("p99 ITL %v ms disaggregated vs %v ms monolithic: the spikes should be gone", get("itl_p99_ms_disagg"), get("itl_p99_ms_monolithic"))
	}
	if get("itl_max_ms_disagg") > 1.2*get("itl_p50_ms_disagg") {
		t.Errorf("disaggregated worst ITL %v ms vs median %v ms: a decode worker's steps should stay near one decode step", get("itl_max_ms_disagg"), get("itl_p50_ms_disagg"))
	}
	// Every transfer is one 4-GPU shard of a 2,048–4,096-token Llama-3.1-70B
	// prompt over one NDR NIC: 17 µs + blocks·16·81,920 B / 35.9 GB/s.
	lo := 1000 * (17e-6 + 2048*81920/35.9e9)
	hi := 1000 * (17e-6 + 4096*81920/35.9e9)
	if x := get("transfer_ms"); x < lo || x > hi {
		t.Errorf("mean transfer %v ms outside [%v, %v]", x, lo, hi)
	}
	if x := get("transfer_p99_ms"); x > hi+1e-3 {
		t.Errorf("p99 transfer %v ms above a 4,096-token prompt's %v ms", x, hi)
	}
	// The followed request's KV per GPU is whole blocks: a multiple of 16·81,920 B.
	if blocks := get("kv_mb_per_gpu") * 1e6 / (16 * 81920); math.Abs(blocks-math.Round(blocks)) > 0.01 {
		t.Errorf("KV per GPU %v MB is %v blocks", get("kv_mb_per_gpu"), blocks)
	}
	// Disaggregation adds the transfer and a decode step to TTFT.
	if get("ttft_p50_ms_disagg") <= get("ttft_p50_ms_monolithic") {
		t.Errorf("median TTFT %v ms disaggregated vs %v ms monolithic", get("ttft_p50_ms_disagg"), get("ttft_p50_ms_monolithic"))
	}
	if get("gpus") != 8 || get("local_prefills") != 0 {
		t.Errorf("gpus %v, local prefills %v", get("gpus"), get("local_prefills"))
	}
	// Below saturation both deployments carry the offered load.
	if r := get("throughput_per_gpu_disagg") / get("throughput_per_gpu_monolithic"); r < 0.9 || r > 1.1 {
		t.Errorf("throughput per GPU ratio %v at an unsaturated rate", r)
	}
	quizzes := 0
	for _, st := range s.Steps {
		if st.Quiz != nil {
			quizzes++
		}
	}
	if quizzes == 0 || len(s.Claims) < 4 {
		t.Errorf("%d quizzes, %d claims", quizzes, len(s.Claims))
	}
}

// The link sweep: NVLink moves the KV ~10× faster than one NDR NIC.
func TestDisaggregationLinks(t *testing.T) {
	ndr, _, err := lesson.Run(map[string]string{"requests": "20"})
	if err != nil {
		t.Fatal(err)
	}
	nvl, _, err := lesson.Run(map[string]string{"requests": "20", "link": "nvlink4"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := lessontest.MetricOf(t, ndr, "transfer_ms"), lessontest.MetricOf(t, nvl, "transfer_ms")
	// (bytes/35.9 + 17 µs) / (bytes/348 + 5 µs) ≈ 348/35.9 for MB-sized shards.
	if r := a / b; r < 9 || r > 10 {
		t.Errorf("NDR %v ms vs NVLink %v ms: ratio %v, want ≈ 9.7", a, b, r)
	}
}

// runSet runs the lesson at the knobs set.
func runSet(t *testing.T, set map[string]string) *disaggRun {
	t.Helper()
	v, errs := lesson.Resolve(set)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := runDisaggregation(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With the rule on and no room in the prefill queue, every prompt stays on
// its decode worker: the deployment is monolithic again, spikes included.
func TestDisaggregationConditional(t *testing.T) {
	run := func(set map[string]string) *disaggRun { return runSet(t, set) }
	r := run(map[string]string{"conditional": "queue_length", "max_prefill_queue_size": "0", "requests": "30"})
	if got := r.compared.Disagg.Local; got != 30 || r.compared.Disagg.Remote != 0 {
		t.Errorf("%d local and %d remote prefills, want all 30 local", got, r.compared.Disagg.Remote)
	}
	if r.compared.Dis.ITL.P99 < 3*r.compared.Dis.ITL.P50 {
		t.Error("local prefills on the decode worker should bring the ITL spikes back")
	}
	// Long prompts and an empty queue: the rule sends them remote.
	r = run(map[string]string{"conditional": "queue_length", "max_prefill_queue_size": "1000", "requests": "30"})
	if got := r.compared.Disagg.Local; got != 0 {
		t.Errorf("%d local prefills of 2,048+-token prompts with max_local_prefill_length 1000", got)
	}
	if r.followed.index < 0 || !r.followed.journey.Remote || r.longPrompts != 30 {
		t.Errorf("followed request %d (remote %v), %d long prompts", r.followed.index, r.followed.journey.Remote, r.longPrompts)
	}
	// Dynamo's current policy (IslBounding, 2,048 tokens and 0.7) sends
	// short fresh prompts remote: none of their tokens is cached, a share
	// of 1 ≥ 0.7. Under the first releases' rule (1,000 tokens, queue 2)
	// the same 512–900-token prompts stayed on their decode worker.
	short := map[string]string{"prompt_min": "512", "prompt_max": "900", "requests": "20"}
	for policy, local := range map[string]int{"isl_bounding": 0, "isl_or_load": 0, "queue_length": 20} {
		set := map[string]string{"conditional": policy}
		for k, x := range short {
			set[k] = x
		}
		if r := run(set); r.compared.Disagg.Local != local {
			t.Errorf("%s on 512–900-token prompts: %d prefilled locally, want %d", policy, r.compared.Disagg.Local, local)
		}
	}
	if p, _ := lesson.Param("eff_isl_threshold"); p.Default != 2048 {
		t.Errorf("eff_isl_threshold default %v, want Dynamo's 2,048", p.Default)
	}
	if p, _ := lesson.Param("eff_isl_ratio_threshold"); p.Default != 0.7 {
		t.Errorf("eff_isl_ratio_threshold default %v, want Dynamo's 0.7", p.Default)
	}
	// PrefillLoad with a busy line of 0: every prompt after the first finds
	// the prefill worker busy while it still holds pending tokens.
	r = run(map[string]string{"conditional": "prefill_load", "router_queue_threshold": "0", "rate": "20", "requests": "30"})
	if r.compared.Disagg.Local == 0 || r.compared.Disagg.Remote == 0 {
		t.Errorf("prefill_load at threshold 0 and 20 req/s: %d local, %d remote; want both", r.compared.Disagg.Local, r.compared.Disagg.Remote)
	}
}

func TestDisaggregationBadInput(t *testing.T) {
	for _, c := range []struct {
		set map[string]string
		key string
	}{
		{map[string]string{"prompt_min": "5000"}, "prompt_min"},
		{map[string]string{"output_min": "300"}, "output_min"},
		{map[string]string{"tp": "3"}, "tp"},
		{map[string]string{"tp": "1"}, "tp"}, // 70B BF16 does not fit one H100
		{map[string]string{"link": "pigeon"}, "link"},
	} {
		_, _, err := lesson.Run(c.set)
		var pe *lessons.ParamError
		if !errors.As(err, &pe) || pe.Key != c.key {
			t.Errorf("%v: error %v, want one naming %s", c.set, err, c.key)
		}
	}
}

func TestDisaggregationDeterministic(t *testing.T) {
	set := map[string]string{"requests": "24", "model": "llama-3.1-8b", "tp": "1", "rate": "10"}
	a, _, err := lesson.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := lesson.Run(set)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("same parameters gave different scripts")
	}
}

func TestDisaggregationWorkBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the heaviest settings")
	}
	lessontest.CheckHeavyCorners(t, lesson)
	lessontest.RefusesOverWork(t, lesson, map[string]string{"requests": "200", "output_min": "2048", "output_max": "2048"}, "requests")
}

// Dynamo's setting (FP8 weights, prefill on TP 2, decode on TP 4, long
// prompts) under an SLO that bounds the gaps between tokens: the
// disaggregated deployment's capacity per GPU exceeds the monolithic one's.
// Short prompts under TTFT and TPOT alone: the monolithic one's does. Both
// narrated by the capacity step.
func TestDisaggregationCapacityHeadline(t *testing.T) {
	recipe := map[string]string{"weight_dtype": "fp8", "prefill_tp": "2", "decode_tp": "4", "prefill_workers": "2", "decode_workers": "1", "tp": "2"}
	with := func(more map[string]string) map[string]string {
		out := map[string]string{}
		for k, x := range recipe {
			out[k] = x
		}
		for k, x := range more {
			out[k] = x
		}
		return out
	}
	for _, c := range []struct {
		set       map[string]string
		disWins   bool
		narration string
	}{
		{with(map[string]string{"slo_p99_tbt_ms": "50", "slo_ttft_ms": "1000"}), true, "Disaggregated serves"},
		{with(map[string]string{"prompt_min": "64", "prompt_max": "256", "rate": "30", "requests": "200"}), false, "Monolithic serves"},
	} {
		s, _, err := lesson.Run(c.set)
		if err != nil {
			t.Fatal(err)
		}
		m, d := lessontest.MetricOf(t, s, "capacity_per_gpu_req_s_monolithic"), lessontest.MetricOf(t, s, "capacity_per_gpu_req_s_disagg")
		if (d > m) != c.disWins || m <= 0 || d <= 0 {
			t.Errorf("%v: capacity per GPU %v disaggregated vs %v monolithic; want disaggregated ahead: %v", c.set, d, m, c.disWins)
		}
		if gm, gd := lessontest.MetricOf(t, s, "gpus"), lessontest.MetricOf(t, s, "gpus_disagg"); gm != 8 || gd != 8 {
			t.Errorf("%v: %v and %v GPUs, want 8 (4 × TP 2) and 8 (2 × TP 2 + TP 4)", c.set, gm, gd)
		}
		last := s.Steps[len(s.Steps)-1]
		if last.Title != "Capacity per GPU under the SLO" || !strings.Contains(last.Narration, c.narration) {
			t.Errorf("%v: last step %q does not narrate %q: %s", c.set, last.Title, c.narration, last.Narration)
		}
	}
}

// The capacity belongs to the deployments, not to the lesson's own run:
// the searches' probes draw their own streams, so doubling the requests
// and the rate knobs leaves both capacities exactly as they were. (Across
// seeds 1–5 the precise search's disaggregated capacity still moves about
// 8% in Dynamo's recipe: its attainment-bound probes are short.)
func TestDisaggregationCapacityIgnoresRunKnobs(t *testing.T) {
	keys := []string{"capacity_req_s_monolithic", "capacity_req_s_disagg", "capacity_per_gpu_req_s_monolithic", "capacity_per_gpu_req_s_disagg"}
	var base []float64
	for i, set := range []map[string]string{nil, {"requests": "120"}, {"rate": "6"}} {
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		for k, key := range keys {
			got := lessontest.MetricOf(t, s, key)
			if i == 0 {
				base = append(base, got)
			} else if got != base[k] {
				t.Errorf("%v: %s %v, %v at the defaults", set, key, got, base[k])
			}
		}
	}
}

// The capacities belong to the deployments, not to how the question is
// put: at the defaults and at Dynamo's recipe, each deployment's capacity
// is exactly what it was when the lesson's run doubles (requests ×2) or
// its rate does (rate ×2), and its capacity per GPU from the precise
// search moves less than 5% across seeds 1–5 and the default seed. The
// hardest case is the defaults' disaggregated deployment, where a request
// misses TTFT when it arrives during another long prompt's prefill, so
// the share missing grows only in proportion to the rate: its probes are
// stratified (workload.StratifiedPoisson) and its work bound is 255
// million units; with independent draws and 170 million its answers moved
// 6.1%.
func TestDisaggregationCapacityStable(t *testing.T) {
	if testing.Short() {
		t.Skip("twelve precise runs of both searches, about four and a half minutes of CPU")
	}
	for _, setting := range []struct {
		name string
		set  map[string]string
	}{
		{"defaults", nil},
		{"Dynamo's recipe", map[string]string{"weight_dtype": "fp8", "tp": "2", "prefill_tp": "2", "decode_tp": "4", "prefill_workers": "2", "decode_workers": "1",
			"slo_p99_tbt_ms": "50", "prompt_min": "3000", "prompt_max": "3000", "output_min": "150", "output_max": "150", "link": "nvlink4"}},
	} {
		run := func(change map[string]string) disaggCapacities {
			set := map[string]string{"capacity_search": "precise"}
			maps.Copy(set, setting.set)
			maps.Copy(set, change)
			return runSet(t, set).capacity
		}
		// The searches draw their own streams: the lesson's run does not
		// enter them, so the quick search (the precise one's first seed)
		// answers exactly as before.
		quick := map[string]string{"capacity_search": "quick"}
		base := run(quick)
		for _, ch := range []map[string]string{{"requests": "120"}, {"rate": "6"}} {
			maps.Copy(ch, quick)
			if c := run(ch); c.mono.cap.Rate != base.mono.cap.Rate || c.dis.cap.Rate != base.dis.cap.Rate {
				t.Errorf("%s %v: capacities %v and %v req/s, %v and %v without", setting.name, ch, c.mono.cap.Rate, c.dis.cap.Rate, base.mono.cap.Rate, base.dis.cap.Rate)
			}
		}
		changes := []map[string]string{{}}
		for seed := 1; seed <= 5; seed++ {
			changes = append(changes, map[string]string{"seed": strconv.Itoa(seed)})
		}
		var mono, dis []disaggCapacity
		for _, ch := range changes {
			c := run(ch)
			t.Logf("%s %v: %.4f (%.4f–%.4f) and %.4f (%.4f–%.4f) req/s per GPU, monolithic and disaggregated", setting.name, ch,
				c.mono.perGPU(), c.mono.cap.Low/float64(c.mono.gpus), c.mono.cap.High/float64(c.mono.gpus), c.dis.perGPU(), c.dis.cap.Low/float64(c.dis.gpus), c.dis.cap.High/float64(c.dis.gpus))
			mono, dis = append(mono, c.mono), append(dis, c.dis)
		}
		for _, d := range []struct {
			name string
			cs   []disaggCapacity
		}{{"monolithic", mono}, {"disaggregated", dis}} {
			rates := make([]float64, len(d.cs))
			for i, c := range d.cs {
				rates[i] = c.perGPU()
			}
			lo, hi := slices.Min(rates), slices.Max(rates)
			t.Logf("%s, %s: capacity per GPU %.4f to %.4f req/s, %.1f%% apart", setting.name, d.name, lo, hi, 100*(hi/lo-1))
			if hi/lo-1 >= 0.05 {
				t.Errorf("%s, %s: capacity per GPU moves %.1f%% (%.4f to %.4f) over seeds 1–5 and the default", setting.name, d.name, 100*(hi/lo-1), lo, hi)
			}
		}
	}
}
