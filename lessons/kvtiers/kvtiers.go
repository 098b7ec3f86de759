// Package kvtiers holds the lesson kv-tiers: Part 12 §4 and formulation 2. A
// prompt's cached prefix may sit in GPU memory, host DRAM, a local NVMe drive
// or object storage (Dynamo KVBM's G1–G4); fetching it costs α + bytes/(BW·η)
// over that tier's link, recomputing it costs a prefill. Expected TTFT mixes
// the two by hit rate.
package kvtiers

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

var lesson = &lessons.Lesson{
	Slug:    "kv-tiers",
	Title:   "KV tiers: fetch the prefix or recompute it?",
	Part:    "Part 12 §4, formulation 2",
	Summary: "GPU → host → NVMe → object storage: each tier's fetch time from measured links against the prefill it saves; expected TTFT from the hit rates, and the prefix length where fetching stops paying.",
	Engine: "NVIDIA Dynamo KVBM (docs/kvbm/kvbm_design.md, kvbm_guide.md: tiers G1 device, G2 pinned host, G3 disk, G4 remote; disk offload filter) feeding a vLLM v1 prefill priced by core/hardware with CUDA graphs. " +
		"Simplified: one request on an idle GPU, a blocking fetch before the prefill of the rest (no layer-by-layer overlap), and hit probabilities given as knobs rather than simulated.",
	Group: "cluster", Rank: 30, Thumb: scene.KindTiers,
	Terms: []lessons.Term{
		{Term: "KVBM", Aliases: []string{"kv block manager"}, Definition: "Dynamo's KV Block Manager: offloads KV blocks from GPU to host memory, SSD and object storage.", Find: "KVBM"},
	},
	Params: []lessons.Param{
		kit.GPUParam, kit.ModelParam,
		{Key: "prompt_tokens", Label: "Prompt", Unit: "tokens", Help: "The whole prompt, e.g. turn 5 of a conversation with its history.", Kind: lessons.Int, Default: 10000, Min: 2, Max: 131071, Step: 1},
		{Key: "prefix_tokens", Label: "Cached prefix", Unit: "tokens", Help: "The part of the prompt some tier may hold; only whole 16-token blocks are cached.", Kind: lessons.Int, Default: 9600, Min: 16, Max: 131056, Step: 16},
		{Key: "p_gpu", Label: "P(hit) in GPU HBM (G1)", Unit: "%", Kind: lessons.Float, Default: 40, Min: 0, Max: 100, Step: 1},
		{Key: "p_host", Label: "P(hit) in host DRAM (G2)", Unit: "%", Kind: lessons.Float, Default: 30, Min: 0, Max: 100, Step: 1},
		{Key: "p_disk", Label: "P(hit) on local NVMe (G3)", Unit: "%", Kind: lessons.Float, Default: 15, Min: 0, Max: 100, Step: 1},
		{Key: "p_object", Label: "P(hit) in object storage (G4)", Unit: "%", Kind: lessons.Float, Default: 5, Min: 0, Max: 100, Step: 1},
		{Key: "nvme", Label: "NVMe drive", Kind: lessons.Choice, Choices: []string{"nvme4", "nvme5"}},
		{Key: "object", Label: "Object storage path", Help: "Many parallel ranged GETs on a 100 Gb/s instance, or one stream.", Kind: lessons.Choice, Choices: []string{"s3-100g", "s3-stream"}},
	},
	Check: func(v lessons.Values) error {
		if v.Int("prefix_tokens") >= v.Int("prompt_tokens") {
			return lessons.Relation("prefix_tokens", strconv.Itoa(v.Int("prefix_tokens")), fmt.Sprintf("below prompt_tokens (%d): the last prompt token is always computed", v.Int("prompt_tokens")), "prompt_tokens")
		}
		sum := 0.0
		tiers := []string{"p_gpu", "p_host", "p_disk", "p_object"}
		for _, k := range tiers {
			sum += v.Float(k)
			if sum > 100+1e-9 {
				return lessons.Relation(k, strconv.FormatFloat(v.Float(k), 'g', -1, 64), fmt.Sprintf("at most %g%%: the hit probabilities of all tiers sum to at most 100%%", 100-(sum-v.Float(k))), tiers...)
			}
		}
		return kvTiersFit(v)
	},
	Sim:     sim{},
	MaxWork: kvTiersMaxWork,
	// The longest prompts and prefixes on the models with the longest
	// context and the most KV per token.
	HeavyCorners: []map[string]string{
		{"prompt_tokens": "131071", "prefix_tokens": "131056"},
		{"prompt_tokens": "131071", "prefix_tokens": "131056", "gpu": "b200", "model": "llama-3.1-8b", "nvme": "nvme5"},
		{"prompt_tokens": "32767", "prefix_tokens": "32752", "model": "mistral-7b-v0.1", "nvme": "nvme5", "object": "s3-stream"},
	},
}

// kvTiersFit is the shared feasibility check (hardware.Fit) for the one
// request the lesson prices: the model's weights and activations on one
// GPU, the prompt's KV beside them, and the prompt plus its first output
// token within the model's positions: a 33,000-token prompt on Llama-2-7B
// (4,096 positions) was once priced as if it could run.
func kvTiersFit(v lessons.Values) error {
	g, m, err := kit.ChosenHardware(v)
	if err != nil {
		return err
	}
	n := v.Int("prompt_tokens") + 1
	return kit.CheckFit(v, hardware.Fit{GPU: g, Model: m, FixedTP: true, BatchedTokens: kvTiersBudget, KVTokens: int64(n), Positions: n},
		kit.FitKnobs{hardware.LimitWeights: "model", hardware.LimitKV: "prompt_tokens", hardware.LimitPositions: "prompt_tokens"})
}

