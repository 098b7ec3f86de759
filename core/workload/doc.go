// Package workload makes the requests a simulated serving engine serves:
// seeded generators (Poisson arrivals, shared-prefix groups, multi-turn
// chats) and a small JSONL trace format that users may upload.
//
// The model. A Request is an arrival time, a prompt length and an output
// length, in tokens. Its prompt tokens are not text but deterministic token
// ids (Request.TokenIDs), so that a prefix cache or a KV-aware router can
// compare prompts exactly as a real engine compares token ids: two requests
// share a cached prefix exactly as far as their ids agree. Ids come from
// "sources": a source is an endless, fixed pseudo-random run of ids, and a
// prompt is a concatenation of runs (Segments). Requests that should share
// tokens (a system prompt, a few-shot preamble, the earlier turns of a
// conversation) draw them from the same source; everything else is drawn
// from a source unique to the request. Ids of different sources agree only
// by chance (1 in Vocab per token), as unrelated text sometimes does.
//
// Determinism. The same arguments and seed give the same requests, bit for
// bit, natively on every architecture and in WebAssembly: randomness is
// math/rand/v2's PCG seeded with rand.NewPCG(seed, constant); the
// logarithms and exponentials behind the exponential, normal and lognormal
// draws are computed by this package in plain float64 arithmetic (the
// standard library's math.Log and math.Exp are assembly on some
// architectures and may differ there in the last bit), with explicit
// conversions that stop the compiler from fusing a multiply and an add
// (which arm64 does, and amd64 with GOAMD64=v3); outputs never depend on map
// order or the clock. TestGolden pins the bits.
//
// Bounds. Generators trust their caller (lessons validate their knobs).
// ParseTrace does not: it bounds the trace's size, request count and token
// counts (Limits) and rejects anything else with a message that names the
// line, the field, the value and the allowed range.
//
// The length distributions' default parameters (ChatPrompts, ChatOutputs)
// are illustrative round numbers with the shape of chat traffic, not fitted
// to any data set.
package workload
