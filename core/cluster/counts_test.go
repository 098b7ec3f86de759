package cluster

import (
	"testing"

	"github.com/inferlab/inferlab/core/router"
	"github.com/inferlab/inferlab/core/scheduler"
)

// Without preemption a run computes every prompt token not found cached
// once and one decode token per output token after the first; the router
// scores every worker once per request.
func TestCountsTallyTheRun(t *testing.T) {
	reqs := groupRequests(40, 3, 256, 48, 0.02, 5)
	res, err := Run(cfg(4, router.NewKVAware(nil, router.DefaultKvRouterConfig(), 1)), reqs)
	if err != nil {
		t.Fatal(err)
	}
	var prompt, prefill, decode, preempted int64
	for _, m := range res.Requests {
		prompt += int64(m.Prompt)
		prefill += int64(m.Prompt - m.CachedHit)
		decode += int64(m.Output - 1)
		preempted += int64(m.Preemptions)
	}
	c := res.Counts
	if preempted != 0 || c.PromptTokens != prompt || c.PrefillTokens != prefill || c.DecodeTokens != decode || c.Scored != 40*4 || c.Steps == 0 {
		t.Fatalf("counts %+v; requests: %d prompt tokens computed, %d decodes, %d preemptions", c, prefill, decode, preempted)
	}
	if want := prompt + prefill + DecodeWeight*decode + 160; c.Work() != want {
		t.Fatalf("work %d, want %d", c.Work(), want)
	}
}

// A disaggregated run counts both pools' steps.
func TestDisaggCountsBothPools(t *testing.T) {
	reqs := groupRequests(20, 2, 256, 100, 0.05, 2)
	res, err := RunDisagg(DisaggConfig{Prefill: 1, Decode: 2, Scheduler: cfg(1, nil).Scheduler, Link: MustLink("ib-ndr"), KVBytesPerToken: 1000,
		Timer: func(bool, int) scheduler.Timer { return flat }}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{PromptTokens: int64(len(reqs) * (256 + 100))}
	for _, pool := range [][][]scheduler.Step{res.PrefillSteps, res.DecodeSteps} {
		for _, steps := range pool {
			for _, st := range steps {
				want.add(st)
			}
		}
	}
	if res.Counts != want || want.Steps == 0 || want.Scored != 0 {
		t.Fatalf("counts %+v, steps sum to %+v", res.Counts, want)
	}
	if sum := want.Plus(want); sum.Work() != 2*want.Work() {
		t.Fatalf("Plus: %+v", sum)
	}
}
