package garage

import (
	"testing"
	"time"

	"github.com/inferlab/inferlab/core/record"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

func BenchmarkGarage1000Requests(b *testing.B) {
	lessontest.Bench(b, lesson, map[string]string{"requests": "1000"})
}

// BenchmarkGarage1000Phases splits BenchmarkGarage1000Requests into the
// phases of a garage build, so that each can be timed natively and in
// WebAssembly (BENCHMARKS.md, "What WebAssembly costs per shape of code"):
// serving each pool with every tick recorded, choosing the pictured ticks,
// serving the paged pool again to capture them, and writing the script.
// Each phase first runs unmeasured for a second: V8 starts WebAssembly in
// its baseline compiler and moves a function to the optimising one only
// once it has run a while (as cmd/internal/bench's MeasureWarmFor).
func BenchmarkGarage1000Phases(b *testing.B) {
	v, s, served := servedGarage(b, map[string]string{"requests": "1000"})
	ticks := chooseTicks(served)
	if err := captureGarage(s, served, ticks); err != nil { // the script reads the snapshots
		b.Fatal(err)
	}
	run := garageRun{setup: s, served: served, ticks: ticks, figures: figuresOf(s, served)}
	var err error
	if run.article, err = garageArticleFigures(v, run.figures); err != nil {
		b.Fatal(err)
	}
	phases := []struct {
		name string
		run  func() error
	}{
		{"servePaged", func() error {
			_, pl, err := garagePaged(s)
			if err != nil {
				return err
			}
			h := record.History{Pool: s.pool}
			return h.Serve(pl, maxTicks)
		}},
		{"serveContig", func() error {
			ct, cl, err := garageContig(s)
			if err != nil {
				return err
			}
			_, err = serveContig(s, ct, cl, &record.History{Pool: s.pool})
			return err
		}},
		{"choose", func() error { chooseTicks(served); return nil }},
		{"capture", func() error { return captureGarage(s, served, ticks) }},
		{"script", func() error { run.Script(); return nil }},
	}
	for _, p := range phases {
		b.Run(p.name, func(b *testing.B) {
			for start := time.Now(); time.Since(start) < time.Second; {
				if err := p.run(); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if err := p.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
