// Runs @doublewordai/inference-lab 0.2.1 (its WebAssembly build, through the
// package's own run_simulation) on one of the peer workloads (../README.md) and prints
// a one-line summary from its metrics, so the whole Node process can be timed
// beside the lab's core (../ours) on the same workload.
//
//   node run.mjs all       10,000 requests of 512 + 256 tokens, all at time 0
//   node run.mjs poisson   the same, Poisson arrivals at 20 req/s (seed 1)
//
// The hardware and model figures are the lab's own profiles (core/hardware:
// H100 SXM 80 GB, 989.4 TFLOPS dense BF16, 3.35 TB/s; Llama-3.1-8B), and the
// KV budget is the lab's: 0.9 × 80 GB − 16.06 GB of weights = 55.94 GB
// (426,788 tokens at 131,072 B each, which inference-lab also derives when
// kv_cache_capacity is left out). The scheduler settings are vLLM's H100
// defaults that the lab uses: 8,192 batched tokens, 1,024 sequences, chunked
// prefill, 16-token blocks.
import { readFileSync } from 'node:fs';
import { initSync, run_simulation } from '@doublewordai/inference-lab';

const workloads = {
  all: { arrival_pattern: 'batched', arrival_rate: 20 }, // 0.2.1 requires a rate; 'batched' ignores it
  poisson: { arrival_pattern: 'poisson', arrival_rate: 20 },
};
const name = process.argv[2] ?? 'all';
if (!(name in workloads)) {
  console.error(`run.mjs: workload ${JSON.stringify(name)}: want one of ${Object.keys(workloads).join(', ')}`);
  process.exit(2);
}

const config = {
  hardware: {
    name: 'H100 SXM', compute_flops: 989.4e12, memory_bandwidth: 3.35e12,
    memory_capacity: 80e9, kv_cache_capacity: 55.94e9, gpu_memory_utilization: 0.9, bytes_per_param: 2,
  },
  model: {
    name: 'Llama-3.1-8B', num_parameters: 8.03e9, num_layers: 32, hidden_dim: 4096,
    num_heads: 32, num_kv_heads: 8, max_seq_len: 131072,
  },
  scheduler: {
    max_num_batched_tokens: 8192, max_num_seqs: 1024, policy: 'fcfs',
    enable_chunked_prefill: true, block_size: 16,
  },
  workload: {
    ...workloads[name],
    input_len_dist: { type: 'fixed', value: 512 },
    output_len_dist: { type: 'fixed', value: 256 },
    num_requests: 10000, seed: 1,
  },
  simulation: { log_interval: 1000000 },
};

const wasm = readFileSync(new URL('inference_lab_bg.wasm', import.meta.resolve('@doublewordai/inference-lab')));
initSync({ module: wasm });
const m = run_simulation(JSON.stringify(config)).metrics;
// inference-lab reports latencies in milliseconds and total_time in seconds.
console.log(JSON.stringify({
  simulator: 'inference-lab 0.2.1', workload: name,
  completed_requests: m.completed_requests, preemptions: m.total_preemptions,
  simulated_s: m.total_time, requests_per_s: m.requests_per_sec, output_tokens_per_s: m.output_tokens_per_sec,
  ttft_p50_ms: m.ttft_p50, tpot_p50_ms: m.per_token_p50, e2e_p50_s: m.e2e_p50 / 1000,
  avg_flops_util: m.avg_flops_util, avg_bandwidth_util: m.avg_bandwidth_util,
}));
