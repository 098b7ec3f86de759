package workload

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

func TestDeterminism(t *testing.T) {
	gens := []struct {
		name string
		gen  func(seed uint64) []Request
	}{
		{"poisson fixed", func(s uint64) []Request { return Poisson(500, 10, Fixed{512}, Uniform{1, 512}, s) }},
		{"poisson longtail", func(s uint64) []Request { return Poisson(500, 3.5, ChatPrompts(), ChatOutputs(), s) }},
		{"shared prefix", func(s uint64) []Request {
			return SharedPrefix(Poisson(500, 10, ChatPrompts(), Fixed{64}, 1), 8, 256, s)
		}},
		{"chats", func(s uint64) []Request {
			return Chats(40, 5, Uniform{100, 900}, ChatPrompts(), ChatOutputs(), 3, 20, 2, s)
		}},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			a, b, c := g.gen(42), g.gen(42), g.gen(43)
			if !reflect.DeepEqual(a, b) {
				t.Error("same seed gave different requests")
			}
			if reflect.DeepEqual(a, c) {
				t.Error("different seeds gave identical requests")
			}
		})
	}
}

func TestPoisson(t *testing.T) {
	tests := []struct {
		name string
		rate float64
	}{
		{"slow", 0.5},
		{"one per second", 1},
		{"busy", 40},
		{"very busy", 2500},
	}
	const n = 20000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := Poisson(n, tt.rate, Fixed{512}, Fixed{256}, 7)
			if len(reqs) != n {
				t.Fatalf("len = %d, want %d", len(reqs), n)
			}
			prev := 0.0
			for i, r := range reqs {
				if r.ID != i || r.Arrival < prev || r.Prompt != 512 || r.Output != 256 ||
					r.PrefixGroup != -1 || r.Conversation != -1 || r.Prev != -1 {
					t.Fatalf("request %d = %+v", i, r)
				}
				prev = r.Arrival
			}
			// The mean gap is the last arrival over n.
			mean, want := reqs[n-1].Arrival/n, 1/tt.rate
			if math.Abs(mean-want) > 0.05*want {
				t.Errorf("mean inter-arrival = %.5g s, want %.5g s ± 5%%", mean, want)
			}
		})
	}
	for _, rate := range []float64{0, -3, math.Inf(1), math.NaN()} {
		for _, r := range Poisson(50, rate, Fixed{1}, Fixed{1}, 1) {
			if r.Arrival != 0 {
				t.Fatalf("rate %v: arrival %v, want 0", rate, r.Arrival)
			}
		}
	}
	if got := Poisson(-1, 1, nil, nil, 1); len(got) != 0 {
		t.Errorf("n = -1 gave %d requests", len(got))
	}
	// Lengths are clamped to at least one token; nil Lengths give 1.
	for _, r := range Poisson(100, 1, Fixed{0}, nil, 1) {
		if r.Prompt != 1 || r.Output != 1 {
			t.Fatalf("got prompt %d output %d, want 1 and 1", r.Prompt, r.Output)
		}
	}
}

func TestSharedPrefix(t *testing.T) {
	base := Poisson(2000, 10, Uniform{1, 600}, Fixed{16}, 3)
	orig := slices.Clone(base)
	reqs := SharedPrefix(base, 5, 300, 9)
	if !reflect.DeepEqual(base, orig) {
		t.Fatal("SharedPrefix modified its input")
	}
	count := make([]int, 5)
	for i, r := range reqs {
		if r.PrefixGroup < 0 || r.PrefixGroup >= 5 {
			t.Fatalf("request %d: group %d", i, r.PrefixGroup)
		}
		count[r.PrefixGroup]++
		if r.PrefixLen != min(300, r.Prompt) {
			t.Fatalf("request %d: PrefixLen %d with prompt %d, want min(300, prompt)", i, r.PrefixLen, r.Prompt)
		}
		r.PrefixGroup, r.PrefixLen = -1, 0
		if !reflect.DeepEqual(r, orig[i]) {
			t.Fatalf("request %d: other fields changed", i)
		}
	}
	for g, c := range count { // uniform: 400 each, σ ≈ 18
		if c < 320 || c > 480 {
			t.Errorf("group %d has %d requests, want about 400", g, c)
		}
	}
	for _, args := range [][2]int{{0, 100}, {4, 0}} {
		for _, r := range SharedPrefix(reqs, args[0], args[1], 1) {
			if r.PrefixGroup != -1 || r.PrefixLen != 0 {
				t.Fatalf("groups %d, prefixLen %d: got group %d len %d", args[0], args[1], r.PrefixGroup, r.PrefixLen)
			}
		}
	}
}

