package workload

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The trace format is JSON Lines: one object per line, for example
//
//	{"arrival_s": 0.5, "prompt_tokens": 512, "output_tokens": 128, "prefix_group": 3, "prefix_tokens": 256}
//
// arrival_s (seconds from the start, ≥ 0), prompt_tokens (≥ 1) and
// output_tokens (≥ 1) are required; prefix_group (≥ 0) and prefix_tokens
// (0 to prompt_tokens) are optional but go together: the request shares its
// first prefix_tokens prompt tokens with every request of its group. The
// file is UTF-8, or UTF-16 with its byte-order mark (TraceText). Blank
// lines are ignored. Lines may come in any order: ParseTrace sorts them by
// arrival (stably: equal arrivals keep file order) and numbers the requests
// 0, 1, 2, … in that order. Field names are exact (case-sensitive) and
// appear at most once; any other field is an error.
//
// The format carries no Segments or conversation structure: a chat written
// with WriteTrace keeps its system-prompt groups but not the sharing between
// turns.
const (
	fieldArrival = "arrival_s"
	fieldPrompt  = "prompt_tokens"
	fieldOutput  = "output_tokens"
	fieldGroup   = "prefix_group"
	fieldPrefix  = "prefix_tokens"
)

var traceFields = []string{fieldArrival, fieldPrompt, fieldOutput, fieldGroup, fieldPrefix}

// MaxPrefixGroup is the largest prefix_group a trace may give.
const MaxPrefixGroup = math.MaxInt32

// Limits bounds what ParseTrace accepts. A field ≤ 0 (or NaN) means its
// default (DefaultLimits).
type Limits struct {
	// MaxBytes bounds the trace's size in bytes.
	MaxBytes int64
	// MaxRequests bounds the number of requests (non-blank lines).
	MaxRequests int
	// MaxTokens bounds each request's prompt_tokens + output_tokens, as a
	// context window does.
	MaxTokens int
	// MaxArrival bounds arrival_s, in seconds.
	MaxArrival float64
	// MaxTotalTokens bounds prompt_tokens + output_tokens summed over the
	// whole trace: a simulation's run time grows with it.
	MaxTotalTokens int
	// MaxSteps bounds the engine steps the trace can take in the worst case
	// (TraceSteps with StepTokens): what a simulation's run time and memory
	// follow. Tokens alone do not bound it: 20 requests of 1 + 131,071
	// tokens arriving 5,000 s apart are 2.6 million steps (32 s and
	// 1.38 GiB before steps were priced in closed form).
	MaxSteps int
	// StepTokens is the fewest prompt tokens a step that computes only
	// prompts computes (unless it finishes one): the smallest token budget
	// (max_num_batched_tokens) of the engines that run traces.
	StepTokens int
	// MaxWork, when above 0, bounds the trace's work: PromptWork ×
	// Σ prompt_tokens + OutputWork × Σ output_tokens, the estimate a
	// lesson bounds its simulation's cost with (the sandbox's: 2 × prompt +
	// 16 × output tokens, at most 7,000,000). 0 means no such bound: it is
	// the lesson's, not a default of the format.
	MaxWork                int64
	PromptWork, OutputWork int64
}

// DefaultLimits returns the limits for traces run natively: 4 MiB, 20,000
// requests, 131,072 tokens per request (Llama 3.1's context window),
// 100,000,000 tokens in all, arrivals within 1,000,000 s (11.6 days), and
// at most 500,000 engine steps with a 64-token budget (TraceSteps). A step
// costs the simulation about 2 µs of CPU and 0.5-0.6 KB of memory when few
// requests run together (the scheduler keeps a record of every step), so the
// worst accepted trace runs in about a second of CPU and 300 MB
// (BENCHMARKS.md, "Trace work bound").
func DefaultLimits() Limits {
	return Limits{MaxBytes: 4 << 20, MaxRequests: 20000, MaxTokens: 131072, MaxArrival: 1e6, MaxTotalTokens: 100_000_000,
		MaxSteps: 500_000, StepTokens: 64}
}

// TraceSteps is the most engine steps reqs can take on one engine, however
// they overlap and whatever its batch limits, when every step either
// produces an output token of some request or computes stepTokens prompt
// tokens or finishes a prompt (vLLM v1's scheduler with chunked prefill
// and a token budget of at least stepTokens): Σ output_tokens +
// ⌈Σ prompt_tokens / stepTokens⌉ + requests. Requests that run together
// share steps, so a real run takes fewer; recompute after a preemption
// (which only happens when requests run together) is not counted.
func TraceSteps(reqs []Request, stepTokens int) int64 {
	var out, prompt int64
	for _, r := range reqs {
		out += int64(r.Output)
		prompt += int64(r.Prompt)
	}
	return stepsBound(out, prompt, len(reqs), stepTokens)
}

