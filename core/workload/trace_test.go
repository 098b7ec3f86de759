package workload

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTraceGood(t *testing.T) {
	in := "\ufeff" + `{"arrival_s": 1.5, "prompt_tokens": 512, "output_tokens": 128}

{"arrival_s": 0.5, "prompt_tokens": 100, "output_tokens": 1, "prefix_group": 3, "prefix_tokens": 64}` + "\r\n" +
		`  {"output_tokens": 7, "prompt_tokens": 9, "arrival_s": 1.5}  ` + "\n" +
		`{"arrival_s": 0, "prompt_tokens": 5.12e2, "output_tokens": 2.0, "prefix_group": 0, "prefix_tokens": 0}` + "\n" +
		"   \n\t\n"
	got, err := ParseTrace(strings.NewReader(in), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	none := func(id int, a float64, p, o int) Request {
		return Request{ID: id, Arrival: a, Prompt: p, Output: o, PrefixGroup: -1, Conversation: -1, Prev: -1}
	}
	want := []Request{
		{ID: 0, Arrival: 0, Prompt: 512, Output: 2, PrefixGroup: 0, PrefixLen: 0, Conversation: -1, Prev: -1},
		{ID: 1, Arrival: 0.5, Prompt: 100, Output: 1, PrefixGroup: 3, PrefixLen: 64, Conversation: -1, Prev: -1},
		none(2, 1.5, 512, 128), // equal arrivals keep file order
		none(3, 1.5, 9, 7),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseTraceErrors(t *testing.T) {
	const ok = `{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1}` + "\n"
	tests := []struct {
		name  string
		in    string
		line  int
		field string
		msg   string
	}{
		{"negative prompt", ok + ok + `{"arrival_s": 0, "prompt_tokens": -5, "output_tokens": 1}`,
			3, "prompt_tokens", "line 3: prompt_tokens = -5 is not allowed: want 1 to 131072"},
		{"zero output", `{"arrival_s": 0, "prompt_tokens": 5, "output_tokens": 0}`,
			1, "output_tokens", "line 1: output_tokens = 0 is not allowed: want 1 to 131072"},
		{"fractional prompt", `{"arrival_s": 0, "prompt_tokens": 1.5, "output_tokens": 1}`,
			1, "prompt_tokens", "line 1: prompt_tokens = 1.5 is not allowed: want 1 to 131072"},
		{"huge prompt", `{"arrival_s": 0, "prompt_tokens": 1e400, "output_tokens": 1}`,
			1, "prompt_tokens", "line 1: prompt_tokens = 1e400 is not allowed: want 1 to 131072"},
		{"string prompt", `{"arrival_s": 0, "prompt_tokens": "12", "output_tokens": 1}`,
			1, "prompt_tokens", `line 1: prompt_tokens = "12" is not allowed: want 1 to 131072`},
		{"null output", `{"arrival_s": 0, "prompt_tokens": 12, "output_tokens": null}`,
			1, "output_tokens", `line 1: output_tokens = null is not allowed: want 1 to 131072`},
		{"too many tokens", `{"arrival_s": 0, "prompt_tokens": 131072, "output_tokens": 1}`,
			1, "output_tokens", "line 1: prompt_tokens + output_tokens = 131073 is not allowed: want at most 131072"},
		{"missing prompt", ok + `{"arrival_s": 0, "output_tokens": 1}`,
			2, "prompt_tokens", "line 2: prompt_tokens is missing: want 1 to 131072"},
		{"missing output", `{"arrival_s": 0, "prompt_tokens": 1}`,
			1, "output_tokens", "line 1: output_tokens is missing: want 1 to 131072"},
		{"missing arrival", `{"prompt_tokens": 1, "output_tokens": 1}`,
			1, "arrival_s", "line 1: arrival_s is missing: want seconds from the start, 0 to 1000000"},
		{"negative arrival", ok + "\n" + `{"arrival_s": -0.25, "prompt_tokens": 1, "output_tokens": 1}`,
			3, "arrival_s", "line 3: arrival_s = -0.25 is not allowed: want 0 to 1000000"},
		{"NaN arrival", `{"arrival_s": NaN, "prompt_tokens": 1, "output_tokens": 1}`,
			1, "", "line 1: not valid JSON: invalid character 'N' looking for beginning of value"},
		{"string NaN arrival", `{"arrival_s": "NaN", "prompt_tokens": 1, "output_tokens": 1}`,
			1, "arrival_s", `line 1: arrival_s = "NaN" is not allowed: want 0 to 1000000`},
		{"infinite arrival", `{"arrival_s": 1e999, "prompt_tokens": 1, "output_tokens": 1}`,
			1, "arrival_s", "line 1: arrival_s = 1e999 is not allowed: want 0 to 1000000"},
		{"late arrival", `{"arrival_s": 1000001, "prompt_tokens": 1, "output_tokens": 1}`,
			1, "arrival_s", "line 1: arrival_s = 1000001 is not allowed: want 0 to 1000000"},
		{"prefix longer than prompt", `{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 1, "prefix_group": 1, "prefix_tokens": 600}`,
			1, "prefix_tokens", "line 1: prefix_tokens = 600 is not allowed: want 0 to 512 (prompt_tokens)"},
		{"negative prefix", `{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 1, "prefix_group": 1, "prefix_tokens": -1}`,
			1, "prefix_tokens", "line 1: prefix_tokens = -1 is not allowed: want 0 to 512 (prompt_tokens)"},
		{"negative group", `{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 1, "prefix_group": -1, "prefix_tokens": 1}`,
			1, "prefix_group", "line 1: prefix_group = -1 is not allowed: want 0 to 2147483647"},
		{"group without prefix", `{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 1, "prefix_group": 1}`,
			1, "prefix_tokens", "line 1: prefix_tokens is missing: prefix_group needs it; want 0 to 512 (prompt_tokens)"},
		{"prefix without group", `{"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 1, "prefix_tokens": 1}`,
			1, "prefix_group", "line 1: prefix_group is missing: prefix_tokens needs it; want 0 to 2147483647"},
		{"unknown field", `{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1, "model": "x"}`,
			1, "model", `line 1: unknown field "model": want arrival_s, prompt_tokens, output_tokens, prefix_group, prefix_tokens`},
		{"field names are case-sensitive", `{"Arrival_S": 0, "prompt_tokens": 1, "output_tokens": 1}`,
			1, "Arrival_S", `line 1: unknown field "Arrival_S": want arrival_s, prompt_tokens, output_tokens, prefix_group, prefix_tokens`},
		{"repeated field", `{"arrival_s": 0, "prompt_tokens": 1, "prompt_tokens": 2, "output_tokens": 1}`,
			1, "prompt_tokens", "line 1: field prompt_tokens appears twice: want it at most once"},
		{"not an object", ok + `[1, 2, 3]`,
			2, "", "line 2: want a JSON object {...} on each line, got ["},
		{"two objects", ok + ok[:len(ok)-1] + ok,
			2, "", "line 2: unexpected text after the JSON object: want one object per line"},
		{"cut short", `{"arrival_s": 0, "prompt_tokens": 1`,
			1, "", "line 1: not valid JSON: the line ends inside the object"},
		{"empty", "\n  \n", 0, "",
			`trace has no requests: want at least one line like {"arrival_s": 0, "prompt_tokens": 512, "output_tokens": 128}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTrace(strings.NewReader(tt.in), DefaultLimits())
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want a *TraceError", err)
			}
			if te.Error() != tt.msg {
				t.Errorf("message\n got %q\nwant %q", te.Error(), tt.msg)
			}
			if te.Line != tt.line || te.Field != tt.field {
				t.Errorf("line %d field %q, want line %d field %q", te.Line, te.Field, tt.line, tt.field)
			}
		})
	}
}

func TestParseTraceLimits(t *testing.T) {
	line := `{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1}` + "\n" // 57 bytes
	tests := []struct {
		name string
		in   string
		lim  Limits
		msg  string // "" = accepted
	}{
		{"bytes at the limit", strings.Repeat(line, 3), Limits{MaxBytes: int64(3 * len(line))}, ""},
		{"bytes over the limit", strings.Repeat(line, 3), Limits{MaxBytes: int64(3*len(line) - 1)},
			"trace is larger than 170 bytes: want at most 170 bytes"},
		{"requests at the limit", strings.Repeat(line, 4) + "\n\n", Limits{MaxRequests: 4}, ""},
		{"requests over the limit", strings.Repeat(line, 2) + "\n" + strings.Repeat(line, 3), Limits{MaxRequests: 4},
			"line 6: more than 4 requests: want at most 4"},
		{"tokens at the limit", `{"arrival_s": 0, "prompt_tokens": 90, "output_tokens": 10}`, Limits{MaxTokens: 100}, ""},
		{"tokens over the limit", `{"arrival_s": 0, "prompt_tokens": 101, "output_tokens": 10}`, Limits{MaxTokens: 100},
			"line 1: prompt_tokens = 101 is not allowed: want 1 to 100"},
		{"total tokens at the limit", strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 90, "output_tokens": 10}`+"\n", 3), Limits{MaxTotalTokens: 300}, ""},
		{"total tokens over the limit", strings.Repeat(`{"arrival_s": 0, "prompt_tokens": 90, "output_tokens": 10}`+"\n", 3), Limits{MaxTotalTokens: 299},
			"line 3: the trace passes 299 tokens (prompt_tokens + output_tokens over all lines): want at most 299 in all"},
		{"arrival at the limit", `{"arrival_s": 60, "prompt_tokens": 1, "output_tokens": 1}`, Limits{MaxArrival: 60}, ""},
		{"arrival over the limit", `{"arrival_s": 60.5, "prompt_tokens": 1, "output_tokens": 1}`, Limits{MaxArrival: 60},
			"line 1: arrival_s = 60.5 is not allowed: want 0 to 60"},
		{"default count", strings.Repeat(line, 20001), Limits{},
			"line 20001: more than 20000 requests: want at most 20000"},
		{"default bytes", strings.Repeat(" ", 4<<20) + line, Limits{},
			"trace is larger than 4194304 bytes: want at most 4194304 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTrace(strings.NewReader(tt.in), tt.lim)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.msg {
				t.Errorf("got %q, want %q", got, tt.msg)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestParseTraceReadError(t *testing.T) {
	_, err := ParseTrace(failingReader{}, DefaultLimits())
	var te *TraceError
	if err == nil || errors.As(err, &te) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v, want the reader's error wrapped", err)
	}
}

func TestTraceRoundTrip(t *testing.T) {
	workloads := map[string][]Request{
		"poisson":       Poisson(300, 7, ChatPrompts(), ChatOutputs(), 1),
		"shared prefix": SharedPrefix(Poisson(300, 7, Uniform{1, 4000}, Fixed{100}, 2), 6, 1000, 3),
		"all at once":   Poisson(50, 0, Fixed{512}, Fixed{1}, 4),
		"odd arrivals": {
			{ID: 0, Arrival: 5e-324, Prompt: 1, Output: 1, PrefixGroup: -1, Conversation: -1, Prev: -1},
			{ID: 1, Arrival: 0.1 + 0.2, Prompt: 2, Output: 3, PrefixGroup: MaxPrefixGroup, PrefixLen: 2, Conversation: -1, Prev: -1},
			{ID: 2, Arrival: 999999.9999999999, Prompt: 2, Output: 3, PrefixGroup: -1, Conversation: -1, Prev: -1},
		},
	}
	for name, reqs := range workloads {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteTrace(&buf, reqs); err != nil {
				t.Fatal(err)
			}
			got, err := ParseTrace(&buf, DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, reqs) {
				t.Errorf("round trip changed the requests")
			}
		})
	}
}

func TestWriteTraceFormat(t *testing.T) {
	var buf bytes.Buffer
	err := WriteTrace(&buf, []Request{
		{Arrival: 0.5, Prompt: 512, Output: 128, PrefixGroup: 3, PrefixLen: 256},
		{Arrival: 1e6, Prompt: 1, Output: 2, PrefixGroup: -1, PrefixLen: 9},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"arrival_s": 0.5, "prompt_tokens": 512, "output_tokens": 128, "prefix_group": 3, "prefix_tokens": 256}
{"arrival_s": 1e+06, "prompt_tokens": 1, "output_tokens": 2}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}

	bad := []struct {
		r    Request
		want string
	}{
		{Request{Arrival: -1, Prompt: 1, Output: 1}, "trace: request 1 (ID 0): arrival_s = -1 is not allowed: want a finite number ≥ 0"},
		{Request{Prompt: 0, Output: 1}, "trace: request 1 (ID 0): prompt_tokens = 0 is not allowed: want at least 1"},
		{Request{Prompt: 1, Output: 0}, "trace: request 1 (ID 0): output_tokens = 0 is not allowed: want at least 1"},
		{Request{Prompt: 4, Output: 1, PrefixGroup: 1, PrefixLen: 5}, "trace: request 1 (ID 0): prefix_tokens = 5 is not allowed: want 0 to 4 (prompt_tokens)"},
	}
	for _, b := range bad {
		buf.Reset()
		err := WriteTrace(&buf, []Request{{Prompt: 1, Output: 1, PrefixGroup: -1}, b.r})
		if err == nil || err.Error() != b.want {
			t.Errorf("err = %v, want %q", err, b.want)
		}
		if !strings.HasPrefix(buf.String(), `{"arrival_s": 0,`) {
			t.Errorf("the good line before the bad one was not written: %q", buf.String())
		}
	}
}
