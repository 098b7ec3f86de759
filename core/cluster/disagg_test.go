package cluster

import (
	"math"
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
)

// testLink moves 1 GB/s after a 1 ms start-up.
var testLink = Link{ID: "test", Alpha: 1e-3, Bandwidth: 1e9, Eff: 1}

func disaggCfg(p, d int) DisaggConfig {
	return DisaggConfig{Prefill: p, Decode: d, Link: testLink, KVBytesPerToken: 1000,
		Timer:     func(bool, int) scheduler.Timer { return flat },
		Scheduler: scheduler.Config{MaxNumBatchedTokens: 8192, MaxNumSeqs: 64, ChunkedPrefill: true, BlockSize: 16, NumBlocks: 4000}}
}

func uniqueReq(id int, arrival float64, prompt, output int) Request {
	ids := make([]int, prompt)
	for k := range ids {
		ids[k] = 1_000_000*(id+1) + k
	}
	return Request{ID: id, Arrival: arrival, PromptIDs: ids, Output: output}
}

// One request alone, hand-computed with the flat timer (5 ms + 20 µs per
// token): prefill 1,000 tokens in one step, 63 blocks over the link, then the
// decode worker computes the 8-token tail (999 = 62 full blocks + 7, and
// the last prompt token is never served from cache) and samples token 1.
func TestDisaggSingleRequestTimeline(t *testing.T) {
	res, err := RunDisagg(disaggCfg(1, 1), []Request{uniqueReq(0, 0.5, 1000, 4)})
	if err != nil {
		t.Fatal(err)
	}
	j := res.Journeys[0]
	prefill := 0.005 + 2e-5*1000
	xfer := 1e-3 + 63*16*1000/1e9 // 63 blocks of 16 tokens, 1,000 B per token
	tail := 0.005 + 2e-5*8
	decode := 0.005 + 2e-5*1
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"prefill start", j.PrefillStart, 0.5},
		{"prefill end", j.PrefillEnd, 0.5 + prefill},
		{"transfer", j.TransferEnd - j.TransferStart, xfer},
		{"KV placed", j.KVPlaced, j.TransferEnd},
		{"decode admit", j.DecodeAdmit, 0.5 + prefill + xfer},
		{"TTFT", res.Requests[0].TTFT, prefill + xfer + tail},
		{"ITL", res.Requests[0].ITL[0], decode},
		{"bytes", j.Bytes, 1.008e6},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s: %.9f, want %.9f", c.name, c.got, c.want)
		}
	}
	if len(res.Requests[0].ITL) != 3 || !j.Remote || res.Remote != 1 || res.Local != 0 {
		t.Errorf("journey %+v, metrics %+v", j, res.Requests[0])
	}
}

// spikyWorkload: long prompts arriving while earlier requests decode.
func spikyWorkload(n int) []Request {
	var reqs []Request
	for i := 0; i < n; i++ {
		reqs = append(reqs, uniqueReq(i, 0.04*float64(i), 2000+500*(i%5), 64))
	}
	return reqs
}