func stepsBound(outputs, prompts int64, requests, stepTokens int) int64 {
	st := int64(max(stepTokens, 1))
	return outputs + (prompts+st-1)/st + int64(requests)
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxRequests <= 0 {
		l.MaxRequests = d.MaxRequests
	}
	if l.MaxTokens <= 0 {
		l.MaxTokens = d.MaxTokens
	}
	if l.MaxTotalTokens <= 0 {
		l.MaxTotalTokens = d.MaxTotalTokens
	}
	if !(l.MaxArrival > 0) {
		l.MaxArrival = d.MaxArrival
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.StepTokens <= 0 {
		l.StepTokens = d.StepTokens
	}
	return l
}

// TraceError is a problem with a trace. Error() is the whole message, for
// example "line 3: prompt_tokens = -5 is not allowed: want 1 to 131072".
type TraceError struct {
	Line  int    // 1-based line number; 0 for the trace as a whole
	Field string // the JSON field at fault, or "" when no one field is
	Msg   string // the whole message, line number included
}

func (e *TraceError) Error() string { return e.Msg }

func lineErr(line int, field, format string, args ...any) *TraceError {
	return &TraceError{Line: line, Field: field, Msg: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)}
}

// ParseTrace reads a JSONL trace (see the format above) within lim and
// returns its requests sorted by arrival with IDs 0 … n−1. Any problem is a
// *TraceError naming the line, the field, the value and the allowed range;
// a failure of r itself is returned wrapped. An empty trace is an error.
func ParseTrace(r io.Reader, lim Limits) ([]Request, error) {
	lim = lim.withDefaults()
	readMax := lim.MaxBytes
	if readMax < math.MaxInt64 {
		readMax++ // one byte more tells "exactly at the limit" from "over it"
	}
	data, err := io.ReadAll(io.LimitReader(r, readMax))
	if err != nil {
		return nil, fmt.Errorf("trace: reading: %w", err)
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, &TraceError{Msg: fmt.Sprintf("trace is larger than %d bytes: want at most %d bytes", lim.MaxBytes, lim.MaxBytes)}
	}
	text, err := TraceText(data)
	if err != nil {
		return nil, err
	}
	data = []byte(text)

	var reqs []Request
	total := 0
	var outputs, prompts int64
	for lineNo := 1; len(data) > 0; lineNo++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if len(reqs) == lim.MaxRequests {
			return nil, lineErr(lineNo, "", "more than %d requests: want at most %d", lim.MaxRequests, lim.MaxRequests)
		}
		req, err := parseLine(lineNo, line, lim)
		if err != nil {
			return nil, err
		}
		if total += req.Prompt + req.Output; total > lim.MaxTotalTokens {
			return nil, lineErr(lineNo, "", "the trace passes %d tokens (%s + %s over all lines): want at most %d in all",
				lim.MaxTotalTokens, fieldPrompt, fieldOutput, lim.MaxTotalTokens)
		}
		outputs += int64(req.Output)
		prompts += int64(req.Prompt)
		reqs = append(reqs, req)
		if steps := stepsBound(outputs, prompts, len(reqs), lim.StepTokens); steps > int64(lim.MaxSteps) {
			return nil, lineErr(lineNo, "", "the trace can take %d engine steps by here (%s summed, plus %s summed / %d, plus one per request): "+
				"want at most %d, what the simulation runs in about a second: fewer requests or shorter outputs",
				steps, fieldOutput, fieldPrompt, lim.StepTokens, lim.MaxSteps)
		}
		if lim.MaxWork > 0 {
			if work := lim.PromptWork*prompts + lim.OutputWork*outputs; work > lim.MaxWork {
				return nil, lineErr(lineNo, "", "the trace needs %d of work by here (%d × %s + %d × %s summed over its lines): "+
					"want at most %d, what the simulation runs in about a second: fewer requests or shorter outputs",
					work, lim.PromptWork, fieldPrompt, lim.OutputWork, fieldOutput, lim.MaxWork)
			}
		}
	}
	if len(reqs) == 0 {
		return nil, &TraceError{Msg: "trace has no requests: want at least one line like " +
			`{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 128}`}
	}
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for i := range reqs {
		reqs[i].ID = i
	}
	return reqs, nil
}

