// Command ours runs one of the peer-comparison workloads on the lab's core and
// prints what it simulated, so its whole process can be timed beside BLIS and
// inference-lab on the same workload (see ../README.md).
//
// Both workloads are the core budget's (docs/ARCHITECTURE.md#budgets): n requests of prompt + output tokens on one
// H100 SXM with Llama-3.1-8B, in core/scenario's configuration (vLLM v1
// scheduler, chunked prefill, 8,192 batched tokens, 1,024 sequences, 26,674
// KV blocks of 16 tokens, every step priced by core/hardware with CUDA-graph
// replay). "all" queues every request at time 0 (cmd/internal/bench's
// core-10k-uniform); "poisson" draws arrivals at -rate requests per second
// from core/workload with -seed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/inferlab/inferlab/core/scenario"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
)

// Result is what one run simulated, in units a reader can set beside the
// peers' own summaries.
type Result struct {
	Simulator       string  `json:"simulator"`
	Workload        string  `json:"workload"`
	Requests        int     `json:"completed_requests"`
	Steps           int     `json:"steps"`
	Preemptions     int     `json:"preemptions"`
	SimulatedS      float64 `json:"simulated_s"` // simulated clock at the end of the last step
	RequestsPerS    float64 `json:"requests_per_s,omitempty"`
	OutputTokensPer float64 `json:"output_tokens_per_s,omitempty"`
	TTFTP50MS       float64 `json:"ttft_p50_ms,omitempty"`
	TPOTP50MS       float64 `json:"tpot_p50_ms,omitempty"`
	E2EP50S         float64 `json:"e2e_p50_s,omitempty"`
}

func main() {
	wl := flag.String("workload", "all", `"all" (every request queued at time 0) or "poisson"`)
	n := flag.Int("n", 10000, "requests")
	prompt := flag.Int("prompt", 512, "prompt tokens per request")
	output := flag.Int("output", 256, "output tokens per request")
	rate := flag.Float64("rate", 20, "Poisson arrival rate, requests per second")
	seed := flag.Uint64("seed", 1, "seed of the Poisson arrivals")
	metrics := flag.Bool("metrics", true, "summarise the requests' latencies and throughput, as the peers do; false: the simulation alone (counts and simulated time)")
	flag.Parse()
	res, err := run(*wl, *n, *prompt, *output, *rate, *seed, *metrics)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ours:", err)
		os.Exit(2)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

func run(wl string, n, prompt, output int, rate float64, seed uint64, metrics bool) (Result, error) {
	if n < 1 || prompt < 1 || output < 1 {
		return Result{}, fmt.Errorf("-n = %d, -prompt = %d, -output = %d: each must be at least 1", n, prompt, output)
	}
	var reqs []scheduler.Request
	switch wl {
	case "all":
		reqs = scenario.UniformRequests(n, prompt, output)
	case "poisson":
		if !(rate > 0) {
			return Result{}, fmt.Errorf("-rate = %g: want a rate above 0", rate)
		}
		for _, r := range workload.Poisson(n, rate, workload.Fixed{N: prompt}, workload.Fixed{N: output}, seed) {
			reqs = append(reqs, scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: r.Prompt, Output: r.Output})
		}
	default:
		return Result{}, fmt.Errorf("-workload = %q: want all or poisson", wl)
	}
	cfg, timer, err := scenario.H100()
	if err != nil {
		return Result{}, err
	}
	s, err := scheduler.New(cfg, timer, reqs)
	if err != nil {
		return Result{}, err
	}
	if err := s.Run(); err != nil {
		return Result{}, err
	}
	if !metrics {
		// The simulation alone, as cmd/internal/bench's scenarios time it: the
		// counts come from the step log, the simulated time is the clock.
		res := Result{Simulator: "inferlab core", Workload: wl, Requests: s.Finished(), Steps: len(s.Steps()), SimulatedS: s.Clock()}
		for _, st := range s.Steps() {
			res.Preemptions += len(st.Preempted)
		}
		return res, nil
	}
	sum := s.Summary(scheduler.SLO{})
	return Result{
		Simulator: "inferlab core", Workload: wl,
		Requests: sum.Requests, Steps: sum.Steps, Preemptions: sum.Preemptions,
		SimulatedS: s.Clock(), RequestsPerS: sum.RequestsPerS, OutputTokensPer: sum.OutputTokensPerS,
		TTFTP50MS: sum.TTFT.P50 * 1000, TPOTP50MS: sum.TPOT.P50 * 1000, E2EP50S: sum.E2E.P50,
	}, nil
}
