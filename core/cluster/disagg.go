package cluster

// Disaggregated serving, after NVIDIA Dynamo (docs/SOURCES.md#dyn-disagg):
// a pool of prefill workers computes prompts, a pool of decode
// workers generates the outputs, and each prompt's KV cache moves from one
// to the other over a Link (NIXL: GPU-to-GPU RDMA).
//
// The flow of one request:
//  1. it arrives and goes to the prefill worker with the fewest pending
//     prefill tokens (Dynamo's active prefill tokens);
//  2. the prefill worker (a vLLM v1 engine, core/scheduler) serves it as a
//     request with one output token, so it ends when the prompt is computed
//     (vLLM's P/D proxy sends max_tokens = 1);
//  3. its KV — the prompt's blocks × block size × KVBytesPerToken (NIXL
//     moves whole blocks, the last partial one included), each GPU of a TP
//     group sending its own shard in parallel — crosses the link, taking
//     Link.Transfer(bytes); transfers from one prefill worker go one after
//     another (its NIC is busy until the previous one ends);
//  4. the least-loaded decode worker (running + waiting + inbound
//     transfers, chosen when the prefill ends) receives it and generates
//     every output token, the first one included (the prefill worker's
//     token is discarded, as vLLM's P/D proxy does). TTFT is therefore
//     queueing + prefill + transfer + the decode worker's first step.
//
// How the decode worker receives a computed prompt: through
// scheduler.ReceiveKV, vLLM's external computed tokens received through
// the prefix cache. The prompt's blocks are placed in the decode worker's
// block pool and held for the request, which is then added; its admission
// finds every full block of the prompt cached and computes only the tail —
// the last partial block, or the last block when the prompt fills whole
// blocks, since vLLM never serves the last prompt token from cache — which
// stands in for vLLM's decode side recomputing the final prompt token. The
// hold ends when the request is admitted.
//
// Arrived KV is placed only when the decode worker can admit it at its next
// step: nothing else waits there, a sequence slot is free, and the free
// blocks hold the prompt, one tail block per placed request and one more
// block for each running request (so that step preempts nobody). Until
// then it waits, in arrival order (KVPlaced − TransferEnd in the journey).
// vLLM instead allocates the decode blocks first and then pulls the KV, so
// where this wait happens the model is early by up to one transfer time.
//
// Conditional disaggregation (optional): the request lands on the
// least-loaded decode worker, and a ConditionalDisagg policy decides whether
// that worker prefills it locally (Dynamo's "bypass remote prefill"); a
// remote prefill then returns its KV to that decode worker. The policies are
// Dynamo's current ones (lib/kv-router/src/conditional_disagg.rs @ 088ca50,
// docs/SOURCES.md#dyn-conditional): IslBounding, PrefillLoad and
// IslOrLoad, and the queue-length rule of its first releases.
//
// Simplifications: the whole prompt's KV is sent even
// when the decode worker caches part of it, a transfer starts after the
// prefill ends (no layer-by-layer overlap), and the router has no network
// latency.

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/inferlab/inferlab/core/kvhash"
	"github.com/inferlab/inferlab/core/scheduler"
)

// ConditionalPolicy names a conditional-disaggregation policy.
type ConditionalPolicy string

