// Package replay replays a measured vLLM benchmark whole: the server's
// arguments, the workload inference-perf actually sent (core/workload's
// InferencePerf), every stage, every request, on the lab's engine model,
// and compares the latencies with what was measured.
//
// # The model
//
//   - The engine is vLLM v1 (v0.15.1) as the benchmark started it:
//     core/scheduler with chunked prefill and prefix caching in 16-token
//     blocks, a KV pool sized as vLLM sizes it at gpu_memory_utilization
//     0.9 (hardware.Fit.Pool), steps priced by core/hardware with CUDA
//     graphs in the default FULL_AND_PIECEWISE mode (core/cudagraph),
//     host work overlapped with the GPU, and vLLM's custom all-reduce at
//     TP > 1. A mixture of experts is priced by hardware's moe.go.
//   - Async scheduling, on by default since vLLM v0.14: the engine core
//     schedules step k+1 as soon as it has launched step k
//     (EngineCore.step_with_batch_queue, a batch queue of two), so a
//     request that reaches it while step k runs is first scheduled in step
//     k+2, and its first token reaches the API server when that step ends.
//   - The client: inference-perf's requests are sent when its constant
//     load timer says, each stage after the previous one has drained, and
//     a request not done 300 s after it was sent (aiohttp's default total
//     timeout) fails and is aborted by the server (Scheduler.Abort).
//   - Two fitted constants (Constants, Fitted): the time a request spends
//     outside the engine's steps (API server, connection, tokenization,
//     detokenization and streaming; half on the way in, half after each
//     output), and device time per running request per step beyond the
//     kernels core/hardware lists. Both were fitted on the nine visible
//     runs (docs/SOURCES.md#replay-fit); the tokenizers' re-tokenisation
//     growth was fitted on their measured prompt lengths (Tokenizer).
//
// What is left out: the engine's start-up and warm-up (Triton autotuning
// and compilation on first use give the measured Mixtral runs a TTFT tail
// of hundreds of milliseconds that the replay does not have), network
// jitter, and the API server's own queueing under load.
//
// Measured holds the lab's own table of the published figures it checks
// (measured_runs.go, with its citation).
package replay
