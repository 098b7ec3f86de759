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
	if cmp.GPUs != 2 || len(cmp.Disagg.Requests) != 40 || len(cmp.Monolithic.Requests) != 40 {
		t.Errorf("GPUs %d, requests %d / %d", cmp.GPUs, len(cmp.Disagg.Requests), len(cmp.Monolithic.Requests))
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

// Dynamo's rule: remote iff prompt − prefix hit > max_local_prefill_length
// and prefill queue < max_prefill_queue_size.
func TestConditionalDisaggRule(t *testing.T) {
	c := DefaultConditionalDisagg()
	if c.MaxLocalPrefillLength != 1000 || c.MaxPrefillQueueSize != 2 {
		t.Fatalf("defaults %+v", c)
	}
	for _, k := range []struct {
		prompt, hit, queue int
		remote             bool
	}{
		{1500, 0, 0, true},
		{1500, 600, 0, false}, // 900 new tokens: local
		{1001, 0, 1, true},
		{1001, 0, 2, false}, // queue full
		{1000, 0, 0, false}, // not above the limit
		{5000, 4000, 0, false},
	} {
		if got := c.Remote(k.prompt, k.hit, k.queue); got != k.remote {
			t.Errorf("Remote(%d, %d, %d) = %v", k.prompt, k.hit, k.queue, got)
		}
	}
}

func TestConditionalDisaggRun(t *testing.T) {
	cfg := disaggCfg(1, 1)
	c := DefaultConditionalDisagg()
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
