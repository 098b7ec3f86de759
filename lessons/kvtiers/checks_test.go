package kvtiers

import (
	"testing"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/lessontest"
)

// TestLessonChecks runs the shared checks (lessontest.Checks) on the
// kv-tiers lesson. Its narration check: the prefix and the GPU pool.
func TestLessonChecks(t *testing.T) {
	lessontest.Run(t, lesson, lessontest.Checks{
		Refusals: []lessontest.Refusal{
			// A relation is refused on the knob the reader set, with the other knob's value.
			{Set: map[string]string{"p_gpu": "100"}, Key: "p_gpu", Want: `p_gpu = "100" is not allowed with p_host = "30" (p_host: want at most 0%: the hit probabilities of all tiers sum to at most 100%)`},
		},
		ServingFits: []lessontest.ServingFit{
			{Set: map[string]string{}, TP: 1, Longest: func(v lessons.Values) int { return v.Int("prompt_tokens") + 1 }},
			{Set: map[string]string{"prompt_tokens": "33000", "prefix_tokens": "32000"}, TP: 1, Longest: func(v lessons.Values) int { return v.Int("prompt_tokens") + 1 }, MayRefuseAll: true},
		},
		Systems:       true,
		SystemsSets:   []map[string]string{{"prompt_tokens": "2000", "prefix_tokens": "1024"}},
		PromptMetrics: map[string]string{"compute_prefix_ms": "prefix_tokens", "ttft_recompute_ms": "prompt_tokens"},
		Narration: func(v lessons.Values) ([]string, error) {
			r, err := runKVTiers(v)
			if err != nil {
				return nil, err
			}
			return kvTiersNarration(r), nil
		},
	})
}

func kvTiersNarration(r *kvTiersRun) (out lessontest.Problems) {
	if r.prefix%kvTiersBlock != 0 || r.prefix+r.suffix != r.prompt || r.prefix >= r.prompt {
		out.Addf("narrated prefix %d + rest %d of a %d-token prompt, in %d-token blocks", r.prefix, r.suffix, r.prompt, kvTiersBlock)
	}
	if want := float64(r.prefix) * r.sEntry; r.bytes != want {
		out.Addf("narrated %g B of prefix KV, %d tokens of %g B are %g", r.bytes, r.prefix, r.sEntry, want)
	}
	// The G1 pool the picture states is the engine's, and a G1 hit means
	// the prefix is resident there.
	p, err := hardware.Fit{GPU: r.e.GPU, Model: r.e.Model, FixedTP: true, BatchedTokens: kvTiersBudget}.Pool(kvTiersBlock)
	if err != nil || r.e.KVBlocks != int(p.Blocks)-1 {
		out.Addf("G1 pool %d blocks, vLLM's is %d − 1 (%v)", r.e.KVBlocks, p.Blocks, err)
	}
	if r.prefix > r.e.KVBlocks*kvTiersBlock || r.maxN > r.e.KVBlocks*kvTiersBlock {
		out.Addf("a %d-token prefix (search to %d) narrated resident in a %d-token G1 pool", r.prefix, r.maxN, r.e.KVBlocks*kvTiersBlock)
	}
	return out
}
