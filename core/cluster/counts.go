package cluster

import "github.com/inferlab/inferlab/core/scheduler"

// DecodeWeight is what one decode token costs the simulator, in prompt
// tokens: a decode is a request advanced by one engine step, and a step of
// its own (at batch 1: scheduling, pricing, recording) takes about 1.8 µs
// of CPU, where a prompt token takes about 0.05 µs to hash and look up and
// 0.17 µs more to compute (its blocks and KV events). Measured on the
// development machine with smart-routing: 4,096-token outputs at 0.1 req/s,
// 1.7 s for 0.9 M steps of 1 M decodes; at 500 req/s, 0.5 s for 0.14 M
// steps; 32,768-token prompts, 2.5 s for 11 M tokens looked up and 10 M
// computed. Lessons weigh work with it.
const DecodeWeight = 16

// Counts tallies what a run simulated, over all workers: engine steps, the
// prompt tokens of the requests it admitted (each hashed and looked up),
// the prompt tokens the steps computed (recomputation after preemption
// included, cache hits not), the decode tokens (one per request per decode
// step), and the workers the router scored.
type Counts struct {
	Steps, PromptTokens, PrefillTokens, DecodeTokens, Scored int64
}

// Work is the run's simulated work in prompt-token units: prompt tokens
// admitted and computed, DecodeWeight per decode token, one per worker
// scored. Without preemption a request of p prompt and o output tokens
// adds at most 2p + DecodeWeight·o when it is routed among at most
// DecodeWeight workers (its first output token comes from the prefill).
func (c Counts) Work() int64 {
	return c.PromptTokens + c.PrefillTokens + DecodeWeight*c.DecodeTokens + c.Scored
}

// add counts one engine step.
func (c *Counts) add(st scheduler.Step) {
	c.Steps++
	c.PrefillTokens += int64(st.PrefillTokens)
	c.DecodeTokens += int64(st.DecodeTokens)
}

// Plus is the sum of two tallies.
func (c Counts) Plus(o Counts) Counts {
	return Counts{Steps: c.Steps + o.Steps, PromptTokens: c.PromptTokens + o.PromptTokens, PrefillTokens: c.PrefillTokens + o.PrefillTokens,
		DecodeTokens: c.DecodeTokens + o.DecodeTokens, Scored: c.Scored + o.Scored}
}

// Busy is the engine time a run's steps took, summed over workers (a
// worker's seconds, not its GPUs'), split between the two phases: each
// step's duration goes to its prefill and its decode tokens in proportion
// to their counts, since in a mixed batch every token passes through the
// same weight GEMMs (docs/SOURCES.md#cost-split). A step of decodes alone
// is all Decode, one of prefill chunks alone all Prefill. The lessons
// price GPU time with it; it is not part of the simulation.
type Busy struct{ Prefill, Decode float64 }

// Add counts one engine step.
func (b *Busy) Add(st scheduler.Step) {
	p, d := st.PrefillTokens, st.DecodeTokens
	if p+d == 0 {
		return
	}
	share := float64(p) / float64(p+d)
	b.Prefill += st.Duration * share
	b.Decode += st.Duration * (1 - share)
}

// AddSteps counts every step of steps.
func (b *Busy) AddSteps(steps []scheduler.Step) {
	for _, st := range steps {
		b.Add(st)
	}
}
