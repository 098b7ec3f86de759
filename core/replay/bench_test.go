package replay

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// BenchmarkReplay replays the measured runs the lessons and the CLI
// replay most: one whole benchmark per iteration.
func BenchmarkReplay(b *testing.B) {
	for _, name := range []string{"20260217-155451-llama-2-7b-tp1-codegen", "20260217-231439-llama-2-7b-tp1-general"} {
		m, ok := MeasuredByName(name)
		if !ok {
			b.Fatalf("no run %s", name)
		}
		x, err := m.Experiment(hardware.MustGPU("h100-sxm"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name[16:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
