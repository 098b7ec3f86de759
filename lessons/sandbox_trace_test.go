package lessons

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/workload"
)

// A trace within the token, request and step bounds is still held to the
// lesson's work bound (Lesson.TraceWork), and ParseTrace refuses it there
// with the line, the sum and the bound, in the page as in the CLI: 2,000
// requests of 890 + 110 tokens are 2,000,000 tokens (the page's bound) but
// 7,080,000 of work, over the sandbox's 7,000,000.
func TestTraceLimitsBoundWork(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, `{"arrival_s": %d, "prompt_tokens": 890, "output_tokens": 110}`+"\n", i)
	}
	lim := sandbox.TraceLimits()
	_, err := workload.ParseTrace(strings.NewReader(b.String()), lim)
	var te *workload.TraceError
	if !errors.As(err, &te) || te.Line != 1978 || !strings.Contains(err.Error(), "7002120 of work") || !strings.Contains(err.Error(), "2 × prompt_tokens + 16 × output_tokens") ||
		!strings.Contains(err.Error(), "at most 7000000") {
		t.Errorf("2,000 × (890 + 110): %v; want line 1978 refused over 7,000,000 of work", err)
	}
	if p, o, max := sandbox.TraceWork(); p != 2 || o != 16 || max != servingCheckWork || lim.MaxWork != max {
		t.Errorf("sandbox's trace work: %d × prompt + %d × output ≤ %d, limits %+v", p, o, max, lim)
	}
	// 1,977 lines are accepted, and the sandbox serves them.
	text := b.String()
	text = text[:strings.Index(text, `{"arrival_s": 1977,`)]
	if _, err := workload.ParseTrace(strings.NewReader(text), lim); err != nil {
		t.Errorf("1,977 × (890 + 110): %v", err)
	}
}
