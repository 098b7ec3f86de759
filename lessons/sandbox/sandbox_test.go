package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// Multi-turn chats reuse their own history: a cache-aware router finds much
// of each prompt cached; with nothing shared, nothing is.
func TestSandboxCacheHits(t *testing.T) {
	hit := func(set map[string]string) float64 {
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := s.Metric("hit_rate_pct")
		return v
	}
	chats := hit(map[string]string{"workload": "chats", "policy": "kv_aware"})
	rr := hit(map[string]string{"workload": "chats", "policy": "round_robin"})
	plain := hit(map[string]string{"workload": "plain"})
	if chats <= rr || plain != 0 {
		t.Errorf("hit rates: chats kv-aware %v%%, chats round robin %v%%, plain %v%%", chats, rr, plain)
	}
}

// A trace is the generated workload's stand-in: the same requests through
// RunTrace give the same figures as the knobs that generated them. Only
// the generated run searches a capacity: a trace's arrival times are
// fixed, so its capacity metrics are absent and its last step says why.
func TestSandboxTraceMatchesGenerated(t *testing.T) {
	set := map[string]string{"workload": "shared", "requests": "60", "rate": "20", "seed": "3"}
	gen, v, err := lesson.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := lesson.RunTrace(set, sandboxWorkload(v), "same.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Metrics) == 0 || len(gen.Metrics) != len(tr.Metrics)+3 {
		t.Fatalf("metrics: %d generated, %d from the trace; want the generated run's three capacity metrics more", len(gen.Metrics), len(tr.Metrics))
	}
	for i, m := range tr.Metrics {
		if gen.Metrics[i] != m {
			t.Errorf("metric %s: generated %v, trace %v", m.Key, gen.Metrics[i].Value, m.Value)
		}
	}
	for _, key := range []string{"capacity_req_s", "capacity_per_gpu_req_s", "capacity_spread_pct"} {
		if _, ok := tr.Metric(key); ok {
			t.Errorf("the trace run has %s", key)
		}
		if _, ok := gen.Metric(key); !ok {
			t.Errorf("the generated run has no %s", key)
		}
	}
	if n := tr.Steps[0].Narration; !strings.Contains(n, "same.jsonl") {
		t.Errorf("the trace run does not name its trace: %q", n)
	}
	last := tr.Steps[len(tr.Steps)-1]
	if last.Title != "Capacity under the SLO" || !strings.Contains(last.Narration, "arrival times are fixed, so the lab cannot replay same.jsonl at other rates") {
		t.Errorf("the trace's capacity step does not say why it has no capacity: %q %q", last.Title, last.Narration)
	}
}

func TestRunTraceErrors(t *testing.T) {
	reqs := workload.Poisson(3, 1, workload.Uniform{Min: 64, Max: 64}, workload.Uniform{Min: 4, Max: 4}, 1)
	for _, c := range []struct {
		name string
		l    *lessons.Lesson
		raw  map[string]string
		reqs []workload.Request
		want string
	}{
		{"a lesson without traces", &lessons.Lesson{Slug: "plain", Sim: lessontest.SimFunc(func(lessons.Values) (*lessons.Script, error) { return &lessons.Script{}, nil })}, nil, reqs, "takes no trace"},
		{"an empty trace", lesson, nil, nil, "has no requests"},
		{"a bad knob", lesson, map[string]string{"workers": "99"}, reqs, "workers"},
	} {
		if _, _, err := c.l.RunTrace(c.raw, c.reqs, "t.jsonl"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if lim := lesson.TraceLimits(); lim.MaxRequests != 2000 || lim.MaxTokens != 16384 || lim.MaxTotalTokens != 2_000_000 {
		t.Errorf("sandbox trace limits = %+v, want the requests knob's maximum 2,000, 16,384 tokens each and 2,000,000 in all", lim)
	}
}

func TestSandboxWorkBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the heaviest settings")
	}
	lessontest.CheckHeavyCorners(t, lesson)
	lessontest.RefusesOverWork(t, lesson, map[string]string{"requests": "2000"}, "requests")
	lessontest.RefusesOverWork(t, lesson, map[string]string{"requests": "900", "rate": "1000"}, "requests")
	// A trace is held to the same bound: 2,000 requests of 1,000 output
	// tokens need 2 × 64 + 16 × 1,000 each, 32 million in all.
	heavy := workload.Poisson(2000, 10, workload.Uniform{Min: 64, Max: 64}, workload.Uniform{Min: 1000, Max: 1000}, 1)
	if _, _, err := lesson.RunTrace(nil, heavy, "heavy.jsonl"); err == nil || !strings.Contains(err.Error(), "heavy.jsonl") || !strings.Contains(err.Error(), "too heavy") {
		t.Errorf("a trace over the work bound: %v", err)
	}
}