// Dynamo's conditional-disaggregation policies
// (lib/kv-router/src/conditional_disagg.rs @ 088ca50), and the rule of its
// first releases.
const (
	// IslBounding (IslBoundingPolicy) prefills locally only a prompt whose
	// uncached part is both short and a small share of it: eff_isl =
	// prompt − the decode worker's cached overlap, local iff eff_isl <
	// EffISLThreshold (2,048) and eff_isl / prompt < EffISLRatioThreshold
	// (0.7). It ignores the load.
	IslBounding ConditionalPolicy = "isl_bounding"
	// PrefillLoad (PrefillLoadPolicy) prefills locally when the prefill
	// worker the router would pick is busy: its active prefill tokens
	// exceed QueueThreshold × its max_num_batched_tokens (Dynamo's
	// router_queue_threshold, the line at which it would queue the request).
	PrefillLoad ConditionalPolicy = "prefill_load"
	// IslOrLoad (IslOrLoadPolicy) prefills locally when either does.
	IslOrLoad ConditionalPolicy = "isl_or_load"
	// QueueLength is the rule of Dynamo's first releases (v0.1–v0.3,
	// PyDisaggregatedRouter in the dynamo.sdk examples, the vLLM v0
	// integration that docs/architecture/disagg_serving.md @ 391befc
	// describes): remote iff prompt − prefix hit > MaxLocalPrefillLength
	// (1,000) and fewer than MaxPrefillQueueSize (2) requests wait for a
	// prefill worker.
	QueueLength ConditionalPolicy = "queue_length"
)

// ConditionalDisagg is a conditional-disaggregation policy and its
// thresholds; only the policy's own thresholds are read.
type ConditionalDisagg struct {
	Policy ConditionalPolicy
	// EffISLThreshold and EffISLRatioThreshold are IslBounding's
	// (conditional_disagg_eff_isl_threshold and _ratio_threshold).
	EffISLThreshold      int
	EffISLRatioThreshold float64
	// QueueThreshold is PrefillLoad's busy line (router_queue_threshold).
	QueueThreshold float64
	// MaxLocalPrefillLength and MaxPrefillQueueSize are QueueLength's.
	MaxLocalPrefillLength int // prefill tokens not cached on the decode worker above which prefill goes remote
	MaxPrefillQueueSize   int // remote prefill only while fewer requests than this wait for a prefill worker
}

// Dynamo's defaults: DEFAULT_CONDITIONAL_DISAGG_EFF_ISL_THRESHOLD and
// _RATIO_THRESHOLD, KvRouterConfig's router_queue_threshold, and the first
// releases' DisaggRouterConf.
const (
	DefaultEffISLThreshold       = 2048
	DefaultEffISLRatioThreshold  = 0.7
	DefaultQueueThreshold        = 4.0
	DefaultMaxLocalPrefillLength = 1000
	DefaultMaxPrefillQueueSize   = 2
)

// DefaultConditionalDisagg returns Dynamo's current default policy,
// IslBounding at 2,048 tokens and 0.7, with every threshold at its default.
func DefaultConditionalDisagg() ConditionalDisagg {
	return ConditionalDisagg{Policy: IslBounding, EffISLThreshold: DefaultEffISLThreshold, EffISLRatioThreshold: DefaultEffISLRatioThreshold,
		QueueThreshold: DefaultQueueThreshold, MaxLocalPrefillLength: DefaultMaxLocalPrefillLength, MaxPrefillQueueSize: DefaultMaxPrefillQueueSize}
}

// ConditionalInput is what a policy sees of one request.
type ConditionalInput struct {
	// Prompt is the prompt's tokens; Cached those the chosen decode worker
	// holds in its prefix cache (whole blocks).
	Prompt, Cached int
	// PrefillActive is the pending prefill tokens of the prefill worker
	// the router would pick, PrefillBudget its max_num_batched_tokens.
	PrefillActive, PrefillBudget int
	// PrefillWaiting is the requests waiting at all prefill workers.
	PrefillWaiting int
}

// EffISL is the uncached prompt, the net-new prefill.
func (in ConditionalInput) EffISL() int { return max(0, in.Prompt-in.Cached) }

// Remote reports the policy's verdict: true sends the prompt to a prefill
// worker, false prefills it on the decode worker.
func (c ConditionalDisagg) Remote(in ConditionalInput) bool {
	switch c.Policy {
	case IslBounding:
		return !c.islLocal(in)
	case PrefillLoad:
		return !c.prefillBusy(in)
	case IslOrLoad:
		return !c.islLocal(in) && !c.prefillBusy(in)
	case QueueLength:
		return in.EffISL() > c.MaxLocalPrefillLength && in.PrefillWaiting < c.MaxPrefillQueueSize
	}
	return true
}

