package lessons

import (
	"fmt"
	"testing"
)

// Re-simulation cost of lessons, the work the browser redoes when a knob
// moves (the budget: a 1,000-request scenario in under 100 ms).
func Bench(b *testing.B, l *Lesson, set map[string]string) {
	for b.Loop() {
		if _, _, err := l.Run(set); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDefaults re-simulates every lesson at its defaults
// (BenchmarkDefaults/<slug>).
func BenchmarkDefaults(b *testing.B) {
	for _, l := range All() {
		b.Run(l.Slug, func(b *testing.B) { Bench(b, l, nil) })
	}
}

// BenchmarkHeavyCorners runs every lesson at its heaviest accepted settings
// (HeavyCorners; BenchmarkHeavyCorners/<slug>/<n>).
func BenchmarkHeavyCorners(b *testing.B) {
	for _, l := range All() {
		for i, set := range l.HeavyCorners {
			b.Run(fmt.Sprintf("%s/%d", l.Slug, i+1), func(b *testing.B) { Bench(b, l, set) })
		}
	}
}
