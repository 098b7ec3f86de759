package scheduler_test

import (
	"testing"

	"github.com/inferlab/inferlab/core/scenario"
	"github.com/inferlab/inferlab/core/scheduler"
)

// BenchmarkChatWorkloadH100 is the chat-like budget workload
// (docs/ARCHITECTURE.md#budgets; `inferlab bench`'s
// core-10k-chat): 10,000 chat-like requests (long-tailed prompts and outputs,
// core/workload) arriving as a Poisson stream at 40 req/s, served by the vLLM
// v1 scheduler on one H100 SXM with Llama-3.1-8B, every step priced by
// core/hardware's step-time model (CUDA-graph replay, host overhead
// overlapped). It reports simulated requests and tokens per wall-clock second.
func BenchmarkChatWorkloadH100(b *testing.B) {
	cfg, timer, err := scenario.H100()
	if err != nil {
		b.Fatal(err)
	}
	reqs := scenario.ChatRequests(10000)
	tokens := 0
	for _, r := range reqs {
		tokens += r.Prompt + r.Output
	}
	var steps int
	for b.Loop() {
		s, err := scheduler.New(cfg, timer, reqs)
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