// A token budget below max_num_seqs is refused by Check on
// the budget knob, with the seqs it must reach, as vLLM's SchedulerConfig
// refuses it — not by the scheduler inside a generic message.
func TestSandboxBudgetBelowSeqs(t *testing.T) {
	err := lesson.Check(sandboxValues(t, map[string]string{"max_num_seqs": "300", "max_num_batched_tokens": "256"}))
	var pe *lessons.ParamError
	if !errors.As(err, &pe) || pe.Key != "max_num_batched_tokens" || pe.Want != "at least max_num_seqs (300), as vLLM requires" {
		t.Errorf("budget 256 < 300 sequences: %v, want a refusal of max_num_batched_tokens asking for at least 300", err)
	}
	if err := lesson.Check(sandboxValues(t, map[string]string{"max_num_seqs": "256", "max_num_batched_tokens": "256", "requests": "8"})); err != nil {
		t.Errorf("budget = max_num_seqs: %v, want it accepted", err)
	}
}

// sandboxValues resolves raw knobs of the sandbox without checking them.
func sandboxValues(t *testing.T, raw map[string]string) lessons.Values {
	t.Helper()
	v, errs := lesson.Resolve(raw)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

// The sandbox with Llama-2-7B (4,096 positions) was once refused for
// every workload, its long-tailed lengths reaching 9,434 tokens. The
// generated workload is now fitted to the model's context, said in the
// setup's narration; a request that fits is left as drawn; and a trace
// whose request is too long is still refused, as vLLM refuses it.
func TestSandboxFitsTheModelsContext(t *testing.T) {
	const note = "positions allow, so, as a load generator fits its dataset to the model"
	for _, model := range []string{"llama-2-7b", "llama-3.1-8b"} {
		limit := hardware.MustModel(model).MaxPositions - contextMargin
		for _, w := range []string{"chats", "shared", "plain"} {
			set := map[string]string{"model": model, "workload": w}
			s, v, err := lesson.Run(set)
			if err != nil {
				t.Errorf("%v: %v", set, err)
				continue
			}
			drawn, served := sandboxDraw(v), sandboxWorkload(v)
			if len(drawn) != len(served) {
				t.Fatalf("%v: %d requests drawn, %d served", set, len(drawn), len(served))
			}
			cut := 0
			for i, d := range drawn {
				got := served[i]
				switch {
				case got.Prompt+got.Output > limit || got.Output < 1 || got.Prompt < 1:
					t.Errorf("%v: request %d of %d + %d tokens, limit %d", set, i, got.Prompt, got.Output, limit)
				case d.Prompt+d.Output <= limit && (got.Prompt != d.Prompt || got.Output != d.Output):
					t.Errorf("%v: request %d fits (%d + %d) but was changed to %d + %d", set, i, d.Prompt, d.Output, got.Prompt, got.Output)
				case got.Prompt != d.Prompt || got.Output != d.Output:
					cut++
				}
			}
			if (model == "llama-2-7b" && w != "shared") != (cut > 0) {
				t.Errorf("%v: %d requests cut", set, cut)
			}
			n := s.Steps[0].Narration
			if said := strings.Contains(n, note); said != (cut > 0) {
				t.Errorf("%v: %d requests cut, the setup says so: %v", set, cut, said)
			}
			if cut > 0 && !strings.Contains(n, fmt.Sprintf("%d of the %d generated requests were longer than Llama-2-7B's 4,096 positions", cut, len(drawn))) {
				t.Errorf("%v: the setup does not count the %d cut requests:\n%s", set, cut, n)
			}
		}
	}
	long := workload.Poisson(3, 1, workload.Uniform{Min: 4000, Max: 4000}, workload.Uniform{Min: 200, Max: 200}, 1)
	if _, _, err := lesson.RunTrace(map[string]string{"model": "llama-2-7b"}, long, "long.jsonl"); err == nil || !strings.Contains(err.Error(), "long.jsonl") || !strings.Contains(err.Error(), "4,200 tokens (prompt + output) exceed llama-2-7b's 4,096 positions") {
		t.Errorf("a trace of 4,200-token requests on Llama-2-7B: %v, want a refusal naming the trace and the positions", err)
	}
}

// FP8 weights read half the linear layers' bytes: the same workload decodes
// with shorter gaps; TP 2 splits each step over two GPUs, and throughput per
// GPU divides by workers × tp.
func TestSandboxPrecisionAndTP(t *testing.T) {
	base := map[string]string{"requests": "40", "workload": "plain", "workers": "2"}
	run := func(k map[string]string) *lessons.Script {
		t.Helper()
		set := map[string]string{}
		for a, b := range base {
			set[a] = b
		}
		for a, b := range k {
			set[a] = b
		}
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		return s
	}
	bf, fp, tp2 := run(nil), run(map[string]string{"weight_dtype": "fp8"}), run(map[string]string{"tp": "2"})
	if a, b := lessontest.MetricOf(t, bf, "itl_p50_ms"), lessontest.MetricOf(t, fp, "itl_p50_ms"); !(b < 0.85*a) {
		t.Errorf("median ITL %v ms with FP8 weights vs %v ms in BF16, want clearly shorter", b, a)
	}
	if a, b := lessontest.MetricOf(t, bf, "itl_p50_ms"), lessontest.MetricOf(t, tp2, "itl_p50_ms"); !(b < a) {
		t.Errorf("median ITL %v ms at TP 2 vs %v ms at TP 1, want shorter", b, a)
	}
	if thr, per := lessontest.MetricOf(t, tp2, "throughput_tok_s"), lessontest.MetricOf(t, tp2, "throughput_per_gpu_tok_s"); math.Abs(thr/4-per) > 0.01 {
		t.Errorf("TP 2 × 2 workers: %v tok/s, %v per GPU; want a quarter", thr, per)
	}
}

// The capacity is what the search found on the cluster itself: in every
// seed it lies between a probe that met the SLO and the one just above
// that missed, no probe above it met it, per GPU divides by every GPU of
// the deployment (2 workers), the probes' counted work stays within the
// search's budget and a rerun gives the same script.
func TestSandboxCapacity(t *testing.T) {
	set := map[string]string{"workload": "shared", "requests": "100", "rate": "62.5", "workers": "2", "slo_ttft_ms": "300"}
	s, v, err := lesson.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sandboxGenerated(v)
	r, err := runSandbox(v, w, "")
	lessontest.MustRun(t, err)
	c, err := searchSandboxCapacity(v, r)
	lessontest.MustRun(t, err)
	if c.skipped != "" || c.cap.BelowRange() || c.cap.AboveRange() || c.cap.Complete() == 0 {
		t.Fatalf("%v: want a capacity inside the range searched, got %+v (%s)", set, c.cap, c.skipped)
	}
	if got := lessontest.MetricOf(t, s, "capacity_req_s"); got != kit.Round2(c.cap.Rate) || got <= 0 {
		t.Errorf("capacity_req_s %v, the search found %v", got, c.cap.Rate)
	}
	if got := lessontest.MetricOf(t, s, "capacity_per_gpu_req_s"); got != kit.Round2(c.cap.Rate/2) {
		t.Errorf("capacity_per_gpu_req_s %v, want the capacity %v over 2 GPUs", got, c.cap.Rate)
	}
	for _, sc := range c.cap.Seeds {
		if !sc.Complete {
			continue
		}
		if !(sc.Met <= sc.Rate && sc.Rate <= sc.Above) || !outcomeAt(sc, sc.Met).Meets || outcomeAt(sc, sc.Above).Meets {
			t.Errorf("seed %d: capacity %g outside [%g met, %g missed]", sc.Seed, sc.Rate, sc.Met, sc.Above)
		}
		for _, o := range sc.Runs {
			if o.Rate > sc.Rate && o.Meets {
				t.Errorf("seed %d: %g req/s met the SLO above the capacity %g", sc.Seed, o.Rate, sc.Rate)
			}
		}
	}
	if c.work > 2*searchBudget[c.precision] || s.Work > lesson.MaxWork {
		t.Errorf("the probes counted %d of a budget of %d; the run %d, over MaxWork %d?", c.work, searchBudget[c.precision], s.Work, lesson.MaxWork)
	}
	med := c.median()
	last := s.Steps[len(s.Steps)-1]
	if !strings.Contains(last.Narration, "Capacity is "+kit.CapacityText(c.cap, c.search)) || !strings.Contains(last.Narration, "What limits it, at "+c.rateText(med.Above)+": ") {
		t.Errorf("the capacity step does not say what the capacity is and what limits it:\n%s", last.Narration)
	}
	again, _, err := lesson.Run(set)
	lessontest.MustRun(t, err)
	a, _ := json.Marshal(s)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Error("two runs of the same knobs differ")
	}
}

// The capacity belongs to the cluster and the kind of workload, not to the
// lesson's own run: each probe draws its own stream, so doubling the
// requests and the rate knobs leaves it exactly as it was.
func TestSandboxCapacityIgnoresRunKnobs(t *testing.T) {
	base := map[string]string{"workload": "shared", "requests": "100", "rate": "62.5", "workers": "2", "slo_ttft_ms": "300"}
	var want float64
	for i, change := range []map[string]string{nil, {"requests": "200"}, {"rate": "125"}} {
		set := map[string]string{}
		for k, x := range base {
			set[k] = x
		}
		for k, x := range change {
			set[k] = x
		}
		s, _, err := lesson.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		got := lessontest.MetricOf(t, s, "capacity_req_s")
		if i == 0 {
			want = got
		} else if got != want {
			t.Errorf("%v: capacity %v req/s, %v with requests=100 rate=62.5", change, got, want)
		}
	}
}
