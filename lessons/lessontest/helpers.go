package lessontest

import (
	"errors"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// Test helpers the lessons' own tests share (a lesson's tests use only
// these and their own, so that deleting another lesson leaves them
// compiling).

// MetricOf is the value of the metric key of s; the test fails without it.
func MetricOf(t *testing.T, s *lessons.Script, key string) float64 {
	t.Helper()
	v, ok := s.Metric(key)
	if !ok {
		t.Fatalf("no metric %s", key)
	}
	return v
}

// CheckHeavyCorners builds each of l's heaviest accepted settings and
// checks that its counted work stays within MaxWork (a count, not a
// timing; BENCHMARKS.md has the times).
func CheckHeavyCorners(t *testing.T, l *lessons.Lesson) {
	t.Helper()
	if l.MaxWork <= 0 || len(l.HeavyCorners) == 0 {
		t.Fatalf("%s: MaxWork %d, %d heavy corners", l.Slug, l.MaxWork, len(l.HeavyCorners))
	}
	for _, set := range l.HeavyCorners {
		s, _, err := l.Run(set)
		if err != nil {
			t.Errorf("%s %v: %v", l.Slug, set, err)
			continue
		}
		if s.Work <= 0 || s.Work > l.MaxWork {
			t.Errorf("%s %v: work %d, bound %d", l.Slug, set, s.Work, l.MaxWork)
		}
	}
	if s, _, err := l.Run(nil); err != nil || s.Work <= 0 || s.Work > l.MaxWork {
		t.Errorf("%s defaults: work %v, %v", l.Slug, s, err)
	}
}

// RefusesOverWork checks that Check refuses set, naming key, with the bound
// in the message.
func RefusesOverWork(t *testing.T, l *lessons.Lesson, set map[string]string, key string) {
	t.Helper()
	_, _, err := l.Run(set)
	var pe *lessons.ParamError
	if !errors.As(err, &pe) || pe.Key != key || !strings.Contains(err.Error(), kit.Comma64(kit.ServingCheckWork)) {
		t.Errorf("%s %v: error %v, want one naming %s and the bound %s", l.Slug, set, err, key, kit.Comma64(kit.ServingCheckWork))
	}
}

// Bench re-simulates l at set, the work the browser redoes when a knob
// moves (the budget: a 1,000-request scenario in under 100 ms).
func Bench(b *testing.B, l *lessons.Lesson, set map[string]string) {
	for b.Loop() {
		if _, _, err := l.Run(set); err != nil {
			b.Fatal(err)
		}
	}
}
