package workload

import (
	"slices"
	"testing"
)

func TestTokenIDsSharing(t *testing.T) {
	tests := []struct {
		name   string
		a, b   Request
		shared int // ids equal for exactly the first shared tokens
	}{
		{"same group",
			Request{ID: 1, Prompt: 500, PrefixGroup: 3, PrefixLen: 200},
			Request{ID: 2, Prompt: 800, PrefixGroup: 3, PrefixLen: 200}, 200},
		{"same group, different prefix lengths",
			Request{ID: 1, Prompt: 500, PrefixGroup: 3, PrefixLen: 100},
			Request{ID: 2, Prompt: 800, PrefixGroup: 3, PrefixLen: 300}, 100},
		{"different groups",
			Request{ID: 1, Prompt: 500, PrefixGroup: 3, PrefixLen: 200},
			Request{ID: 2, Prompt: 500, PrefixGroup: 4, PrefixLen: 200}, 0},
		{"no group",
			Request{ID: 1, Prompt: 500, PrefixGroup: -1},
			Request{ID: 2, Prompt: 500, PrefixGroup: -1}, 0},
		{"whole prompt shared",
			Request{ID: 1, Prompt: 64, PrefixGroup: 0, PrefixLen: 64},
			Request{ID: 2, Prompt: 64, PrefixGroup: 0, PrefixLen: 64}, 64},
		{"segments",
			Request{ID: 1, Prompt: 300, Segments: []Segment{{7, 100}, {8, 100}}},
			Request{ID: 2, Prompt: 300, Segments: []Segment{{7, 100}, {9, 100}}}, 100},
		{"segments cut at prompt",
			Request{ID: 1, Prompt: 50, Segments: []Segment{{7, 100}}},
			Request{ID: 2, Prompt: 60, Segments: []Segment{{7, 100}}}, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tt.a.TokenIDs(), tt.b.TokenIDs()
			if len(a) != tt.a.Prompt || len(b) != tt.b.Prompt {
				t.Fatalf("lengths %d, %d, want %d, %d", len(a), len(b), tt.a.Prompt, tt.b.Prompt)
			}
			for _, id := range append(slices.Clone(a), b...) {
				if id < 0 || id >= Vocab {
					t.Fatalf("id %d outside [0, %d)", id, Vocab)
				}
			}
			n := min(len(a), len(b))
			if !slices.Equal(a[:tt.shared], b[:tt.shared]) {
				t.Fatalf("first %d ids differ", tt.shared)
			}
			if tt.shared < n && a[tt.shared] == b[tt.shared] {
				t.Errorf("ids still agree at token %d, want them to differ there", tt.shared)
			}
			if !slices.Equal(a, tt.a.TokenIDs()) {
				t.Error("TokenIDs is not deterministic")
			}
		})
	}
}

func TestTokenIDsSpread(t *testing.T) {
	// Ids should look random: no long repeats, and most of a prompt distinct.
	ids := Request{ID: 5, Prompt: 20000, PrefixGroup: -1}.TokenIDs()
	seen := map[int]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	// 20,000 draws from 128,256: about 18,540 distinct are expected.
	if len(seen) < 18000 {
		t.Errorf("%d distinct ids in 20,000, want about 18,540", len(seen))
	}
	if len((Request{Prompt: 0}).TokenIDs()) != 0 || len((Request{Output: -1}).OutputTokenIDs()) != 0 {
		t.Error("empty requests should have no ids")
	}
}

func TestOutputTokenIDs(t *testing.T) {
	a := Request{ID: 1, Prompt: 10, Output: 40, PrefixGroup: -1}
	b := Request{ID: 2, Prompt: 10, Output: 40, PrefixGroup: -1}
	if slices.Equal(a.OutputTokenIDs(), b.OutputTokenIDs()) {
		t.Error("two requests' outputs are identical")
	}
	if slices.Equal(a.OutputTokenIDs(), a.TokenIDs()) {
		t.Error("output repeats the prompt")
	}
	c := Request{Output: 30, OutputSource: 77}
	if !slices.Equal(c.OutputTokenIDs(), Request{Prompt: 30, Segments: []Segment{{77, 30}}}.TokenIDs()) {
		t.Error("OutputSource is not used")
	}
}