// islLocal is IslBoundingPolicy's bypass.
func (c ConditionalDisagg) islLocal(in ConditionalInput) bool {
	eff := in.EffISL()
	return eff < c.EffISLThreshold && float64(eff)/float64(max(in.Prompt, 1)) < c.EffISLRatioThreshold
}

// prefillBusy is PrefillLoadPolicy's bypass: active_tokens >
// router_queue_threshold × max_num_batched_tokens.
func (c ConditionalDisagg) prefillBusy(in ConditionalInput) bool {
	return float64(in.PrefillActive) > c.QueueThreshold*float64(in.PrefillBudget)
}

// Validate reports an unknown policy.
func (c ConditionalDisagg) Validate() error {
	switch c.Policy {
	case IslBounding, PrefillLoad, IslOrLoad, QueueLength:
		return nil
	}
	return fmt.Errorf("cluster: conditional-disaggregation policy %q, want %q, %q, %q or %q", c.Policy, IslBounding, PrefillLoad, IslOrLoad, QueueLength)
}

// DisaggConfig describes a disaggregated deployment.
type DisaggConfig struct {
	// Prefill and Decode are the workers in each pool. With no prefill
	// workers the deployment is aggregated (monolithic): each request goes
	// to the least-loaded worker, which prefills and decodes it.
	Prefill, Decode int
	// Scheduler configures every worker; PrefixCaching is forced on.
	Scheduler scheduler.Config
	// PrefillScheduler, when set, configures the prefill workers instead
	// (a pool of another TP degree has another KV pool).
	PrefillScheduler *scheduler.Config
	// Timer prices the steps of prefill worker w (prefill true) or decode
	// worker w.
	Timer func(prefill bool, w int) scheduler.Timer
	// Link carries KV from prefill to decode workers.
	Link Link
	// KVBytesPerToken is what one path carries per prompt token: S_entry /
	// min(TP, kv_heads), with the smaller TP of the two pools when they
	// differ (each GPU of the smaller group sends, or receives, the shards
	// of the larger one's GPUs it pairs with). The GPUs of a TP group send
	// their shards at once, each over its own path, so the transfer time is
	// that of one path.
	KVBytesPerToken float64
	// Conditional, when set, lets decode workers prefill short prompts
	// themselves.
	Conditional *ConditionalDisagg
}

// Journey is one request's path through the pools; times in seconds, -1
// where a stage did not happen.
type Journey struct {
	ID      int
	Arrival float64
	// Remote is false when the decode worker prefilled it (conditional).
	Remote                     bool
	PrefixHit                  int // tokens cached on the decode worker when the rule was applied
	PrefillWorker              int
	PrefillStart, PrefillEnd   float64 // first scheduled; prompt computed
	TransferStart, TransferEnd float64
	Bytes                      float64 // per GPU
	DecodeWorker               int
	KVPlaced                   float64 // KV placed in the decode worker's pool (≥ TransferEnd)
	DecodeAdmit                float64 // admitted by the decode worker
	FirstToken, LastToken      float64
}

// DisaggResult is a whole disaggregated run.
type DisaggResult struct {
	// Requests are what users saw, by arrival: TTFT from arrival to the
	// decode worker's first token, ITL between the decode worker's tokens.
	Requests        []scheduler.RequestMetrics
	Journeys        []Journey
	Prefill, Decode []WorkerResult
	// PrefillSteps and DecodeSteps are every worker's steps.
	PrefillSteps, DecodeSteps [][]scheduler.Step
	Remote, Local             int
	// Counts tallies both pools' steps and tokens (no router scores: the
	// pools pick their least-loaded worker).
	Counts Counts
}

// TransferTimes returns the transfer time of every remote request, by
// arrival.
func (r *DisaggResult) TransferTimes() []float64 {
	var out []float64
	for _, j := range r.Journeys {
		if j.Remote {
			out = append(out, j.TransferEnd-j.TransferStart)
		}
	}
	return out
}