// In a monolithic worker a long prefill shares a step with the decodes and
// stalls them; decode workers only ever run decode steps (and short tails),
// so their ITL stays near one decode step.
func TestDisaggRemovesITLSpikes(t *testing.T) {
	cmp, err := CompareDisagg(disaggCfg(1, 1), 1, scheduler.SLO{TTFT: 1, TPOT: 1}, spikyWorkload(40))
	if err != nil {
		t.Fatal(err)
	}
	mono, dis := cmp.Mono.ITL, cmp.Dis.ITL
	if dis.P99 > mono.P99/3 {
		t.Errorf("ITL p99: disaggregated %.1f ms, monolithic %.1f ms; want the spikes gone", 1000*dis.P99, 1000*mono.P99)
	}
	// No decode step carries a prefill: at most 64 decodes + one 16-token tail.
	if bound := 0.005 + 2e-5*(64+16); dis.Max > bound {
		t.Errorf("disaggregated ITL max %.2f ms > one decode step %.2f ms", 1000*dis.Max, 1000*bound)
	}
	if cmp.MonoGPUs != 2 || cmp.DisGPUs != 2 || len(cmp.Disagg.Requests) != 40 || len(cmp.Monolithic.Requests) != 40 {
		t.Errorf("GPUs %d and %d, requests %d / %d", cmp.MonoGPUs, cmp.DisGPUs, len(cmp.Disagg.Requests), len(cmp.Monolithic.Requests))
	}
	for i, j := range cmp.Disagg.Journeys {
		if !(j.Arrival <= j.PrefillStart && j.PrefillStart < j.PrefillEnd && j.PrefillEnd <= j.TransferStart &&
			j.TransferStart < j.TransferEnd && j.TransferEnd <= j.KVPlaced && j.KVPlaced <= j.DecodeAdmit && j.DecodeAdmit < j.FirstToken && j.FirstToken <= j.LastToken) {
			t.Fatalf("request %d: stages out of order %+v", i, j)
		}
		if got := cmp.Disagg.Requests[i].TTFT; math.Abs(got-(j.FirstToken-j.Arrival)) > 1e-12 {
			t.Fatalf("request %d: TTFT %g", i, got)
		}
	}
}

// Transfers from one prefill worker share its link: when two prompts finish
// in the same step, the second waits for the first.
func TestDisaggTransfersQueueOnTheLink(t *testing.T) {
	res, err := RunDisagg(disaggCfg(1, 2), []Request{uniqueReq(0, 0, 1000, 2), uniqueReq(1, 0, 1000, 2)})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Journeys[0], res.Journeys[1]
	if a.PrefillEnd != b.PrefillEnd || b.TransferStart != a.TransferEnd {
		t.Errorf("transfers %v–%v and %v–%v after prefills ending %v and %v", a.TransferStart, a.TransferEnd, b.TransferStart, b.TransferEnd, a.PrefillEnd, b.PrefillEnd)
	}
	if a.DecodeWorker == b.DecodeWorker {
		t.Errorf("both went to decode worker %d; the inbound one counts as load", a.DecodeWorker)
	}
}

