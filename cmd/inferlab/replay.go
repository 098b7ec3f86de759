package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/inferlab/inferlab/cmd/internal/expdir"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/replay"
)

const replayUsage = "inferlab replay DIR [--gpu h100-sxm] [--format text|json], or inferlab replay --write-measured DIR"

// replayMaxTokens is the native work bound of one replay: the prompt and
// output tokens of every request the benchmark sends, summed. A replay
// costs about 0.07 µs of CPU per such token natively (the 13.8 million of
// the largest published run take under a second, BENCHMARKS.md), so the
// bound keeps one invocation within about ten seconds. The page holds its
// simulations to its own, smaller bound (Lesson.TraceLimits).
const replayMaxTokens = 150_000_000

// replayCmd replays the benchmark in an experiment directory.
func replayCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--write-measured" {
		return writeMeasuredCmd(args[1:], stdout, stderr)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "inferlab replay: name an experiment directory first:", replayUsage)
		return 2
	}
	dir := args[0]
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var formatFlag, gpuFlag textFlag
	fs.Var(&formatFlag, "format", "output format: text or json (default text)")
	fs.Var(&gpuFlag, "gpu", "the GPU the server ran on (default h100-sxm, the GPU of the published runs)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "inferlab replay: unexpected argument %q: %s\n", fs.Arg(0), replayUsage)
		return 2
	}
	format := formatFlag.or("text")
	if format != "text" && format != "json" {
		fmt.Fprintf(stderr, "inferlab replay: --format = %q is not allowed: want text or json\n", format)
		return 2
	}
	g, err := hardware.GPUByID(gpuFlag.or("h100-sxm"))
	if err != nil {
		fmt.Fprintln(stderr, printable("inferlab replay: --gpu: "+err.Error()))
		return 2
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab replay: %s is not a directory: want an experiment directory (%s, %s, %s)", dir, expdir.ExpConfig, expdir.ResultsConfig, expdir.ModelConfig)))
		return 2
	}
	x, err := expdir.Read(dir, g)
	if err != nil {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab replay: %s: %v", dir, err)))
		return 2
	}
	if n := x.Workload.Tokens(); n > replayMaxTokens {
		fmt.Fprintf(stderr, "inferlab replay: %s: the benchmark sends %s prompt and output tokens: at most %s replay natively in one invocation (about ten seconds)\n",
			dir, commaInt(n), commaInt(replayMaxTokens))
		return 2
	}
	// A replay allocates as it goes (each request's token ids and block
	// hashes, its steps' records) and keeps most of it to the end: with the
	// collector's default target it would scan a growing heap a few dozen
	// times. Four times the live heap halves that CPU for under 200 MB
	// more at the largest published run (BENCHMARKS.md).
	debug.SetGCPercent(400)
	res, err := replay.Run(x.Experiment)
	if err != nil {
		code := 1
		if errors.Is(err, replay.ErrTooLong) {
			code = 2
		}
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab replay: %s: %v", dir, err)))
		return code
	}
	rep := newReplayReport(x, res)
	if format == "json" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "inferlab replay:", err)
			return 1
		}
		stdout.Write(append(b, '\n'))
		return 0
	}
	rep.writeText(stdout)
	return 0
}

// writeMeasuredCmd writes the measured runs the lab checks itself against
// (replay.Measured) as experiment directories under DIR, from the lab's own
// table, and prints their paths: a benchmark to replay without the
// published files.
func writeMeasuredCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "inferlab replay: --write-measured takes one directory: inferlab replay --write-measured DIR")
		return 2
	}
	root := args[0]
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		fmt.Fprintln(stderr, printable(fmt.Sprintf("inferlab replay: --write-measured %s: not a directory", root)))
		return 2
	}
	for _, run := range replay.Measured {
		dir := filepath.Join(root, run.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(stderr, "inferlab replay:", err)
			return 1
		}
		if err := expdir.Write(dir, run); err != nil {
			fmt.Fprintln(stderr, "inferlab replay:", err)
			return 1
		}
		fmt.Fprintln(stdout, dir)
	}
	return 0
}

// replayReport is what replay prints: per stage the simulated figures and,
// where the directory has them, the measured ones with the signed error.
type replayReport struct {
	Stages  []replayStage `json:"stages"`
	Summary replaySummary `json:"summary"`
}

