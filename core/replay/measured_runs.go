package replay

import "github.com/inferlab/inferlab/core/workload"

// The measured runs this package is checked against: nine benchmarks of
// vLLM v0.15.1 on NVIDIA H100 SXM driven by kubernetes-sigs/inference-perf,
// published by the BLIS (inference-sim) team in inference-sim/training at
// commit ed5c1d26900e6909758d5e1641a18edaf56a1caf (default_args/; the
// models' shapes from their Hugging Face config.json files, model_configs/).
// This table is the lab's own transcription of the figures it checks, in
// milliseconds and tokens: the server's arguments (exp-config.yaml), the
// workload inference-perf resolved and ran (results/config.yaml), and per
// stage the requests sent, succeeded and failed, TTFT and end-to-end
// latency (mean, p50, p90, p99 of successes) and inference-perf's prompt
// and output length statistics (results/stage_N_lifecycle_metrics.json).
// Every run had max_model_len 4096 and vLLM's other settings at their
// v0.15.1 defaults (prefix caching and chunked prefill on, block size 16,
// gpu_memory_utilization 0.9, CUDA graphs, async scheduling); load.interval
// was 1 s and request_timeout null everywhere.
var Measured = []MeasuredRun{
	{
		Name: "20260217-155451-llama-2-7b-tp1-codegen", Workload: "codegen",
		Model: "meta-llama/Llama-2-7b-hf", TP: 1, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, Intermediate: 11008, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 466, OutputLen: 247},
		Stages: []MeasuredStage{
			{Rate: 5, Duration: 600, Sent: 3000, Succeeded: 3000, Failed: 0,
				TTFT: Dist{25.04, 24.26, 28.37, 45.97}, E2E: Dist{1810.32, 1796.57, 1940.09, 2188.83},
				PromptMean: 591.6, OutputMean: 193.7, OutputMedian: 247},
			{Rate: 10, Duration: 600, Sent: 6000, Succeeded: 6000, Failed: 0,
				TTFT: Dist{29.45, 28.92, 34.09, 50.75}, E2E: Dist{2215.95, 2214.77, 2425.73, 2579.96},
				PromptMean: 591.6, OutputMean: 195.8, OutputMedian: 247},
		},
	},
	{
		Name: "20260217-162547-llama-2-7b-tp1-roleplay", Workload: "roleplay",
		Model: "meta-llama/Llama-2-7b-hf", TP: 1, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, Intermediate: 11008, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 150, QuestionLen: 600, OutputLen: 251},
		Stages: []MeasuredStage{
			{Rate: 6, Duration: 1200, Sent: 7200, Succeeded: 7200, Failed: 0,
				TTFT: Dist{27.13, 26.83, 31.18, 38.26}, E2E: Dist{2071.12, 2066.09, 2259.96, 2399.32},
				PromptMean: 785.8, OutputMean: 206.4, OutputMedian: 251},
		},
	},
	{
		Name: "20260217-170634-llama-2-7b-tp1-reasoning", Workload: "reasoning",
		Model: "meta-llama/Llama-2-7b-hf", TP: 1, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, Intermediate: 11008, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 934, OutputLen: 1448},
		Stages: []MeasuredStage{
			{Rate: 4, Duration: 1200, Sent: 4800, Succeeded: 732, Failed: 4068,
				TTFT: Dist{106644.68, 91288.46, 215447.66, 246506.77}, E2E: Dist{160063.28, 156379.24, 263204.69, 289788.95},
				PromptMean: 1082.2, OutputMean: 1100.6, OutputMedian: 1448},
		},
	},
	{
		Name: "20260217-202857-llama-2-70b-tp4-general", Workload: "general",
		Model: "meta-llama/Llama-2-70b-hf", TP: 4, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 447, OutputLen: 248},
		Stages: []MeasuredStage{
			{Rate: 8, Duration: 600, Sent: 4800, Succeeded: 4800, Failed: 0,
				TTFT: Dist{57.39, 55.19, 63.22, 120.62}, E2E: Dist{4678.4, 4665.9, 4753.53, 6450.33},
				PromptMean: 574.9, OutputMean: 246.1, OutputMedian: 249},
			{Rate: 20, Duration: 600, Sent: 12000, Succeeded: 12000, Failed: 0,
				TTFT: Dist{121.27, 68.26, 250.06, 986.82}, E2E: Dist{5577.49, 5514.78, 5839.43, 6656.09},
				PromptMean: 574.9, OutputMean: 245.7, OutputMedian: 249},
		},
	},
	{
		Name: "20260217-203421-llama-2-70b-hf-tp4-codegen", Workload: "codegen",
		Model: "meta-llama/Llama-2-70b-hf", TP: 4, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 466, OutputLen: 247},
		Stages: []MeasuredStage{
			{Rate: 5, Duration: 600, Sent: 3000, Succeeded: 3000, Failed: 0,
				TTFT: Dist{53.4, 51.22, 58.7, 106.23}, E2E: Dist{4332.86, 4288.04, 4445.81, 5567.75},
				PromptMean: 593.5, OutputMean: 245.0, OutputMedian: 248},
			{Rate: 10, Duration: 600, Sent: 6000, Succeeded: 6000, Failed: 0,
				TTFT: Dist{56.68, 56.64, 64.33, 67.67}, E2E: Dist{4741.82, 4742.38, 4803.02, 4852.98},
				PromptMean: 593.5, OutputMean: 244.9, OutputMedian: 248},
		},
	},
	{
		Name: "20260217-231439-llama-2-7b-tp1-general", Workload: "general",
		Model: "meta-llama/Llama-2-7b-hf", TP: 1, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, Intermediate: 11008, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 447, OutputLen: 248},
		Stages: []MeasuredStage{
			{Rate: 8, Duration: 600, Sent: 4800, Succeeded: 4800, Failed: 0,
				TTFT: Dist{27.11, 26.8, 31.21, 36.58}, E2E: Dist{2057.6, 2050.34, 2226.39, 2401.78},
				PromptMean: 575.5, OutputMean: 210.0, OutputMedian: 249},
			{Rate: 20, Duration: 600, Sent: 12000, Succeeded: 12000, Failed: 0,
				TTFT: Dist{51.85, 51.09, 61.01, 72.48}, E2E: Dist{4158.15, 4122.97, 4713.81, 5240.5},
				PromptMean: 575.5, OutputMean: 208.6, OutputMedian: 249},
		},
	},
	{
		Name: "20260218-084319-llama-2-70b-tp4-roleplay", Workload: "roleplay",
		Model: "meta-llama/Llama-2-70b-hf", TP: 4, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "llama", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, Intermediate: 28672, Vocab: 32000, Positions: 4096},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 150, QuestionLen: 600, OutputLen: 251},
		Stages: []MeasuredStage{
			{Rate: 6, Duration: 1200, Sent: 7200, Succeeded: 7200, Failed: 0,
				TTFT: Dist{54.75, 53.48, 61.1, 96.26}, E2E: Dist{4561.57, 4541.87, 4703.17, 5934.52},
				PromptMean: 787.4, OutputMean: 249.9, OutputMedian: 252},
		},
	},
	{
		Name: "20260218-120914-mixtral-8x7b-v0-1-tp2-codegen", Workload: "codegen",
		Model: "mistralai/Mixtral-8x7B-v0.1", TP: 2, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "mixtral", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 32000, Positions: 32768, Experts: 8, ExpertsPerToken: 2},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 466, OutputLen: 247},
		Stages: []MeasuredStage{
			{Rate: 5, Duration: 600, Sent: 3000, Succeeded: 3000, Failed: 0,
				TTFT: Dist{63.0, 53.0, 61.07, 481.59}, E2E: Dist{4518.52, 4445.99, 4610.82, 8157.53},
				PromptMean: 589.4, OutputMean: 242.7, OutputMedian: 248},
			{Rate: 10, Duration: 600, Sent: 6000, Succeeded: 6000, Failed: 0,
				TTFT: Dist{56.78, 56.77, 64.51, 68.15}, E2E: Dist{4753.59, 4740.4, 4851.86, 4972.55},
				PromptMean: 589.4, OutputMean: 243.6, OutputMedian: 247},
		},
	},
	{
		Name: "20260218-130541-mixtral-8x7b-v0-1-tp2-general", Workload: "general",
		Model: "mistralai/Mixtral-8x7B-v0.1", TP: 2, MaxModelLen: 4096, MaxNumBatchedTokens: 2048, MaxNumSeqs: 128,
		Shape: Shape{Type: "mixtral", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, Intermediate: 14336, Vocab: 32000, Positions: 32768, Experts: 8, ExpertsPerToken: 2},
		Data:  workload.SharedPrefixData{NumGroups: 10, PromptsPerGroup: 10, SystemPromptLen: 100, QuestionLen: 447, OutputLen: 248},
		Stages: []MeasuredStage{
			{Rate: 8, Duration: 600, Sent: 4800, Succeeded: 4800, Failed: 0,
				TTFT: Dist{63.89, 55.78, 63.83, 383.08}, E2E: Dist{4795.97, 4742.84, 4829.14, 7300.83},
				PromptMean: 570.7, OutputMean: 245.2, OutputMedian: 249},
			{Rate: 20, Duration: 600, Sent: 12000, Succeeded: 12000, Failed: 0,
				TTFT: Dist{70.95, 63.71, 98.78, 256.03}, E2E: Dist{5135.71, 5124.79, 5251.03, 5473.96},
				PromptMean: 570.7, OutputMean: 245.5, OutputMedian: 249},
		},
	},
}