type evKind int

const (
	evPrefillDone evKind = iota
	evKVArrive
)

type event struct {
	t    float64
	kind evKind
	id   int
	seq  int
}

type evHeap []event

func (h evHeap) Len() int { return len(h) }
func (h evHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}
func (h evHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *evHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type disagg struct {
	cfg      DisaggConfig
	pre, dec []*scheduler.Scheduler
	events   evHeap
	seq      int
	linkFree []float64 // per prefill worker: when its link is free
	// inFlight is per prefill worker its last step run: when it ends and
	// the prompt tokens it computes. The event loop runs a step whole as
	// soon as it starts, so until it ends its tokens are computed in the
	// scheduler but still pending on the GPU (pendingPrefill).
	inFlight []stepEnd
	inbound  []int   // per decode worker: transfers on their way
	staged   [][]int // per decode worker: requests whose KV arrived, not yet placed
	j        map[int]*Journey
	reqs     map[int]Request
	res      *DisaggResult
}

// RunDisagg serves reqs on a disaggregated deployment.
func RunDisagg(cfg DisaggConfig, reqs []Request) (*DisaggResult, error) {
	d, err := newDisagg(cfg)
	if err != nil {
		return nil, err
	}
	sorted := append([]Request(nil), reqs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Arrival < sorted[j].Arrival })
	for _, r := range sorted {
		if err := d.register(r); err != nil {
			return nil, err
		}
	}
	if err := d.run(sorted); err != nil {
		return nil, err
	}
	return d.finish(sorted)
}

