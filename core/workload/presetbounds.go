package workload

import "math"

// PresetBounds bounds any leading part of a preset's requests (its first n,
// for every n from 1 to Requests) without loading the preset: a lesson's
// knob check runs in the page's main WebAssembly, which must not link the
// presets' files (they are linked where the simulation runs), yet has to
// say before a run whether the first n requests fit the lesson's work
// bound. The figures are the presets' own; TestPresetBoundsHold computes
// them from the files.
type PresetBounds struct {
	// Requests is how many requests the preset's PresetWindow seconds hold.
	Requests int
	// MeanPrompt and MeanOutput are the highest mean prompt and output
	// length over the first n requests, for any n: n × MeanPrompt bounds
	// the prompt tokens of the first n.
	MeanPrompt, MeanOutput float64
	// Longest is the longest request, prompt and output tokens together.
	Longest int
	// Rate is the mean arrival rate over the window, req/s.
	Rate float64
}

// presetBounds is kept apart from presets (which point at the files), so
// that a binary reading only bounds leaves the files out.
var presetBounds = map[string]PresetBounds{
	"azure-conv":            {Requests: 1445, MeanPrompt: 1059.8389830508474, MeanOutput: 267.25436893203886, Longest: 6140, Rate: 1445.0 / PresetWindow},
	"azure-code":            {Requests: 781, MeanPrompt: 4808, MeanOutput: 28.759379042690814, Longest: 7574, Rate: 781.0 / PresetWindow},
	"mooncake-conversation": {Requests: 918, MeanPrompt: 17824.166666666668, MeanOutput: 594.6666666666666, Longest: 122378, Rate: 918.0 / PresetWindow},
}

// BoundsOf returns the bounds of preset id, false for no such preset.
func BoundsOf(id string) (PresetBounds, bool) {
	b, ok := presetBounds[id]
	return b, ok
}

// Leading is n requests, each as long as b's mean prompt and output
// rounded up, plus extra prompt tokens: summed, they bound the tokens of
// the preset's first n requests, so a work estimate that grows with the
// tokens (and, with extra = budget − 1, with each prompt's chunks of
// budget tokens) bounds theirs.
func (b PresetBounds) Leading(n, extra int) []Request {
	out := make([]Request, n)
	p, o := int(math.Ceil(b.MeanPrompt))+extra, int(math.Ceil(b.MeanOutput))
	for i := range out {
		out[i] = Request{ID: i, Prompt: p, Output: o, PrefixGroup: -1, Conversation: -1, Prev: -1}
	}
	return out
}
