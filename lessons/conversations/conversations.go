// Package conversations holds the lesson conversations: multi-turn chats
// resend their whole history, so turn k's prompt is turn k−1's prompt, its
// reply and a new user message. The GPU's prefix cache (G1) finds the history
// while it is still resident; when the cache has evicted it, Dynamo KVBM's
// host tier (G2) can reload it over PCIe instead of recomputing it. The same
// stream is served twice, without and with G2 (core/cluster.RunOffload), and
// TTFT is compared turn by turn.
package conversations

import (
	"fmt"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/cudagraph"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "conversations",
	Title:   "Conversations: resent history, evicted, offloaded and reloaded",
	Part:    "Part 12 §4",
	Summary: "Multi-turn chats resend their history: hits in GPU memory, eviction, Dynamo KVBM's host tier reloading what the GPU dropped, and TTFT turn by turn, on the Mooncake trace or a generated stream.",
	Engine: "vLLM v1 (core/scheduler: prefix caching in 16-token blocks, chunked prefill, recompute preemption) with NVIDIA Dynamo KVBM's G2 host tier (docs/kvbm/kvbm_design.md: registered blocks offloaded to pinned host memory, onboarded to the GPU on a hit), core/cluster.RunOffload. " +
		"Simplified: offloads cost nothing (KVBM copies them off the critical path), an onboarding blocks its request until all of it has landed, and the GPU's KV memory is a knob rather than what vLLM would allocate.",
	Group: "cluster", Rank: 35, Thumb: scene.KindTiers,
	Terms: []lessons.Term{
		{Term: "multi-turn conversation", Aliases: []string{"chat history"}, Definition: "A chat whose every turn resends the earlier turns, so its prompt grows and repeats what the cache may still hold.", Find: "history"},
		{Term: "onboarding", Aliases: []string{"reload"}, Definition: "KVBM copying cached KV blocks from host memory (G2) back into GPU memory (G1) instead of recomputing them.", Find: "onboard"},
	},
	Params: []lessons.Param{
		{Key: "workload", Label: "Workload", Help: "A generated chat stream, or conversations sampled from the Mooncake (Kimi) trace of FAST'25 (Apache-2.0), whose block hashes say which prompts share history.", Kind: lessons.Choice, Choices: []string{"generated", "mooncake-conversation"}},
		kit.GPUParam,
		{Key: "g1_gb", Label: "GPU KV memory (G1)", Unit: "GB", Help: "KV cache on the GPU: what holds running requests and the cached histories.", Kind: lessons.Float, Default: 4, Min: 2, Max: 64, Step: 0.5},
		{Key: "host_gb", Label: "Host memory (G2)", Unit: "GB", Help: "KVBM's host tier (DYN_KVBM_CPU_CACHE_GB).", Kind: lessons.Float, Default: 64, Min: 1, Max: 512, Step: 1},
		{Key: "conversations", Label: "Conversations", Help: "Generated: how many chats. Mooncake: the first this many conversations of the trace's first 300 s that have at least two turns.", Kind: lessons.Int, Default: 24, Min: 2, Max: 48, Step: 1},
		{Key: "turns", Label: "Turns (generated)", Help: "Turns per generated chat.", Kind: lessons.Int, Default: 6, Min: 2, Max: 8, Step: 1},
		kit.PriceParam, kit.PowerParam,
		{Key: "seed", Label: "Seed", Kind: lessons.Int, Default: 1, Min: 0, Max: 1 << 30, Step: 1},
	},
	Check:   kit.CheckingCosts(checkConversations),
	Sim:     sim{},
	MaxWork: conversationsMaxWork,
	HeavyCorners: []map[string]string{
		{"workload": "mooncake-conversation", "conversations": "48", "g1_gb": "2"},
		{"workload": "mooncake-conversation", "conversations": "48", "g1_gb": "64", "gpu": "b200"},
		{"conversations": "48", "turns": "8", "g1_gb": "3"},
	},
}

