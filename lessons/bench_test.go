package lessons

import (
	"testing"
	"time"

	"github.com/inferlab/inferlab/core/record"
)

// Re-simulation cost of lessons, the work the browser redoes when a knob
// moves (DESIGN.md budget: a 1,000-request scenario in under 100 ms).
func benchLesson(b *testing.B, l *Lesson, set map[string]string) {
	for b.Loop() {
		if _, _, err := l.Run(set); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGarage1000Requests(b *testing.B) {
	benchLesson(b, garage, map[string]string{"requests": "1000"})
}
func BenchmarkGarageDefault(b *testing.B)         { benchLesson(b, garage, nil) }
func BenchmarkBlockTableDefault(b *testing.B)     { benchLesson(b, blockTable, nil) }
func BenchmarkCowForkDefault(b *testing.B)        { benchLesson(b, cowFork, nil) }
func BenchmarkChunkedPrefillDefault(b *testing.B) { benchLesson(b, chunkedPrefill, nil) }
func BenchmarkRooflineDefault(b *testing.B)       { benchLesson(b, roofline, nil) }
func BenchmarkMeasuringDefault(b *testing.B)      { benchLesson(b, measuring, nil) }
func BenchmarkCudaGraphsDefault(b *testing.B)     { benchLesson(b, cudaGraphs, nil) }
func BenchmarkPrefixCacheDefault(b *testing.B)    { benchLesson(b, prefixCache, nil) }
func BenchmarkSmartRoutingDefault(b *testing.B)   { benchLesson(b, smartRouting, nil) }
func BenchmarkSandboxDefault(b *testing.B)        { benchLesson(b, sandbox, nil) }

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
		{"script", func() error { run.script(); return nil }},
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