// kvTiersMaxWork bounds the steps priced (16 work units each): the
// prefills of the prefix, the rest, one token, the break-even grid and its
// bisections and the chart, each at most 16 chunks of 8,192 tokens. No knob
// setting comes near it (131,072-token prompts price ~150 steps).
const kvTiersMaxWork = 100_000

func init() { lessons.Register(lesson) }

// The article's tier table (Part 12 §4 and its simulator's printout).
var articleTiers = []struct {
	bw, latency float64 // B/s, s
	text        string
}{
	{3.35e12, 0.001e-3, "HBM3e @ 3.35 TB/s, ~0.001 ms"},
	{64e9, 0.150e-3, "PCIe 5.0 @ 64 GB/s, ~0.150 ms"},
	{7.5e9, 1.2e-3, "NVMe @ 7.5 GB/s, ~1.2 ms"},
	{1.25e9, 8.5e-3, "S3 @ 1.25 GB/s, ~8.5 ms"},
}

const (
	articleTierSpeedup    = 5       // "slashing TTFT by up to 5×"
	articleRoutedTTFTMS   = 3       // "from 100ms+ to under 3ms"
	dynamoHostOffloadGain = 0.40    // KVBM host offload: 40% TTFT improvement [DYN-ARCH]
	kvTiersBudget         = 8192    // vLLM's token budget on H100-class GPUs (API server)
	kvTiersMaxSeqs        = 256     // capture sizes only; one request runs
	kvTiersBlock          = 16      // tokens per block
	kvTiersGridPoints     = 40      // break-even search grid
	kvTiersMaxSearch      = 1 << 17 // longest prefix searched, before the KV capacity cap
)

// breakEvenText describes where fetching from a tier beats recomputing.
func breakEvenText(cs []cluster.Crossing, fetchFirst bool, maxN int) string {
	if len(cs) == 0 {
		if fetchFirst {
			return "fetch always wins"
		}
		return "recompute always wins"
	}
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += "; "
		}
		if c.FetchWinsAbove {
			out += "fetch wins from " + kit.Comma(c.Tokens) + " tokens"
		} else {
			out += "recompute wins from " + kit.Comma(c.Tokens) + " tokens"
		}
	}
	return out + fmt.Sprintf(" (up to %s)", kit.Comma(maxN))
}

// kvTiersRun is what the kv-tiers lesson priced: the prompt and its cached
// prefix, each tier's fetch, the prefill it saves, formulation 2, and the
// break-even lengths.
type kvTiersRun struct {
	e                       *kit.Engine
	prompt, prefix, suffix  int     // tokens; prefix is whole blocks
	sEntry, bytes           float64 // S_entry (B/token) and the prefix's KV
	nvme, object            cluster.Link
	tiers                   []cluster.Tier
	p, fetch                []float64 // per tier: P(hit) and T_fetch of the prefix
	tSuffix, tCompute, tOne float64   // prefill of the rest, of the prefix, of one token
	eFormula, eTTFT         float64   // Σ over the tiers, and with T_rest
	ttftMiss, hitSum        float64
	maxN                    int         // longest prefix the break-even search covers
	bes                     []tierBE    // per tier (G1 unused)
	computePerToken         float64     // s per extra prefix token, recomputed
	fetchPerToken           float64     // s per prefix token from NVMe
	lengths                 []int       // the chart's prefix lengths
	recompute               []float64   // prefill of each length
	tierFetch               [][]float64 // per tier (G1 unused): fetch of each length
	filter                  []diskFilterRow
	work                    int64 // Script.Work: prefill steps priced, weighted as decode steps
}

// tierBE is where fetching from one tier and recomputing trade places.
type tierBE struct {
	cs         []cluster.Crossing
	fetchFirst bool // fetching wins for a one-token prefix
}

// diskFilterRow is one event of the disk filter walk-through: a block used
// once and a reused one.
type diskFilterRow struct {
	event                string
	onceFreq, reusedFreq int
	onceOff, reusedOff   bool
}

// sim is the lesson's simulation: a method, not a func value, so that the
// page's WebAssembly leaves it out (see lessons.Simulation).
type sim struct{}

func (sim) Simulate(v lessons.Values) (*lessons.Script, error) {
	return lessons.ScriptOf(runKVTiers(v))
}