// validate checks a deployment's description.
func (cfg DisaggConfig) validate() error {
	switch {
	case cfg.Decode < 1:
		return fmt.Errorf("cluster: Decode = %d workers, want ≥ 1", cfg.Decode)
	case cfg.Prefill < 0:
		return fmt.Errorf("cluster: Prefill = %d workers, want ≥ 0", cfg.Prefill)
	case cfg.Timer == nil:
		return errors.New("cluster: a timer is required")
	case !(cfg.KVBytesPerToken >= 0) || math.IsInf(cfg.KVBytesPerToken, 0):
		return fmt.Errorf("cluster: KVBytesPerToken = %g, want ≥ 0", cfg.KVBytesPerToken)
	}
	if c := cfg.Conditional; c != nil {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	if cfg.Prefill > 0 {
		return cfg.Link.Validate()
	}
	return nil
}

// prefillScheduler is the prefill workers' scheduler config.
func (cfg DisaggConfig) prefillScheduler() scheduler.Config {
	if cfg.PrefillScheduler != nil {
		return *cfg.PrefillScheduler
	}
	return cfg.Scheduler
}

// newDisagg builds both pools' schedulers.
func newDisagg(cfg DisaggConfig) (*disagg, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	sc := cfg.Scheduler
	sc.PrefixCaching, sc.KVEvents = true, false
	d := &disagg{cfg: cfg, linkFree: make([]float64, cfg.Prefill), inFlight: make([]stepEnd, cfg.Prefill), inbound: make([]int, cfg.Decode),
		staged: make([][]int, cfg.Decode), j: map[int]*Journey{}, reqs: map[int]Request{}, res: &DisaggResult{}}
	psc := cfg.prefillScheduler()
	psc.PrefixCaching, psc.KVEvents = true, false
	for w := 0; w < cfg.Prefill; w++ {
		s, err := scheduler.New(psc, cfg.Timer(true, w), nil)
		if err != nil {
			return nil, err
		}
		d.pre = append(d.pre, s)
	}
	for w := 0; w < cfg.Decode; w++ {
		s, err := scheduler.New(sc, cfg.Timer(false, w), nil)
		if err != nil {
			return nil, err
		}
		d.dec = append(d.dec, s)
	}
	return d, nil
}

// register checks one request and records it by id.
func (d *disagg) register(r Request) error {
	if r.ID < 0 {
		return fmt.Errorf("cluster: request id %d, want ≥ 0", r.ID)
	}
	if _, dup := d.reqs[r.ID]; dup {
		return fmt.Errorf("cluster: request id %d appears twice", r.ID)
	}
	if len(r.PromptIDs) < 1 || r.Output < 1 {
		return fmt.Errorf("cluster: request %d has %d prompt and %d output tokens, want at least 1 of each", r.ID, len(r.PromptIDs), r.Output)
	}
	d.reqs[r.ID] = r
	return nil
}

// run is the event loop: before each arrival the prefill workers step up
// to it and every earlier event (a prefill done, a KV arrival) is handled;
// then the decode workers drain.
func (d *disagg) run(sorted []Request) error {
	next := 0
	for {
		ta := math.Inf(1)
		if next < len(sorted) {
			ta = sorted[next].Arrival
		}
		for w := range d.pre {
			if err := d.advancePrefill(w, ta); err != nil {
				return err
			}
		}
		if len(d.events) > 0 && d.events[0].t <= ta {
			if err := d.handle(heap.Pop(&d.events).(event)); err != nil {
				return err
			}
			continue
		}
		if next == len(sorted) {
			break
		}
		if err := d.arrive(sorted[next]); err != nil {
			return err
		}
		next++
	}
	for w := range d.dec {
		if err := d.advanceDecode(w, math.Inf(1)); err != nil {
			return err
		}
	}
	return nil
}

// handle dispatches one event.
func (d *disagg) handle(e event) error {
	if e.kind == evPrefillDone {
		return d.prefillDone(e)
	}
	return d.kvArrive(e)
}

func (d *disagg) push(t float64, k evKind, id int) {
	d.seq++
	heap.Push(&d.events, event{t: t, kind: k, id: id, seq: d.seq})
}

// advancePrefill runs prefill worker w's steps that start before t.
func (d *disagg) advancePrefill(w int, t float64) error {
	s := d.pre[w]
	for s.Busy() && s.Clock() < t {
		st, err := s.Step()
		if err != nil {
			return fmt.Errorf("cluster: prefill worker %d: %w", w, err)
		}
		d.res.Counts.add(st)
		d.inFlight[w] = stepEnd{end: st.Start + st.Duration, tokens: st.PrefillTokens}
		for _, id := range st.Admitted {
			if j := d.j[id]; j.PrefillStart < 0 {
				j.PrefillStart = st.Start
			}
		}
		for _, id := range st.FirstTokens {
			end := st.Start + st.Duration
			d.j[id].PrefillEnd = end
			d.push(end, evPrefillDone, id)
		}
	}
	return nil
}

// stepDecode runs one step of decode worker w (which releases the KV it
// held for the requests it admitted) and places staged KV.
func (d *disagg) stepDecode(w int) error {
	s := d.dec[w]
	st, err := s.Step()
	if err != nil {
		return fmt.Errorf("cluster: decode worker %d: %w", w, err)
	}
	d.res.Counts.add(st)
	for _, id := range st.Admitted {
		if j := d.j[id]; j.DecodeAdmit < 0 {
			j.DecodeAdmit = st.Start
		}
	}
	return d.place(w, s.Clock())
}

// place puts staged KV into decode worker w's pool while it can admit it at
// its next step, and adds the requests; now is when the pool was looked at.
func (d *disagg) place(w int, now float64) error {
	s := d.dec[w]
	l := s.Load()
	if len(d.staged[w]) == 0 || l.Waiting > 0 {
		return nil
	}
	pool := s.Pool()
	for k := 0; len(d.staged[w]) > 0; k++ {
		id := d.staged[w][0]
		r := d.reqs[id]
		need := pool.BlocksFor(len(r.PromptIDs)) + (k + 1) + l.Running
		if l.Running+k+1 > d.cfg.Scheduler.MaxNumSeqs || pool.FreeBlocks() < need {
			if k == 0 && !s.Busy() {
				return fmt.Errorf("%w: request %d's %d-token KV does not fit decode worker %d", scheduler.ErrNeverFits, id, len(r.PromptIDs), w)
			}
			return nil
		}
		j := d.j[id]
		j.KVPlaced = max(j.TransferEnd, now)
		sr := scheduler.Request{ID: r.ID, Arrival: max(j.KVPlaced, s.Clock()), Prompt: len(r.PromptIDs), Output: r.Output,
			PromptIDs: r.PromptIDs, OutputIDs: r.OutputIDs}
		if err := s.ReceiveKV(sr, sr.Prompt); err != nil {
			return err
		}
		d.staged[w] = d.staged[w][1:]
		if err := s.Add(sr); err != nil {
			return err
		}
	}
	return nil
}

// advanceDecode runs decode worker w's steps that start before t.
func (d *disagg) advanceDecode(w int, t float64) error {
	for s := d.dec[w]; s.Busy() && s.Clock() < t; {
		if err := d.stepDecode(w); err != nil {
			return err
		}
	}
	return nil
}

func (d *disagg) advanceAllDecode(t float64) error {
	for w := range d.dec {
		if err := d.advanceDecode(w, t); err != nil {
			return err
		}
	}
	return nil
}

// leastLoadedDecode picks the decode worker with the fewest running,
// waiting and inbound requests, the lowest id on a tie.
func (d *disagg) leastLoadedDecode() int {
	best, bestLoad := 0, math.MaxInt
	for w, s := range d.dec {
		l := s.Load()
		if n := l.Running + l.Waiting + d.inbound[w]; n < bestLoad {
			best, bestLoad = w, n
		}
	}
	return best
}

// stepEnd is a step's end and the prompt tokens it computes.
type stepEnd struct {
	end    float64
	tokens int
}

// pendingPrefill is prefill worker w's pending prefill tokens at time t
// (Dynamo's active prefill tokens, which drop when a prefill completes):
// those its scheduler has not computed, and those of its step still
// running at t.
func (d *disagg) pendingPrefill(w int, t float64) int {
	n := d.pre[w].Load().PendingPrefillTokens
	if f := d.inFlight[w]; f.end > t {
		n += f.tokens
	}
	return n
}

// leastLoadedPrefill picks the prefill worker with the fewest pending
// prefill tokens at t, the lowest id on a tie.
func (d *disagg) leastLoadedPrefill(t float64) int {
	best, bestLoad := 0, math.MaxInt
	for w := range d.pre {
		if n := d.pendingPrefill(w, t); n < bestLoad {
			best, bestLoad = w, n
		}
	}
	return best
}

func (d *disagg) arrive(r Request) error {
	d.res.Counts.PromptTokens += int64(len(r.PromptIDs))
	j := &Journey{ID: r.ID, Arrival: r.Arrival, Remote: len(d.pre) > 0, PrefillWorker: -1, DecodeWorker: -1,
		PrefillStart: -1, PrefillEnd: -1, TransferStart: -1, TransferEnd: -1, KVPlaced: -1, DecodeAdmit: -1, FirstToken: -1, LastToken: -1}
	d.j[r.ID] = j
	if c := d.cfg.Conditional; c != nil {
		// The request lands on a decode worker, which decides.
		if err := d.advanceAllDecode(r.Arrival); err != nil {
			return err
		}
		j.DecodeWorker = d.leastLoadedDecode()
		_, j.PrefixHit = d.dec[j.DecodeWorker].Pool().ComputedBlocks(kvhash.Extend(nil, r.PromptIDs, d.cfg.Scheduler.BlockSize, ""), len(r.PromptIDs))
		in := ConditionalInput{Prompt: len(r.PromptIDs), Cached: j.PrefixHit, PrefillBudget: d.cfg.prefillScheduler().MaxNumBatchedTokens}
		if len(d.pre) > 0 {
			// The prefill worker the router would pick, and the queue.
			in.PrefillActive = d.pendingPrefill(d.leastLoadedPrefill(r.Arrival), r.Arrival)
			for _, s := range d.pre {
				in.PrefillWaiting += s.Load().Waiting
			}
		}
		j.Remote = len(d.pre) > 0 && c.Remote(in)
	}
	if !j.Remote {
		if j.DecodeWorker < 0 { // aggregated
			if err := d.advanceAllDecode(r.Arrival); err != nil {
				return err
			}
			j.DecodeWorker = d.leastLoadedDecode()
		}
		d.res.Local++
		return d.dec[j.DecodeWorker].Add(scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: len(r.PromptIDs), Output: r.Output,
			PromptIDs: r.PromptIDs, OutputIDs: r.OutputIDs})
	}
	d.res.Remote++
	j.PrefillWorker = d.leastLoadedPrefill(r.Arrival)
	return d.pre[j.PrefillWorker].Add(scheduler.Request{ID: r.ID, Arrival: r.Arrival, Prompt: len(r.PromptIDs), Output: 1, PromptIDs: r.PromptIDs})
}

