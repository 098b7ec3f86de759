package expdir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/inferlab/inferlab/core/replay"
)

// Write writes run as an experiment directory in dir (which must exist):
// the files Read reads, made from the lab's own table of the measured
// figures (replay.Measured), so that the replay can be tried, and tested,
// without the published files.
func Write(dir string, run replay.MeasuredRun) error {
	files := map[string][]byte{
		ExpConfig: []byte(fmt.Sprintf("model: %s\ntensor_parallelism: %d\nmax_model_len: %d\nmax_num_batched_tokens: %d\nmax_num_seqs: %d\napp: inference-perf\n",
			run.Model, run.TP, run.MaxModelLen, run.MaxNumBatchedTokens, run.MaxNumSeqs)),
		ModelConfig:   run.Shape.ConfigJSON(run.Model),
		ResultsConfig: resultsConfig(run),
	}
	for k, s := range run.Stages {
		files[StageFile(k)] = stageJSON(s)
	}
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// resultsConfig is the inference-perf configuration the run resolved, in
// the fields Read reads.
func resultsConfig(run replay.MeasuredRun) []byte {
	d := run.Data
	s := fmt.Sprintf(`api:
  type: completion
  streaming: true
data:
  type: shared_prefix
  shared_prefix:
    num_groups: %d
    num_prompts_per_group: %d
    system_prompt_len: %d
    question_len: %d
    output_len: %d
load:
  type: constant
  interval: 1.0
  stages:
`, d.NumGroups, d.PromptsPerGroup, d.SystemPromptLen, d.QuestionLen, d.OutputLen)
	for _, st := range run.Stages {
		s += fmt.Sprintf("  - rate: %g\n    duration: %g\n", st.Rate, st.Duration)
	}
	s += fmt.Sprintf("  request_timeout: null\nserver:\n  type: vllm\n  model_name: %s\n  ignore_eos: true\n", run.Model)
	return []byte(s)
}

// stageJSON is a stage's figures in inference-perf's lifecycle-metrics
// layout (seconds), the fields Read reads.
func stageJSON(s replay.MeasuredStage) []byte {
	dist := func(d replay.Dist) map[string]float64 {
		return map[string]float64{"mean": d.Mean / 1e3, "median": d.P50 / 1e3, "p90": d.P90 / 1e3, "p99": d.P99 / 1e3}
	}
	m := map[string]any{
		"load_summary": map[string]any{"count": s.Sent, "requested_rate": s.Rate},
		"successes": map[string]any{
			"count": s.Succeeded,
			"latency": map[string]any{
				"time_to_first_token": dist(s.TTFT),
				"request_latency":     dist(s.E2E),
			},
			"prompt_len": map[string]float64{"mean": s.PromptMean},
			"output_len": map[string]float64{"mean": s.OutputMean, "median": s.OutputMedian},
		},
		"failures": map[string]any{"count": s.Failed},
	}
	b, _ := json.MarshalIndent(m, "", "  ") // maps of numbers always marshal
	return append(b, '\n')
}
