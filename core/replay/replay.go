package replay

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
)

// Engine is a vLLM server as the benchmark started it: a model on TP GPUs
// with its batch limits; everything else at vLLM v0.15.1's defaults.
type Engine struct {
	GPU   hardware.GPU
	Model hardware.Model
	TP    int
	// MaxModelLen, MaxNumBatchedTokens and MaxNumSeqs are vLLM's
	// --max-model-len, --max-num-batched-tokens and --max-num-seqs.
	MaxModelLen, MaxNumBatchedTokens, MaxNumSeqs int
}

// Experiment is one benchmark to replay: the server and the workload.
type Experiment struct {
	Name     string
	Engine   Engine
	Workload workload.InferencePerf
	// Constants are the fitted constants to use; the zero value means
	// Fitted.
	Constants Constants
}

// Result is a replayed benchmark.
type Result struct {
	Stages []Stage
	// KVBlocks is the pool the engine serves from (per GPU, in 16-token
	// blocks, the null block left out); Steps the engine steps run, and
	// StreamedSteps those the CUDA-graph dispatcher did not replay as one
	// graph (priced kernel by kernel).
	KVBlocks, Steps, StreamedSteps int
	// RequestSteps sums the requests each step advanced (running, and one
	// being prefilled): with Steps and StreamedSteps, what the replay cost
	// to simulate.
	RequestSteps int64
	// Prompts are the benchmark's prompt lengths in tokens, as the server
	// counts them, in the order requests take them.
	Prompts []int
}

// Stage is one stage's outcome.
type Stage struct {
	Index          int
	Rate, Duration float64
	// Sent counts the requests sent; Finished those that completed within
	// the client's timeout, Failed those that did not.
	Sent, Finished, Failed int
	// Over the finished requests, in milliseconds: TTFT and E2E as the
	// client measures them, TPOT = (E2E − TTFT) / (output tokens − 1) per
	// request.
	TTFT, E2E, TPOT Dist
	// PromptMean and OutputMean are the mean prompt and output tokens of
	// the stage's requests as the server counts them.
	PromptMean, OutputMean float64
	// OutputTokensPerS is the finished requests' output tokens over the
	// stage's span (first request sent to last token received);
	// RequestsPerS likewise.
	OutputTokensPerS, RequestsPerS float64
	// Start and End bound the stage on the benchmark's clock: its setup,
	// and its last request done (finished or failed).
	Start, End float64
	// PeakWaiting is the most requests queued in the engine at once;
	// MeanRunning the mean requests running over the stage's steps.
	PeakWaiting int
	MeanRunning float64
	// Overloaded reports a stage whose queue outgrew the server: requests
	// failed, or the stage drained more than OverloadDrain seconds after
	// its last request was sent.
	Overloaded bool
}

// OverloadDrain is how long after a stage's last request the engine may
// still be serving it before the stage counts as overloaded: a minute,
// several times the longest latency of any run that kept up.
const OverloadDrain = 60.0

// BlockSize is vLLM's default KV block size on CUDA.
const BlockSize = 16

// Validate checks the server's arguments against the model.
func (e Engine) Validate() error {
	switch {
	case e.TP < 1 || e.TP > 8:
		return fmt.Errorf("tensor_parallelism = %d: want 1 to 8", e.TP)
	case e.Model.QHeads%e.TP != 0 || e.Model.Intermediate%e.TP != 0 || (e.Model.KVHeads%e.TP != 0 && e.TP%e.Model.KVHeads != 0):
		return fmt.Errorf("tensor_parallelism = %d does not split %s's %d query heads, %d KV heads and MLP evenly, as vLLM requires", e.TP, e.Model.Name, e.Model.QHeads, e.Model.KVHeads)
	case e.MaxModelLen < 1 || e.MaxModelLen > e.Model.MaxPositions:
		return fmt.Errorf("max_model_len = %d: want 1 to the model's max_position_embeddings (%d)", e.MaxModelLen, e.Model.MaxPositions)
	case e.MaxNumSeqs < 1 || e.MaxNumSeqs > 4096:
		return fmt.Errorf("max_num_seqs = %d: want 1 to 4096", e.MaxNumSeqs)
	case e.MaxNumBatchedTokens < e.MaxNumSeqs || e.MaxNumBatchedTokens > 1<<20:
		return fmt.Errorf("max_num_batched_tokens = %d: want max_num_seqs (%d) to %d, as vLLM requires", e.MaxNumBatchedTokens, e.MaxNumSeqs, 1<<20)
	}
	return nil
}

