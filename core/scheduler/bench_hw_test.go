package scheduler_test

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
)

// BenchmarkChatWorkloadH100 is issue #4's benchmark: 10,000 chat-like
// requests (long-tailed prompts and outputs, core/workload) arriving as a
// Poisson stream at 40 req/s, served by the vLLM v1 scheduler on one H100
// SXM with Llama-3.1-8B, every step priced by core/hardware's step-time model
// (CUDA-graph replay, host overhead overlapped). It reports simulated
// requests and tokens per wall-clock second.
func BenchmarkChatWorkloadH100(b *testing.B) {
	g, _ := hardware.GPUByID("h100-sxm")
	m, _ := hardware.ModelByID("llama-3.1-8b")
	sm, err := hardware.NewStepModel(g, m, 1, hardware.BF16)
	if err != nil {
		b.Fatal(err)
	}
	sm.Dispatcher = hardware.Replay{Launch: hardware.GraphLaunch}
	sm.OverlapHost = true
	capa, err := hardware.KVCapacity(g, m, 0.9, 16, 1, 2, 2)
	if err != nil {
		b.Fatal(err)
	}
	var reqs []scheduler.Request
	tokens := 0
	for _, r := range workload.Poisson(10000, 40, workload.ChatPrompts(), workload.ChatOutputs(), 1) {
		reqs = append(reqs, scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output})
		tokens += r.Prompt + r.Output
	}
	cfg := scheduler.Config{MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024, ChunkedPrefill: true, BlockSize: 16, NumBlocks: int(capa.Blocks)}
	var steps int
	for b.Loop() {
		s, err := scheduler.New(cfg, scheduler.HardwareTimer{Model: sm}, reqs)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
		steps = len(s.Steps())
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(len(reqs))/sec, "req/s")
	b.ReportMetric(float64(tokens)/sec, "sim-tok/s")
	b.ReportMetric(float64(steps), "steps")
}
