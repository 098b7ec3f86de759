package sandbox

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// A trace within the token, request and step bounds is still held to the
// lesson's work bound (Lesson.TraceWork), and ParseTrace refuses it there
// with the line, the sum and the bound, in the page as in the CLI: 2,000
// requests of 890 + 110 tokens are 2,000,000 tokens (the page's bound) but
// 7,080,000 of work, over the sandbox's 7,000,000.
func TestTraceLimitsBoundWork(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, `{"arrival_s": %d, "prompt_tokens": 890, "output_tokens": 110}`+"\n", i)
	}
	lim := lesson.TraceLimits()
	_, err := workload.ParseTrace(strings.NewReader(b.String()), lim)
	var te *workload.TraceError
	if !errors.As(err, &te) || te.Line != 1978 || !strings.Contains(err.Error(), "7002120 of work") || !strings.Contains(err.Error(), "2 × prompt_tokens + 16 × output_tokens") ||
		!strings.Contains(err.Error(), "at most 7000000") {
		t.Errorf("2,000 × (890 + 110): %v; want line 1978 refused over 7,000,000 of work", err)
	}
	if p, o, max := lesson.TraceWork(); p != 2 || o != 16 || max != kit.ServingCheckWork || lim.MaxWork != max {
		t.Errorf("sandbox's trace work: %d × prompt + %d × output ≤ %d, limits %+v", p, o, max, lim)
	}
	// 1,977 lines are accepted, and the sandbox serves them.
	text := b.String()
	text = text[:strings.Index(text, `{"arrival_s": 1977,`)]
	if _, err := workload.ParseTrace(strings.NewReader(text), lim); err != nil {
		t.Errorf("1,977 × (890 + 110): %v", err)
	}
}

// A real trace's replay is its first requests as published, their
// arrivals scaled to the rate knob's mean; Check's bound on them holds
// the work of every accepted count, in every graph mode.
func TestSandboxReplaysPresets(t *testing.T) {
	for _, id := range []string{"azure-conv", "azure-code", "mooncake-conversation"} {
		b, _ := sandboxBounds(id)
		all, err := workload.LoadPreset(id, workload.PresetWindow)
		if id == mooncakeID {
			all = mooncakeRequests() // whole conversations over the hour
		}
		if err != nil {
			t.Fatal(err)
		}
		v := resolved(t, map[string]string{"workload": id, "requests": "60", "rate": "12"})
		w := sandboxDraw(v)
		if len(w) != 60 {
			t.Fatalf("%s: %d requests, want the first 60", id, len(w))
		}
		for i, r := range w {
			if r.Prompt != all[i].Prompt || r.Output != all[i].Output || len(r.Segments) != len(all[i].Segments) || r.Prev != all[i].Prev {
				t.Fatalf("%s: request %d is %+v, the trace's is %+v", id, i, r, all[i])
			}
			if want := all[i].Arrival * b.Rate / 12; math.Abs(r.Arrival-want) > 1e-9 {
				t.Fatalf("%s: request %d arrives at %g s, want %g (scaled from %g req/s to 12)", id, i, r.Arrival, want, b.Rate)
			}
		}
		accepted := 0
		for _, mode := range []string{"full_and_piecewise", "piecewise", "none"} {
			for _, n := range []int{4, 50, 97, 300, 1072} {
				v := resolved(t, map[string]string{"workload": id, "requests": fmt.Sprint(n), "graph_mode": mode})
				if lesson.CheckValues(v) != nil {
					continue
				}
				accepted++
				if got, bound := sandboxWork(v, sandboxWorkload(v)), sandboxPresetWork(v, b, n); got > bound || got > kit.ServingCheckWork {
					t.Errorf("%s, %d requests, %s: work %d over Check's bound %d", id, n, mode, got, bound)
				}
			}
		}
		if accepted < 6 {
			t.Errorf("%s: Check accepted %d of 15 settings", id, accepted)
		}
	}
	// Too many requests are refused on requests, naming the most allowed.
	_, _, err := lesson.Run(map[string]string{"workload": "mooncake-conversation", "requests": "200"})
	var pe *lessons.ParamError
	if !errors.As(err, &pe) || (pe.Key != "requests" && pe.Key != "workload") || !strings.Contains(err.Error(), "requests: want at most 180 with these knobs") {
		t.Errorf("200 Mooncake requests: %v", err)
	}
	if _, _, err := lesson.Run(map[string]string{"workload": "azure-code", "requests": "2000", "max_num_batched_tokens": "65536"}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("2,000 requests of a 781-request window: %v", err)
	}
}

// resolved is the sandbox's knobs at raw, which must parse.
func resolved(t *testing.T, raw map[string]string) lessons.Values {
	t.Helper()
	v, errs := lesson.Resolve(raw)
	if len(errs) > 0 {
		t.Fatalf("%v: %v", raw, errs)
	}
	return v
}