type replayStage struct {
	Index             int         `json:"index"`
	Rate              float64     `json:"rate"`
	Duration          float64     `json:"duration_s"`
	Sent              int         `json:"sent"`
	Finished          int         `json:"finished"`
	Failed            int         `json:"failed"`
	TTFT              latency     `json:"ttft_ms"`
	E2E               latency     `json:"e2e_ms"`
	TPOT              latency     `json:"tpot_ms"`
	OutputTokensMean  float64     `json:"output_tokens_mean"`
	PromptTokensMean  float64     `json:"prompt_tokens_mean"`
	OutputTokensPerS  float64     `json:"output_tokens_per_s"`
	RequestsPerS      float64     `json:"requests_per_s"`
	MeanRunning       float64     `json:"mean_running"`
	PeakWaiting       int         `json:"peak_waiting"`
	Overloaded        bool        `json:"overloaded"`
	Measured          *measured   `json:"measured,omitempty"`
	Error             *meanErrors `json:"error,omitempty"`
	outputLenMeasured float64
	promptLenMeasured float64
}

// latency is a distribution in milliseconds; a measured TPOT has only its
// mean, from the mean latencies and the requested output length.
type latency struct {
	Mean float64  `json:"mean"`
	P50  *float64 `json:"p50,omitempty"`
	P90  *float64 `json:"p90,omitempty"`
	P99  *float64 `json:"p99,omitempty"`
}

type measured struct {
	Sent             int     `json:"sent"`
	Finished         int     `json:"finished"`
	Failed           int     `json:"failed"`
	TTFT             latency `json:"ttft_ms"`
	E2E              latency `json:"e2e_ms"`
	TPOT             latency `json:"tpot_ms"`
	OutputTokensMean float64 `json:"output_tokens_mean"`
	PromptTokensMean float64 `json:"prompt_tokens_mean"`
}

// meanErrors are (simulated − measured) / measured of the means.
type meanErrors struct {
	TTFT float64 `json:"ttft_mean"`
	E2E  float64 `json:"e2e_mean"`
	TPOT float64 `json:"tpot_mean"`
}

type replaySummary struct {
	Experiment   string      `json:"experiment"`
	Model        string      `json:"model"`
	Architecture string      `json:"architecture"`
	GPU          string      `json:"gpu"`
	TP           int         `json:"tp"`
	MaxBatched   int         `json:"max_num_batched_tokens"`
	MaxSeqs      int         `json:"max_num_seqs"`
	MaxModelLen  int         `json:"max_model_len"`
	KVTokens     int         `json:"kv_tokens_per_gpu"`
	Prompts      int         `json:"prompts"`
	PromptMean   float64     `json:"prompt_tokens_mean"`
	OutputLen    int         `json:"output_tokens"`
	Tokenizer    string      `json:"tokenizer"`
	Requests     int         `json:"requests"`
	Steps        int         `json:"engine_steps"`
	Overloaded   []int       `json:"overloaded_stages"`
	MedianErrors *meanErrors `json:"median_abs_error,omitempty"`
	Fitted       fitted      `json:"fitted_constants"`
	Notes        []string    `json:"notes,omitempty"`
}

type fitted struct {
	APIMs     float64 `json:"api_ms"`
	SeqStepUs float64 `json:"seq_step_us"`
	Growth    float64 `json:"retokenisation_growth"`
}

func dist(d replay.Dist) latency {
	p50, p90, p99 := d.P50, d.P90, d.P99
	return latency{Mean: d.Mean, P50: &p50, P90: &p90, P99: &p99}
}

