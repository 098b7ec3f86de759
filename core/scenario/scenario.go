// Package scenario is the lab's reference serving workload: vLLM v1's
// scheduler on one H100 SXM with Llama-3.1-8B, and the request streams the
// speed budgets are stated for. It is core code (it imports only core
// packages) so that core's own tests and benchmarks, the measuring harness
// (cmd/internal/bench) and the peer comparison (cmd/benchpeers) all serve
// the same configuration.
//
// The configuration: a KV pool from core/hardware.KVCapacity at 0.9 memory
// utilisation with 16-token blocks (26,674 blocks); vLLM's defaults on a
// GPU of at least 70 GiB, 8,192 batched tokens and 1,024 sequences per step
// (BatchDefaults, vllm/engine/arg_utils.py get_batch_defaults); chunked
// prefill; every step priced by core/hardware's step-time model with
// CUDA-graph replay and the host's work overlapped.
package scenario

import (
	"fmt"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
)

// UniformRequests is n requests of the same lengths, all arriving at time 0.
func UniformRequests(n, prompt, output int) []scheduler.Request {
	reqs := make([]scheduler.Request, n)
	for i := range reqs {
		reqs[i] = scheduler.Request{ID: i, Prompt: prompt, Output: output}
	}
	return reqs
}

// ChatRequests is n chat-like requests from core/workload (long-tailed
// prompts and outputs, Poisson arrivals at 40 requests per second, seed 1).
func ChatRequests(n int) []scheduler.Request {
	ws := workload.Poisson(n, 40, workload.ChatPrompts(), workload.ChatOutputs(), 1)
	reqs := make([]scheduler.Request, len(ws)) // sized once: it is part of a timed run
	for i, r := range ws {
		reqs[i] = scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output}
	}
	return reqs
}

// H100 is the scheduler configuration and step timer of the reference
// workload.
func H100() (scheduler.Config, scheduler.Timer, error) {
	g, m := mustGPU("h100-sxm"), mustModel("llama-3.1-8b")
	sm, err := hardware.NewStepModel(g, m, 1, hardware.BF16)
	if err != nil {
		return scheduler.Config{}, nil, err
	}
	sm.Dispatcher = hardware.Replay{Launch: hardware.GraphLaunch}
	sm.OverlapHost = true
	capa, err := hardware.KVCapacity(g, m, 0.9, 16, 1, 2, 2)
	if err != nil {
		return scheduler.Config{}, nil, err
	}
	tokens, seqs := scheduler.BatchDefaults(g, scheduler.APIServer)
	cfg := scheduler.Config{MaxNumBatchedTokens: tokens, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: 16, NumBlocks: int(capa.Blocks)}
	return cfg, scheduler.HardwareTimer{Model: sm}, nil
}

// mustGPU and mustModel look up profiles by literal ID: a missing one is a
// programming error, caught by the package's tests.
func mustGPU(id string) hardware.GPU {
	g, err := hardware.GPUByID(id)
	if err != nil {
		panic(fmt.Sprintf("scenario: GPU %q: %v", id, err))
	}
	return g
}

func mustModel(id string) hardware.Model {
	m, err := hardware.ModelByID(id)
	if err != nil {
		panic(fmt.Sprintf("scenario: model %q: %v", id, err))
	}
	return m
}
