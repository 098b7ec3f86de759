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