func newReplayReport(x *expdir.Experiment, res *replay.Result) replayReport {
	n := float64(x.Workload.Data.OutputLen)
	psum := 0
	for _, p := range res.Prompts {
		psum += p
	}
	kind := "dense"
	if x.Engine.Model.MoE() {
		kind = fmt.Sprintf("mixture of experts, %d of %d per token", x.Engine.Model.ExpertsPerToken, x.Engine.Model.Experts)
	}
	sum := replaySummary{Experiment: x.Name, Model: x.ModelName, Architecture: fmt.Sprintf("%s, %s, %d layers", x.Config.ModelType, kind, x.Engine.Model.Layers),
		GPU: x.Engine.GPU.Name, TP: x.Engine.TP, MaxBatched: x.Engine.MaxNumBatchedTokens, MaxSeqs: x.Engine.MaxNumSeqs, MaxModelLen: x.Engine.MaxModelLen,
		KVTokens: res.KVBlocks * replay.BlockSize, Prompts: len(res.Prompts), PromptMean: float64(psum) / float64(max(len(res.Prompts), 1)),
		OutputLen: x.Workload.Data.OutputLen, Tokenizer: x.Tokenizer.Name, Steps: res.Steps, Overloaded: []int{}, Notes: x.Notes,
		Fitted: fitted{APIMs: 1e3 * replay.Fitted.API, SeqStepUs: 1e6 * replay.Fitted.SeqStep, Growth: x.Tokenizer.Growth}}
	rep := replayReport{}
	var et, ee, ep []float64
	for _, s := range res.Stages {
		st := replayStage{Index: s.Index, Rate: s.Rate, Duration: s.Duration, Sent: s.Sent, Finished: s.Finished, Failed: s.Failed,
			TTFT: dist(s.TTFT), E2E: dist(s.E2E), TPOT: dist(s.TPOT), OutputTokensMean: s.OutputMean, PromptTokensMean: s.PromptMean,
			OutputTokensPerS: s.OutputTokensPerS, RequestsPerS: s.RequestsPerS, MeanRunning: s.MeanRunning, PeakWaiting: s.PeakWaiting, Overloaded: s.Overloaded}
		st.TPOT.Mean = (s.E2E.Mean - s.TTFT.Mean) / (n - 1) // the scoring formula: means of the stage, exact N
		sum.Requests += s.Sent
		if s.Overloaded {
			sum.Overloaded = append(sum.Overloaded, s.Index)
		}
		if s.Index < len(x.Measured) {
			m := x.Measured[s.Index]
			mt := (m.E2E.Mean - m.TTFT.Mean) / (n - 1)
			st.Measured = &measured{Sent: m.Sent, Finished: m.Succeeded, Failed: m.Failed, TTFT: dist(m.TTFT), E2E: dist(m.E2E),
				TPOT: latency{Mean: mt}, OutputTokensMean: m.OutputMean, PromptTokensMean: m.PromptMean}
			st.outputLenMeasured, st.promptLenMeasured = m.OutputMedian, m.PromptMean
			if m.TTFT.Mean > 0 && m.E2E.Mean > 0 && mt > 0 && s.Finished > 0 {
				st.Error = &meanErrors{TTFT: s.TTFT.Mean/m.TTFT.Mean - 1, E2E: s.E2E.Mean/m.E2E.Mean - 1, TPOT: st.TPOT.Mean/mt - 1}
				if !s.Overloaded {
					et, ee, ep = append(et, math.Abs(st.Error.TTFT)), append(ee, math.Abs(st.Error.E2E)), append(ep, math.Abs(st.Error.TPOT))
				}
			}
		}
		rep.Stages = append(rep.Stages, st)
	}
	if len(et) > 0 {
		sum.MedianErrors = &meanErrors{TTFT: medianOf(et), E2E: medianOf(ee), TPOT: medianOf(ep)}
	}
	rep.Summary = sum
	return rep
}

// medianOf is the median of xs, the mean of the middle two for an even count.
func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := len(s) / 2
	if len(s)%2 == 1 {
		return s[k]
	}
	return (s[k-1] + s[k]) / 2
}

