package lessons

import "testing"

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
func BenchmarkGarage1000Phases(b *testing.B) {
	v, bad := garage.Resolve(map[string]string{"requests": "1000"})
	if bad != nil {
		b.Fatal(bad)
	}
	s := newGarageSetup(v)
	served, err := serveGarage(s)
	if err != nil {
		b.Fatal(err)
	}
	ticks := chooseTicks(served)
	if err := captureGarage(s, served, ticks); err != nil { // the script reads the snapshots
		b.Fatal(err)
	}
	b.Run("servePaged", func(b *testing.B) {
		for b.Loop() {
			_, pl, err := garagePaged(s)
			if err == nil {
				err = servePaged(pl, &poolHistory{pool: s.pool})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("serveContig", func(b *testing.B) {
		for b.Loop() {
			ct, cl, err := garageContig(s)
			if err == nil {
				err = serveContig(s, ct, cl, &garageServed{contig: poolHistory{pool: s.pool}})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("choose", func(b *testing.B) {
		for b.Loop() {
			chooseTicks(served)
		}
	})
	b.Run("capture", func(b *testing.B) {
		for b.Loop() {
			if err := captureGarage(s, served, ticks); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("script", func(b *testing.B) {
		run := garageRun{setup: s, served: served, ticks: ticks, figures: figuresOf(s, served)}
		run.article = run.figures // as runGarage's, once computed
		for b.Loop() {
			run.script()
		}
	})
}