func (d *disagg) prefillDone(e event) error {
	if err := d.advanceAllDecode(e.t); err != nil {
		return err
	}
	j, r := d.j[e.id], d.reqs[e.id]
	if j.DecodeWorker < 0 {
		j.DecodeWorker = d.leastLoadedDecode()
	}
	bs := d.cfg.Scheduler.BlockSize
	j.Bytes = float64((len(r.PromptIDs)+bs-1)/bs*bs) * d.cfg.KVBytesPerToken
	j.TransferStart = max(e.t, d.linkFree[j.PrefillWorker])
	j.TransferEnd = j.TransferStart + d.cfg.Link.Transfer(j.Bytes)
	d.linkFree[j.PrefillWorker] = j.TransferEnd
	d.inbound[j.DecodeWorker]++
	d.push(j.TransferEnd, evKVArrive, e.id)
	return nil
}

func (d *disagg) kvArrive(e event) error {
	j, r := d.j[e.id], d.reqs[e.id]
	w := j.DecodeWorker
	if err := d.advanceDecode(w, e.t); err != nil {
		return err
	}
	d.inbound[w]--
	if need := d.dec[w].Pool().BlocksFor(len(r.PromptIDs)) + 1; need > d.cfg.Scheduler.NumBlocks {
		return fmt.Errorf("%w: request %d's %d-token KV needs %d blocks, decode worker %d has %d", scheduler.ErrNeverFits, e.id, len(r.PromptIDs), need, w, d.cfg.Scheduler.NumBlocks)
	}
	d.staged[w] = append(d.staged[w], e.id)
	return d.place(w, e.t)
}

