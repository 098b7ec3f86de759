package scheduler

import (
	"math"
	"sort"
)

// RequestMetrics are one finished request's latencies, in seconds.
type RequestMetrics struct {
	ID      int
	Arrival float64
	// Scheduled is when the step that first scheduled the request began
	// (Scheduled − Arrival is Sarathi-Serve's scheduling delay).
	Scheduled   float64
	TTFT        float64   // first token time − arrival
	ITL         []float64 // every gap between consecutive output tokens
	TPOT        float64   // (last − first token) / (outputs − 1); 0 with one output
	E2E         float64   // last token time − arrival
	Preemptions int
	CachedHit   int // prompt tokens found in the prefix cache at first admission
	Prompt      int
	Output      int
}

// Requests returns the metrics of every finished request, by arrival. The
// requests' ITL slices share one backing array.
func (l *batchLoop) Requests() []RequestMetrics {
	n, gaps := 0, 0
	for _, r := range l.reqs {
		if r.status == finished {
			n++
			gaps += r.generated - 1
		}
	}
	out := make([]RequestMetrics, 0, n)
	itl := make([]float64, 0, gaps)
	var times []float64
	for _, r := range l.reqs {
		if r.status != finished {
			continue
		}
		m := RequestMetrics{ID: r.ID, Arrival: r.Arrival, Scheduled: r.scheduled, Preemptions: r.preempted, CachedHit: r.cachedHit, Prompt: r.Prompt, Output: r.Output}
		times = r.tokens.times(times[:0], l.ends)
		k := len(times)
		first, last := times[0], times[k-1]
		m.TTFT, m.E2E = first-r.Arrival, last-r.Arrival
		if k > 1 {
			start := len(itl)
			for i := 1; i < k; i++ {
				itl = append(itl, times[i]-times[i-1])
			}
			m.ITL = itl[start:len(itl):len(itl)]
			m.TPOT = (last - first) / float64(k-1)
		}
		out = append(out, m)
	}
	return out
}

// Finished counts the requests that have finished, without building their
// metrics.
func (l *batchLoop) Finished() int {
	n := 0
	for _, r := range l.reqs {
		if r.status == finished {
			n++
		}
	}
	return n
}

// TokenTimes returns the times at which request id's output tokens appeared.
func (l *batchLoop) TokenTimes(id int) []float64 {
	r, ok := l.byIDs()[id]
	if !ok || r.generated == 0 {
		return nil
	}
	return r.tokens.times(make([]float64, 0, r.generated), l.ends)
}

// Steps returns the steps run so far (none with DiscardSteps).
func (l *batchLoop) Steps() []Step { return l.steps }

// Percentiles of a sample.
type Percentiles struct{ Mean, P50, P90, P95, P99, Max float64 }

// Summarise computes the mean and the p50/p90/p95/p99 (nearest rank) of xs.
func Summarise(xs []float64) Percentiles {
	return summariseOwned(append([]float64(nil), xs...))
}