// stepModel is the engine's step-time model: vLLM v1 with CUDA graphs in
// their default mode (FULL_AND_PIECEWISE), host work overlapped with the
// GPU (async scheduling), and vLLM's custom all-reduce at TP > 1.
func (e Engine) stepModel(c Constants) (hardware.StepModel, error) {
	sm, err := hardware.NewStepModel(e.GPU, e.Model, e.TP, hardware.BF16)
	if err != nil {
		return sm, err
	}
	sm.OverlapHost = true
	if e.TP > 1 {
		sm.AllReduce = hardware.VLLMAllReduce(e.GPU, e.TP)
	}
	sm.Dispatcher = cudagraph.New(cudagraph.Default, e.MaxNumSeqs, e.MaxNumBatchedTokens)
	sm.SeqDevice = c.SeqStep
	return sm, nil
}

// kvBlocks is the pool vLLM sizes at start-up for the engine (weights,
// activation reserve and KV at gpu_memory_utilization 0.9), less the null
// block.
func (e Engine) kvBlocks() (int, error) {
	p, err := hardware.Fit{GPU: e.GPU, Model: e.Model, TP: e.TP, Weights: hardware.WeightsBF16,
		BatchedTokens: e.MaxNumBatchedTokens, Positions: e.MaxModelLen}.Pool(BlockSize)
	if err != nil {
		return 0, err
	}
	return int(p.Blocks) - 1, nil
}

// request is one request's bookkeeping on the client's side.
type request struct {
	stage     int
	sent      float64 // when the client sent it
	deadline  float64 // when the client gives up
	done      bool    // finished in the engine
	abandoned bool    // aborted at its deadline
}

// Run replays the experiment whole: every stage's requests, sent when
// inference-perf sent them, served by the simulated engine, with the time
// outside the engine's steps (Constants.API) and its async scheduling
// (admission one step late) added, stage after stage.
func Run(x Experiment) (*Result, error) {
	e, w := x.Engine, x.Workload
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	c := x.Constants
	if c == (Constants{}) {
		c = Fitted
	}
	sm, err := e.stepModel(c)
	if err != nil {
		return nil, err
	}
	blocks, err := e.kvBlocks()
	if err != nil {
		return nil, err
	}
	prompts := w.Prompts()
	res := &Result{KVBlocks: blocks}
	for _, p := range prompts {
		if p.Tokens+w.Data.OutputLen > e.MaxModelLen {
			return nil, fmt.Errorf("%w: a prompt of %d tokens and %d outputs exceeds max_model_len %d", ErrTooLong, p.Tokens, w.Data.OutputLen, e.MaxModelLen)
		}
		res.Prompts = append(res.Prompts, p.Tokens)
	}
	cfg := scheduler.Config{MaxNumBatchedTokens: e.MaxNumBatchedTokens, MaxNumSeqs: e.MaxNumSeqs, ChunkedPrefill: true,
		BlockSize: BlockSize, NumBlocks: blocks, PrefixCaching: true}
	s, err := scheduler.New(cfg, scheduler.HardwareTimer{Model: sm}, nil)
	if err != nil {
		return nil, err
	}
	// The steps' records are not kept: the driver counts what the result
	// needs as each step ends.
	s.DiscardSteps = true
	d := driver{s: s, w: w, c: c, graphs: cudagraph.New(cudagraph.Default, e.MaxNumSeqs, e.MaxNumBatchedTokens)}
	start := 0.0
	for k := range w.Stages {
		reqs := w.StageRequests(k, prompts, start, len(d.reqs))
		st, err := d.stage(k, reqs)
		if err != nil {
			return nil, err
		}
		st.Start = start
		res.Stages = append(res.Stages, st)
		start = st.End + w.Interval
	}
	res.Steps, res.StreamedSteps, res.RequestSteps = d.allSteps, d.streamedSteps, d.requestSteps
	if err := d.summarise(res); err != nil {
		return nil, err
	}
	return res, nil
}

