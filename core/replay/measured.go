package replay

import "github.com/inferlab/inferlab/core/workload"

// MeasuredRun is one published benchmark: the server, the workload and
// what was measured, per stage.
type MeasuredRun struct {
	// Name is the experiment's directory name; Workload its workload
	// (general, codegen, roleplay, reasoning).
	Name, Workload string
	// Model is the Hugging Face name vLLM served; Shape its config.json's
	// shape fields.
	Model string
	Shape Shape
	// The vLLM arguments.
	TP, MaxModelLen, MaxNumBatchedTokens, MaxNumSeqs int
	// Data is the shared_prefix workload inference-perf ran.
	Data   workload.SharedPrefixData
	Stages []MeasuredStage
}

// Shape is the part of a model's config.json the lab reads.
type Shape struct {
	Type                           string
	Layers, Hidden, Heads, KVHeads int
	Intermediate, Vocab, Positions int
	Experts, ExpertsPerToken       int // 0 for a dense model
}

// MeasuredStage is one stage's load and its measured figures.
type MeasuredStage struct {
	Rate     float64 // requests per second
	Duration float64 // seconds
	// Sent counts the requests sent; Succeeded and Failed split them.
	Sent, Succeeded, Failed int
	// TTFT and E2E are over the successful requests, in milliseconds.
	TTFT, E2E Dist
	// PromptMean is inference-perf's mean prompt length (the prompt text
	// tokenized again, BOS included); OutputMean and OutputMedian its
	// output length statistics, from the streamed text tokenized again.
	PromptMean, OutputMean, OutputMedian float64
}

// Dist is a latency distribution in milliseconds: mean, p50, p90, p99.
type Dist struct{ Mean, P50, P90, P99 float64 }

// MeasuredByName returns the measured run named name.
func MeasuredByName(name string) (MeasuredRun, bool) {
	for _, m := range Measured {
		if m.Name == name {
			return m, true
		}
	}
	return MeasuredRun{}, false
}