// runKVTiers prices the prompt's prefix on every tier and recomputed.
func runKVTiers(v lessons.Values) (*kvTiersRun, error) {
	e, err := kit.NewEngine(v, kvTiersBlock)
	if err != nil {
		return nil, err
	}
	prompt, prefixRaw := v.Int("prompt_tokens"), v.Int("prefix_tokens")
	r := &kvTiersRun{e: e, prompt: prompt, sEntry: float64(e.Model.KVBytesPerToken(2))}
	if r.nvme, err = cluster.LinkByID(v.Choice("nvme")); err != nil {
		return nil, err
	}
	if r.object, err = cluster.LinkByID(v.Choice("object")); err != nil {
		return nil, err
	}
	r.tiers = cluster.Tiers(e.GPU.HostLinkBW, r.nvme, r.object)
	timer := &kit.StepCounter{Timer: e.Timer(kvTiersMaxSeqs, kvTiersBudget)}
	compute := memoPrefill(timer)

	// Only whole blocks are cached: the prefix a tier can return.
	r.prefix = prefixRaw / kvTiersBlock * kvTiersBlock
	r.bytes = float64(r.prefix) * r.sEntry
	r.suffix = prompt - r.prefix
	// The rest of the prompt, computed on top of the prefix, chunked by the budget.
	for done := r.prefix; done < prompt; {
		k := min(kvTiersBudget, prompt-done)
		r.tSuffix += timer.StepSeconds([]scheduler.Work{{NewTokens: k, Context: done, Prefill: true}})
		done += k
	}
	r.tCompute, r.tOne = compute(r.prefix), compute(1)
	r.p = []float64{v.Float("p_gpu") / 100, v.Float("p_host") / 100, v.Float("p_disk") / 100, v.Float("p_object") / 100}
	r.fetch = make([]float64, len(r.tiers))
	for m, t := range r.tiers {
		r.fetch[m] = t.Fetch(r.bytes)
	}
	if r.eFormula, err = cluster.ExpectedTTFT(r.p, r.fetch, r.tCompute); err != nil {
		return nil, lessons.Relation("p_object", strconv.FormatFloat(v.Float("p_object"), 'g', -1, 64), err.Error())
	}
	r.eTTFT = r.tSuffix + r.eFormula
	r.ttftMiss = r.tCompute + r.tSuffix
	r.hitSum = r.p[0] + r.p[1] + r.p[2] + r.p[3]
	r.breakEvens(compute)
	// Marginal costs per token: the slopes of the two curves.
	r.computePerToken = (r.tCompute - r.tOne) / float64(max(1, r.prefix-1))
	r.fetchPerToken = r.sEntry / r.nvme.Effective()
	r.sweep(compute)
	r.filter = diskFilterWalk()
	r.work = cluster.DecodeWeight * timer.Steps
	return r, nil
}

// memoPrefill prices an isolated prefill of n tokens, remembering each n.
func memoPrefill(timer scheduler.Timer) func(n int) float64 {
	memo := map[int]float64{}
	return func(n int) float64 {
		if t, ok := memo[n]; ok {
			return t
		}
		t := kit.PrefillSeconds(timer, n, kvTiersBudget)
		memo[n] = t
		return t
	}
}

// breakEvens finds, per tier, the prefix lengths where fetching and
// recomputing trade places.
func (r *kvTiersRun) breakEvens(compute func(int) float64) {
	r.maxN = min(kvTiersMaxSearch, kit.ContextLimit(r.e.Model.MaxPositions)-1, r.e.KVBlocks*kvTiersBlock)
	r.bes = make([]tierBE, len(r.tiers))
	for m := 1; m < len(r.tiers); m++ {
		t := r.tiers[m]
		f := func(n int) float64 { return t.Fetch(float64((n+kvTiersBlock-1)/kvTiersBlock*kvTiersBlock) * r.sEntry) }
		r.bes[m] = tierBE{cs: cluster.BreakEven(f, compute, r.maxN, kvTiersGridPoints), fetchFirst: f(1) < compute(1)}
	}
}

// sweep prices the chart: recompute and each tier's fetch at doubling
// prefix lengths up to maxN.
func (r *kvTiersRun) sweep(compute func(int) float64) {
	for n := 16; n <= r.maxN; n *= 2 {
		r.lengths = append(r.lengths, n)
	}
	if len(r.lengths) == 0 || r.lengths[len(r.lengths)-1] != r.maxN {
		r.lengths = append(r.lengths, r.maxN)
	}
	r.tierFetch = make([][]float64, len(r.tiers))
	for _, n := range r.lengths {
		r.recompute = append(r.recompute, compute(n))
		for m := 1; m < len(r.tiers); m++ {
			r.tierFetch[m] = append(r.tierFetch[m], r.tiers[m].Fetch(float64(n)*r.sEntry))
		}
	}
}

// diskFilterWalk runs KVBM's disk filter on a block used once and on one
// reused twice.
func diskFilterWalk() []diskFilterRow {
	once, reused := cluster.NewDiskFilter(), cluster.NewDiskFilter()
	row := func(ev string) diskFilterRow {
		return diskFilterRow{event: ev, onceFreq: once.Frequency(), onceOff: once.Offload(), reusedFreq: reused.Frequency(), reusedOff: reused.Offload()}
	}
	rows := []diskFilterRow{row("offloaded to host")}
	for _, ev := range []string{"decay", "hit", "decay", "hit", "decay", "decay"} {
		once.Decay()
		if ev == "hit" {
			reused.Hit()
		} else {
			reused.Decay()
		}
		rows = append(rows, row(ev+" (the reused block; the other only decays)"))
	}
	return rows
}

// breakEven is the first prefix length at which the faster of fetching
// from tier m and recomputing changes, or −1 when one wins at every length.
func (r *kvTiersRun) breakEven(m int) int {
	if len(r.bes[m].cs) == 0 {
		return -1
	}
	return r.bes[m].cs[0].Tokens
}

// breakEvenText is breakEvenText for tier m.
func (r *kvTiersRun) breakEvenText(m int) string {
	return breakEvenText(r.bes[m].cs, r.bes[m].fetchFirst, r.maxN)
}

// articleFetch is the prefix's fetch from tier m at the article's rates.
func (r *kvTiersRun) articleFetch(m int) float64 {
	return articleTiers[m].latency + r.bytes/articleTiers[m].bw
}