// count adds step st to the run's counts: the steps, those the
// dispatcher does not run as one graph, and the requests each advanced.
func (d *driver) count(st scheduler.Step) {
	d.allSteps++
	d.requestSteps += int64(st.Running)
	// The dispatcher reads a batch's token count and whether every
	// sequence computes one token; a step records both as counts.
	seqs := d.seqs[:0]
	for range st.DecodeTokens {
		seqs = append(seqs, hardware.Chunk{NewTokens: 1})
	}
	if st.PrefillTokens > 0 {
		seqs = append(seqs, hardware.Chunk{NewTokens: st.PrefillTokens})
	}
	d.seqs = seqs
	if _, one := d.graphs.OneLaunch(hardware.Batch{Seqs: seqs}); !one {
		d.streamedSteps++
	}
}

// ErrTooLong is a request the server would refuse: prompt and output past
// max_model_len.
var ErrTooLong = errors.New("replay: a request is longer than the server allows")

// driver feeds one engine the benchmark's requests.
type driver struct {
	s     *scheduler.Scheduler
	w     workload.InferencePerf
	c     Constants
	reqs  []request
	added int // requests handed to the engine
	// pending are the current stage's requests not yet handed over.
	pending []workload.Request
	// lastStart is when the last step started: under async scheduling the
	// step that follows it was scheduled then.
	lastStart float64
	peak      int
	// running sums the running requests over the stage's steps.
	running, steps int
	// graphs is the CUDA-graph dispatcher whose streamed steps count;
	// allSteps, streamedSteps and requestSteps are the Result's counts
	// over the whole run (count), seqs count's buffer.
	graphs                  cudagraph.Dispatcher
	allSteps, streamedSteps int
	requestSteps            int64
	seqs                    []hardware.Chunk
	// promptIDs are the token ids of each distinct prompt, by the source
	// of its question (ids).
	promptIDs map[int64][]int
}

// stage serves one stage's requests until every one has finished or been
// abandoned.
func (d *driver) stage(k int, reqs []workload.Request) (Stage, error) {
	for _, r := range reqs {
		d.reqs = append(d.reqs, request{stage: k, sent: r.Arrival, deadline: r.Arrival + d.w.Timeout})
	}
	d.pending, d.peak, d.running, d.steps = reqs, 0, 0, 0
	first := reqs[0].ID
	open := len(reqs)
	nextDeadline := first
	lastSent := reqs[len(reqs)-1].Arrival
	end := 0.0
	for open > 0 {
		d.admit()
		// Requests past their deadline are abandoned by the client, and
		// aborted by the server, between steps.
		for nextDeadline < first+len(reqs) && d.reqs[nextDeadline].deadline <= d.s.Clock() {
			q := &d.reqs[nextDeadline]
			if !q.done && nextDeadline < d.added {
				if err := d.s.Abort(nextDeadline); err != nil {
					return Stage{}, err
				}
				q.abandoned = true
				open--
				end = max(end, q.deadline)
			}
			nextDeadline++
		}
		if open == 0 {
			break
		}
		st, err := d.s.Step()
		if err != nil {
			return Stage{}, err
		}
		d.count(st)
		d.lastStart = st.Start
		d.peak = max(d.peak, st.Waiting)
		d.running += st.Running
		d.steps++
		for _, id := range st.Finished {
			d.reqs[id].done = true
			open--
			end = max(end, st.Start+st.Duration+d.c.API-d.c.inbound())
		}
	}
	st := Stage{Index: k, Rate: d.w.Stages[k].Rate, Duration: d.w.Stages[k].Duration, Sent: len(reqs), End: end, PeakWaiting: d.peak}
	st.Overloaded = end-lastSent > OverloadDrain
	if d.steps > 0 {
		st.MeanRunning = float64(d.running) / float64(d.steps)
	}
	return st, nil
}

