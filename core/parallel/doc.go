// Package parallel lays one dense model on GPUs and prices a decode step of
// the layout: tensor parallelism (TP) inside a node, pipeline parallelism
// (PP) across stages, data-parallel replicas (DP) side by side. Its entry
// type is Setup; Setup.Replica lays one copy of the model out as TP × PP
// GPUs, and Replica.Decode prices one decode step of a batch split into
// micro-batches.
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
// otherwise. A step's micro-batches run the GPipe schedule: micro-batch j
// starts on stage s when stage s has finished (and sent) micro-batch j−1
// and micro-batch j has arrived from stage s−1. With equal stages and free
// sends the step is (m + p − 1) stage slots and the idle share, the
// pipeline bubble, is (p − 1) / (m + p − 1); Decode walks the schedule and
// reports both.
//
// Throughput. A replica advances every sequence of its batch by one token
// per step: tokens per second per user = 1 / t_step, per replica = batch /
// t_step, per GPU = batch / (t_step · TP · PP). DP replicas multiply the
// replica's figures; they share nothing.
//
// # Simplifications
//
// Dense models only: no expert parallelism. Communication never overlaps
// compute (a send holds its stage). Every step drains its micro-batches
// through the pipeline before the next begins, so every step pays the
// bubble; vLLM v1 keeps PP batches in flight across steps (its batch queue),
// which hides it in steady state at the cost of each batch waiting its
// turn.
//
// # Sources
//
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