func (r *kvTiersRun) Script() *lessons.Script {
	s := &lessons.Script{Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
	s.Steps = r.steps()
	kit.IndexCursors(s.Steps)
	return s
}

func (r *kvTiersRun) metrics() []lessons.Metric {
	return []lessons.Metric{
		{Key: "ttft_expected_ms", Label: "Expected TTFT from the tier hit rates", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.eTTFT)},
		{Key: "ttft_recompute_ms", Label: "TTFT on a miss (recompute the prefix)", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.ttftMiss)},
		{Key: "ttft_gpu_hit_ms", Label: "TTFT on a G1 hit (compute only the rest)", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.tSuffix)},
		{Key: "compute_prefix_ms", Label: "T_compute: prefill of the prefix", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.tCompute)},
		{Key: "fetch_ms_host", Label: "T_fetch from host DRAM (G2)", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.fetch[1])},
		{Key: "fetch_ms_nvme", Label: "T_fetch from NVMe (G3)", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.fetch[2])},
		{Key: "fetch_ms_object", Label: "T_fetch from object storage (G4)", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Round4(1000 * r.fetch[3])},
		{Key: "prefix_mb", Label: "KV of the cached prefix", Unit: "MB", Value: kit.Round2(r.bytes / 1e6)},
		{Key: "breakeven_tokens_host", Label: "Prefix length where host fetch and recompute trade places (−1: one wins at every length)", Unit: "tokens", Value: float64(r.breakEven(1))},
		{Key: "breakeven_tokens_nvme", Label: "Prefix length where NVMe fetch and recompute trade places (−1: one wins at every length)", Unit: "tokens", Value: float64(r.breakEven(2))},
		{Key: "breakeven_tokens_object", Label: "Prefix length where object-storage fetch and recompute trade places (−1: one wins at every length)", Unit: "tokens", Value: float64(r.breakEven(3))},
		{Key: "compute_us_per_token", Label: "Recompute cost per extra prefix token", Unit: "µs", Better: lessons.LowerIsBetter, Value: kit.Round4(1e6 * r.computePerToken)},
		{Key: "fetch_us_per_token_nvme", Label: "NVMe fetch cost per prefix token (S_entry / BW·η)", Unit: "µs", Better: lessons.LowerIsBetter, Value: kit.Round4(1e6 * r.fetchPerToken)},
		{Key: "speedup_gpu_hit", Label: "TTFT on a miss / on a G1 hit", Unit: "×", Value: kit.Round2(r.ttftMiss / r.tSuffix)},
	}
}

func (r *kvTiersRun) claims() []lessons.Claim {
	tierRows := ""
	for m := 1; m < len(r.tiers); m++ {
		if m > 1 {
			tierRows += "; "
		}
		tierRows += fmt.Sprintf("%s %s", r.tiers[m].ID, kit.MsText(r.fetch[m]))
	}
	return []lessons.Claim{{
		What:    "Tier latencies",
		Article: "host ~0.150 ms, NVMe ~1.2 ms, S3 ~8.5 ms",
		Model:   fmt.Sprintf("for this %s-token prefix of %s (%s): %s", kit.Comma(r.prefix), r.e.Model.Name, kit.BytesText(r.bytes), tierRows),
		Why:     "The article's latencies are first-byte times that ignore the bytes; a real prefix's KV is hundreds of MB, so bytes/(BW·η) dominates every tier but object storage's 20 ms time to first byte on short prefixes.",
	}, {
		What:    "Tier bandwidths",
		Article: "PCIe 5.0 64 GB/s, NVMe 7.5 GB/s, S3 1.25 GB/s (a 10 GbE NIC)",
		Model: fmt.Sprintf("%s %s, %s %s, %s %s", r.tiers[1].Link.Name, kit.GBps(r.tiers[1].Link.Effective()), r.nvme.Name, kit.GBps(r.nvme.Effective()),
			r.object.Name, kit.GBps(r.object.Effective())),
		Why: "The model uses measured rates: PCIe DMA reaches about 52 of 63 GB/s, one NVMe drive reads 6.8 (Gen4) or 13 GB/s (Gen5), and S3 gives 93 MB/s per stream or about 8 GB/s with many streams on a 100 Gb/s instance.",
	}, {
		What:    "Smart routing (a G1 hit) slashes TTFT",
		Article: fmt.Sprintf("up to %d×; \"from 100ms+ to under %d ms\"", articleTierSpeedup, articleRoutedTTFTMS),
		Model: fmt.Sprintf("%s on a miss vs %s on a G1 hit: %.1f× for a %s-token prompt with %s tokens cached on %s",
			kit.MsText(r.ttftMiss), kit.MsText(r.tSuffix), r.ttftMiss/r.tSuffix, kit.Comma(r.prompt), kit.Comma(r.prefix), r.e.GPU.Name),
		Why: fmt.Sprintf("The speed-up is the share of the prompt that is cached: the %s uncached tokens still need a forward pass, which reads all the weights once (%s for %s on this GPU), so a hit cannot get under that floor.",
			kit.Comma(r.suffix), kit.MsText(r.tOne), r.e.Model.Name),
	}, {
		What:    "KVBM host offload (Dynamo docs)",
		Article: fmt.Sprintf("%.0f%% TTFT improvement (10 multi-turn conversations, 80 users)", 100*dynamoHostOffloadGain),
		Model: fmt.Sprintf("a G2 hit instead of a miss: %s vs %s, %.0f%% less for this prompt on an idle GPU", kit.MsText(r.fetch[1]+r.tSuffix), kit.MsText(r.ttftMiss),
			100*(1-(r.fetch[1]+r.tSuffix)/r.ttftMiss)),
		Why: "Dynamo's figure averages over a workload where only some turns find their history offloaded and GPUs are busy; this is one request whose whole prefix is in host memory.",
	}}
}

