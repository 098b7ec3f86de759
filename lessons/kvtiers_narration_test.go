package lessons

import (
	"github.com/inferlab/inferlab/core/hardware"
)

// The kv-tiers lesson's narration check (TestNarratedCountsMatchTheSimulation):
// the prefix and the GPU pool.
func init() {
	checkNarration(kvTiers, func(v Values) ([]string, error) {
		r, err := runKVTiers(v)
		if err != nil {
			return nil, err
		}
		return kvTiersNarration(r), nil
	})
}

func kvTiersNarration(r *kvTiersRun) (out problems) {
	if r.prefix%kvTiersBlock != 0 || r.prefix+r.suffix != r.prompt || r.prefix >= r.prompt {
		out.addf("narrated prefix %d + rest %d of a %d-token prompt, in %d-token blocks", r.prefix, r.suffix, r.prompt, kvTiersBlock)
	}
	if want := float64(r.prefix) * r.sEntry; r.bytes != want {
		out.addf("narrated %g B of prefix KV, %d tokens of %g B are %g", r.bytes, r.prefix, r.sEntry, want)
	}
	// The G1 pool the picture states is the engine's, and a G1 hit means
	// the prefix is resident there.
	p, err := hardware.Fit{GPU: r.e.gpu, Model: r.e.model, FixedTP: true, BatchedTokens: kvTiersBudget}.Pool(kvTiersBlock)
	if err != nil || r.e.kvBlocks != int(p.Blocks)-1 {
		out.addf("G1 pool %d blocks, vLLM's is %d − 1 (%v)", r.e.kvBlocks, p.Blocks, err)
	}
	if r.prefix > r.e.kvBlocks*kvTiersBlock || r.maxN > r.e.kvBlocks*kvTiersBlock {
		out.addf("a %d-token prefix (search to %d) narrated resident in a %d-token G1 pool", r.prefix, r.maxN, r.e.kvBlocks*kvTiersBlock)
	}
	return out
}
