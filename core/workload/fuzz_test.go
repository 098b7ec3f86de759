package workload

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// FuzzParseTrace checks that ParseTrace never panics, and that whatever it
// accepts satisfies the limits and survives a WriteTrace round trip.
func FuzzParseTrace(f *testing.F) {
	seeds := []string{
		`{"arrival_s": 0.5, "prompt_tokens": 512, "output_tokens": 128, "prefix_group": 3, "prefix_tokens": 256}`,
		"{\"arrival_s\": 1, \"prompt_tokens\": 2, \"output_tokens\": 3}\n\n{\"arrival_s\": 0, \"prompt_tokens\": 4, \"output_tokens\": 5}\r\n",
		`{"arrival_s": -0, "prompt_tokens": 4e3, "output_tokens": 1.0}`,
		`{"arrival_s": 1e999, "prompt_tokens": 1, "output_tokens": 1}`,
		`{"arrival_s": 0, "prompt_tokens": "1", "output_tokens": null, "x": []}`,
		`{"arrival_s": 0, "prompt_tokens": 1, "prompt_tokens": 1}`,
		`{"arrival_s": 0, "prompt_tokens": 10, "output_tokens": 1, "prefix_group": 2147483648, "prefix_tokens": 11}`,
		`[{}] {} "x" 12 {`,
		"\ufeff{\"arrival_s\":0,\"prompt_tokens\":1,\"output_tokens\":1}{}",
		"",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// Small limits, so that the fuzzer reaches each of them. MaxBytes is
	// small also because the fuzzer's minimiser is quadratic in input
	// size: an "over the byte limit" input of 4 KiB keeps a worker busy
	// minimising for the whole default minute.
	lim := Limits{MaxBytes: 512, MaxRequests: 4, MaxTokens: 4096, MaxArrival: 3600, MaxTotalTokens: 8192}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := ParseTrace(bytes.NewReader(data), lim)
		if err != nil {
			if _, ok := err.(*TraceError); !ok {
				t.Fatalf("error %v is not a *TraceError", err)
			}
			if reqs != nil {
				t.Fatal("requests returned with an error")
			}
			return
		}
		if int64(len(data)) > lim.MaxBytes {
			t.Fatalf("accepted %d bytes, limit %d", len(data), lim.MaxBytes)
		}
		if len(reqs) < 1 || len(reqs) > lim.MaxRequests {
			t.Fatalf("accepted %d requests, limit %d", len(reqs), lim.MaxRequests)
		}
		total := 0
		for _, r := range reqs {
			total += r.Prompt + r.Output
		}
		if total > lim.MaxTotalTokens {
			t.Fatalf("accepted %d tokens in all, limit %d", total, lim.MaxTotalTokens)
		}
		for i, r := range reqs {
			ok := r.ID == i &&
				!math.IsNaN(r.Arrival) && r.Arrival >= 0 && r.Arrival <= lim.MaxArrival &&
				!math.Signbit(r.Arrival) &&
				(i == 0 || r.Arrival >= reqs[i-1].Arrival) &&
				r.Prompt >= 1 && r.Output >= 1 && r.Prompt+r.Output <= lim.MaxTokens &&
				(r.PrefixGroup == -1 && r.PrefixLen == 0 ||
					r.PrefixGroup >= 0 && r.PrefixGroup <= MaxPrefixGroup && r.PrefixLen >= 0 && r.PrefixLen <= r.Prompt) &&
				r.Segments == nil && r.Conversation == -1 && r.Prev == -1
			if !ok {
				t.Fatalf("accepted request %d breaks the limits: %+v", i, r)
			}
			if len(r.TokenIDs()) != r.Prompt {
				t.Fatalf("request %d: %d token ids for %d prompt tokens", i, len(r.TokenIDs()), r.Prompt)
			}
		}
		var buf bytes.Buffer
		if err := WriteTrace(&buf, reqs); err != nil {
			t.Fatalf("WriteTrace: %v", err)
		}
		again, err := ParseTrace(&buf, Limits{MaxRequests: lim.MaxRequests, MaxTokens: lim.MaxTokens, MaxArrival: lim.MaxArrival, MaxTotalTokens: lim.MaxTotalTokens})
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, buf.String())
		}
		if !reflect.DeepEqual(again, reqs) {
			t.Fatalf("round trip changed the requests")
		}
	})
}