// tierRows are the tiers for the picture: capacity, the path back to the
// GPU, the prefix's hit share and fetch time; note(m) adds a line per tier.
func (r *kvTiersRun) tierRows(note func(m int) string) []scene.Tier {
	var out []scene.Tier
	for m, t := range r.tiers {
		row := scene.Tier{ID: t.ID.String(), Name: t.Name, Medium: t.Medium, Hit: r.p[m], Fetch: kit.MsText(r.fetch[m]),
			Capacity: "not modelled"}
		if m == 0 {
			pool := float64(r.e.KVBlocks*kvTiersBlock) * r.sEntry
			row.Capacity = fmt.Sprintf("%s KV pool", kit.BytesText(pool))
			row.Path, row.Bandwidth = "none: attention reads it in place", "HBM "+kit.GBps(r.e.GPU.MemBandwidth)
			row.Fetch = "0 ms"
		} else {
			row.Path, row.Bandwidth = t.Link.Name, fmt.Sprintf("%s (BW·η) · α %s", kit.GBps(t.Link.Effective()), alphaText(t.Link.Alpha))
		}
		if note != nil {
			row.Note = note(m)
		}
		out = append(out, row)
	}
	return out
}

// alphaText is a link's start-up time: µs below a millisecond.
func alphaText(s float64) string {
	if s < 1e-3 {
		return fmt.Sprintf("%g µs", kit.Round2(s*1e6))
	}
	return kit.MsText(s)
}

// race is one way to the first token: tier m's fetch (m ≥ 0) or the
// prefix's recompute (m < 0), then the rest of the prompt.
func (r *kvTiersRun) race(m int) scene.Race {
	rest := scene.RaceBar{Label: "rest " + kit.MsText(r.tSuffix), Class: "rest", Value: kit.Round4(1000 * r.tSuffix)}
	if m < 0 {
		return scene.Race{Ref: "race:miss", Label: "miss: recompute the prefix", Bars: []scene.RaceBar{
			{Label: "recompute " + kit.MsText(r.tCompute), Class: "compute", Value: kit.Round4(1000 * r.tCompute)}, rest}}
	}
	t := r.tiers[m]
	if m == 0 {
		return scene.Race{Ref: "race:" + t.ID.String(), Label: t.ID.String() + " hit: nothing to copy", Bars: []scene.RaceBar{rest}}
	}
	return scene.Race{Ref: "race:" + t.ID.String(), Label: t.ID.String() + " hit: fetch from " + t.Name, Bars: []scene.RaceBar{
		{Label: "fetch " + kit.MsText(r.fetch[m]), Class: "fetch", Value: kit.Round4(1000 * r.fetch[m])}, rest}}
}

// tiersScene is the tiers and the race of the given lanes (tier indices,
// −1 for the miss), the fastest lane marked the winner.
func (r *kvTiersRun) tiersScene(title string, rows []scene.Tier, lanes []int, marks []scene.Mark) scene.Scene {
	t := &scene.Tiers{Subject: fmt.Sprintf("a %s-token prompt whose first %s tokens (%s of KV) may be cached", kit.Comma(r.prompt), kit.Comma(r.prefix), kit.BytesText(r.bytes)),
		Tiers: rows, Unit: "ms"}
	best, bestT := -1, 0.0
	for i, m := range lanes {
		rc := r.race(m)
		sum := 0.0
		for _, b := range rc.Bars {
			sum += b.Value
		}
		if best < 0 || sum < bestT {
			best, bestT = i, sum
		}
		t.Races = append(t.Races, rc)
	}
	if best >= 0 {
		t.Races[best].Winner = true
	}
	return scene.Scene{Kind: scene.KindTiers, ID: "tiers", Title: title, Main: true, Marks: marks, Tiers: t}
}

// expectedRace is formulation 2's E[TTFT] as one lane.
func (r *kvTiersRun) expectedRace() scene.Race {
	return scene.Race{Ref: "race:expected", Label: "E[TTFT] over the hit rates", Bars: []scene.RaceBar{
		{Label: "expected prefix cost " + kit.MsText(r.eFormula), Class: "fetch", Value: kit.Round4(1000 * r.eFormula)},
		{Label: "rest " + kit.MsText(r.tSuffix), Class: "rest", Value: kit.Round4(1000 * r.tSuffix)}}}
}

// kvbmNote is how blocks reach tier m (docs/SOURCES.md#dyn-kvbm).
func kvbmNote(m int) string {
	return [...]string{"computed by prefill or decode",
		"device → host copy of complete, registered blocks",
		"host → disk, only blocks with frequency ≥ 2",
		"remote offload (NIXL), an opaque blob store"}[m]
}

