package parallel

import (
	"fmt"

	"github.com/inferlab/inferlab/core/hardware"
)

// Step is one priced decode step of a replica: every sequence of the batch
// computes one token, its micro-batches (GPipe) or its batches in flight
// (the batch queue) crossing the stages.
type Step struct {
	Batch, Context int
	// Micro is each micro-batch's sequences, or each batch in flight's.
	Micro []int
	// Compute[s][j] is stage s's time on micro-batch j, Comm[s][j] the
	// part of it in TP all-reduces and gathers; Send[s][j] the time to
	// hand micro-batch j to stage s+1 (none from the last stage).
	Compute, Comm, Send [][]float64
	// SendBytes[j] is micro-batch j's activations, all TP GPUs together.
	SendBytes []float64
	// Spans are the schedule: when each stage computed and sent each
	// micro-batch (under the batch queue: one period of its steady state,
	// from the first batch entering stage 1).
	Spans []Span
	// Seconds is the time between a sequence's tokens: under GPipe the
	// step, from the first micro-batch entering stage 1 to the last leaving
	// stage PP; under the batch queue the period of its steady state, from
	// one step of a batch leaving the last stage to its next.
	Seconds float64
	// Bubble is the share of the stages' time spent neither computing nor
	// sending, SendShare the share spent sending; FormulaBubble is the
	// bubble of equal stages with free sends: (p − 1) / (m + p − 1) under
	// GPipe, 1 − b/p with b batches in flight under the batch queue.
	Bubble, SendShare, FormulaBubble float64
	// Work is the kernels priced, for a caller's work bound.
	Work int64
}

// Span is one interval of the schedule.
type Span struct {
	Stage, Micro int
	Start, End   float64
	Send         bool
}

// Decode prices one decode step of batch sequences at context cached
// tokens each (context + 1 after the step): under GPipe split into the
// layout's micro-batches, under the batch queue into min(batch, PP)
// batches in flight, as evenly as whole sequences allow.
func (r *Replica) Decode(batch, context int) (Step, error) {
	m, p := r.Layout.MicroBatches, len(r.Stages)
	if r.Layout.Schedule == BatchQueue {
		m = max(1, min(batch, p))
	}
	if batch < m {
		return Step{}, fmt.Errorf("%w: %d micro-batches of a batch of %d sequences, want at most one micro-batch per sequence", ErrLayout, m, batch)
	}
	if context < 0 {
		return Step{}, fmt.Errorf("%w: context %d, want ≥ 0", ErrLayout, context)
	}
	st := Step{Batch: batch, Context: context, Micro: split(batch, m)}
	st.Compute, st.Comm, st.Send = grid(p, m), grid(p, m), grid(p, m)
	// Micro-batches differ by at most one sequence: price each size once.
	cache := map[[2]int]stagePrice{}
	for j, b := range st.Micro {
		st.SendBytes = append(st.SendBytes, sentTensors*activationBytes*float64(b)*float64(r.Setup.Model.Hidden))
		for s := range r.Stages {
			key := [2]int{s, b}
			c, ok := cache[key]
			if !ok {
				c = r.price(s, b, context, st.SendBytes[j])
				cache[key] = c
				st.Work += int64(r.Stages[s].Layers()*12 + 6)
			}
			st.Compute[s][j], st.Comm[s][j], st.Send[s][j] = c.total, c.comm, c.send
		}
	}
	if r.Layout.Schedule == BatchQueue && p > 1 {
		st.scheduleQueue()
	} else { // one stage: both schedules are one pass of the batch
		st.schedule()
	}
	return st, nil
}

// stagePrice is one stage's time on one micro-batch.
type stagePrice struct{ total, comm, send float64 }

// price is stage s's time on one micro-batch of b sequences, its
// collectives, and its send of bytes to the next stage.
func (r *Replica) price(s, b, context int, bytes float64) (out stagePrice) {
	stg := &r.Stages[s]
	c := stg.step.Step(hardware.DecodeBatch(b, context))
	out.total, out.comm = c.Total, c.Comm
	if s < len(r.Stages)-1 {
		out.send = r.SendSeconds(stg, bytes)
	}
	return out
}

// SendSeconds is the time to hand bytes of activations from stage st to
// the next: each of the TP GPUs sends its 1/TP slice over its link, and
// the receiving stage all-gathers the slices over NVLink.
func (r *Replica) SendSeconds(st *Stage, bytes float64) float64 {
	tp := r.Layout.TP
	t := st.Next.Transfer(bytes / float64(tp))
	if tp > 1 {
		t += st.step.AllReduce.GatherTime(bytes, tp)
	}
	return t
}

