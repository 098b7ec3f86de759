// Package parallel lays one dense model on GPUs and prices a decode step of
// the layout: tensor parallelism (TP) inside a node, pipeline parallelism
// (PP) across stages, data-parallel replicas (DP) side by side. Its entry
// type is Setup; Setup.Replica lays one copy of the model out as TP × PP
// GPUs, and Replica.Decode prices one decode step of a batch, under vLLM
// v1's batch queue or the drained GPipe schedule.
//
// # The model
//
// Memory, per GPU of stage s (vLLM's start-up sizing, core/hardware's
// KVBudget):
//
//	layers of stage s = vLLM's get_pp_indices: L / PP each, the remainder
//	                    one apiece to the stages before the last
//	weights per GPU   = (linear weights · layers_s / L + embedding on the
//	                    first stage + lm_head on the last) / TP
//	KV per token      = 2 · kv_heads / min(TP, kv_heads) · head_dim · bytes · layers_s
//	KV pool           = memory · utilization − weights − activation reserve
//
// A replica holds as many tokens as its smallest stage pool: every stage
// caches every token, for its own layers.
//
// Time. Each stage's compute is core/hardware's step-time model for its
// layers (Model.Layers set to the stage's, NoEmbedding and NoOutput as the
// stage has them), TP all-reduces included: two per layer, over NVLink.
// Between stages each micro-batch's activations cross (vLLM's Llama sends
// the hidden state and the residual, 2 · tokens · hidden BF16 values), each
// of the TP GPUs sending its 1/TP slice over its own link, then an
// all-gather on the receiving stage (vLLM's send_tensor_dict,
// "send-allgather"):
//
//	t_send = α + (bytes / TP) / (BW · η) + all-gather(bytes)
//
// over InfiniBand when the two stages sit on different nodes, NVLink
// otherwise.
//
// Schedules. Under vLLM v1's batch queue (BatchQueue, the default) the
// engine keeps PP batches in flight, each holding its own share of the
// running sequences, and a batch's next step enters stage 1 as soon as its
// previous step has left stage PP; Decode walks 16 rounds of that schedule
// from empty and reports the mean period of the last eight, the time
// between a sequence's tokens.
// With equal stages and free sends no stage waits; a slower stage or a
// send sets the period, and fewer sequences than stages leave 1 − b/p of
// the stages idle. Under GPipe (the drained schedule) micro-batch j starts
// on stage s when stage s has finished (and sent) micro-batch j−1 and
// micro-batch j has arrived from stage s−1, and the next step waits for the
// last to leave: with equal stages and free sends the step is (m + p − 1)
// stage slots and the idle share, the pipeline bubble, is
// (p − 1) / (m + p − 1).
//
// Throughput. A replica advances every sequence of its batch by one token
// per step: tokens per second per user = 1 / t_step, per replica = batch /
// t_step, per GPU = batch / (t_step · TP · PP). DP replicas multiply the
// replica's figures; they share nothing.
//
// # Simplifications
//
// Dense models only: no expert parallelism. Communication never overlaps
// compute (a send holds its stage). The batch queue's batches are taken as
// equal shares of the running sequences: requests that arrive over time
// join whichever batch is being scheduled, so the shares stay near even,
// but a population that arrived all at once would travel as one batch in
// vLLM and leave the other stages idle. No CPU time between a batch's
// return and its next scheduling.
//
// # Sources
//
// The batch queue follows vllm-project/vllm @ 00f6c9bf92aa69c72d5828d28d029129775223b7
// (vllm/v1/executor/multiproc_executor.py: max_concurrent_batches is
// pipeline_parallel_size; vllm/v1/engine/core.py: step_with_batch_queue).
// The layer split follows vllm-project/vllm @ 5a6541d,
// vllm/distributed/utils.py get_pp_indices; the activations sent and
// their slicing follow vllm/model_executor/models/llama.py (IntermediateTensors
// of hidden_states and residual) and vllm/distributed/parallel_state.py
// (send_tensor_dict). The links are core/cluster's profiles
// (docs/SOURCES.md#kv-transfer-model): InfiniBand NDR at the 35.9 GB/s and
// 17 µs NCCL send/recv measured between two H100 nodes, one NIC per GPU as
// on a DGX H100; NVLink at the 77% of its per-direction rate and 5 µs
// measured on H100 (VIDUR-NET), carried to the part's own NVLink rate.
// Everything else is core/hardware's (docs/SOURCES.md#step-time-model,
// #allreduce-model, #weight-precision).
package parallel
