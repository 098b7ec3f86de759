package workload

import (
	"math"
	"strings"
	"testing"
)

func perfGeneral() InferencePerf {
	return InferencePerf{
		Data:     SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 447, OutputLen: 248},
		Stages:   []LoadStage{{Rate: 8, Duration: 600}, {Rate: 20, Duration: 600}},
		Interval: 1, Timeout: DefaultClientTimeout, Growth: 1.05, BOS: 1, Seed: 1,
	}
}

// TestStageArrivals: ConstantLoadTimer sends int(rate × duration)
// requests whose rescaled gaps sum to the duration, from StageLead on.
func TestStageArrivals(t *testing.T) {
	w := perfGeneral()
	for k, s := range w.Stages {
		at := w.StageArrivals(k)
		if len(at) != s.Requests() || len(at) != int(s.Rate*s.Duration) {
			t.Fatalf("stage %d: %d arrivals, want %d", k, len(at), int(s.Rate*s.Duration))
		}
		if last := at[len(at)-1]; math.Abs(last-(StageLead+s.Duration)) > 1e-6 {
			t.Errorf("stage %d: last arrival %.9f s, want %g", k, last, StageLead+s.Duration)
		}
		for i := 1; i < len(at); i++ {
			if at[i] < at[i-1] {
				t.Fatalf("stage %d: arrival %d at %g before %g", k, i, at[i], at[i-1])
			}
		}
		// Exponential gaps: about 63% are shorter than the mean gap.
		short := 0
		for i := 1; i < len(at); i++ {
			if at[i]-at[i-1] < 1/s.Rate {
				short++
			}
		}
		if f := float64(short) / float64(len(at)-1); math.Abs(f-(1-math.Exp(-1))) > 0.03 {
			t.Errorf("stage %d: %.2f of gaps below the mean, want about 0.63 (exponential)", k, f)
		}
	}
	if a, b := w.StageArrivals(1), w.StageArrivals(1); a[17] != b[17] {
		t.Error("arrivals differ between two calls")
	}
}

// TestPrompts: ten groups of ten prompts; a group's prompts share BOS and
// the system prompt and nothing more; lengths grow by Growth on average;
// the order is shuffled; request n of a stage takes prompt n mod 100.
func TestPrompts(t *testing.T) {
	w := perfGeneral()
	ps := w.Prompts()
	if len(ps) != 100 {
		t.Fatalf("%d prompts, want 100", len(ps))
	}
	sum, inOrder := 0, 0
	sys := map[int]int{}
	for i, p := range ps {
		sum += p.Tokens
		if i > 0 && p.Group >= ps[i-1].Group {
			inOrder++
		}
		if s, ok := sys[p.Group]; ok && s != p.System {
			t.Errorf("group %d: system prompts of %d and %d tokens", p.Group, s, p.System)
		}
		sys[p.Group] = p.System
	}
	want := 1 + 1.05*547
	if mean := float64(sum) / 100; math.Abs(mean/want-1) > 0.01 {
		t.Errorf("mean prompt %.1f tokens, want %.1f within 1%%", mean, want)
	}
	if inOrder > 80 {
		t.Errorf("%d of 99 neighbours in group order: not shuffled", inOrder)
	}
	reqs := w.StageRequests(1, ps, 700, 4800)
	a, b := reqs[3], reqs[103]
	if a.ID != 4803 || a.Output != 248 || a.Prompt != b.Prompt || a.TokenIDs()[a.Prompt-1] != b.TokenIDs()[b.Prompt-1] {
		t.Errorf("requests 3 and 103 of a stage should take the same prompt: %+v, %+v", a, b)
	}
	var other Request
	for _, r := range reqs[:100] {
		if r.PrefixGroup == a.PrefixGroup && r.ID != a.ID {
			other = r
			break
		}
	}
	x, y := a.TokenIDs(), other.TokenIDs()
	shared := 0
	for shared < len(x) && shared < len(y) && x[shared] == y[shared] {
		shared++
	}
	if shared != a.PrefixLen || a.PrefixLen != sys[a.PrefixGroup] {
		t.Errorf("two prompts of group %d share %d tokens, want the %d of BOS and system prompt", a.PrefixGroup, shared, a.PrefixLen)
	}
}

// TestInferencePerfValidate names the field that is wrong.
func TestInferencePerfValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*InferencePerf)
		want string
	}{
		{func(w *InferencePerf) { w.Data.NumGroups = 0 }, "num_groups"},
		{func(w *InferencePerf) { w.Data.OutputLen = 0 }, "output_len"},
		{func(w *InferencePerf) { w.Stages = nil }, "load.stages"},
		{func(w *InferencePerf) { w.Stages[1].Rate = math.NaN() }, "load.stages[1].rate"},
		{func(w *InferencePerf) { w.Stages[0].Duration = -1 }, "load.stages[0].duration"},
		{func(w *InferencePerf) { w.Stages[0] = LoadStage{Rate: 0.1, Duration: 5} }, "sends no request"},
		{func(w *InferencePerf) { w.Timeout = 0 }, "request_timeout"},
		{func(w *InferencePerf) { w.Growth = 3 }, "growth"},
	} {
		w := perfGeneral()
		c.edit(&w)
		err := w.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v, want an error naming %q", err, c.want)
		}
	}
	if err := perfGeneral().Validate(); err != nil {
		t.Error(err)
	}
}