func init() { lessons.Register(lesson) }

const (
	convBlock = 16 // vLLM's default block size
	// The generated chats: a 1,024-token system prompt (one of 4), user
	// turns of 200–600 tokens, chat-like replies, one chat starting every
	// 2 s on average and 20 s of thinking between turns.
	convSystem  = 1024
	convRate    = 0.5
	convThink   = 20.0
	convWindow  = workload.PresetWindow
	convSpeedup = 0.40 // KVBM host offload: 40% TTFT improvement [DYN-ARCH]
	// conversationsMaxWork bounds the two runs' cluster.Counts.Work. The
	// Mooncake sample's heaviest setting (96 conversations, 1 GB of G1)
	// counts 9.9 M.
	conversationsMaxWork = 24_000_000
)

// checkConversations refuses more GPU KV memory than vLLM would leave
// for the cache on the chosen GPU.
func checkConversations(v lessons.Values) error {
	e, err := convEngine(v)
	if err != nil {
		return err
	}
	if v.Choice("workload") == "generated" {
		if longest := convSystem + v.Int("turns")*(600+400); 2*longest > convG1Blocks(v, e)*convBlock {
			return lessons.Relation("g1_gb", v.TextOf("g1_gb"), fmt.Sprintf("GPU KV memory for twice the longest prompt of %d turns (%s tokens: the system prompt and up to 1,000 tokens a turn)",
				v.Int("turns"), kit.Comma(longest)), "turns")
		}
	}
	if b := convG1Blocks(v, e); b > e.KVBlocks {
		return lessons.Relation("g1_gb", v.TextOf("g1_gb"), fmt.Sprintf("at most the %s of KV cache vLLM allocates for Llama-3.1-8B on one %s",
			kit.BytesText(float64(e.KVBlocks)*convBlock*float64(e.Model.KVBytesPerToken(2))), e.GPU.Name), "gpu")
	}
	return nil
}

// convModel is the lesson's model.
const convModel = "llama-3.1-8b"

// convEngine is NewEngine's priced vLLM engine for the GPU knob and the
// lesson's model (vLLM's default CUDA graphs, host work overlapped).
func convEngine(v lessons.Values) (*kit.Engine, error) {
	g, err := hardware.GPUByID(v.Choice("gpu"))
	if err != nil {
		return nil, err
	}
	m := hardware.MustModel(convModel)
	sm, err := hardware.NewStepModel(g, m, 1, hardware.BF16)
	if err != nil {
		return nil, err
	}
	sm.OverlapHost = true
	p, blocks, err := kit.EnginePool(g, m, 1, hardware.WeightsBF16, convBlock, kit.EngineBudget)
	if err != nil {
		return nil, lessons.Relation("gpu", g.ID, "a GPU that holds "+m.Name+"'s BF16 weights ("+err.Error()+")")
	}
	return &kit.Engine{GPU: g, Model: m, Step: sm, Mode: cudagraph.Default, Pool: p, KVBlocks: blocks}, nil
}

// convG1Blocks is the g1_gb knob in 16-token blocks of the model's KV.
func convG1Blocks(v lessons.Values, e *kit.Engine) int {
	return int(v.Float("g1_gb") * 1e9 / (convBlock * float64(e.Model.KVBytesPerToken(2))))
}

type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runConversations(v))
}

// convServed is one run: without or with the host tier.
type convServed struct {
	res    *cluster.OffloadResult
	ttft   []float64 // mean TTFT by turn (index: turn, capped at maxTurn)
	count  []int     // requests by turn
	mean   float64   // mean TTFT of every request
	later  float64   // mean TTFT of turns ≥ 2 (index 1 on)
	g1, g2 int       // prompt tokens found in G1, and reloaded from G2
	prompt int       // prompt tokens in all
}

