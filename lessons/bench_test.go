package lessons_test

import (
	"fmt"
	"testing"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// BenchmarkDefaults re-simulates every lesson at its defaults
// (BenchmarkDefaults/<slug>).
func BenchmarkDefaults(b *testing.B) {
	for _, l := range lessons.All() {
		b.Run(l.Slug, func(b *testing.B) { lessontest.Bench(b, l, nil) })
	}
}

// BenchmarkHeavyCorners runs every lesson at its heaviest accepted settings
// (HeavyCorners; BenchmarkHeavyCorners/<slug>/<n>).
func BenchmarkHeavyCorners(b *testing.B) {
	for _, l := range lessons.All() {
		for i, set := range l.HeavyCorners {
			b.Run(fmt.Sprintf("%s/%d", l.Slug, i+1), func(b *testing.B) { lessontest.Bench(b, l, set) })
		}
	}
}