// Dynamo's policies (lib/kv-router/src/conditional_disagg.rs @ 088ca50):
// IslBounding prefills locally only an uncached part under 2,048 tokens
// that is under 0.7 of the prompt; PrefillLoad when the chosen prefill
// worker holds more than 4 × its budget of pending prefill tokens;
// IslOrLoad when either; the first releases' rule on length and queue.
// The default is IslBounding, so an uncached 900-token prompt goes remote:
// under the first releases' default (1,000 tokens, queue 2) it stayed
// local.
func TestConditionalDisaggPolicies(t *testing.T) {
	def := DefaultConditionalDisagg()
	if def.Policy != IslBounding || def.EffISLThreshold != 2048 || def.EffISLRatioThreshold != 0.7 || def.QueueThreshold != 4 {
		t.Fatalf("defaults %+v, want IslBounding at 2,048 tokens and 0.7, queue threshold 4", def)
	}
	if !def.Remote(ConditionalInput{Prompt: 900, PrefillBudget: 8192}) {
		t.Error("the default policy prefilled an uncached 900-token prompt locally; Dynamo's IslBounding sends it remote (ratio 1 ≥ 0.7)")
	}
	with := func(p ConditionalPolicy) ConditionalDisagg { c := def; c.Policy = p; return c }
	busy := 4*8192 + 1
	for _, k := range []struct {
		policy ConditionalPolicy
		in     ConditionalInput
		remote bool
	}{
		// IslBounding: Dynamo's own test cases, with 64-token blocks.
		{IslBounding, ConditionalInput{Prompt: 1000, Cached: 14 * 64}, false},                        // eff 104, ratio 0.104
		{IslBounding, ConditionalInput{Prompt: 100_000, Cached: 64_000}, true},                       // eff 36k ≥ 2,048
		{IslBounding, ConditionalInput{Prompt: 200}, true},                                           // ratio 1.0 ≥ 0.7
		{IslBounding, ConditionalInput{Prompt: 3000, Cached: 2000}, false},                           // eff 1,000, ratio 0.33
		{IslBounding, ConditionalInput{Prompt: 2048 + 4096, Cached: 4096}, true},                     // eff = 2,048: strict <
		{IslBounding, ConditionalInput{Prompt: 3000, PrefillWaiting: 50}, true},                      // the queue is not read
		{IslBounding, ConditionalInput{Prompt: 900, PrefillActive: busy, PrefillBudget: 8192}, true}, // nor the load
		// PrefillLoad: only the chosen prefill worker's load.
		{PrefillLoad, ConditionalInput{Prompt: 900, PrefillActive: busy, PrefillBudget: 8192}, false},
		{PrefillLoad, ConditionalInput{Prompt: 900, PrefillActive: 4 * 8192, PrefillBudget: 8192}, true}, // at the line: not over it
		{PrefillLoad, ConditionalInput{Prompt: 1000, Cached: 14 * 64, PrefillBudget: 8192}, true},
		// IslOrLoad: local when either is.
		{IslOrLoad, ConditionalInput{Prompt: 1000, Cached: 14 * 64, PrefillBudget: 8192}, false},
		{IslOrLoad, ConditionalInput{Prompt: 5000, PrefillActive: busy, PrefillBudget: 8192}, false},
		{IslOrLoad, ConditionalInput{Prompt: 5000, PrefillBudget: 8192}, true},
		// The first releases: remote iff uncached > 1,000 and queue < 2.
		{QueueLength, ConditionalInput{Prompt: 1500}, true},
		{QueueLength, ConditionalInput{Prompt: 1500, Cached: 600}, false},
		{QueueLength, ConditionalInput{Prompt: 1001, PrefillWaiting: 1}, true},
		{QueueLength, ConditionalInput{Prompt: 1001, PrefillWaiting: 2}, false},
		{QueueLength, ConditionalInput{Prompt: 1000}, false},
		{QueueLength, ConditionalInput{Prompt: 900}, false},
	} {
		if got := with(k.policy).Remote(k.in); got != k.remote {
			t.Errorf("%s %+v: remote %v, want %v", k.policy, k.in, got, k.remote)
		}
	}
	if err := with("sometimes").Validate(); err == nil {
		t.Error("an unknown policy validated")
	}
	cfg := disaggCfg(1, 1)
	bad := with("sometimes")
	cfg.Conditional = &bad
	if _, err := RunDisagg(cfg, []Request{uniqueReq(0, 0, 100, 2)}); err == nil {
		t.Error("a run with an unknown policy started")
	}
}

