package lessons_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
)

// The page's trace limits bound the engine steps a trace can take (as a
// count: workload.TraceSteps), with the smallest token budget the lesson's
// knob allows; the trace that once took the page 19 s natively (122
// requests of 1 + 16,383 tokens, staggered) is refused.
func TestTraceLimitsBoundSteps(t *testing.T) {
	for _, l := range lessons.All() {
		if !l.TakesTrace() {
			continue
		}
		lim := l.TraceLimits()
		if lim.MaxSteps != lessons.TraceMaxSteps || lim.MaxSteps > workload.DefaultLimits().MaxSteps {
			t.Errorf("%s: MaxSteps %d, want %d", l.Slug, lim.MaxSteps, lessons.TraceMaxSteps)
		}
		if p, ok := l.Param("max_num_batched_tokens"); ok && float64(lim.StepTokens) != p.Min {
			t.Errorf("%s: steps counted with a %d-token budget; its knob allows %v", l.Slug, lim.StepTokens, p.Min)
		}
		if lim.StepTokens > workload.DefaultLimits().StepTokens {
			t.Errorf("%s: the CLI's default StepTokens %d undercounts the steps of budget %d", l.Slug, workload.DefaultLimits().StepTokens, lim.StepTokens)
		}
		var b strings.Builder
		for i := 0; i < 122; i++ {
			fmt.Fprintf(&b, `{"arrival_s": %d, "prompt_tokens": 1, "output_tokens": 16383}`+"\n", i*100)
		}
		if _, err := workload.ParseTrace(strings.NewReader(b.String()), lim); err == nil || !strings.Contains(err.Error(), "engine steps") {
			t.Errorf("%s: 122 staggered requests of 16,384 tokens: %v", l.Slug, err)
		}
	}
}