func (r *kvTiersRun) tierScene() scene.Scene {
	tbl := &scene.Table{Columns: []string{"tier", "medium", "link", "α", "BW · η", "T_fetch (this prefix)", "TTFT on a hit", "break-even"}}
	for m, t := range r.tiers {
		if m == 0 {
			tbl.Rows = append(tbl.Rows, []string{t.ID.String() + " " + t.Name, t.Medium, "— (attention reads it in place)", "—", kit.GBps(r.e.GPU.MemBandwidth) + " HBM", "0 ms", kit.MsText(r.tSuffix), "always a win"})
			continue
		}
		tbl.Rows = append(tbl.Rows, []string{t.ID.String() + " " + t.Name, t.Medium, t.Link.Name, kit.MsText(t.Link.Alpha), kit.GBps(t.Link.Effective()),
			kit.MsText(r.fetch[m]), kit.MsText(r.fetch[m] + r.tSuffix), r.breakEvenText(m)})
	}
	tbl.Rows = append(tbl.Rows, []string{"miss", "—", "recompute the prefix", "—", "—", kit.MsText(r.tCompute) + " (T_compute)", kit.MsText(r.ttftMiss), "—"})
	return scene.Scene{Kind: scene.KindTable, ID: "tier-table", Title: "Dynamo KVBM tiers for this prefix", Table: tbl}
}

func (r *kvTiersRun) formulaScene() scene.Scene {
	terms := []scene.Term{}
	for m, t := range r.tiers {
		terms = append(terms, scene.Term{Symbol: "P(hit_" + t.ID.String() + ")", Meaning: "share of requests whose prefix is in " + t.Name, Value: kit.Pct(r.p[m])})
	}
	for m, t := range r.tiers {
		terms = append(terms, scene.Term{Symbol: "T_fetch(" + t.ID.String() + ")", Meaning: "α + bytes/(BW·η) over " + map[bool]string{true: "nothing: it is in HBM", false: t.Link.Name}[m == 0], Value: kit.MsText(r.fetch[m])})
	}
	terms = append(terms,
		scene.Term{Symbol: "T_compute", Meaning: fmt.Sprintf("prefill of the %s-token prefix (core/hardware)", kit.Comma(r.prefix)), Value: kit.MsText(r.tCompute)},
		scene.Term{Symbol: "T_rest", Meaning: fmt.Sprintf("prefill of the other %s tokens on top of the prefix, paid in every case", kit.Comma(r.suffix)), Value: kit.MsText(r.tSuffix)})
	return scene.Scene{Kind: scene.KindFormula, ID: "formula", Title: "Formulation 2: expected TTFT over the tiers", Formula: &scene.Formula{
		Expr:   "E[TTFT] = T_rest + Σ_m P(hit_m) · T_fetch(m) + (1 − Σ_m P(hit_m)) · T_compute",
		Terms:  terms,
		Result: fmt.Sprintf("%s + %s = %s (miss: %s)", kit.MsText(r.tSuffix), kit.MsText(r.eFormula), kit.MsText(r.eTTFT), kit.MsText(r.ttftMiss)),
	}}
}

// ChartScene is fetch vs recompute by prefix length.
func (r *kvTiersRun) chartScene() scene.Scene {
	chart := &scene.Chart{Type: scene.Line, XLabel: "cached prefix", XUnit: "tokens", YLabel: "time", YUnit: "ms", XLog: true, YLog: true}
	rec := scene.Series{Name: "recompute (prefill)"}
	for i, n := range r.lengths {
		rec.X, rec.Y = append(rec.X, float64(n)), append(rec.Y, kit.Round4(1000*r.recompute[i]))
	}
	chart.Series = append(chart.Series, rec)
	for m := 1; m < len(r.tiers); m++ {
		sr := scene.Series{Name: "fetch from " + r.tiers[m].Name}
		for i, n := range r.lengths {
			sr.X, sr.Y = append(sr.X, float64(n)), append(sr.Y, kit.Round4(1000*r.tierFetch[m][i]))
		}
		chart.Series = append(chart.Series, sr)
	}
	cur := float64(r.prefix)
	chart.Cursor = &cur
	return scene.Scene{Kind: scene.KindChart, ID: "breakeven", Title: "Fetch vs recompute by prefix length", Chart: chart}
}

// articleScene sets the article's tier table beside the model.
func (r *kvTiersRun) articleScene() scene.Scene {
	art := &scene.Table{Columns: []string{"tier", "article", "article's rates for this prefix (latency + bytes/BW)", "this model (α + bytes/(BW·η))"}}
	for m, t := range r.tiers {
		model := kit.MsText(r.fetch[m])
		if m == 0 {
			model = "0 ms (no copy)"
		}
		art.Rows = append(art.Rows, []string{t.ID.String() + " " + t.Name, articleTiers[m].text, kit.MsText(r.articleFetch(m)), model})
	}
	return scene.Scene{Kind: scene.KindTable, ID: "article-tiers", Title: fmt.Sprintf("The article's tier table and %s of KV", kit.BytesText(r.bytes)), Table: art}
}