func (d *disagg) finish(sorted []Request) (*DisaggResult, error) {
	staged := 0
	for _, q := range d.staged {
		staged += len(q)
	}
	for _, s := range d.dec {
		staged += s.ReceivedKV()
	}
	if staged > 0 {
		return nil, fmt.Errorf("cluster: %d arrived KV caches were never admitted by their decode worker", staged)
	}
	var hits, dec map[int]scheduler.RequestMetrics
	hits, d.res.Prefill, d.res.PrefillSteps = collect(d.pre)
	dec, d.res.Decode, d.res.DecodeSteps = collect(d.dec)
	for _, r := range sorted {
		j := d.j[r.ID]
		dm, ok := dec[r.ID]
		if !ok {
			return nil, fmt.Errorf("cluster: request %d did not finish", r.ID)
		}
		tt := d.dec[j.DecodeWorker].TokenTimes(r.ID)
		j.FirstToken, j.LastToken = tt[0], tt[len(tt)-1]
		m := dm
		m.Arrival = r.Arrival
		m.TTFT, m.E2E = j.FirstToken-r.Arrival, j.LastToken-r.Arrival
		if j.Remote {
			pm := hits[r.ID]
			m.Scheduled = pm.Scheduled // first scheduled by its prefill worker
			m.CachedHit = pm.CachedHit
			m.Preemptions += pm.Preemptions
		}
		d.res.Requests = append(d.res.Requests, m)
		d.res.Journeys = append(d.res.Journeys, *j)
	}
	return d.res, nil
}