// TraceText is a trace file's text: its bytes as UTF-8, without the
// byte-order mark some editors add, or decoded from UTF-16 (little- or
// big-endian) when they open with UTF-16's byte-order mark, as Windows
// PowerShell's `>` writes them. ParseTrace reads a file through it, and so
// does the page with the bytes of a chosen file, so that both read the same
// requests whatever the browser makes of the file's encoding. Anything else
// is a *TraceError naming the line: a NUL byte (UTF-16 without its mark) or
// bytes that are not UTF-8.
func TraceText(data []byte) (string, error) {
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}):
		order = binary.LittleEndian
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		order = binary.BigEndian
	}
	if order != nil {
		data = data[2:]
		if len(data)%2 != 0 {
			return "", &TraceError{Msg: fmt.Sprintf("the file opens with UTF-16's byte-order mark but has an odd number of bytes (%d after it): want whole UTF-16 code units, or save it as UTF-8", len(data))}
		}
		units := make([]uint16, len(data)/2)
		for i := range units {
			units[i] = order.Uint16(data[2*i:])
		}
		data = []byte(string(utf16.Decode(units)))
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return "", lineErr(1+bytes.Count(data[:i], []byte("\n")), "", "a NUL byte: the file looks like UTF-16 without its byte-order mark; want UTF-8 text (or UTF-16 with its mark)")
	}
	if !utf8.Valid(data) {
		bad := 0
		for bad < len(data) {
			r, n := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			bad += n
		}
		return "", lineErr(1+bytes.Count(data[:bad], []byte("\n")), "", "byte 0x%02x is not UTF-8: want UTF-8 text (or UTF-16 with its byte-order mark)", data[bad])
	}
	return string(data), nil
}

// parseLine parses one non-blank line into a request (ID unset).
func parseLine(lineNo int, line []byte, lim Limits) (Request, error) {
	raw, err := lineFields(lineNo, line)
	if err != nil {
		return Request{}, err
	}
	req := Request{PrefixGroup: -1, Conversation: -1, Prev: -1}

	a, ok := raw[fieldArrival]
	if !ok {
		return req, lineErr(lineNo, fieldArrival, "%s is missing: want seconds from the start, 0 to %s", fieldArrival, decimal(lim.MaxArrival))
	}
	v, good := number(a)
	if !good || math.IsInf(v, 0) || v < 0 || v > lim.MaxArrival {
		return req, lineErr(lineNo, fieldArrival, "%s = %s is not allowed: want 0 to %s", fieldArrival, show(a), decimal(lim.MaxArrival))
	}
	req.Arrival = v + 0 // −0 becomes 0

	if req.Prompt, err = intField(lineNo, raw, fieldPrompt, 1, lim.MaxTokens, ""); err != nil {
		return req, err
	}
	if req.Output, err = intField(lineNo, raw, fieldOutput, 1, lim.MaxTokens, ""); err != nil {
		return req, err
	}
	if sum := req.Prompt + req.Output; sum > lim.MaxTokens {
		return req, lineErr(lineNo, fieldOutput, "%s + %s = %d is not allowed: want at most %d",
			fieldPrompt, fieldOutput, sum, lim.MaxTokens)
	}

	_, hasGroup := raw[fieldGroup]
	_, hasPrefix := raw[fieldPrefix]
	switch {
	case hasGroup && !hasPrefix:
		return req, lineErr(lineNo, fieldPrefix, "%s is missing: %s needs it; want 0 to %d (%s)",
			fieldPrefix, fieldGroup, req.Prompt, fieldPrompt)
	case hasPrefix && !hasGroup:
		return req, lineErr(lineNo, fieldGroup, "%s is missing: %s needs it; want 0 to %d",
			fieldGroup, fieldPrefix, MaxPrefixGroup)
	case hasGroup:
		if req.PrefixGroup, err = intField(lineNo, raw, fieldGroup, 0, MaxPrefixGroup, ""); err != nil {
			return req, err
		}
		if req.PrefixLen, err = intField(lineNo, raw, fieldPrefix, 0, req.Prompt, " ("+fieldPrompt+")"); err != nil {
			return req, err
		}
	}
	return req, nil
}

