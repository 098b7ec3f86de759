package cudagraph

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
)

// Pricing one step, as the scheduler does every step: Seconds walks the
// step's layout; Step builds the kernel list and the launch list (the path
// Seconds took before). H100 SXM, Llama-3.1-8B, 256 decodes at 1,000
// tokens of context, or a mixed batch of 64 decodes and a 512-token chunk.
//
//	go test -run '^$' -bench Price -benchmem ./core/cudagraph
func benchPrice(b *testing.B, disp hardware.Dispatcher, batch hardware.Batch, list bool) {
	sm, err := hardware.NewStepModel(hardware.MustGPU("h100-sxm"), hardware.MustModel("llama-3.1-8b"), 1, hardware.BF16)
	if err != nil {
		b.Fatal(err)
	}
	sm.Dispatcher, sm.OverlapHost = disp, true
	b.ReportAllocs()
	for b.Loop() {
		if list {
			_ = sm.Step(batch).Total
		} else {
			_ = sm.Seconds(batch)
		}
	}
}

var (
	decode256 = hardware.DecodeBatch(256, 1000)
	mixed64   = func() hardware.Batch {
		b := hardware.DecodeBatch(64, 1000)
		b.Seqs = append(b.Seqs, hardware.Chunk{NewTokens: 512})
		return b
	}()
)

func BenchmarkPriceReplaySeconds(b *testing.B) {
	benchPrice(b, hardware.Replay{Launch: hardware.GraphLaunch}, decode256, false)
}
func BenchmarkPriceReplayStep(b *testing.B) {
	benchPrice(b, hardware.Replay{Launch: hardware.GraphLaunch}, decode256, true)
}
func BenchmarkPriceFullSeconds(b *testing.B) {
	benchPrice(b, New(Default, 256, 8192), decode256, false)
}
func BenchmarkPriceFullStep(b *testing.B) { benchPrice(b, New(Default, 256, 8192), decode256, true) }
func BenchmarkPricePiecewiseSeconds(b *testing.B) {
	benchPrice(b, New(Default, 256, 8192), mixed64, false)
}
func BenchmarkPricePiecewiseStep(b *testing.B) { benchPrice(b, New(Default, 256, 8192), mixed64, true) }
func BenchmarkPriceEagerSeconds(b *testing.B)  { benchPrice(b, New(None, 256, 8192), decode256, false) }
func BenchmarkPriceEagerStep(b *testing.B)     { benchPrice(b, New(None, 256, 8192), decode256, true) }