// kvbmScenes are KVBM's tiers and its disk filter, step by step.
func (r *kvTiersRun) kvbmScenes() []scene.Scene {
	kvbm := &scene.Table{Columns: []string{"tier", "medium", "role in KVBM", "how blocks arrive"}}
	kvbm.Rows = [][]string{
		{"G1", "GPU HBM (device pool)", "active and reusable blocks; target of onboarding", "computed by prefill or decode"},
		{"G2", "pinned host DRAM", "receives device offloads; onboards to GPU; offloads to disk", "Device→Host copy of registered (complete) blocks"},
		{"G3", "local NVMe (disk pool)", "receives host offloads; onboards directly to GPU (NIXL, GDS)", "Host→Disk, only for blocks with frequency ≥ 2"},
		{"G4", "remote / object storage", "opaque blob store via NIXL", "remote offload"},
	}
	filter := &scene.Table{Columns: []string{"event", "block used once: frequency", "to disk?", "block reused: frequency", "to disk?"}}
	yes := func(b bool) string { return map[bool]string{true: "yes", false: "no"}[b] }
	for _, f := range r.filter {
		filter.Rows = append(filter.Rows, []string{f.event, strconv.Itoa(f.onceFreq), yes(f.onceOff), strconv.Itoa(f.reusedFreq), yes(f.reusedOff)})
	}
	return []scene.Scene{{Kind: scene.KindTable, ID: "kvbm", Title: "KVBM tiers (Dynamo's kvbm_design.md)", Table: kvbm},
		{Kind: scene.KindTable, ID: "filter", Title: "The disk offload filter, step by step", Table: filter}}
}

// steps narrates the run.
func (r *kvTiersRun) steps() []lessons.Step {
	e, fetch, nvme := r.e, r.fetch, r.nvme
	objectWins := map[bool]string{true: "fetch it", false: "recompute it"}[fetch[3] < r.tCompute]
	intro := fmt.Sprintf("A %s-token prompt arrives whose first %s tokens were seen before (say, the history of a conversation). Their KV is %s B per token for %s: %s in all. "+
		"If the GPU still holds it, only the other %s tokens are computed (%s). If it was evicted, that KV may still live further down Dynamo's KVBM hierarchy — or be gone, and then the prefix is recomputed (%s more).",
		kit.Comma(r.prompt), kit.Comma(r.prefix), kit.Comma(int(r.sEntry)), e.Model.Name, kit.BytesText(r.bytes), kit.Comma(r.suffix), kit.MsText(r.tSuffix), kit.MsText(r.tCompute))
	a := &kit.Annotator{Scene: "tiers"}
	a.Mark("tier:G1", "in GPU memory: nothing to copy", "If the GPU still holds it", intro)
	a.Mark("race:miss", "recompute "+kit.MsText(r.tCompute), "the prefix is recomputed", intro)

	tiersText := fmt.Sprintf("Each tier returns the prefix over its own path: host DRAM over %s (%s), one NVMe drive (%s), object storage (%s) — many parallel streams can outrun a single drive once the 20 ms first byte is paid. "+
		"On %s the prefill of those %s tokens takes %s, so a fetch from G2 is %.1f× faster than recomputing, from G3 %.2f×, from G4 %.2f×.",
		r.tiers[1].Link.Name, kit.MsText(fetch[1]), kit.MsText(fetch[2]), kit.MsText(fetch[3]), e.GPU.Name, kit.Comma(r.prefix), kit.MsText(r.tCompute),
		r.tCompute/fetch[1], r.tCompute/fetch[2], r.tCompute/fetch[3])
	b := &kit.Annotator{Scene: "tiers"}
	for m, text := range []string{1: "host DRAM over", 2: "one NVMe drive", 3: "object storage ("} {
		if m > 0 {
			b.Mark("tier:"+r.tiers[m].ID.String(), "fetch "+kit.MsText(fetch[m]), text, tiersText)
		}
	}
	b.Mark("race:miss", "recompute "+kit.MsText(r.tCompute), "the prefill of those", tiersText)

	formula := fmt.Sprintf("With these hit rates (%s in G1, %s in G2, %s in G3, %s in G4, %s miss), the article's formula gives %s: the rest of the prompt (%s) is paid every time, the prefix is fetched or recomputed. "+
		"A miss costs %s; a G1 hit %s.",
		kit.Pct(r.p[0]), kit.Pct(r.p[1]), kit.Pct(r.p[2]), kit.Pct(r.p[3]), kit.Pct(max(0, 1-r.hitSum)), kit.MsText(r.eTTFT), kit.MsText(r.tSuffix), kit.MsText(r.ttftMiss), kit.MsText(r.tSuffix))
	c := &kit.Annotator{Scene: "tiers"}
	c.Mark("race:expected", "E[TTFT] "+kit.MsText(r.eTTFT), "the article's formula gives", formula)
	c.Mark("race:miss", "miss "+kit.MsText(r.ttftMiss), "A miss costs", formula)
	c.Mark("race:G1", "G1 hit "+kit.MsText(r.tSuffix), "a G1 hit", formula)
	exp := r.tiersScene("Formulation 2: every way to the first token, and their mix", r.tierRows(nil), []int{0, 1, 2, 3, -1}, c.Marks)
	exp.Tiers.Races = append(exp.Tiers.Races, r.expectedRace())

	steps := []lessons.Step{{
		Title: "A long prompt with a cached prefix", Narration: intro, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.tiersScene("Dynamo KVBM's tiers, and the two extremes: a G1 hit or a miss", r.tierRows(nil), []int{0, -1}, a.Marks)},
	}, {
		Quiz: lessons.NumberQuiz(fmt.Sprintf("Fetching the %s of prefix KV from %s: α = %s, BW·η = %s. How many milliseconds?", kit.BytesText(r.bytes), nvme.Name, kit.MsText(nvme.Alpha), kit.GBps(nvme.Effective())),
			kit.Round2(1000*fetch[2]), 0.05, "α + bytes/(BW·η): at hundreds of MB the bytes term is nearly all of it."),
		Title: "Each tier's fetch time", Narration: tiersText, Mentions: b.Mentions,
		Scenes: []scene.Scene{r.tiersScene("Each tier's fetch against recomputing the prefix", r.tierRows(nil), []int{1, 2, 3, -1}, b.Marks), r.tierScene()},
	}, {
		Title: "Formulation 2: expected TTFT", Narration: formula, Mentions: c.Mentions,
		Scenes: []scene.Scene{exp, r.formulaScene()},
	}, r.breakEvenStep(objectWins)}
	return append(steps, r.kvbmStep(), r.articleStep())
}

