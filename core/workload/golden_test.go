package workload

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"testing"
)

// digest hashes every field of reqs that a simulation would read.
func digest(reqs []Request) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(x uint64) { binary.LittleEndian.PutUint64(b[:], x); h.Write(b[:]) }
	for _, r := range reqs {
		put(uint64(r.ID))
		put(math.Float64bits(r.Arrival))
		for _, x := range []int{r.Prompt, r.Output, r.PrefixGroup, r.PrefixLen, r.Conversation, r.Turn, r.Prev} {
			put(uint64(x))
		}
		for _, s := range r.Segments {
			put(uint64(s.Source))
			put(uint64(s.Len))
		}
		put(uint64(r.OutputSource))
		for _, id := range r.TokenIDs() {
			put(uint64(id))
		}
	}
	return h.Sum64()
}

// TestGolden pins the exact bits of generated workloads. The values must be
// the same on every architecture, with GOAMD64=v3 (fused multiply-add
// allowed) and in WebAssembly (GOOS=js GOARCH=wasm, run with
// `go test -exec "$(go env GOROOT)/lib/wasm/go_js_wasm_exec"`). If a change
// to a generator is intended, update the values and say so in the commit.
func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		reqs []Request
		want uint64
	}{
		{"poisson chat", Poisson(1000, 5, ChatPrompts(), ChatOutputs(), 1), 0x4fda102ba67a59c4},
		{"shared prefix", SharedPrefix(Poisson(500, 2.5, Uniform{64, 2048}, Fixed{128}, 2), 7, 300, 3), 0xb94aa7136a3600d6},
		{"stratified poisson", StratifiedPoisson(1000, 5, ChatPrompts(), Uniform{Min: 100, Max: 200}, 1), 0x23f268d0f462ad7d},
		{"chats", Chats(50, 6, LongTail{Median: 800, Sigma: 0.5, Min: 100, Max: 4000}, ChatPrompts(), ChatOutputs(), 4, 20, 0.5, 4), 0x3adec563888b02a0},
	}
	for _, tt := range tests {
		if got := digest(tt.reqs); got != tt.want {
			t.Errorf("%s: digest = %#x, want %#x", tt.name, got, tt.want)
		}
	}
	// A few values in the clear, so a failure shows what moved.
	p := Poisson(3, 5, ChatPrompts(), ChatOutputs(), 1)
	for i, want := range []struct {
		arrival        float64
		prompt, output int
	}{{0.9379116746816404, 129, 382}, {1.1484800008712968, 217, 193}, {1.1646609558407042, 154, 378}} {
		if p[i].Arrival != want.arrival || p[i].Prompt != want.prompt || p[i].Output != want.output {
			t.Errorf("poisson request %d = %v s, %d, %d; want %v s, %d, %d", i,
				p[i].Arrival, p[i].Prompt, p[i].Output, want.arrival, want.prompt, want.output)
		}
	}
}