// summariseOwned is Summarise on a slice it may reorder.
func summariseOwned(s []float64) Percentiles {
	if len(s) == 0 {
		return Percentiles{}
	}
	sortFloats(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Percentiles{Mean: sum / float64(len(s)), P50: rank(50), P90: rank(90), P95: rank(95), P99: rank(99), Max: s[len(s)-1]}
}

// sortFloats sorts xs ascending into exactly the order sort.Float64s
// gives. A run's ITL sample holds one gap per output token (2.5 million at
// 10,000 requests of 256 tokens), and sorting it was most of Summary's
// time. Latencies are non-negative, and the IEEE bits of non-negative
// floats order as the numbers do, so a least-significant-byte radix sort of
// the bits sorts them in linear time; a byte every key shares is skipped.
// Anything else (a negative, -0, NaN) and small samples take
// sort.Float64s.
func sortFloats(xs []float64) {
	if len(xs) < radixMin {
		sort.Float64s(xs)
		return
	}
	for _, x := range xs {
		if math.Signbit(x) || x != x {
			sort.Float64s(xs)
			return
		}
	}
	keys, buf := make([]uint64, len(xs)), make([]uint64, len(xs))
	for i, x := range xs {
		keys[i] = math.Float64bits(x)
	}
	var at [1 << radixBits]int
	for shift := 0; shift < 64; shift += radixBits {
		clear(at[:])
		for _, k := range keys {
			at[(k>>shift)&radixMask]++
		}
		if at[(keys[0]>>shift)&radixMask] == len(keys) {
			continue // every key has this digit: the pass would change nothing
		}
		pos := 0
		for d, c := range at {
			at[d] = pos
			pos += c
		}
		for _, k := range keys {
			d := (k >> shift) & radixMask
			buf[at[d]] = k
			at[d]++
		}
		keys, buf = buf, keys
	}
	for i, k := range keys {
		xs[i] = math.Float64frombits(k)
	}
}

// The radix sort's digit: 16 bits, four passes at most.
const (
	radixBits = 16
	radixMask = 1<<radixBits - 1
)

// radixMin is the sample size from which sortFloats sorts by radix (below
// it, clearing and scanning the 65,536 counters of each pass costs more
// than the comparison sort).
const radixMin = 1 << 16

// SLO is a latency objective for goodput (DistServe's definition: a request
// counts when it meets both).
type SLO struct{ TTFT, TPOT float64 }

// Summary aggregates a run.
type Summary struct {
	Requests          int
	Makespan          float64 // first arrival to last token, s
	TTFT, ITL, TPOT   Percentiles
	E2E               Percentiles
	OutputTokensPerS  float64 // generated tokens / makespan
	TotalTokensPerS   float64 // (prompt + generated) / makespan
	RequestsPerS      float64
	GoodputReqPerS    float64 // requests meeting the SLO / makespan
	SLOAttainment     float64 // share of requests meeting the SLO
	Preemptions       int
	PrefixHitRate     float64 // prompt tokens found cached at first admission / prompt tokens
	Steps             int
	MeanBatchTokens   float64
	MeanRunningAtStep float64
}

// Summary computes aggregates over the finished requests, with the
// scheduler's own step statistics.
func (l *batchLoop) Summary(slo SLO) Summary {
	out := SummariseRequests(l.Requests(), slo)
	t := l.tally
	out.Steps = t.steps
	if t.steps > 0 {
		out.MeanBatchTokens = float64(t.tokens) / float64(t.steps)
		out.MeanRunningAtStep = float64(t.running) / float64(t.steps)
	}
	return out
}

// stepTally sums the steps of a run as they end, whether or not their
// records are kept (DiscardSteps).
type stepTally struct {
	steps   int
	tokens  int // prefill and decode tokens scheduled
	running int // Step.Running summed
}

func (t *stepTally) add(st *Step) {
	t.steps++
	t.tokens += st.PrefillTokens + st.DecodeTokens
	t.running += st.Running
}

// SummariseRequests aggregates what users saw, from request metrics of one
// worker or of a whole cluster: percentiles, the makespan from the first
// arrival to the last token, throughput, goodput under slo and the share of
// prompt tokens found in a prefix cache at first admission.
func SummariseRequests(ms []RequestMetrics, slo SLO) Summary {
	out := Summary{Requests: len(ms)}
	if len(ms) == 0 {
		return out
	}
	gaps := 0
	for _, m := range ms {
		gaps += len(m.ITL)
	}
	ttft, itl, tpot, e2e := make([]float64, 0, len(ms)), make([]float64, 0, gaps), make([]float64, 0, len(ms)), make([]float64, 0, len(ms))
	start, end := math.Inf(1), math.Inf(-1)
	tokens, outputs, good, prompt, cached := 0, 0, 0, 0, 0
	for _, m := range ms {
		ttft = append(ttft, m.TTFT)
		itl = append(itl, m.ITL...)
		if m.Output > 1 {
			tpot = append(tpot, m.TPOT)
		}
		e2e = append(e2e, m.E2E)
		start, end = min(start, m.Arrival), max(end, m.Arrival+m.E2E)
		tokens += m.Prompt + m.Output
		outputs += m.Output
		prompt += m.Prompt
		cached += m.CachedHit
		out.Preemptions += m.Preemptions
		if m.TTFT <= slo.TTFT && m.TPOT <= slo.TPOT {
			good++
		}
	}
	out.TTFT, out.ITL, out.TPOT, out.E2E = summariseOwned(ttft), summariseOwned(itl), summariseOwned(tpot), summariseOwned(e2e)
	out.Makespan = end - start
	if out.Makespan > 0 {
		out.OutputTokensPerS = float64(outputs) / out.Makespan
		out.TotalTokensPerS = float64(tokens) / out.Makespan
		out.RequestsPerS = float64(len(ms)) / out.Makespan
		out.GoodputReqPerS = float64(good) / out.Makespan
	}
	out.SLOAttainment = float64(good) / float64(len(ms))
	if prompt > 0 {
		out.PrefixHitRate = float64(cached) / float64(prompt)
	}
	return out
}