// breakEvenStep sets both costs against the prefix length.
func (r *kvTiersRun) breakEvenStep(objectWins string) lessons.Step {
	nvme, object := r.nvme, r.object
	text := fmt.Sprintf("Both costs grow with the prefix. Recomputing starts at one forward pass (%s: every weight is read once) and grows by the model's FLOPs per token; a fetch starts at α and grows by S_entry/(BW·η) per token. "+
		"For this prefix each extra token costs %.1f µs to recompute and %.1f µs to read from %s. Here: host DRAM — %s; NVMe — %s; object storage — %s. "+
		"A short prefix is not worth a 20 ms first byte; a model with many KV bytes per FLOP (no grouped-query attention, e.g. Llama-2-7B) can make a slow tier lose on long prefixes too.",
		kit.MsText(r.tOne), 1e6*r.computePerToken, 1e6*r.fetchPerToken, nvme.Name,
		r.breakEvenText(1), r.breakEvenText(2), r.breakEvenText(3))
	a := &kit.Annotator{Scene: "tiers"}
	for m, t := range []string{1: "host DRAM —", 2: "NVMe —", 3: "object storage —"} {
		if m > 0 {
			a.Mark("tier:"+r.tiers[m].ID.String(), r.breakEvenText(m), t, text)
		}
	}
	a.Mark("race:miss", "recompute "+kit.MsText(r.tCompute), "", text)
	rows := r.tierRows(func(m int) string {
		if m == 0 {
			return ""
		}
		return r.breakEvenText(m)
	})
	return lessons.Step{
		Quiz: lessons.ChoiceQuiz(fmt.Sprintf("For this %s-token prefix, is it faster to fetch it from %s or to recompute it?", kit.Comma(r.prefix), object.Name),
			[]string{"fetch it", "recompute it"}, objectWins,
			fmt.Sprintf("Fetching takes %s (20 ms to the first byte, then %s); recomputing takes %s.", kit.MsText(r.fetch[3]), kit.GBps(object.Effective()), kit.MsText(r.tCompute))),
		Title: "When is a fetch slower than recomputing?", Narration: text, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.tiersScene("Where fetching stops paying, tier by tier", rows, []int{3, -1}, a.Marks), r.chartScene()},
	}
}

// kvbmStep is how KVBM fills the tiers, with its disk filter.
func (r *kvTiersRun) kvbmStep() lessons.Step {
	text := "Dynamo's KV Block Manager copies complete, registered blocks from the GPU to pinned host memory, and from host to disk; every tier deduplicates by sequence hash. " +
		"Disk writes are filtered to spare the SSD: a host block's frequency starts at 1, doubles on each hit and decays by 1 per step, and only blocks at frequency 2 or more are written. A block used once never reaches G3, so G3 hits come from prefixes reused at least twice."
	a := &kit.Annotator{Scene: "tiers"}
	a.Mark("tier:G2", "device → host copies", "from the GPU to pinned host memory", text)
	a.Mark("tier:G3", "only blocks with frequency ≥ 2", "A block used once never reaches G3", text)
	return lessons.Step{Title: "How KVBM fills the tiers", Narration: text, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.tiersScene("How blocks reach each tier (KVBM)", r.tierRows(kvbmNote), nil, a.Marks), r.kvbmScenes()[1]}}
}

// articleStep sets the article's tier latencies beside the prefix's bytes.
func (r *kvTiersRun) articleStep() lessons.Step {
	fetch := r.fetch
	text := fmt.Sprintf("The article lists a latency per tier: ~0.150 ms for host memory, ~1.2 ms for NVMe, ~8.5 ms for S3. Those are times to the first byte; this prefix is %s, and at the article's own bandwidths it takes %s, %s and %s. "+
		"The model's measured rates give %s, %s and %s.",
		kit.BytesText(r.bytes), kit.MsText(r.articleFetch(1)), kit.MsText(r.articleFetch(2)), kit.MsText(r.articleFetch(3)), kit.MsText(fetch[1]), kit.MsText(fetch[2]), kit.MsText(fetch[3]))
	a := &kit.Annotator{Scene: "tiers"}
	for m, t := range []string{1: "~0.150 ms for host memory", 2: "~1.2 ms for NVMe", 3: "~8.5 ms for S3"} {
		if m == 0 {
			continue
		}
		a.Mark("tier:"+r.tiers[m].ID.String(), fmt.Sprintf("article %s · model %s", kit.MsText(r.articleFetch(m)), kit.MsText(fetch[m])), t, text)
	}
	rows := r.tierRows(func(m int) string {
		return "article: " + articleTiers[m].text + " → " + kit.MsText(r.articleFetch(m)) + " for this prefix"
	})
	return lessons.Step{Title: "The article's tier table", Narration: text, Mentions: a.Mentions,
		Scenes: []scene.Scene{r.tiersScene("The article's rates beside the measured ones", rows, nil, a.Marks), r.articleScene()}}
}
