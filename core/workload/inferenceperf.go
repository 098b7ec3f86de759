package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// This file is the workload kubernetes-sigs/inference-perf sends with its
// shared_prefix data generator and its "constant" load type, as the
// version the published vLLM benchmark runs used builds it (main between
// b81afa4 and 3b6f82a, October–November 2025: its resolved config has
// num_groups and num_prompts_per_group, no enable_multi_turn_chat and no
// trace settings; docs/SOURCES.md#inference-perf). The files cited:
//
//   - inference_perf/datagen/shared_prefix_datagen.py: num_groups system
//     prompts of system_prompt_len random token ids, each followed by
//     num_prompts_per_group questions of question_len random ids; each id
//     list is decoded to text (skip_special_tokens) and a prompt is the
//     system text, a space and the question text; the num_groups ×
//     num_prompts_per_group prompts are shuffled once, and request n of a
//     stage gets prompt n mod their number (get_request). Every request
//     asks for max_tokens = output_len, with ignore_eos from the server
//     config (apis/completion.py).
//   - inference_perf/loadgen/load_timer.py, ConstantLoadTimer: a stage of
//     rate r and duration d sends int(r·d) requests whose gaps are
//     exponential draws of mean 1/r rescaled to sum to d, so the last
//     request is sent d seconds after the stage's start.
//   - inference_perf/loadgen/load_generator.py, run_stage: the stage
//     starts one second after it is set up (start_time = now + 1), waits
//     until every request has finished, and the next stage follows after
//     load.interval seconds.
//   - client/modelserver/openai_client.py: every request opens its own
//     aiohttp session whose timeout is aiohttp's default when
//     request_timeout is null, ClientTimeout(total=300): a request not
//     done 300 s after it was sent fails, and the server, seeing the
//     connection close, aborts it.
//
// What the engine counts. The prompt text is tokenized again by the
// server (and by inference-perf's own prompt_len statistic, with the same
// tokenizer), which adds a BOS token and does not give back the ids drawn:
// decoded random ids re-encode to a few percent more tokens (byte-fallback
// ids and pieces that merge differently once concatenated). The model here:
// each drawn token becomes one token, or two with probability Growth − 1,
// independently, and the tokenizer adds BOS tokens in front. Growth is a
// property of the tokenizer, fitted on measured mean prompt lengths
// (docs/SOURCES.md#retokenisation); the binomial spread is the model's,
// not measured.

// InferencePerf is one inference-perf benchmark: its shared-prefix data
// and its stages.
type InferencePerf struct {
	// Data is results/config.yaml's data.shared_prefix.
	Data SharedPrefixData
	// Stages are load.stages, run one after the other.
	Stages []LoadStage
	// Interval is load.interval: seconds between a stage's end (its last
	// request finished) and the next stage's setup.
	Interval float64
	// Timeout is the client's total timeout per request in seconds
	// (aiohttp's 300 s when request_timeout is null).
	Timeout float64
	// Growth is the tokens the server counts per random token drawn,
	// from 1 to 2 (see the file comment); BOS the tokens its tokenizer
	// adds in front of a prompt.
	Growth float64
	BOS    int
	// Seed drives the random draws (inference-perf's own are unseeded).
	Seed uint64
}

// SharedPrefixData is inference-perf's shared_prefix configuration.
type SharedPrefixData struct {
	NumGroups, PromptsPerGroup   int
	SystemPromptLen, QuestionLen int
	OutputLen                    int
}

// LoadStage is one stage of the "constant" load type.
type LoadStage struct {
	Rate     float64 // requests per second
	Duration float64 // seconds
}

// Requests is the number of requests the stage sends: int(rate × duration).
func (s LoadStage) Requests() int { return int(math.Floor(s.Rate * s.Duration)) }

// StageLead is how long after its setup a stage sends its first request's
// schedule from: run_stage's start_time = perf_counter() + 1.
const StageLead = 1.0

// DefaultClientTimeout is aiohttp's default ClientTimeout total, in
// seconds (aiohttp client.py, DEFAULT_TIMEOUT), which inference-perf's
// requests run under when request_timeout is null.
const DefaultClientTimeout = 300.0

