// Package expdir reads a benchmark experiment directory in the layout the
// BLIS team published its vLLM runs in (inference-sim/training,
// default_args/): exp-config.yaml (the vLLM server's arguments),
// results/config.yaml (the inference-perf configuration that ran),
// config.json (the model's Hugging Face config), optionally profile.yaml
// (the profile as requested) and results/stage_N_lifecycle_metrics.json
// (the measured figures per stage).
//
// Every field read is checked, and a bad one is refused with a *FieldError
// naming the file, the field, the value and what is allowed: a missing
// file, a field out of range, an unknown model type, a workload or load
// type the replay does not model. YAML is read with go.yaml.in/yaml/v3;
// each file is bounded to MaxFileBytes.
package expdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/core/replay"
	"github.com/inferlab/inferlab/core/workload"
)

// MaxFileBytes bounds each file read: the published files are a few
// kilobytes.
const MaxFileBytes = 1 << 20

// The files of an experiment directory.
const (
	ExpConfig     = "exp-config.yaml"
	ResultsConfig = "results/config.yaml"
	ModelConfig   = "config.json"
	Profile       = "profile.yaml"
)

// StageFile is the measured figures of stage k.
func StageFile(k int) string { return fmt.Sprintf("results/stage_%d_lifecycle_metrics.json", k) }

// FieldError is a file or field the reader refuses.
type FieldError struct {
	File  string // relative to the directory
	Field string // dotted path; empty when the file itself is the problem
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Field + ": " + e.Msg
}

// Experiment is what a directory holds.
type Experiment struct {
	replay.Experiment
	// ModelName is exp-config.yaml's model; Config the parsed config.json.
	ModelName string
	Config    *modelconfig.Config
	// Tokenizer is the tokenizer the prompts' lengths assume; KnownTokenizer
	// is false when the lab has no figures for it (growth 1 is assumed).
	Tokenizer      replay.Tokenizer
	KnownTokenizer bool
	// Measured holds the measured stages found (nil when none).
	Measured []replay.MeasuredStage
	// Notes are what the reader noticed and the replay leaves out.
	Notes []string
}

// Read reads the experiment in dir for GPU g.
func Read(dir string, g hardware.GPU) (*Experiment, error) {
	x := &Experiment{}
	x.Name = filepath.Base(filepath.Clean(dir))
	exp, err := readYAML(dir, ExpConfig)
	if err != nil {
		return nil, err
	}
	f := fields{file: ExpConfig, m: exp}
	x.ModelName = f.str("model")
	e := replay.Engine{GPU: g}
	e.TP = f.int("tensor_parallelism", 1, 8)
	e.MaxModelLen = f.int("max_model_len", 1, 1<<24)
	e.MaxNumBatchedTokens = f.int("max_num_batched_tokens", 1, 1<<20)
	e.MaxNumSeqs = f.int("max_num_seqs", 1, 4096)
	if f.err != nil {
		return nil, f.err
	}
	cfgText, err := readFile(dir, ModelConfig)
	if err != nil {
		return nil, err
	}
	c, err := modelconfig.Parse(cfgText, x.ModelName)
	if err != nil {
		var fe *modelconfig.FieldError
		if errors.As(err, &fe) {
			return nil, &FieldError{File: ModelConfig, Field: fe.Field, Msg: strings.TrimPrefix(fe.Error(), "config.json: "+fe.Field+" ")}
		}
		return nil, &FieldError{File: ModelConfig, Msg: strings.TrimPrefix(err.Error(), "config.json ")}
	}
	if !c.Priced() {
		return nil, &FieldError{File: ModelConfig, Field: "model_type", Msg: fmt.Sprintf("%q with this shape is not one the step model prices (dense decoders with per-head K and V, or a mixture of experts in every layer without shared experts)", c.ModelType)}
	}
	x.Config = c
	x.Notes = append(x.Notes, c.Notes...)
	e.Model = c.Model
	x.Engine = e
	if err := e.Validate(); err != nil {
		return nil, &FieldError{File: ExpConfig, Msg: err.Error()}
	}
	vocab := c.Model.Vocab
	x.Tokenizer, x.KnownTokenizer = replay.TokenizerFor(c.ModelType, vocab)
	if !x.KnownTokenizer {
		x.Tokenizer = replay.Tokenizer{Name: "unknown", Growth: 1, BOS: 1}
		x.Notes = append(x.Notes, fmt.Sprintf("No re-tokenisation figures for a %s tokenizer of %d tokens: prompts are taken as the ids drawn plus BOS.", c.ModelType, vocab))
	}
	if x.Workload, err = readWorkload(dir, x.Tokenizer); err != nil {
		return nil, err
	}
	x.Notes = append(x.Notes, profileNotes(dir)...)
	for k := range x.Workload.Stages {
		ms, ok, err := readStage(dir, k)
		if err != nil {
			return nil, err
		}
		if !ok {
			if k > 0 {
				return nil, &FieldError{File: StageFile(k), Msg: "missing, while stage 0's figures are there: want every stage's or none"}
			}
			break
		}
		ms.Rate, ms.Duration = x.Workload.Stages[k].Rate, x.Workload.Stages[k].Duration
		x.Measured = append(x.Measured, ms)
	}
	return x, nil
}