// lineFields splits a line holding one JSON object into its fields' raw
// values, rejecting anything else: other JSON values, trailing text,
// unknown or repeated fields.
func lineFields(lineNo int, line []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	bad := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return lineErr(lineNo, "", "not valid JSON: the line ends inside the object")
		}
		return lineErr(lineNo, "", "not valid JSON: %v", err)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, bad(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, lineErr(lineNo, "", "want a JSON object {...} on each line, got %s", showToken(tok))
	}
	raw := make(map[string]json.RawMessage, len(traceFields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		key, _ := tok.(string) // inside an object, Token returns keys as strings
		if !slices.Contains(traceFields, key) {
			return nil, lineErr(lineNo, clip(key), "unknown field %s: want %s", quote(key), strings.Join(traceFields, ", "))
		}
		if _, dup := raw[key]; dup {
			return nil, lineErr(lineNo, key, "field %s appears twice: want it at most once", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad(err)
		}
		raw[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, bad(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, lineErr(lineNo, "", "unexpected text after the JSON object: want one object per line")
	}
	return raw, nil
}

// intField reads a required integer field in [lo, hi]; hiNote explains hi.
func intField(lineNo int, raw map[string]json.RawMessage, field string, lo, hi int, hiNote string) (int, error) {
	v, ok := raw[field]
	if !ok {
		return 0, lineErr(lineNo, field, "%s is missing: want %d to %d%s", field, lo, hi, hiNote)
	}
	f, good := number(v)
	if !good || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, lineErr(lineNo, field, "%s = %s is not allowed: want %d to %d%s", field, show(v), lo, hi, hiNote)
	}
	return int(f), nil
}

// number parses a raw JSON value that is a number (never a string, bool or
// null). Overflow gives ±Inf, which callers reject as out of range.
func number(v json.RawMessage) (float64, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, !math.IsNaN(f)
}

// decimal formats x without an exponent: 1000000, not 1e+06.
func decimal(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// show renders a raw value for a message: valid UTF-8, at most 40 runes.
func show(v json.RawMessage) string {
	return clip(string(v))
}

func quote(s string) string { return clip(strconv.Quote(s)) }

func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:39]) + "…"
}

func showToken(tok any) string {
	switch t := tok.(type) {
	case json.Delim:
		return string(t)
	case string:
		return quote(t)
	case nil:
		return "null"
	default:
		return clip(fmt.Sprint(t))
	}
}

// WriteTrace writes reqs as a JSONL trace, one line per request in the
// given order, that ParseTrace reads back: arrival_s in the shortest form
// that parses to the same float64, and the prefix fields only for requests
// with a PrefixGroup ≥ 0. Segments and conversation structure are not
// written. A request that no trace could hold (negative or non-finite
// arrival, fewer than 1 prompt or output token, a group above
// MaxPrefixGroup, PrefixLen outside 0 to Prompt) is an error naming it;
// lines before it have been written.
func WriteTrace(w io.Writer, reqs []Request) error {
	bw := bufio.NewWriter(w)
	var line []byte
	for i, r := range reqs {
		if err := writable(r); err != nil {
			bw.Flush()
			return fmt.Errorf("trace: request %d (ID %d): %v", i, r.ID, err)
		}
		line = append(line[:0], `{"`+fieldArrival+`": `...)
		line = strconv.AppendFloat(line, r.Arrival, 'g', -1, 64)
		line = append(line, `, "`+fieldPrompt+`": `...)
		line = strconv.AppendInt(line, int64(r.Prompt), 10)
		line = append(line, `, "`+fieldOutput+`": `...)
		line = strconv.AppendInt(line, int64(r.Output), 10)
		if r.PrefixGroup >= 0 {
			line = append(line, `, "`+fieldGroup+`": `...)
			line = strconv.AppendInt(line, int64(r.PrefixGroup), 10)
			line = append(line, `, "`+fieldPrefix+`": `...)
			line = strconv.AppendInt(line, int64(r.PrefixLen), 10)
		}
		line = append(line, "}\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writable(r Request) error {
	switch {
	case math.IsNaN(r.Arrival) || math.IsInf(r.Arrival, 0) || r.Arrival < 0:
		return fmt.Errorf("%s = %g is not allowed: want a finite number ≥ 0", fieldArrival, r.Arrival)
	case r.Prompt < 1:
		return fmt.Errorf("%s = %d is not allowed: want at least 1", fieldPrompt, r.Prompt)
	case r.Output < 1:
		return fmt.Errorf("%s = %d is not allowed: want at least 1", fieldOutput, r.Output)
	case r.PrefixGroup > MaxPrefixGroup:
		return fmt.Errorf("%s = %d is not allowed: want −1 (none) to %d", fieldGroup, r.PrefixGroup, MaxPrefixGroup)
	case r.PrefixGroup >= 0 && (r.PrefixLen < 0 || r.PrefixLen > r.Prompt):
		return fmt.Errorf("%s = %d is not allowed: want 0 to %d (%s)", fieldPrefix, r.PrefixLen, r.Prompt, fieldPrompt)
	}
	return nil
}
