package lessons_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// A trace replaces the requests a lesson's workload knobs generate, so
// those knobs (TraceIgnores) have no effect on a trace run: turning each
// to a value other than its default leaves the script as it was, and the
// values RunTrace returns do not list them. `inferlab run sandbox --trace
// t.jsonl --set requests=4 --set rate=1000 --set workload=azure-conv` once
// reported requests 4 and azure-conv for a run of the trace's 50 requests.
func TestTraceIgnoresHaveNoEffect(t *testing.T) {
	var trace []workload.Request
	for i := range 12 {
		trace = append(trace, workload.Request{ID: i, Arrival: float64(i) * 0.2, Prompt: 400 + 30*i, Output: 24})
	}
	for _, l := range lessons.All() {
		if !l.TakesTrace() {
			if len(l.TraceIgnores) > 0 {
				t.Errorf("%s takes no trace but lists knobs a trace ignores", l.Slug)
			}
			continue
		}
		if len(l.TraceIgnores) == 0 {
			t.Errorf("%s takes a trace and lists no knob it replaces: which knobs generate its workload?", l.Slug)
		}
		base, v, err := l.RunTrace(nil, trace, "t.jsonl")
		if err != nil {
			t.Fatalf("%s: %v", l.Slug, err)
		}
		want := scriptText(t, base)
		for _, k := range l.TraceIgnores {
			p, ok := l.Param(k)
			if !ok {
				t.Errorf("%s: TraceIgnores names %q, no knob of the lesson", l.Slug, k)
				continue
			}
			if _, listed := v.JSON()[k]; listed || v.TextOf(k) != "" {
				t.Errorf("%s: a trace run's values list %s", l.Slug, k)
			}
			other := otherValue(l, p)
			s, _, err := l.RunTrace(map[string]string{k: other}, trace, "t.jsonl")
			if err != nil {
				t.Errorf("%s: %s=%s on a trace: %v", l.Slug, k, other, err)
				continue
			}
			if scriptText(t, s) != want {
				t.Errorf("%s: %s=%s changed a trace run: it is not a knob the trace replaces", l.Slug, k, other)
			}
			err = l.CheckTraceKnobs(map[string]string{k: other, "seed": "7"})
			var pe *lessons.ParamError
			if !errors.As(err, &pe) || pe.Key != k || !strings.Contains(err.Error(), "no value with a trace") {
				t.Errorf("%s: CheckTraceKnobs(%s=%s) = %v, want it refused", l.Slug, k, other, err)
			}
		}
		if err := l.CheckTraceKnobs(map[string]string{"seed": "7"}); err != nil {
			t.Errorf("%s: CheckTraceKnobs refuses seed, which a trace run reads: %v", l.Slug, err)
		}
	}
}

// otherValue is a value of p other than its default that the lesson's
// checks accept with every other knob at its default.
func otherValue(l *lessons.Lesson, p lessons.Param) string {
	cands := []string{p.Format(p.Min), p.Format(p.Max)}
	if p.Kind == lessons.Choice {
		cands = p.Choices[1:]
	}
	for _, c := range cands {
		if _, err := l.ResolveChecked(map[string]string{p.Key: c}); err == nil && c != p.DefaultText() {
			return c
		}
	}
	return cands[0]
}

func scriptText(t *testing.T, s *lessons.Script) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