// readWorkload reads results/config.yaml: the shared_prefix data
// inference-perf ran and its constant-load stages.
func readWorkload(dir string, tok replay.Tokenizer) (workload.InferencePerf, error) {
	w := workload.InferencePerf{Growth: tok.Growth, BOS: tok.BOS, Interval: 1, Timeout: workload.DefaultClientTimeout}
	cfg, err := readYAML(dir, ResultsConfig)
	if err != nil {
		return w, err
	}
	f := fields{file: ResultsConfig, m: cfg}
	if t := f.str("data.type"); f.err == nil && t != "shared_prefix" {
		return w, f.fail("data.type", shown(t), "shared_prefix (the only data generator the replay models)")
	}
	if t := f.str("load.type"); f.err == nil && t != "constant" {
		return w, f.fail("load.type", shown(t), "constant (the only load type the replay models)")
	}
	if t := f.str("api.type"); f.err == nil && t != "completion" {
		return w, f.fail("api.type", shown(t), "completion")
	}
	if s := f.boolean("api.streaming"); f.err == nil && !s {
		return w, f.fail("api.streaming", "false", "true: without streaming no first-token time is measured")
	}
	if s := f.boolean("server.ignore_eos"); f.err == nil && !s {
		return w, f.fail("server.ignore_eos", "false", "true: without it the output lengths depend on the model's text")
	}
	w.Data.NumGroups = f.int("data.shared_prefix.num_groups", 1, workload.MaxPerfPrompts)
	w.Data.PromptsPerGroup = f.int("data.shared_prefix.num_prompts_per_group", 1, workload.MaxPerfPrompts)
	w.Data.SystemPromptLen = f.int("data.shared_prefix.system_prompt_len", 0, workload.MaxPerfTokens)
	w.Data.QuestionLen = f.int("data.shared_prefix.question_len", 0, workload.MaxPerfTokens)
	w.Data.OutputLen = f.int("data.shared_prefix.output_len", 1, workload.MaxPerfTokens)
	if f.has("load.interval") {
		w.Interval = f.float("load.interval", 0, workload.MaxPerfDuration)
	}
	if f.has("load.request_timeout") {
		w.Timeout = f.float("load.request_timeout", 1e-3, workload.MaxPerfDuration)
	}
	stages := f.list("load.stages", 1, workload.MaxPerfStages)
	for i := range stages {
		p := fmt.Sprintf("load.stages[%d]", i)
		sf := fields{file: ResultsConfig, m: stages[i], prefix: p + "."}
		s := workload.LoadStage{Rate: sf.float("rate", 1e-9, workload.MaxPerfRate), Duration: sf.float("duration", 1e-9, workload.MaxPerfDuration)}
		if sf.err != nil {
			return w, sf.err
		}
		w.Stages = append(w.Stages, s)
	}
	if f.err != nil {
		return w, f.err
	}
	if err := w.Validate(); err != nil {
		return w, &FieldError{File: ResultsConfig, Msg: err.Error()}
	}
	return w, nil
}

// profileNotes reads profile.yaml, when present, for the shared_prefix
// keys inference-perf at that version did not know and so ignored.
func profileNotes(dir string) []string {
	m, err := readYAML(dir, Profile)
	if err != nil {
		return nil
	}
	f := fields{file: Profile, m: m}
	sp, ok := f.lookup("data.shared_prefix")
	sm, isMap := sp.(map[string]any)
	if !ok || !isMap {
		return nil
	}
	known := map[string]bool{"num_groups": true, "num_prompts_per_group": true, "system_prompt_len": true, "question_len": true, "output_len": true}
	var ignored []string
	for k := range sm {
		if !known[k] {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) == 0 {
		return nil
	}
	slices.Sort(ignored)
	return []string{fmt.Sprintf("profile.yaml's data.shared_prefix asked for %s, which inference-perf at that version ignored: results/config.yaml is what ran.", strings.Join(ignored, ", "))}
}

// readStage reads stage k's measured figures; ok is false when the file
// is not there.
func readStage(dir string, k int) (replay.MeasuredStage, bool, error) {
	name := StageFile(k)
	if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, os.ErrNotExist) {
		return replay.MeasuredStage{}, false, nil
	}
	b, err := readFile(dir, name)
	if err != nil {
		return replay.MeasuredStage{}, false, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return replay.MeasuredStage{}, false, &FieldError{File: name, Msg: "not a JSON object: " + err.Error()}
	}
	f := fields{file: name, m: m}
	s := replay.MeasuredStage{
		Sent:      f.int("load_summary.count", 0, 1<<30),
		Succeeded: f.int("successes.count", 0, 1<<30),
	}
	if f.has("failures.count") {
		s.Failed = f.int("failures.count", 0, 1<<30)
	}
	dist := func(p string) replay.Dist {
		ms := func(k string) float64 { return 1e3 * f.float(p+"."+k, 0, 1e6) }
		return replay.Dist{Mean: ms("mean"), P50: ms("median"), P90: ms("p90"), P99: ms("p99")}
	}
	if s.Succeeded > 0 {
		s.TTFT = dist("successes.latency.time_to_first_token")
		s.E2E = dist("successes.latency.request_latency")
		s.PromptMean = f.float("successes.prompt_len.mean", 0, 1e9)
		s.OutputMean = f.float("successes.output_len.mean", 0, 1e9)
		s.OutputMedian = f.float("successes.output_len.median", 0, 1e9)
	}
	if f.err != nil {
		return s, false, f.err
	}
	return s, true, nil
}

