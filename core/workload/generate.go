package workload

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// PCG stream constants, one per generator, so that the same seed given to
// two generators does not give correlated draws.
const (
	streamPoisson = 0x696e6665726c6162 // "inferlab"
	streamPrefix  = 0x7072656669786573 // "prefixes"
	streamChats   = 0x6368617474696e67 // "chatting"
	streamRows    = 0x6c656e6774687321 // "lengths!"
)

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// arrivals returns a Poisson process's next-arrival function: each call
// adds an exponential gap of mean 1/rate. A rate ≤ 0, NaN or +Inf makes
// every arrival 0 (and draws nothing).
func arrivals(r *rand.Rand, rate float64) func() float64 {
	t := 0.0
	if !(rate > 0) || math.IsInf(rate, 1) {
		return func() float64 { return 0 }
	}
	return func() float64 {
		t += expDraw(r) / rate
		return t
	}
}

// Poisson makes n requests with exponential inter-arrival times at rate
// requests per second (an open-loop Poisson process: the first arrives after
// one gap, not at 0), prompt and output lengths drawn from prompt and output
// (clamped to at least 1 token; a nil Lengths gives 1). A rate ≤ 0, NaN or
// +Inf means all arrive at t = 0. IDs are 0 … n−1 in arrival order; no
// request has a prefix group. n ≤ 0 gives none.
func Poisson(n int, rate float64, prompt, output Lengths, seed uint64) []Request {
	n = max(n, 0)
	r := newRand(seed, streamPoisson)
	next := arrivals(r, rate)
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{
			ID:           i,
			Arrival:      next(),
			Prompt:       draw(prompt, r, 1),
			Output:       draw(output, r, 1),
			PrefixGroup:  -1,
			Conversation: -1,
			Prev:         -1,
		}
	}
	return reqs
}

// SharedPrefix returns a copy of reqs in which each request belongs to one
// of groups prefix groups, chosen uniformly at random (seeded), and shares
// its first prefixLen prompt tokens with its group (fewer if its prompt is
// shorter: PrefixLen = min(prefixLen, Prompt)). It models a few system
// prompts or few-shot preambles reused across otherwise unrelated requests.
// Segments are cleared, since they would override the groups. groups ≤ 0
// or prefixLen ≤ 0 clears every request's group instead. reqs is not
// modified.
func SharedPrefix(reqs []Request, groups, prefixLen int, seed uint64) []Request {
	out := slices.Clone(reqs)
	r := newRand(seed, streamPrefix)
	for i := range out {
		out[i].Segments = nil
		if groups <= 0 || prefixLen <= 0 {
			out[i].PrefixGroup, out[i].PrefixLen = -1, 0
			continue
		}
		out[i].PrefixGroup = r.IntN(groups)
		out[i].PrefixLen = min(prefixLen, max(out[i].Prompt, 0))
	}
	return out
}

// Chats makes a multi-turn chat workload: conversations conversations of
// turns turns each, every turn one request.
//
// The model. Each system prompt s of systemPrompts has a length drawn once
// from systemPrompt (≥ 0 tokens). Each conversation starts at the arrival
// time of a Poisson process at rate conversations per second (rate ≤ 0 or
// +Inf: all start at 0) and picks a system prompt uniformly. Turn k's prompt
// is the system prompt, then every earlier turn's user tokens (drawn from
// userTurn, ≥ 1) and assistant reply (that turn's output, drawn from output,
// ≥ 1), then the new user tokens: a chat engine resends the whole history,
// and a prefix cache can reuse all of it. Turn k+1 arrives an exponential
// think time of mean thinkTime seconds after turn k arrives (thinkTime ≤ 0
// or not finite: at once). This is open-loop: the generator does not know
// when the reply finishes, so a simulator that wants the user to wait for
// it holds a turn until its Prev has finished. systemPrompts ≤ 0 means no
// system prompt. Prompts grow with the number of turns; nothing caps them.
//
// Token ids (Segments): turn k+1's TokenIDs are turn k's TokenIDs, then
// turn k's OutputTokenIDs, then its own user tokens; conversations with the
// same system prompt share exactly its tokens. PrefixGroup is the system
// prompt's index and PrefixLen its length. Conversation, Turn and Prev give
// the structure. Requests come sorted by arrival (ties in conversation, then
// turn, order) with IDs 0 … n−1. Consecutive turns share Segments' backing
// array.
//
// The parameters a lesson uses are its own choice; nothing here is measured
// from real chat logs.
func Chats(conversations, turns int, systemPrompt, userTurn, output Lengths,
	systemPrompts int, thinkTime float64, rate float64, seed uint64) []Request {
	if conversations <= 0 || turns <= 0 {
		return []Request{}
	}
	r := newRand(seed, streamChats)
	sysLen := make([]int, max(systemPrompts, 0))
	for s := range sysLen {
		sysLen[s] = draw(systemPrompt, r, 0)
	}
	think := thinkTime > 0 && !math.IsInf(thinkTime, 1)
	next := arrivals(r, rate)

	reqs := make([]Request, 0, conversations*turns)
	for c := range conversations {
		start := next()
		group, glen := -1, 0
		var segs []Segment
		if len(sysLen) > 0 {
			group = r.IntN(len(sysLen))
			glen = sysLen[group]
			segs = make([]Segment, 0, 1+2*turns)
			segs = append(segs, Segment{SystemPromptSource(group), glen})
		} else {
			segs = make([]Segment, 0, 2*turns)
		}
		arrival, prompt := start, glen
		for k := range turns {
			if k > 0 && think {
				arrival += float64(thinkTime * expDraw(r))
			}
			user := draw(userTurn, r, 1)
			out := draw(output, r, 1)
			segs = append(segs, Segment{turnSource(kindUserTurn, c, k), user})
			prompt += user
			reqs = append(reqs, Request{
				ID:           len(reqs), // generation index until sorted
				Arrival:      arrival,
				Prompt:       prompt,
				Output:       out,
				PrefixGroup:  group,
				PrefixLen:    glen,
				Segments:     segs[:len(segs):len(segs)],
				OutputSource: turnSource(kindReply, c, k),
				Conversation: c,
				Turn:         k,
				Prev:         -1,
			})
			segs = append(segs, Segment{turnSource(kindReply, c, k), out})
			prompt += out
		}
	}

	// Sort by arrival, keep generation order for ties, renumber, and point
	// Prev at the previous turn's new ID.
	slices.SortStableFunc(reqs, func(a, b Request) int { return cmp.Compare(a.Arrival, b.Arrival) })
	newID := make([]int, len(reqs))
	for i := range reqs {
		newID[reqs[i].ID] = i
	}
	for i := range reqs {
		old := reqs[i].ID
		reqs[i].ID = i
		if reqs[i].Turn > 0 {
			reqs[i].Prev = newID[old-1] // turns of a conversation are generated consecutively
		}
	}
	return reqs
}