// Bounds on an InferencePerf that Validate enforces: wide enough for the
// published runs (100 prompts, 1,448-token outputs, 20 req/s for 20
// minutes), narrow enough that a replay stays within a native run's work.
const (
	MaxPerfPrompts  = 10_000
	MaxPerfTokens   = 131_072
	MaxPerfRate     = 10_000.0
	MaxPerfDuration = 86_400.0
	MaxPerfStages   = 64
)

// Validate checks the benchmark, naming the field that is wrong in
// inference-perf's own words.
func (w InferencePerf) Validate() error {
	d := w.Data
	switch {
	case d.NumGroups < 1 || d.NumGroups > MaxPerfPrompts:
		return fmt.Errorf("data.shared_prefix.num_groups = %d: want 1 to %d", d.NumGroups, MaxPerfPrompts)
	case d.PromptsPerGroup < 1 || d.NumGroups*d.PromptsPerGroup > MaxPerfPrompts:
		return fmt.Errorf("data.shared_prefix.num_prompts_per_group = %d: want at least 1, and at most %d prompts in all", d.PromptsPerGroup, MaxPerfPrompts)
	case d.SystemPromptLen < 0 || d.SystemPromptLen > MaxPerfTokens:
		return fmt.Errorf("data.shared_prefix.system_prompt_len = %d: want 0 to %d", d.SystemPromptLen, MaxPerfTokens)
	case d.QuestionLen < 0 || d.QuestionLen > MaxPerfTokens:
		return fmt.Errorf("data.shared_prefix.question_len = %d: want 0 to %d", d.QuestionLen, MaxPerfTokens)
	case d.SystemPromptLen+d.QuestionLen < 1:
		return fmt.Errorf("data.shared_prefix: system_prompt_len + question_len = 0: want a prompt of at least one token")
	case d.OutputLen < 1 || d.OutputLen > MaxPerfTokens:
		return fmt.Errorf("data.shared_prefix.output_len = %d: want 1 to %d", d.OutputLen, MaxPerfTokens)
	case len(w.Stages) < 1 || len(w.Stages) > MaxPerfStages:
		return fmt.Errorf("load.stages has %d stages: want 1 to %d", len(w.Stages), MaxPerfStages)
	case !(w.Interval >= 0 && w.Interval <= MaxPerfDuration):
		return fmt.Errorf("load.interval = %g: want 0 to %g seconds", w.Interval, MaxPerfDuration)
	case !(w.Timeout > 0 && w.Timeout <= MaxPerfDuration):
		return fmt.Errorf("load.request_timeout = %g: want above 0 and at most %g seconds", w.Timeout, MaxPerfDuration)
	case !(w.Growth >= 1 && w.Growth <= 2):
		return fmt.Errorf("re-tokenisation growth = %g: want 1 to 2 tokens per token drawn", w.Growth)
	case w.BOS < 0 || w.BOS > 8:
		return fmt.Errorf("BOS tokens = %d: want 0 to 8", w.BOS)
	}
	for i, s := range w.Stages {
		switch {
		case !(s.Rate > 0 && s.Rate <= MaxPerfRate):
			return fmt.Errorf("load.stages[%d].rate = %g: want above 0 and at most %g requests per second", i, s.Rate, MaxPerfRate)
		case !(s.Duration > 0 && s.Duration <= MaxPerfDuration):
			return fmt.Errorf("load.stages[%d].duration = %g: want above 0 and at most %g seconds", i, s.Duration, MaxPerfDuration)
		case s.Requests() < 1:
			return fmt.Errorf("load.stages[%d]: rate × duration = %g sends no request: want at least 1", i, s.Rate*s.Duration)
		}
	}
	return nil
}

// PerfPrompt is one of the benchmark's fixed prompts, as the server
// tokenizes it: BOS, the group's system prompt, the question.
type PerfPrompt struct {
	Group          int
	System, Tokens int // the system prompt's tokens (BOS included); the whole prompt's
	Segments       []Segment
}