// readFile reads a regular file of the directory, at most MaxFileBytes.
func readFile(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, name)
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &FieldError{File: name, Msg: "missing"}
		}
		return nil, &FieldError{File: name, Msg: err.Error()}
	}
	if !st.Mode().IsRegular() {
		return nil, &FieldError{File: name, Msg: "not a regular file"}
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil, &FieldError{File: name, Msg: err.Error()}
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, &FieldError{File: name, Msg: err.Error()}
	}
	if len(b) > MaxFileBytes {
		return nil, &FieldError{File: name, Msg: fmt.Sprintf("larger than %d bytes", MaxFileBytes)}
	}
	return b, nil
}

// readYAML reads a YAML (or JSON) file holding a mapping.
func readYAML(dir, name string) (map[string]any, error) {
	b, err := readFile(dir, name)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, &FieldError{File: name, Msg: "not YAML: " + err.Error()}
	}
	if m == nil {
		return nil, &FieldError{File: name, Msg: "empty: want a mapping"}
	}
	return m, nil
}

// fields reads dotted fields of one file's mapping, keeping the first
// error.
type fields struct {
	file, prefix string
	m            map[string]any
	err          error
}

func (f *fields) fail(field, value, want string) error {
	e := &FieldError{File: f.file, Field: f.prefix + field, Msg: fmt.Sprintf("%s is not allowed: want %s", value, want)}
	if value == "" {
		e.Msg = "missing: want " + want
	}
	if f.err == nil {
		f.err = e
	}
	return f.err
}

func (f *fields) lookup(path string) (any, bool) {
	var cur any = f.m
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

func (f *fields) has(path string) bool { _, ok := f.lookup(path); return ok }

func (f *fields) str(path string) string {
	v, ok := f.lookup(path)
	if !ok {
		f.fail(path, "", "a string")
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.fail(path, shown(v), "a string")
	}
	return s
}

func (f *fields) boolean(path string) bool {
	v, ok := f.lookup(path)
	if !ok {
		f.fail(path, "", "true or false")
		return false
	}
	b, ok := v.(bool)
	if !ok {
		f.fail(path, shown(v), "true or false")
	}
	return b
}

func (f *fields) number(path string) (float64, bool) {
	v, ok := f.lookup(path)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

func (f *fields) int(path string, lo, hi int) int {
	want := fmt.Sprintf("an integer from %d to %d", lo, hi)
	x, ok := f.number(path)
	if !ok || x != math.Trunc(x) || x < float64(lo) || x > float64(hi) {
		v, present := f.lookup(path)
		if !present {
			f.fail(path, "", want)
		} else {
			f.fail(path, shown(v), want)
		}
		return lo
	}
	return int(x)
}

func (f *fields) float(path string, lo, hi float64) float64 {
	want := fmt.Sprintf("a number from %g to %g", lo, hi)
	x, ok := f.number(path)
	if !ok || x < lo || x > hi {
		v, present := f.lookup(path)
		if !present {
			f.fail(path, "", want)
		} else {
			f.fail(path, shown(v), want)
		}
		return lo
	}
	return x
}

// list reads a list of mappings of lo to hi entries.
func (f *fields) list(path string, lo, hi int) []map[string]any {
	want := fmt.Sprintf("a list of %d to %d entries, each a mapping", lo, hi)
	v, ok := f.lookup(path)
	if !ok {
		f.fail(path, "", want)
		return nil
	}
	xs, ok := v.([]any)
	if !ok || len(xs) < lo || len(xs) > hi {
		f.fail(path, shown(v), want)
		return nil
	}
	out := make([]map[string]any, len(xs))
	for i, x := range xs {
		m, ok := x.(map[string]any)
		if !ok {
			f.fail(fmt.Sprintf("%s[%d]", path, i), shown(x), "a mapping")
			return nil
		}
		out[i] = m
	}
	return out
}

// shown is a value as an error message quotes it: at most 40 characters,
// a string quoted, control characters escaped.
func shown(v any) string {
	s := fmt.Sprint(v)
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	if _, isStr := v.(string); isStr {
		return strconv.QuoteToGraphic(s)
	}
	q := strconv.QuoteToGraphic(s)
	return q[1 : len(q)-1]
}
