package lessons

import (
	"errors"
	"strings"
	"testing"
)

// Test helpers the lessons' own tests share (a lesson's tests use only
// these and their own, so that deleting another lesson leaves them
// compiling).

// metricOf is the value of the metric key of s; the test fails without it.
func metricOf(t *testing.T, s *Script, key string) float64 {
	t.Helper()
	v, ok := s.Metric(key)
	if !ok {
		t.Fatalf("no metric %s", key)
	}
	return v
}

// checkHeavyCorners builds each of l's heaviest accepted settings and
// checks that its counted work stays within MaxWork (a count, not a
// timing; BENCHMARKS.md has the times).
func checkHeavyCorners(t *testing.T, l *Lesson) {
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

// refusesOverWork checks that Check refuses set, naming key, with the bound
// in the message.
func refusesOverWork(t *testing.T, l *Lesson, set map[string]string, key string) {
	t.Helper()
	_, _, err := l.Run(set)
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Key != key || !strings.Contains(err.Error(), comma64(servingCheckWork)) {
		t.Errorf("%s %v: error %v, want one naming %s and the bound %s", l.Slug, set, err, key, comma64(servingCheckWork))
	}
}
