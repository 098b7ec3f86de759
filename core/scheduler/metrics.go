package scheduler

import (
	"math"
	"sort"
)

// RequestMetrics are one finished request's latencies, in seconds.
type RequestMetrics struct {
	ID          int
	Arrival     float64
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
func (s *Scheduler) Requests() []RequestMetrics {
	n, gaps := 0, 0
	for _, r := range s.reqs {
		if r.status == finished {
			n++
			gaps += r.generated - 1
		}
	}
	out := make([]RequestMetrics, 0, n)
	itl := make([]float64, 0, gaps)
	var times []float64
	for _, r := range s.reqs {
		if r.status != finished {
			continue
		}
		m := RequestMetrics{ID: r.ID, Arrival: r.Arrival, Preemptions: r.preempted, CachedHit: r.cachedHit, Prompt: r.Prompt, Output: r.Output}
		times = r.tokens.times(times[:0], s.ends)
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
func (s *Scheduler) Finished() int {
	n := 0
	for _, r := range s.reqs {
		if r.status == finished {
			n++
		}
	}
	return n
}

// TokenTimes returns the times at which request id's output tokens appeared.
func (s *Scheduler) TokenTimes(id int) []float64 {
	r, ok := s.byID[id]
	if !ok || r.generated == 0 {
		return nil
	}
	return r.tokens.times(make([]float64, 0, r.generated), s.ends)
}

// Steps returns the steps run so far.
func (s *Scheduler) Steps() []Step { return s.steps }

// Percentiles of a sample.
type Percentiles struct{ Mean, P50, P90, P95, P99, Max float64 }

// Summarise computes the mean and the p50/p90/p95/p99 (nearest rank) of xs.
func Summarise(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
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
func (s *Scheduler) Summary(slo SLO) Summary {
	out := SummariseRequests(s.Requests(), slo)
	out.Steps = len(s.steps)
	bt, run := 0, 0
	for _, st := range s.steps {
		bt += st.PrefillTokens + st.DecodeTokens
		run += st.Running
	}
	if len(s.steps) > 0 {
		out.MeanBatchTokens = float64(bt) / float64(len(s.steps))
		out.MeanRunningAtStep = float64(run) / float64(len(s.steps))
	}
	return out
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
	var ttft, itl, tpot, e2e []float64
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
	out.TTFT, out.ITL, out.TPOT, out.E2E = Summarise(ttft), Summarise(itl), Summarise(tpot), Summarise(e2e)
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