// conversationsRun is what the lesson served.
type conversationsRun struct {
	workload      string
	gpuName       string
	reqs          []workload.Request
	convs         int
	g1Blocks      int
	hostBlocks    int
	blockBytes    float64
	link          cluster.Link
	g1, g2        convServed // without and with the host tier
	gain          float64    // 1 − later(G2)/later(G1)
	sample        string     // how the requests were chosen
	example       int        // a late turn that G2 reloaded (index in reqs), −1 if none
	exampleReload float64    // its onboarding wait, s
	exampleRecomp float64    // its TTFT without G2, s
	work          int64
	// costG1 and costG2 are what the run on G1 alone and the run with G2
	// cost on the one GPU (kit.CostOf).
	costG1, costG2 kit.RunCost
}

func runConversations(v lessons.Values) (*conversationsRun, error) {
	e, err := convEngine(v)
	if err != nil {
		return nil, err
	}
	g, m := e.GPU, e.Model
	reqs, sample, err := convRequests(v, convG1Blocks(v, e)*convBlock/2)
	if err != nil {
		return nil, err
	}
	bpt := float64(m.KVBytesPerToken(2))
	r := &conversationsRun{workload: v.Choice("workload"), gpuName: g.Name, reqs: reqs, sample: sample,
		blockBytes: bpt * convBlock, link: cluster.HostLink(g.HostLinkBW)}
	r.g1Blocks = min(convG1Blocks(v, e), e.KVBlocks)
	r.hostBlocks = int(v.Float("host_gb") * 1e9 / r.blockBytes)
	r.convs = countConversations(reqs)
	budget, seqs := kit.VLLMBatch(g)
	sreqs := make([]scheduler.Request, len(reqs))
	for i, w := range reqs {
		sreqs[i] = scheduler.Request{ID: w.ID, Arrival: w.Arrival, Prompt: w.Prompt, Output: w.Output, PromptIDs: w.TokenIDs(), OutputIDs: w.OutputTokenIDs()}
	}
	cfg := cluster.OffloadConfig{Scheduler: scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: seqs, ChunkedPrefill: true, BlockSize: convBlock, NumBlocks: r.g1Blocks},
		Timer: e.Timer(seqs, budget), BlockBytes: r.blockBytes, Link: r.link}
	for k, host := range []int{0, r.hostBlocks} {
		cfg.HostBlocks = host
		res, err := cluster.RunOffload(cfg, sreqs)
		if err != nil {
			if k == 0 {
				return nil, lessons.Relation("g1_gb", v.TextOf("g1_gb"), "enough GPU KV memory for the longest prompt ("+err.Error()+")")
			}
			return nil, err
		}
		s := summariseServed(res, reqs)
		r.work += res.Counts.Work()
		if k == 0 {
			r.g1 = s
		} else {
			r.g2 = s
		}
	}
	if r.g1.later > 0 {
		r.gain = 1 - r.g2.later/r.g1.later
	}
	usd, watts := kit.CostRates(v, g)
	for _, c := range []struct {
		dst *kit.RunCost
		res *cluster.OffloadResult
	}{{&r.costG1, r.g1.res}, {&r.costG2, r.g2.res}} {
		in, out, held := kit.ServedTokens(c.res.Requests)
		*c.dst = kit.CostOf(usd, watts, []kit.GPUPool{{GPUs: 1, Held: held, Busy: c.res.Busy}}, in, out)
	}
	r.example = reloadedExample(r.g2.res, reqs)
	if r.example >= 0 {
		r.exampleReload = r.g2.res.Onboards[r.example].Wait
		r.exampleRecomp = ttftOf(r.g1.res, r.example)
	}
	return r, nil
}

