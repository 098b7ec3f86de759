package workload

import (
	"math"
	"testing"
)

// TestPresetBoundsHold computes every preset's bounds from its file: the
// request count, the highest mean prompt and output over any leading part,
// the longest request and the window's mean rate.
func TestPresetBoundsHold(t *testing.T) {
	if len(presetBounds) != len(presets) {
		t.Fatalf("%d presets, %d with bounds", len(presets), len(presetBounds))
	}
	for _, p := range presets {
		b, ok := BoundsOf(p.ID)
		if !ok {
			t.Fatalf("%s has no bounds", p.ID)
		}
		reqs, err := LoadPreset(p.ID, PresetWindow)
		if err != nil {
			t.Fatal(err)
		}
		var got PresetBounds
		got.Requests = len(reqs)
		var prompt, output float64
		for i, r := range reqs {
			prompt += float64(r.Prompt)
			output += float64(r.Output)
			n := float64(i + 1)
			got.MeanPrompt = max(got.MeanPrompt, prompt/n)
			got.MeanOutput = max(got.MeanOutput, output/n)
			got.Longest = max(got.Longest, r.Prompt+r.Output)
		}
		got.Rate = float64(len(reqs)) / PresetWindow
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
		if got.Requests != b.Requests || got.Longest != b.Longest || !near(got.MeanPrompt, b.MeanPrompt) || !near(got.MeanOutput, b.MeanOutput) || !near(got.Rate, b.Rate) {
			t.Errorf("%s: the file gives %+v, the table says %+v", p.ID, got, b)
		}
	}
}

// Leading's requests bound the tokens and the prefill chunks of every
// leading part of a preset.
func TestPresetLeadingBoundsTokensAndChunks(t *testing.T) {
	const budget = 2048
	for _, p := range presets {
		reqs, err := LoadPreset(p.ID, PresetWindow)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := BoundsOf(p.ID)
		var prompt, output, chunks int
		for i, r := range reqs {
			prompt += r.Prompt
			output += r.Output
			chunks += (r.Prompt + budget - 1) / budget
			bound := b.Leading(i+1, budget-1)
			bp, bo, bc := 0, 0, 0
			for _, s := range bound {
				bp += s.Prompt - (budget - 1)
				bo += s.Output
				bc += (s.Prompt + budget - 1) / budget
			}
			if prompt > bp || output > bo || chunks > bc {
				t.Fatalf("%s, first %d: %d prompt, %d output tokens, %d chunks; bounds %d, %d, %d", p.ID, i+1, prompt, output, chunks, bp, bo, bc)
			}
		}
	}
}