// Sources of the inference-perf prompts' token ids (top byte 7 to 9,
// beside the kinds request.go names).
const (
	kindPerfBOS      = 7 // value 0
	kindPerfSystem   = 8 // value = group
	kindPerfQuestion = 9 // value = prompt index before the shuffle
)

// PCG stream of the inference-perf generator.
const streamInferencePerf = 0x696e66706572660a // "infperf\n"

// Prompts builds the benchmark's prompts in the order requests take them
// (after the shuffle): num_groups system prompts, each followed by its
// num_prompts_per_group questions, re-tokenized (see the file comment).
func (w InferencePerf) Prompts() []PerfPrompt {
	r := newRand(w.Seed, streamInferencePerf)
	d := w.Data
	out := make([]PerfPrompt, 0, d.NumGroups*d.PromptsPerGroup)
	bos := Segment{Source: source(kindPerfBOS, 0), Len: w.BOS}
	for g := range d.NumGroups {
		sys := Segment{Source: source(kindPerfSystem, uint64(g)), Len: w.retokenized(r, d.SystemPromptLen)}
		for range d.PromptsPerGroup {
			q := Segment{Source: source(kindPerfQuestion, uint64(len(out))), Len: w.retokenized(r, d.QuestionLen)}
			out = append(out, PerfPrompt{Group: g, System: w.BOS + sys.Len, Tokens: w.BOS + sys.Len + q.Len,
				Segments: []Segment{bos, sys, q}})
		}
	}
	// random.shuffle: Fisher–Yates from the end.
	for i := len(out) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// retokenized is the number of tokens n random ids become once decoded and
// encoded again: n, plus one for each with probability Growth − 1.
func (w InferencePerf) retokenized(r *rand.Rand, n int) int {
	p := w.Growth - 1
	extra := 0
	for range n {
		if r.Float64() < p {
			extra++
		}
	}
	return n + extra
}

// StageArrivals are the send times of stage k's requests in seconds from
// the stage's setup: StageLead plus the cumulative rescaled exponential
// gaps of ConstantLoadTimer. Each stage draws from its own stream, so a
// stage's arrivals do not depend on the others'.
func (w InferencePerf) StageArrivals(k int) []float64 {
	s := w.Stages[k]
	n := s.Requests()
	r := newRand(w.Seed+uint64(k)+1, streamPoisson)
	gaps := make([]float64, n)
	sum := 0.0
	for i := range gaps {
		gaps[i] = expDraw(r) / s.Rate
		sum += gaps[i]
	}
	scale := s.Duration / sum
	t := StageLead
	out := make([]float64, n)
	for i, g := range gaps {
		t += float64(g * scale)
		out[i] = t
	}
	return out
}

// StageRequests returns stage k's requests, their arrivals start seconds
// plus StageArrivals(k), numbered from firstID; request n of the stage
// takes prompts[n mod len(prompts)] and asks for exactly output_len tokens
// (ignore_eos). PrefixGroup is the prompt's system-prompt group and
// PrefixLen the tokens it shares with its group (BOS and system prompt).
func (w InferencePerf) StageRequests(k int, prompts []PerfPrompt, start float64, firstID int) []Request {
	at := w.StageArrivals(k)
	out := make([]Request, len(at))
	for n, a := range at {
		p := prompts[n%len(prompts)]
		out[n] = Request{ID: firstID + n, Arrival: start + a, Prompt: p.Tokens, Output: w.Data.OutputLen,
			PrefixGroup: p.Group, PrefixLen: p.System, Segments: p.Segments, Conversation: -1, Prev: -1}
	}
	return out
}

// Tokens is the prompt and output tokens the benchmark's requests carry,
// summed over every stage, with prompts counted at their drawn lengths
// (system prompt and question, before re-tokenisation): the size of a
// replay.
func (w InferencePerf) Tokens() int64 {
	per := int64(w.Data.SystemPromptLen + w.Data.QuestionLen + w.Data.OutputLen)
	var n int64
	for _, s := range w.Stages {
		n += int64(s.Requests()) * per
	}
	return n
}