// convRequests is the stream the knobs choose, and a sentence on how it
// was chosen.
func convRequests(v lessons.Values, fit int) ([]workload.Request, string, error) {
	n := v.Int("conversations")
	if v.Choice("workload") == "generated" {
		reqs := workload.Chats(n, v.Int("turns"), workload.Fixed{N: convSystem}, workload.Uniform{Min: 200, Max: 600}, workload.Uniform{Min: 50, Max: 400},
			4, convThink, convRate, uint64(v.Int("seed")))
		return reqs, fmt.Sprintf("%d generated chats of %d turns (a 1,024-token system prompt of 4, user turns of 200–600 tokens, replies of 50–400, a chat every %g s, %g s of thinking between turns)",
			n, v.Int("turns"), 1/convRate, convThink), nil
	}
	all, err := workload.LoadPreset("mooncake-conversation", convWindow)
	if err != nil {
		return nil, "", err
	}
	reqs := sampleConversations(all, n, fit)
	return reqs, fmt.Sprintf("the first %d conversations with at least two turns, each turn within half the GPU's KV memory (%s tokens), in the first %d s of the Mooncake FAST'25 conversation trace (Apache-2.0; Qin et al., FAST 2025), at their published arrival times",
		countConversations(reqs), kit.Comma(fit), convWindow), nil
}

// sampleConversations keeps the first n conversations (by first arrival)
// that have a second turn and whose every turn's prompt and output fit in
// fit tokens, renumbered in arrival order.
func sampleConversations(all []workload.Request, n, fit int) []workload.Request {
	multi := map[int]bool{}
	for _, r := range all {
		if r.Turn > 0 {
			multi[r.Conversation] = true
		}
	}
	for _, r := range all {
		if r.Prompt+r.Output > fit {
			multi[r.Conversation] = false
		}
	}
	keep := map[int]bool{}
	var out []workload.Request
	newID := map[int]int{}
	for _, r := range all {
		if !multi[r.Conversation] {
			continue
		}
		if !keep[r.Conversation] {
			if len(keep) == n {
				continue
			}
			keep[r.Conversation] = true
		}
		newID[r.ID] = len(out)
		r.ID = len(out)
		if r.Prev >= 0 {
			r.Prev = newID[r.Prev]
		}
		out = append(out, r)
	}
	return out
}

func countConversations(reqs []workload.Request) int {
	seen := map[int]bool{}
	for _, r := range reqs {
		seen[r.Conversation] = true
	}
	return len(seen)
}

// convMaxTurn caps the TTFT-by-turn chart: later turns are pooled with it.
const convMaxTurn = 8

func summariseServed(res *cluster.OffloadResult, reqs []workload.Request) convServed {
	s := convServed{res: res, ttft: make([]float64, convMaxTurn), count: make([]int, convMaxTurn)}
	byID := map[int]float64{}
	for _, m := range res.Requests {
		byID[m.ID] = m.TTFT
	}
	sumLater, nLater := 0.0, 0
	for i, w := range reqs {
		t := min(w.Turn, convMaxTurn-1)
		s.ttft[t] += byID[w.ID]
		s.count[t]++
		s.mean += byID[w.ID]
		if w.Turn > 0 {
			sumLater += byID[w.ID]
			nLater++
		}
		s.g1 += res.Onboards[i].G1Tokens
		s.g2 += res.Onboards[i].G2Tokens
		s.prompt += w.Prompt
	}
	for t := range s.ttft {
		if s.count[t] > 0 {
			s.ttft[t] /= float64(s.count[t])
		}
	}
	s.mean /= float64(len(reqs))
	if nLater > 0 {
		s.later = sumLater / float64(nLater)
	}
	return s
}

// reloadedExample is the latest-turn request G2 reloaded the most tokens
// for, or −1.
func reloadedExample(res *cluster.OffloadResult, reqs []workload.Request) int {
	best := -1
	for i, ob := range res.Onboards {
		if ob.G2Tokens == 0 {
			continue
		}
		if best < 0 || ob.G2Tokens > res.Onboards[best].G2Tokens {
			best = i
		}
	}
	return best
}

func ttftOf(res *cluster.OffloadResult, id int) float64 {
	for _, m := range res.Requests {
		if m.ID == id {
			return m.TTFT
		}
	}
	return 0
}
