package hardware

import "github.com/inferlab/inferlab/internal/detmath"

// A mixture-of-experts layer (Mixtral: 8 experts, top 2), as vLLM's
// FusedMoE runs it (vllm/model_executor/layers/fused_moe/): a router GEMM
// (hidden × experts) and a top-k selection, then one grouped GEMM through
// every selected expert's gate and up projections, SiLU-and-mul, and one
// grouped GEMM through their down projections. Tensor parallelism splits
// every expert's intermediate dimension, as it splits a dense MLP.
//
// Compute is the tokens' own: 2 · N · k · (3 · hidden · I / tp) FLOPs for
// N tokens through k experts each. Weights are read once per step for every
// expert that at least one token was routed to: with routing spread evenly
// (Mixtral's router balances its experts; the model assumes uniform
// choices), N tokens choosing k of E experts leave an expert unchosen
// with probability (1 − k/E)^N, so the step reads
//
//	E · (1 − (1 − k/E)^N)
//
// experts' weights: k for one decode, all E from a few dozen tokens on. The
// router and the top-k selection are folded into the first grouped GEMM
// (their FLOPs and bytes are added to it), so a layer keeps the dense
// layer's kernel count.

// ActiveExperts is the expected number of distinct experts n tokens are
// routed to when each picks k of e uniformly: e · (1 − (1 − k/e)^n).
func ActiveExperts(e, k, n int) float64 {
	if e <= 0 || k <= 0 || n <= 0 {
		return 0
	}
	if k >= e {
		return float64(e)
	}
	miss := detmath.Exp(float64(n) * detmath.Log(1-float64(k)/float64(e)))
	return float64(e) * (1 - miss)
}

// appendExperts appends a mixture-of-experts MLP over N tokens to ks:
// experts_gate_up (router included), silu_mul and experts_down.
func (m *StepModel) appendExperts(ks []Kernel, N, d, ba, bw float64) []Kernel {
	md, tp := m.Model, m.tp()
	e, k := float64(md.Experts), float64(md.ExpertsPerToken)
	inter := float64(md.ExpertIntermediate) / float64(tp)
	active := ActiveExperts(md.Experts, md.ExpertsPerToken, int(N))
	routed := N * k // token-expert pairs
	return append(ks,
		Kernel{Name: "experts_gate_up", Layer: 0, Kind: GEMM,
			FLOPs: 2*routed*d*2*inter + 2*N*d*e,
			Bytes: active*bw*d*2*inter + ba*(routed*(d+2*inter)) + bw*d*e + ba*N*(d+e)},
		Kernel{Name: "silu_mul", Layer: 0, Kind: Elementwise,
			FLOPs: 5 * routed * inter, Bytes: 3 * routed * inter * ba},
		Kernel{Name: "experts_down", Layer: 0, Kind: GEMM,
			FLOPs: 2 * routed * inter * d,
			Bytes: active*bw*inter*d + ba*routed*(inter+d)},
	)
}