func (r replayReport) writeText(w io.Writer) {
	s := r.Summary
	fmt.Fprintf(w, "replay %s\n", s.Experiment)
	fmt.Fprintf(w, "  server: vLLM v0.15.1 model, %s (%s) on %d × %s; max_num_batched_tokens %s, max_num_seqs %d, max_model_len %s; KV pool %s tokens per GPU\n",
		s.Model, s.Architecture, s.TP, s.GPU, commaInt(int64(s.MaxBatched)), s.MaxSeqs, commaInt(int64(s.MaxModelLen)), commaInt(int64(s.KVTokens)))
	fmt.Fprintf(w, "  workload: inference-perf shared_prefix, %d prompts of %.1f tokens on average (%s), %d output tokens each (ignore_eos); %s requests in %d stages; %s engine steps\n",
		s.Prompts, s.PromptMean, s.Tokenizer, s.OutputLen, commaInt(int64(s.Requests)), len(r.Stages), commaInt(int64(s.Steps)))
	for _, st := range r.Stages {
		fmt.Fprintf(w, "\nstage %d: %g req/s for %g s: %s sent, %s finished, %s failed", st.Index, st.Rate, st.Duration, commaInt(int64(st.Sent)), commaInt(int64(st.Finished)), commaInt(int64(st.Failed)))
		if m := st.Measured; m != nil {
			fmt.Fprintf(w, " (measured: %s finished, %s failed)", commaInt(int64(m.Finished)), commaInt(int64(m.Failed)))
		}
		if st.Overloaded {
			fmt.Fprintf(w, "; OVERLOADED: the queue reached %s requests", commaInt(int64(st.PeakWaiting)))
		}
		fmt.Fprintln(w)
		if st.Measured != nil {
			fmt.Fprintf(w, "  %-9s %25s %25s %25s %25s\n", "ms", "mean sim / meas (err)", "p50", "p90", "p99")
		} else {
			fmt.Fprintf(w, "  %-9s %10s %10s %10s %10s\n", "ms", "mean", "p50", "p90", "p99")
		}
		rows := []struct {
			name      string
			sim       latency
			meas      *latency
			hasMeasPs bool
		}{{"TTFT", st.TTFT, nil, true}, {"E2E", st.E2E, nil, true}, {"TPOT", st.TPOT, nil, false}}
		if m := st.Measured; m != nil {
			rows[0].meas, rows[1].meas, rows[2].meas = &m.TTFT, &m.E2E, &m.TPOT
		}
		for _, row := range rows {
			fmt.Fprintf(w, "  %-9s", row.name)
			vals := []float64{row.sim.Mean, *row.sim.P50, *row.sim.P90, *row.sim.P99}
			for i, v := range vals {
				if row.meas == nil {
					fmt.Fprintf(w, " %10.1f", v)
					continue
				}
				var mv *float64
				switch i {
				case 0:
					mv = &row.meas.Mean
				case 1:
					mv = row.meas.P50
				case 2:
					mv = row.meas.P90
				case 3:
					mv = row.meas.P99
				}
				if mv == nil {
					fmt.Fprintf(w, " %25s", fmt.Sprintf("%.1f", v))
					continue
				}
				fmt.Fprintf(w, " %25s", fmt.Sprintf("%.1f / %.1f (%+.1f%%)", v, *mv, 100*(v / *mv - 1)))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "  tokens per request: prompt %.1f, output %.1f", st.PromptTokensMean, st.OutputTokensMean)
		if st.Measured != nil {
			fmt.Fprintf(w, " (measured prompt %.1f; output %.0f, the median of inference-perf's re-tokenized count)", st.promptLenMeasured, st.outputLenMeasured)
		}
		fmt.Fprintf(w, "\n  throughput: %.0f output tok/s, %.2f req/s; %.1f requests running on average\n", st.OutputTokensPerS, st.RequestsPerS, st.MeanRunning)
	}
	fmt.Fprintln(w)
	if e := s.MedianErrors; e != nil {
		fmt.Fprintf(w, "median |error| over the stages that kept up: TTFT mean %.1f%%, E2E mean %.1f%%, TPOT %.1f%% (TPOT = (E2E − TTFT) / (N − 1), N = %d)\n",
			100*e.TTFT, 100*e.E2E, 100*e.TPOT, s.OutputLen)
	}
	if len(s.Overloaded) > 0 {
		fmt.Fprintf(w, "overloaded stages: %v (requests failed or the queue outlasted the stage by over %g s); latencies are of the requests that finished\n", s.Overloaded, replay.OverloadDrain)
	}
	fmt.Fprintf(w, "fitted constants: %.1f ms outside the engine per request, %.0f µs per running request per step, re-tokenisation growth %.4f (docs/SOURCES.md#replay-fit)\n",
		s.Fitted.APIMs, s.Fitted.SeqStepUs, s.Fitted.Growth)
	for _, n := range s.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// commaInt writes n with thousands separators.
func commaInt(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