func TestChats(t *testing.T) {
	tests := []struct {
		name                 string
		conversations, turns int
		system               Lengths
		systemPrompts        int
		think, rate          float64
	}{
		{"typical", 30, 6, Uniform{200, 800}, 3, 15, 1},
		{"one system prompt", 10, 4, Fixed{500}, 1, 5, 2},
		{"no system prompt", 10, 4, Fixed{500}, 0, 5, 2},
		{"zero-length system prompts", 8, 3, Fixed{0}, 2, 5, 2},
		{"burst, no think time", 12, 5, Fixed{100}, 2, 0, 0},
		{"single turn", 20, 1, Fixed{100}, 4, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := Chats(tt.conversations, tt.turns, tt.system, Uniform{10, 120}, Uniform{1, 300},
				tt.systemPrompts, tt.think, tt.rate, 5)
			if len(reqs) != tt.conversations*tt.turns {
				t.Fatalf("len = %d, want %d", len(reqs), tt.conversations*tt.turns)
			}
			// Index turns by conversation, check IDs, order and Prev.
			conv := make([][]Request, tt.conversations)
			for i, r := range reqs {
				if r.ID != i {
					t.Fatalf("request %d has ID %d", i, r.ID)
				}
				if i > 0 && r.Arrival < reqs[i-1].Arrival {
					t.Fatalf("request %d arrives before request %d", i, i-1)
				}
				if r.Turn != len(conv[r.Conversation]) {
					t.Fatalf("request %d: turn %d out of order", i, r.Turn)
				}
				if r.Turn == 0 && r.Prev != -1 || r.Turn > 0 && r.Prev != conv[r.Conversation][r.Turn-1].ID {
					t.Fatalf("request %d: Prev = %d", i, r.Prev)
				}
				conv[r.Conversation] = append(conv[r.Conversation], r)
			}
			sysOf := map[int][]int{} // system prompt → its ids, as first seen
			firstTurns := map[int][][]int{}
			for c, turns := range conv {
				for k, r := range turns {
					ids := r.TokenIDs()
					if len(ids) != r.Prompt {
						t.Fatalf("conv %d turn %d: %d ids for prompt %d", c, k, len(ids), r.Prompt)
					}
					if k > 0 {
						// Turn k's ids extend turn k−1's prompt and output exactly.
						p := turns[k-1]
						full := append(p.TokenIDs(), p.OutputTokenIDs()...)
						if len(ids) <= len(full) || !slices.Equal(ids[:len(full)], full) {
							t.Fatalf("conv %d turn %d does not start with turn %d's prompt and output", c, k, k-1)
						}
						if r.Arrival < p.Arrival {
							t.Fatalf("conv %d turn %d arrives before turn %d", c, k, k-1)
						}
					}
					if r.PrefixGroup != turns[0].PrefixGroup || r.PrefixLen != turns[0].PrefixLen {
						t.Fatalf("conv %d turn %d: prefix group changed", c, k)
					}
				}
				r := turns[0]
				if tt.systemPrompts <= 0 {
					if r.PrefixGroup != -1 || r.PrefixLen != 0 {
						t.Fatalf("conv %d: group %d len %d without system prompts", c, r.PrefixGroup, r.PrefixLen)
					}
					continue
				}
				ids := r.TokenIDs()
				sys := ids[:r.PrefixLen]
				if want, ok := sysOf[r.PrefixGroup]; ok && !slices.Equal(sys, want) {
					t.Fatalf("conv %d: system prompt %d differs from an earlier conversation's", c, r.PrefixGroup)
				}
				sysOf[r.PrefixGroup] = sys
				firstTurns[r.PrefixGroup] = append(firstTurns[r.PrefixGroup], ids)
			}
			// Same system prompt: they share exactly its tokens, no more
			// (the next token is each conversation's own user turn).
			for g, list := range firstTurns {
				n := len(sysOf[g])
				for i := 1; i < len(list); i++ {
					if list[i][n] == list[0][n] {
						t.Errorf("system prompt %d: conversations share token %d, past the system prompt", g, n)
					}
				}
			}
			// Different system prompts differ at token 0 (when both exist).
			for g := range firstTurns {
				for h := range firstTurns {
					if g < h && len(sysOf[g]) > 0 && len(sysOf[h]) > 0 && sysOf[g][0] == sysOf[h][0] {
						t.Errorf("system prompts %d and %d share token 0", g, h)
					}
				}
			}
		})
	}
	if got := Chats(0, 3, nil, nil, nil, 1, 1, 1, 1); len(got) != 0 {
		t.Errorf("0 conversations gave %d requests", len(got))
	}
}

func TestChatsThinkTime(t *testing.T) {
	// The gap between consecutive turns is exponential with mean thinkTime.
	reqs := Chats(2000, 6, Fixed{100}, Fixed{20}, Fixed{50}, 2, 12, 1, 8)
	last := map[int]float64{}
	sum, n := 0.0, 0
	for _, r := range reqs {
		if r.Turn > 0 {
			sum += r.Arrival - last[r.Conversation]
			n++
		}
		last[r.Conversation] = r.Arrival
	}
	if mean := sum / float64(n); math.Abs(mean-12) > 0.05*12 {
		t.Errorf("mean think time = %.3f s, want 12 ± 5%%", mean)
	}
}
