package lessons

import (
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
)

// Multi-turn chats reuse their own history: a cache-aware router finds much
// of each prompt cached; with nothing shared, nothing is.
func TestSandboxCacheHits(t *testing.T) {
	hit := func(set map[string]string) float64 {
		s, _, err := sandbox.Run(set)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := s.Metric("hit_rate_pct")
		return v
	}
	chats := hit(map[string]string{"workload": "chats", "policy": "kv_aware"})
	rr := hit(map[string]string{"workload": "chats", "policy": "round_robin"})
	plain := hit(map[string]string{"workload": "plain"})
	if chats <= rr || plain != 0 {
		t.Errorf("hit rates: chats kv-aware %v%%, chats round robin %v%%, plain %v%%", chats, rr, plain)
	}
}

// A trace is the generated workload's stand-in: the same requests through
// RunTrace give the same figures as the knobs that generated them.
func TestSandboxTraceMatchesGenerated(t *testing.T) {
	set := map[string]string{"workload": "shared", "requests": "60", "rate": "20", "seed": "3"}
	gen, v, err := sandbox.Run(set)
	if err != nil {
		t.Fatal(err)
	}
	tr, _, err := sandbox.RunTrace(set, sandboxWorkload(v), "same.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(gen.Metrics) == 0 || len(gen.Metrics) != len(tr.Metrics) {
		t.Fatalf("metrics: %d generated, %d from the trace", len(gen.Metrics), len(tr.Metrics))
	}
	for i, m := range gen.Metrics {
		if tr.Metrics[i] != m {
			t.Errorf("metric %s: generated %v, trace %v", m.Key, m.Value, tr.Metrics[i].Value)
		}
	}
	if n := tr.Steps[0].Narration; !strings.Contains(n, "same.jsonl") {
		t.Errorf("the trace run does not name its trace: %q", n)
	}
}

func TestRunTraceErrors(t *testing.T) {
	reqs := workload.Poisson(3, 1, workload.Uniform{Min: 64, Max: 64}, workload.Uniform{Min: 4, Max: 4}, 1)
	for _, c := range []struct {
		name string
		l    *Lesson
		raw  map[string]string
		reqs []workload.Request
		want string
	}{
		{"a lesson without traces", garage, nil, reqs, "takes no trace"},
		{"an empty trace", sandbox, nil, nil, "has no requests"},
		{"a bad knob", sandbox, map[string]string{"workers": "99"}, reqs, "workers"},
	} {
		if _, _, err := c.l.RunTrace(c.raw, c.reqs, "t.jsonl"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if lim := sandbox.TraceLimits(); lim.MaxRequests != 2000 || lim.MaxTokens != 16384 || lim.MaxTotalTokens != 2_000_000 {
		t.Errorf("sandbox trace limits = %+v, want the requests knob's maximum 2,000, 16,384 tokens each and 2,000,000 in all", lim)
	}
}