// Comparison is one workload served twice: monolithic (every worker
// prefills and decodes its own requests, routed to the least-loaded worker)
// and disaggregated, each on its own GPUs.
type Comparison struct {
	// MonoGPUs and DisGPUs are the GPUs of each deployment.
	MonoGPUs, DisGPUs  int
	Monolithic, Disagg *DisaggResult
	// Mono and Dis summarise what users saw, under the SLO given.
	Mono, Dis scheduler.Summary
}

// ThroughputPerGPU is each deployment's output tokens per second per GPU.
func (c *Comparison) ThroughputPerGPU() (mono, dis float64) {
	return c.Mono.OutputTokensPerS / float64(c.MonoGPUs), c.Dis.OutputTokensPerS / float64(c.DisGPUs)
}

// GoodputPerGPU is each deployment's requests per second per GPU that met
// the SLO.
func (c *Comparison) GoodputPerGPU() (mono, dis float64) {
	return c.Mono.GoodputReqPerS / float64(c.MonoGPUs), c.Dis.GoodputReqPerS / float64(c.DisGPUs)
}

// CompareDisagg runs reqs on cfg and on cfg.Prefill + cfg.Decode monolithic
// workers with the decode pool's timer and scheduler, each worker
// gpusPerWorker GPUs.
func CompareDisagg(cfg DisaggConfig, gpusPerWorker int, slo scheduler.SLO, reqs []Request) (*Comparison, error) {
	agg := cfg
	agg.Prefill, agg.Decode, agg.Conditional, agg.PrefillScheduler = 0, cfg.Prefill+cfg.Decode, nil, nil
	g := (cfg.Prefill + cfg.Decode) * gpusPerWorker
	return CompareDeployments(agg, g, cfg, g, slo, reqs)
}

// CompareDeployments runs reqs on a monolithic deployment mono (no
// prefill workers) of monoGPUs GPUs and on a disaggregated one dis of
// disGPUs.
func CompareDeployments(mono DisaggConfig, monoGPUs int, dis DisaggConfig, disGPUs int, slo scheduler.SLO, reqs []Request) (*Comparison, error) {
	switch {
	case mono.Prefill != 0:
		return nil, fmt.Errorf("cluster: the monolithic deployment has %d prefill workers, want 0", mono.Prefill)
	case monoGPUs < mono.Decode || disGPUs < dis.Prefill+dis.Decode:
		return nil, fmt.Errorf("cluster: %d and %d GPUs for %d and %d workers, want at least one per worker", monoGPUs, disGPUs, mono.Decode, dis.Prefill+dis.Decode)
	}
	d, err := RunDisagg(dis, reqs)
	if err != nil {
		return nil, err
	}
	m, err := RunDisagg(mono, reqs)
	if err != nil {
		return nil, err
	}
	return &Comparison{MonoGPUs: monoGPUs, DisGPUs: disGPUs, Monolithic: m, Disagg: d,
		Mono: scheduler.SummariseRequests(m.Requests, slo), Dis: scheduler.SummariseRequests(d.Requests, slo)}, nil
}

// collect gathers a pool's finished requests by id, its workers' results and
// their steps.
func collect(pool []*scheduler.Scheduler) (map[int]scheduler.RequestMetrics, []WorkerResult, [][]scheduler.Step) {
	byID := map[int]scheduler.RequestMetrics{}
	var results []WorkerResult
	var steps [][]scheduler.Step
	for _, s := range pool {
		ms := s.Requests()
		for _, m := range ms {
			byID[m.ID] = m
		}
		results = append(results, WorkerResult{Requests: len(ms), Summary: s.Summary(scheduler.SLO{})})
		steps = append(steps, s.Steps())
	}
	return byID, results, steps
}
