package workload

import (
	"math/rand/v2"

	"github.com/inferlab/inferlab/internal/detmath"
)

// PaperShareGPT draws request lengths like the ShareGPT workload of the
// vLLM paper's experiments (Kwon et al., SOSP 2023, §6.1 and Fig. 11: mean
// prompt 161.31 and mean output 337.99 tokens with OPT's tokenizer), as far
// as the lab can state it without the data set: a lognormal prompt and a
// lognormal output with those means and the spreads of the lab's chat
// lengths (σ = 1 and 0.8, ChatPrompts and ChatOutputs; not fitted to
// ShareGPT), a pair drawn again until it passes the filter vLLM's serving
// benchmark applied to ShareGPT at the time (vllm-project/vllm v0.2.0,
// benchmarks/benchmark_serving.py, sample_requests: prompt and output of at
// least 4 tokens, a prompt of at most 1,024, at most 2,048 together).
type PaperShareGPT struct{}

// The filter of vLLM's sample_requests, and the longest pair it lets
// through.
const (
	paperShareGPTMinLen    = 4
	paperShareGPTMaxPrompt = 1024
	// PaperShareGPTMaxTotal is the longest prompt + output PaperShareGPT
	// draws.
	PaperShareGPTMaxTotal = 2048
)

// paperShareGPTPrompts and paperShareGPTOutputs are the two lognormals:
// a median of mean / e^(σ²/2) gives the mean (before the filter).
var (
	paperShareGPTPrompts = LongTail{Median: 161.31 / detmath.Exp(0.5), Sigma: 1, Min: 1, Max: 2 * PaperShareGPTMaxTotal}
	paperShareGPTOutputs = LongTail{Median: 337.99 / detmath.Exp(0.32), Sigma: 0.8, Min: 1, Max: 2 * PaperShareGPTMaxTotal}
)

// Draw returns one request's prompt and output tokens: a prompt, then an
// output, drawn in turn until the pair passes the filter.
func (PaperShareGPT) Draw(r *rand.Rand) (prompt, output int) {
	for {
		p, o := paperShareGPTPrompts.Draw(r), paperShareGPTOutputs.Draw(r)
		if p >= paperShareGPTMinLen && o >= paperShareGPTMinLen && p <= paperShareGPTMaxPrompt && p+o <= PaperShareGPTMaxTotal {
			return p, o
		}
	}
}