// admit hands the engine the requests that have reached it by the time
// this step is scheduled. Under async scheduling (vLLM's default since
// v0.14) the engine core schedules step k+1 as soon as it has launched
// step k (EngineCore.step_with_batch_queue, batch queue of two), so a
// request that reaches it while step k runs waits for step k+2: the step
// about to be priced was scheduled when the last one started, and it takes
// only requests that arrived by then. An idle engine schedules at once.
func (d *driver) admit() {
	cut := d.lastStart
	if !d.s.Busy() {
		cut = d.s.Clock()
		if len(d.pending) > 0 {
			cut = max(cut, d.pending[0].Arrival+d.c.inbound())
		}
	}
	for len(d.pending) > 0 && d.pending[0].Arrival+d.c.inbound() <= cut {
		r := d.pending[0]
		d.pending = d.pending[1:]
		if err := d.s.Add(scheduler.Request{ID: r.ID, Arrival: r.Arrival + d.c.inbound(), Prompt: r.Prompt, Output: r.Output, PromptIDs: d.ids(r)}); err != nil {
			panic(fmt.Sprintf("replay: request %d: %v", r.ID, err)) // ids and arrivals are the driver's own, in order
		}
		d.added++
	}
}

// ids returns r's prompt token ids, made once per distinct prompt (the
// benchmark repeats a hundred prompts thousands of times; the engine
// copies the ids it is given).
func (d *driver) ids(r workload.Request) []int {
	key := r.Segments[len(r.Segments)-1].Source
	if ids, ok := d.promptIDs[key]; ok {
		return ids
	}
	if d.promptIDs == nil {
		d.promptIDs = map[int64][]int{}
	}
	ids := r.TokenIDs()
	d.promptIDs[key] = ids
	return ids
}

// summarise fills each stage's latencies from the engine's records.
func (d *driver) summarise(res *Result) error {
	type acc struct {
		ttft, e2e, tpot        []float64
		prompt, output         int
		firstSent, lastArrival float64
		outTokens              int
	}
	accs := make([]acc, len(res.Stages))
	for i := range accs {
		accs[i].firstSent = math.Inf(1)
	}
	for _, m := range d.s.Times() {
		q := d.reqs[m.ID]
		a := &accs[q.stage]
		a.firstSent = min(a.firstSent, q.sent)
		ttft := m.First - m.Arrival + d.c.API
		e2e := m.Last - m.Arrival + d.c.API
		if q.sent+e2e > q.deadline {
			continue // the client gave up before the last token arrived
		}
		a.ttft = append(a.ttft, ttft)
		a.e2e = append(a.e2e, e2e)
		if m.Output > 1 {
			a.tpot = append(a.tpot, (e2e-ttft)/float64(m.Output-1))
		}
		a.prompt += m.Prompt
		a.output += m.Output
		a.outTokens += m.Output
		a.lastArrival = max(a.lastArrival, q.sent+e2e)
	}
	for i := range res.Stages {
		st, a := &res.Stages[i], &accs[i]
		st.Finished = len(a.e2e)
		st.Failed = st.Sent - st.Finished
		st.Overloaded = st.Overloaded || st.Failed > 0
		st.TTFT, st.E2E, st.TPOT = distOf(a.ttft), distOf(a.e2e), distOf(a.tpot)
		if st.Finished > 0 {
			st.PromptMean = float64(a.prompt) / float64(st.Finished)
			st.OutputMean = float64(a.output) / float64(st.Finished)
			if span := a.lastArrival - a.firstSent; span > 0 {
				st.OutputTokensPerS = float64(a.outTokens) / span
				st.RequestsPerS = float64(st.Finished) / span
			}
		}
	}
	sort.SliceStable(res.Stages, func(i, j int) bool { return res.Stages[i].Index < res.Stages[j].Index })
	return nil
}

// distOf summarises xs, in seconds, in milliseconds (nearest-rank
// percentiles).
func distOf(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	p := scheduler.Summarise(xs)
	return Dist{Mean: 1e3 * p.Mean, P50: 1e3 * p.P50, P90: 1e3 * p.P90, P99: 1e3 * p.P99}
}