// schedule walks the GPipe order: micro-batch j starts on stage s once
// stage s has finished and sent micro-batch j−1 and micro-batch j has
// arrived; the step ends when the last micro-batch leaves the last stage.
func (st *Step) schedule() {
	p, m := len(st.Compute), len(st.Micro)
	free := make([]float64, p)
	var busy, sending float64
	for j := range m {
		arrive := 0.0
		for s := range p {
			start := max(free[s], arrive)
			end := start + st.Compute[s][j]
			st.Spans = append(st.Spans, Span{Stage: s, Micro: j, Start: start, End: end})
			busy += st.Compute[s][j]
			free[s] = end
			if s < p-1 {
				sent := end + st.Send[s][j]
				st.Spans = append(st.Spans, Span{Stage: s, Micro: j, Start: end, End: sent, Send: true})
				sending += st.Send[s][j]
				free[s], arrive = sent, sent
			}
		}
	}
	st.Seconds = free[p-1]
	total := float64(p) * st.Seconds
	st.Bubble = 1 - (busy+sending)/total
	st.SendShare = sending / total
	st.FormulaBubble = float64(p-1) / float64(m+p-1)
}

// queueRounds is how many steps of every batch scheduleQueue walks before
// it measures the period: the schedule starts empty and settles into its
// steady state within a few rounds.
const queueRounds = 16

// scheduleQueue walks the batch queue: batch j's step k enters stage 1
// once its step k−1 has left stage PP and stage 1 has finished (and sent)
// the batch ahead of it, each stage serving the batches in turn. Seconds
// is the mean period of batch 1 over the second half of the rounds; Spans
// are the last round's, shifted to start at 0.
func (st *Step) scheduleQueue() {
	p, m := len(st.Compute), len(st.Micro)
	free := make([]float64, p)
	back := make([]float64, m) // when batch j's last step left stage PP
	var mid, origin float64
	for k := range queueRounds {
		last := k == queueRounds-1
		for j := range m {
			arrive := back[j]
			for s := range p {
				start := max(free[s], arrive)
				end := start + st.Compute[s][j]
				if last && j == 0 && s == 0 {
					origin = start
				}
				if last {
					st.Spans = append(st.Spans, Span{Stage: s, Micro: j, Start: start - origin, End: end - origin})
				}
				free[s], arrive = end, end
				if s < p-1 {
					sent := end + st.Send[s][j]
					if last {
						st.Spans = append(st.Spans, Span{Stage: s, Micro: j, Start: end - origin, End: sent - origin, Send: true})
					}
					free[s], arrive = sent, sent
				}
			}
			back[j] = arrive
		}
		if k == queueRounds/2-1 {
			mid = back[0]
		}
	}
	st.Seconds = (back[0] - mid) / float64(queueRounds/2)
	var busy, sending float64
	for s := range p {
		for j := range m {
			busy += st.Compute[s][j]
			if s < p-1 {
				sending += st.Send[s][j]
			}
		}
	}
	total := float64(p) * st.Seconds
	st.Bubble = max(0, 1-(busy+sending)/total)
	st.SendShare = sending / total
	st.FormulaBubble = 1 - float64(m)/float64(p)
}

// split is n sequences in m micro-batches, the first n mod m one larger.
func split(n, m int) []int {
	out := make([]int, m)
	for i := range out {
		out[i] = n / m
		if i < n%m {
			out[i]++
		}
	}
	return out
}

func grid(p, m int) [][]float64 {
	g := make([][]float64, p)
	for i := range g {
		g[i] = make([]float64, m)
	}
	return g
}

// PerUser is the tokens per second each sequence of the step sees.
func (st Step) PerUser() float64 { return 1 / st.Seconds }

// PerReplica is the tokens per second the replica produces.
func (st Step) PerReplica() float64 { return float64(st.Batch) / st.Seconds }

// PerGPU is the tokens per second per GPU of the replica's gpus.
func (st Step) PerGPU(gpus int) float64 { return st.PerReplica() / float64(gpus) }

// CommShare is the share of the stages' compute time spent in TP
// collectives.
func (st Step) CommShare() float64 {
	var c, t float64
	for s := range st.Compute {
		for j := range st.Compute[s] {
			c += st.Comm[s][j]
			t += st.Compute[s][j]
		}
	}
	if t == 0 {
		return 0
	}
	return c / t
}

// StageKernels is one GPU's kernels of stage s for a micro-batch of b
// sequences at context tokens, placed on the step's timeline.
func (r *Replica) StageKernels(s, b, context int) []hardware.Kernel {
	return r.Stages[s].step.Step(hardware.DecodeBatch(b, context)).Kernels
}
