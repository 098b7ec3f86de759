// Package cudagraph is the kernel-dispatch cost model: how the CPU issues
// one engine step's kernels to the GPU — launched one by one (eager),
// replayed as one captured CUDA graph (full), or replayed as captured pieces
// with attention launched eagerly between them (piecewise) — and what
// capturing graphs costs: capture sizes, padding and capture time and
// memory. It follows vLLM's design ([VLLM-CG]) with the launch and replay
// overheads of docs/SOURCES.md#dispatch-costs.
//
// The model:
//
//   - The kernels of a step are core/hardware's StepModel.Kernels: ten per
//     Llama-like layer (twelve at TP > 1, two all-reduces) plus embedding,
//     final norm, lm_head and sampler, derived from the model shape
//     (docs/SOURCES.md#kernels-per-layer, [VLLM-LLAMA]).
//   - Eager (vLLM's NONE): every kernel costs PerLaunch of CPU, the Python
//     and framework work of one op plus its cudaLaunchKernel: 24 µs from a
//     PyTorch engine, calibrated on vLLM's and gpt-fast's eager decode
//     [VLLM-10058] [GPTFAST-BLOG] (an empty launch alone is 20.5 µs
//     [NUMBA-3003]), 4–6 µs from a C++ engine [PEGA-3].
//   - Full graph: one replay of GraphLaunch CPU seconds issues every kernel;
//     vLLM's model_execution_launch with graphs on took 0.07–0.09 ms
//     [VIDUR-CPU]. vLLM v1 gained full graphs in PR #16072, which cut
//     median TPOT by 7% against piecewise for small models [VLLM-16072].
//   - Piecewise: the FX graph is split at the attention ops, which vLLM
//     runs eagerly ([VLLM-CG]); the attention op's backend
//     issues the KV-cache write and the attention kernel. The first piece
//     costs GraphLaunch (it carries the step's input copy into the static
//     buffers), each further piece PieceLaunch, each eager kernel PerLaunch.
//   - The CPU timeline and the GPU timeline are computed separately by
//     core/hardware: kernel i starts at max(end of kernel i−1, its launch),
//     and the step ends at max(GPU end, CPU end). Dispatch dominates
//     exactly when a kernel's GPU time is shorter than its launch cost.
//   - Capture sizes follow vLLM's default list (1, 2, 4, multiples of 8 to
//     248, multiples of 16 from 256 to the maximum, the maximum
//     min(2·max_num_seqs, 512, max_num_batched_tokens), plus
//     max_num_batched_tokens itself when it is below that and off the
//     stride, as vLLM main @ 000fc94 does [VLLM-CGSIZES]); a batch is padded
//     to the smallest captured size ≥ its tokens, the padded tokens cost
//     GPU time in the linear layers, and batches above the largest size run
//     eagerly ([VLLM-CG]).
//   - Mode selection is vLLM's CudagraphDispatcher: FULL graphs for uniform
//     decode batches within max_num_seqs under FULL, FULL_DECODE_ONLY and
//     FULL_AND_PIECEWISE; PIECEWISE for other batches under PIECEWISE and
//     FULL_AND_PIECEWISE; FULL for every batch under FULL; otherwise eager.
//   - Capture cost is the published per-size time and memory of a vLLM log
//     [VLLM-23739]; the model does not derive it.
//
// Dispatcher implements hardware.Dispatcher, so a StepModel (and through it
// the scheduler) prices steps in any mode. Cite resolves every tag above.
package cudagraph