func TestConditionalDisaggRun(t *testing.T) {
	cfg := disaggCfg(1, 1)
	c := DefaultConditionalDisagg()
	c.Policy = QueueLength
	cfg.Conditional = &c
	// Spaced out so the prefill queue stays empty: only the length decides.
	reqs := []Request{uniqueReq(0, 0, 500, 4), uniqueReq(1, 1, 3000, 4), uniqueReq(2, 2, 1000, 4), uniqueReq(3, 3, 1001, 4)}
	res, err := RunDisagg(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{false, true, false, true}
	for i, j := range res.Journeys {
		if j.Remote != want[i] {
			t.Errorf("request %d (%d tokens): remote %v", i, len(reqs[i].PromptIDs), j.Remote)
		}
		if !j.Remote && (j.PrefillWorker != -1 || j.TransferStart != -1) {
			t.Errorf("local request %d has remote stages: %+v", i, j)
		}
	}
	if res.Local != 2 || res.Remote != 2 {
		t.Errorf("local %d, remote %d", res.Local, res.Remote)
	}
	// A burst fills the prefill queue: later long prompts stay local.
	var burst []Request
	for i := 0; i < 8; i++ {
		burst = append(burst, uniqueReq(i, 0, 4000, 4))
	}
	res, err = RunDisagg(cfg, burst)
	if err != nil {
		t.Fatal(err)
	}
	if res.Remote != c.MaxPrefillQueueSize || res.Local != 8-c.MaxPrefillQueueSize {
		t.Errorf("burst of 8: %d remote, %d local; want the queue limit %d remote", res.Remote, res.Local, c.MaxPrefillQueueSize)
	}
	// IslBounding on the same requests: nothing is cached, so every prompt
	// goes remote, the burst included.
	c.Policy = IslBounding
	res, err = RunDisagg(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Remote != 4 {
		t.Errorf("IslBounding with nothing cached: %d of 4 remote", res.Remote)
	}
	// A second turn whose first 3,000 tokens the decode worker caches:
	// 500 new tokens, a sixth of the prompt, stay local.
	turn := uniqueReq(1, 1, 3000, 4)
	next := Request{ID: 9, Arrival: 5, PromptIDs: append(append([]int(nil), turn.PromptIDs...), uniqueReq(9, 0, 500, 1).PromptIDs...), Output: 4}
	cfg.Scheduler.NumBlocks = 4000
	res, err = RunDisagg(cfg, []Request{Request{ID: 1, Arrival: 1, PromptIDs: turn.PromptIDs, Output: 4}, next})
	if err != nil {
		t.Fatal(err)
	}
	if j := res.Journeys[1]; j.Remote || j.PrefixHit < 2900 {
		t.Errorf("second turn: remote %v with %d tokens cached on its decode worker; want local", j.Remote, j.PrefixHit)
	}
	// PrefillLoad: a burst of 12 prompts of 4,000 tokens at once on the
	// one prefill worker. The tenth sees 36,000 pending tokens, more than
	// 4 × 8,192: it and the rest stay local.
	c.Policy = PrefillLoad
	var big []Request
	for i := 0; i < 12; i++ {
		big = append(big, uniqueReq(i, 0, 4000, 4))
	}
	res, err = RunDisagg(cfg, big)
	if err != nil {
		t.Fatal(err)
	}
	if res.Remote != 9 || res.Local != 3 {
		t.Errorf("PrefillLoad burst of 12: %d remote, %d local; want 9 and 3", res.Remote, res.Local)
	}
}

// Pools of different TP: the prefill workers run their own scheduler
// config (their own KV pool), and the monolithic deployment its own GPUs.
func TestCompareDeploymentsOwnPools(t *testing.T) {
	dis := disaggCfg(1, 1)
	small := dis.Scheduler
	small.NumBlocks = 200 // a 3,200-token pool: the 4,000-token prompt cannot be prefilled there
	dis.PrefillScheduler = &small
	if _, err := RunDisagg(dis, []Request{uniqueReq(0, 0, 4000, 2)}); err == nil {
		t.Error("a prompt larger than the prefill pool's KV was served")
	}
	small.NumBlocks = 4000
	mono := disaggCfg(0, 2)
	cmp, err := CompareDeployments(mono, 4, dis, 3, scheduler.SLO{TTFT: 1, TPOT: 1}, spikyWorkload(10))
	if err != nil {
		t.Fatal(err)
	}
	tm, td := cmp.ThroughputPerGPU()
	if cmp.MonoGPUs != 4 || cmp.DisGPUs != 3 || math.Abs(tm*4-cmp.Mono.OutputTokensPerS) > 1e-9 || math.Abs(td*3-cmp.Dis.OutputTokensPerS) > 1e-9 {
		t.Errorf("GPUs %d and %d, per-GPU throughput %g and %g of %g and %g", cmp.MonoGPUs, cmp.DisGPUs, tm, td, cmp.Mono.OutputTokensPerS, cmp.Dis.OutputTokensPerS)
	}
	if _, err := CompareDeployments(dis, 4, dis, 3, scheduler.SLO{}, spikyWorkload(2)); err == nil {
		t.Error("a monolithic deployment with prefill workers was compared")
	}
}

// A decode pool too small for the arriving KV makes the transfer wait for
// blocks, never lose the request.
func TestDisaggDecodePoolPressure(t *testing.T) {
	cfg := disaggCfg(2, 1)
	cfg.Scheduler.NumBlocks = 300 // 4,800 tokens: two 2,000-token prompts at a time
	var reqs []Request
	for i := 0; i < 6; i++ {
		reqs = append(reqs, uniqueReq(i, 0, 2000, 32))
	}
	res, err := RunDisagg(cfg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Requests {
		if m.Output != 32 || len(m.ITL) != 31 {
			t.Fatalf("request %d: %d outputs", m.ID, len(m.ITL)+1)
		}
	}
	waited := 0
	for _, j := range res.Journeys {
		if j.KVPlaced > j.TransferEnd {
			waited++
		}
		if j.KVPlaced < j.TransferEnd || j.DecodeAdmit < j.KVPlaced {
			t.Errorf("request %d: transfer ends %v, placed %v, admitted %v", j.ID, j.TransferEnd, j.KVPlaced, j.DecodeAdmit)
		}
	}
	if waited == 0 {
		t.Error("six 2,000-token KVs into a 4,800-token pool: some should wait for room")
	}
	// No decode step is ever preempted into recomputing a prompt.
	for _, m := range res.Requests {
		if m.Preemptions > 0 {
			t.Errorf("request %d preempted %d times", m.ID, m.Preemptions)
		}
	}
}

func TestDisaggErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  DisaggConfig
		reqs []Request
	}{
		{disaggCfg(1, 0), nil},
		{disaggCfg(-1, 1), nil},
		{func() DisaggConfig { c := disaggCfg(1, 1); c.Link.Bandwidth = 0; return c }(), nil},
		{disaggCfg(1, 1), []Request{uniqueReq(-1, 0, 10, 1)}},
		{disaggCfg(1, 1), []Request{uniqueReq(1, 0, 10, 1), uniqueReq(1, 0, 10, 1)}},
		{disaggCfg(1, 1), []Request{{ID: 0, Output: 1}}},
	} {
		if _, err := RunDisagg(c.cfg, c.reqs); err == nil {
			t.Errorf("%+v accepted", c.cfg)
		}
	}
}

func TestDisaggDeterministic(t *testing.T) {
	a, _ := RunDisagg(disaggCfg(2, 2), spikyWorkload(30))
	b, _ := RunDisagg(disaggCfg(2, 2), spikyWorkload(30))
	for i := range a.Journeys {
		if a.Journeys[i] != b.Journeys[i] {
			t.Fatalf("request %d: %+v vs %+v", i, a.Journeys[i], b.Journeys[i])
		}
	}
}

// A prompt arriving while a prefill worker computes another goes to an idle
// one: the step in flight counts as pending until it ends (Dynamo's active
// prefill tokens drop when a prefill completes). With the flat timer a
// 5,000-token prefill takes 105 ms; three requests 10 ms apart land on the
// three workers, and none waits.
func TestDisaggPrefillInFlightIsPending(t *testing.T) {
	reqs := []Request{uniqueReq(0, 0.5, 5000, 2), uniqueReq(1, 0.51, 5000, 2), uniqueReq(2, 0.52, 5000, 2)}
	res, err := RunDisagg(disaggCfg(3, 1), reqs)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, j := range res.Journeys {
		seen[j.PrefillWorker] = true
		if j.PrefillStart != j.Arrival {
			t.Errorf("request %d arrived at %g s, prefilled from %g s on worker %d", j.ID, j.Arrival, j.PrefillStart, j.PrefillWorker)
		}
	}
	if len(seen) != 3 {
		t.Errorf("three overlapping prefills went to %d worker(s): %v", len(seen), seen)
	}
}
