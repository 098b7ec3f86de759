package lessons

import (
	"fmt"
	"strconv"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/scene"
)

// kv-tiers: Part 12 §4 and formulation 2. A prompt's cached prefix may sit
// in GPU memory, host DRAM, a local NVMe drive or object storage (Dynamo
// KVBM's G1–G4); fetching it costs α + bytes/(BW·η) over that tier's link,
// recomputing it costs a prefill. Expected TTFT mixes the two by hit rate.
var kvTiers = &Lesson{
	Slug:    "kv-tiers",
	Title:   "KV tiers: fetch the prefix or recompute it?",
	Part:    "Part 12 §4, formulation 2",
	Summary: "GPU → host → NVMe → object storage: each tier's fetch time from measured links against the prefill it saves; expected TTFT from the hit rates, and the prefix length where fetching stops paying.",
	Engine: "NVIDIA Dynamo KVBM (docs/kvbm/kvbm_design.md, kvbm_guide.md: tiers G1 device, G2 pinned host, G3 disk, G4 remote; disk offload filter) feeding a vLLM v1 prefill priced by core/hardware with CUDA graphs. " +
		"Simplified: one request on an idle GPU, a blocking fetch before the prefill of the rest (no layer-by-layer overlap), and hit probabilities given as knobs rather than simulated.",
	Params: []Param{
		gpuParam, modelParam,
		{Key: "prompt_tokens", Label: "Prompt", Unit: "tokens", Help: "The whole prompt, e.g. turn 5 of a conversation with its history.", Kind: Int, Default: 10000, Min: 2, Max: 131072, Step: 1},
		{Key: "prefix_tokens", Label: "Cached prefix", Unit: "tokens", Help: "The part of the prompt some tier may hold; only whole 16-token blocks are cached.", Kind: Int, Default: 9600, Min: 16, Max: 131072, Step: 16},
		{Key: "p_gpu", Label: "P(hit) in GPU HBM (G1)", Unit: "%", Kind: Float, Default: 40, Min: 0, Max: 100, Step: 1},
		{Key: "p_host", Label: "P(hit) in host DRAM (G2)", Unit: "%", Kind: Float, Default: 30, Min: 0, Max: 100, Step: 1},
		{Key: "p_disk", Label: "P(hit) on local NVMe (G3)", Unit: "%", Kind: Float, Default: 15, Min: 0, Max: 100, Step: 1},
		{Key: "p_object", Label: "P(hit) in object storage (G4)", Unit: "%", Kind: Float, Default: 5, Min: 0, Max: 100, Step: 1},
		{Key: "nvme", Label: "NVMe drive", Kind: Choice, Choices: []string{"nvme4", "nvme5"}},
		{Key: "object", Label: "Object storage path", Help: "Many parallel ranged GETs on a 100 Gb/s instance, or one stream.", Kind: Choice, Choices: []string{"s3-100g", "s3-stream"}},
	},
	Check: func(v Values) error {
		if v.Int("prefix_tokens") >= v.Int("prompt_tokens") {
			return Relation("prefix_tokens", strconv.Itoa(v.Int("prefix_tokens")), fmt.Sprintf("below prompt_tokens (%d): the last prompt token is always computed", v.Int("prompt_tokens")))
		}
		sum := 0.0
		for _, k := range []string{"p_gpu", "p_host", "p_disk", "p_object"} {
			sum += v.Float(k)
			if sum > 100+1e-9 {
				return Relation(k, strconv.FormatFloat(v.Float(k), 'g', -1, 64), fmt.Sprintf("at most %g%%: the hit probabilities of all tiers sum to at most 100%%", 100-(sum-v.Float(k))))
			}
		}
		return nil
	},
	Build: buildKVTiers,
}

func init() { register(kvTiers) }

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
			out += "fetch wins from " + comma(c.Tokens) + " tokens"
		} else {
			out += "recompute wins from " + comma(c.Tokens) + " tokens"
		}
	}
	return out + fmt.Sprintf(" (up to %s)", comma(maxN))
}

func buildKVTiers(v Values) (*Script, error) {
	e, err := newEngine(v, kvTiersBlock)
	if err != nil {
		return nil, err
	}
	prompt, prefixRaw := v.Int("prompt_tokens"), v.Int("prefix_tokens")
	if need := (prompt + kvTiersBlock) / kvTiersBlock; need > e.kvBlocks {
		return nil, Relation("prompt_tokens", strconv.Itoa(prompt), fmt.Sprintf("a prompt whose KV fits one %s with %s (%s tokens)", e.gpu.Name, e.model.Name, comma(e.kvBlocks*kvTiersBlock)))
	}
	if ctx := contextLimit(e.model.MaxPositions); prompt > ctx {
		return nil, Relation("prompt_tokens", strconv.Itoa(prompt), fmt.Sprintf("at most %s's context of %s tokens", e.model.Name, comma(ctx)))
	}
	nvme, err := cluster.LinkByID(v.Choice("nvme"))
	if err != nil {
		return nil, err
	}
	object, err := cluster.LinkByID(v.Choice("object"))
	if err != nil {
		return nil, err
	}
	tiers := cluster.Tiers(e.gpu.HostLinkBW, nvme, object)
	timer := e.timer(kvTiersMaxSeqs, kvTiersBudget)
	sEntry := float64(e.model.KVBytesPerToken(2))

	// Only whole blocks are cached: the prefix a tier can return.
	prefix := prefixRaw / kvTiersBlock * kvTiersBlock
	bytes := float64(prefix) * sEntry
	suffix := prompt - prefix
	// The rest of the prompt, computed on top of the prefix, chunked by the budget.
	tSuffix := 0.0
	for done := prefix; done < prompt; {
		k := min(kvTiersBudget, prompt-done)
		tSuffix += timer.StepSeconds([]scheduler.Work{{NewTokens: k, Context: done, Prefill: true}})
		done += k
	}
	memo := map[int]float64{}
	compute := func(n int) float64 {
		if t, ok := memo[n]; ok {
			return t
		}
		t := prefillSeconds(timer, n, kvTiersBudget)
		memo[n] = t
		return t
	}
	tCompute := compute(prefix)
	p := []float64{v.Float("p_gpu") / 100, v.Float("p_host") / 100, v.Float("p_disk") / 100, v.Float("p_object") / 100}
	fetch := make([]float64, len(tiers))
	for m, t := range tiers {
		fetch[m] = t.Fetch(bytes)
	}
	eFormula, err := cluster.ExpectedTTFT(p, fetch, tCompute)
	if err != nil {
		return nil, Relation("p_object", strconv.FormatFloat(v.Float("p_object"), 'g', -1, 64), err.Error())
	}
	eTTFT := tSuffix + eFormula
	ttftMiss := tCompute + tSuffix
	hitSum := p[0] + p[1] + p[2] + p[3]

	// Break-even prefix lengths per tier.
	maxN := min(kvTiersMaxSearch, contextLimit(e.model.MaxPositions)-1, e.kvBlocks*kvTiersBlock)
	type tierBE struct {
		cs         []cluster.Crossing
		fetchFirst bool
	}
	bes := make([]tierBE, len(tiers))
	for m := 1; m < len(tiers); m++ {
		t := tiers[m]
		f := func(n int) float64 { return t.Fetch(float64((n+kvTiersBlock-1)/kvTiersBlock*kvTiersBlock) * sEntry) }
		bes[m] = tierBE{cs: cluster.BreakEven(f, compute, maxN, kvTiersGridPoints), fetchFirst: f(1) < compute(1)}
	}
	// The first prefix length at which the faster of fetching from tier m
	// and recomputing changes, or −1 when one wins at every length.
	breakEven := func(m int) int {
		if len(bes[m].cs) == 0 {
			return -1
		}
		return bes[m].cs[0].Tokens
	}
	// Marginal costs per token: the slopes of the two curves.
	computePerToken := (tCompute - compute(1)) / float64(max(1, prefix-1))
	fetchPerToken := sEntry / nvme.Effective()

	s := &Script{}
	s.Metrics = []Metric{
		{Key: "ttft_expected_ms", Label: "Expected TTFT from the tier hit rates", Unit: "ms", Value: round4(1000 * eTTFT)},
		{Key: "ttft_recompute_ms", Label: "TTFT on a miss (recompute the prefix)", Unit: "ms", Value: round4(1000 * ttftMiss)},
		{Key: "ttft_gpu_hit_ms", Label: "TTFT on a G1 hit (compute only the rest)", Unit: "ms", Value: round4(1000 * tSuffix)},
		{Key: "compute_prefix_ms", Label: "T_compute: prefill of the prefix", Unit: "ms", Value: round4(1000 * tCompute)},
		{Key: "fetch_ms_host", Label: "T_fetch from host DRAM (G2)", Unit: "ms", Value: round4(1000 * fetch[1])},
		{Key: "fetch_ms_nvme", Label: "T_fetch from NVMe (G3)", Unit: "ms", Value: round4(1000 * fetch[2])},
		{Key: "fetch_ms_object", Label: "T_fetch from object storage (G4)", Unit: "ms", Value: round4(1000 * fetch[3])},
		{Key: "prefix_mb", Label: "KV of the cached prefix", Unit: "MB", Value: round2(bytes / 1e6)},
		{Key: "breakeven_tokens_host", Label: "Prefix length where host fetch and recompute trade places (−1: one wins at every length)", Unit: "tokens", Value: float64(breakEven(1))},
		{Key: "breakeven_tokens_nvme", Label: "Prefix length where NVMe fetch and recompute trade places (−1: one wins at every length)", Unit: "tokens", Value: float64(breakEven(2))},
		{Key: "breakeven_tokens_object", Label: "Prefix length where object-storage fetch and recompute trade places (−1: one wins at every length)", Unit: "tokens", Value: float64(breakEven(3))},
		{Key: "compute_us_per_token", Label: "Recompute cost per extra prefix token", Unit: "µs", Value: round4(1e6 * computePerToken)},
		{Key: "fetch_us_per_token_nvme", Label: "NVMe fetch cost per prefix token (S_entry / BW·η)", Unit: "µs", Value: round4(1e6 * fetchPerToken)},
		{Key: "speedup_gpu_hit", Label: "TTFT on a miss / on a G1 hit", Unit: "×", Value: round2(ttftMiss / tSuffix)},
	}

	// Claims.
	articleFetch := func(m int) float64 { return articleTiers[m].latency + bytes/articleTiers[m].bw }
	tierRows := ""
	for m := 1; m < len(tiers); m++ {
		if m > 1 {
			tierRows += "; "
		}
		tierRows += fmt.Sprintf("%s %s", tiers[m].ID, msText(fetch[m]))
	}
	s.Claims = []Claim{{
		What:    "Tier latencies",
		Article: "host ~0.150 ms, NVMe ~1.2 ms, S3 ~8.5 ms",
		Model:   fmt.Sprintf("for this %s-token prefix of %s (%s): %s", comma(prefix), e.model.Name, bytesText(bytes), tierRows),
		Why:     "The article's latencies are first-byte times that ignore the bytes; a real prefix's KV is hundreds of MB, so bytes/(BW·η) dominates every tier but object storage's 20 ms time to first byte on short prefixes.",
	}, {
		What:    "Tier bandwidths",
		Article: "PCIe 5.0 64 GB/s, NVMe 7.5 GB/s, S3 1.25 GB/s (a 10 GbE NIC)",
		Model: fmt.Sprintf("%s %s, %s %s, %s %s", tiers[1].Link.Name, gbps(tiers[1].Link.Effective()), nvme.Name, gbps(nvme.Effective()),
			object.Name, gbps(object.Effective())),
		Why: "The model uses measured rates (profiles.md §2.2–§2.3, §6.6): PCIe DMA reaches about 52 of 63 GB/s, one NVMe drive reads 6.8 (Gen4) or 13 GB/s (Gen5), and S3 gives 93 MB/s per stream or about 8 GB/s with many streams on a 100 Gb/s instance.",
	}, {
		What:    "Smart routing (a G1 hit) slashes TTFT",
		Article: fmt.Sprintf("up to %d×; \"from 100ms+ to under %d ms\"", articleTierSpeedup, articleRoutedTTFTMS),
		Model: fmt.Sprintf("%s on a miss vs %s on a G1 hit: %.1f× for a %s-token prompt with %s tokens cached on %s",
			msText(ttftMiss), msText(tSuffix), ttftMiss/tSuffix, comma(prompt), comma(prefix), e.gpu.Name),
		Why: fmt.Sprintf("The speed-up is the share of the prompt that is cached: the %s uncached tokens still need a forward pass, which reads all the weights once (%s for %s on this GPU), so a hit cannot get under that floor.",
			comma(suffix), msText(compute(1)), e.model.Name),
	}, {
		What:    "KVBM host offload (Dynamo docs)",
		Article: fmt.Sprintf("%.0f%% TTFT improvement (10 multi-turn conversations, 80 users)", 100*dynamoHostOffloadGain),
		Model: fmt.Sprintf("a G2 hit instead of a miss: %s vs %s, %.0f%% less for this prompt on an idle GPU", msText(fetch[1]+tSuffix), msText(ttftMiss),
			100*(1-(fetch[1]+tSuffix)/ttftMiss)),
		Why: "Dynamo's figure averages over a workload where only some turns find their history offloaded and GPUs are busy; this is one request whose whole prefix is in host memory.",
	}}

	// Scenes.
	setup := scene.Scene{Kind: scene.KindCards, ID: "setup", Title: "This prompt", Cards: []scene.Card{
		{Label: "prompt", Value: float64(prompt), Unit: "tokens"},
		{Label: "cached prefix", Value: float64(prefix), Unit: "tokens", Note: fmt.Sprintf("%d blocks of %d", prefix/kvTiersBlock, kvTiersBlock)},
		{Label: "S_entry", Value: sEntry, Unit: "B/token", Note: e.model.Name},
		{Label: "prefix KV", Value: round2(bytes / 1e6), Unit: "MB"},
	}}
	tierTable := &scene.Table{Columns: []string{"tier", "medium", "link", "α", "BW · η", "T_fetch (this prefix)", "TTFT on a hit", "break-even"}}
	for m, t := range tiers {
		if m == 0 {
			tierTable.Rows = append(tierTable.Rows, []string{t.ID.String() + " " + t.Name, t.Medium, "— (attention reads it in place)", "—", gbps(e.gpu.MemBandwidth) + " HBM", "0 ms", msText(tSuffix), "always a win"})
			continue
		}
		tierTable.Rows = append(tierTable.Rows, []string{t.ID.String() + " " + t.Name, t.Medium, t.Link.Name, msText(t.Link.Alpha), gbps(t.Link.Effective()),
			msText(fetch[m]), msText(fetch[m] + tSuffix), breakEvenText(bes[m].cs, bes[m].fetchFirst, maxN)})
	}
	tierTable.Rows = append(tierTable.Rows, []string{"miss", "—", "recompute the prefix", "—", "—", msText(tCompute) + " (T_compute)", msText(ttftMiss), "—"})
	tierScene := scene.Scene{Kind: scene.KindTable, ID: "tiers", Title: "Dynamo KVBM tiers for this prefix", Table: tierTable}

	terms := []scene.Term{}
	for m, t := range tiers {
		terms = append(terms, scene.Term{Symbol: "P(hit_" + t.ID.String() + ")", Meaning: "share of requests whose prefix is in " + t.Name, Value: pct(p[m])})
	}
	for m, t := range tiers {
		terms = append(terms, scene.Term{Symbol: "T_fetch(" + t.ID.String() + ")", Meaning: "α + bytes/(BW·η) over " + map[bool]string{true: "nothing: it is in HBM", false: t.Link.Name}[m == 0], Value: msText(fetch[m])})
	}
	terms = append(terms,
		scene.Term{Symbol: "T_compute", Meaning: fmt.Sprintf("prefill of the %s-token prefix (core/hardware)", comma(prefix)), Value: msText(tCompute)},
		scene.Term{Symbol: "T_rest", Meaning: fmt.Sprintf("prefill of the other %s tokens on top of the prefix, paid in every case", comma(suffix)), Value: msText(tSuffix)})
	formula := scene.Scene{Kind: scene.KindFormula, ID: "formula", Title: "Formulation 2: expected TTFT over the tiers", Formula: &scene.Formula{
		Expr:   "E[TTFT] = T_rest + Σ_m P(hit_m) · T_fetch(m) + (1 − Σ_m P(hit_m)) · T_compute",
		Terms:  terms,
		Result: fmt.Sprintf("%s + %s = %s (miss: %s)", msText(tSuffix), msText(eFormula), msText(eTTFT), msText(ttftMiss)),
	}}

	// Fetch vs recompute by prefix length.
	chart := &scene.Chart{Type: scene.Line, XLabel: "cached prefix", XUnit: "tokens", YLabel: "time", YUnit: "ms", XLog: true, YLog: true}
	var lengths []int
	for n := 16; n <= maxN; n *= 2 {
		lengths = append(lengths, n)
	}
	if len(lengths) == 0 || lengths[len(lengths)-1] != maxN {
		lengths = append(lengths, maxN)
	}
	rec := scene.Series{Name: "recompute (prefill)"}
	for _, n := range lengths {
		rec.X, rec.Y = append(rec.X, float64(n)), append(rec.Y, round4(1000*compute(n)))
	}
	chart.Series = append(chart.Series, rec)
	for m := 1; m < len(tiers); m++ {
		sr := scene.Series{Name: "fetch from " + tiers[m].Name}
		for _, n := range lengths {
			sr.X, sr.Y = append(sr.X, float64(n)), append(sr.Y, round4(1000*tiers[m].Fetch(float64(n)*sEntry)))
		}
		chart.Series = append(chart.Series, sr)
	}
	cur := float64(prefix)
	chart.Cursor = &cur
	chartScene := scene.Scene{Kind: scene.KindChart, ID: "breakeven", Title: "Fetch vs recompute by prefix length", Chart: chart}

	// The article's tier table beside the model.
	art := &scene.Table{Columns: []string{"tier", "article", "article's rates for this prefix (latency + bytes/BW)", "this model (α + bytes/(BW·η))"}}
	for m, t := range tiers {
		model := msText(fetch[m])
		if m == 0 {
			model = "0 ms (no copy)"
		}
		art.Rows = append(art.Rows, []string{t.ID.String() + " " + t.Name, articleTiers[m].text, msText(articleFetch(m)), model})
	}
	artScene := scene.Scene{Kind: scene.KindTable, ID: "article-tiers", Title: fmt.Sprintf("The article's tier table and %s of KV", bytesText(bytes)), Table: art}

	// KVBM's offload policy and disk filter.
	kvbm := &scene.Table{Columns: []string{"tier", "medium", "role in KVBM", "how blocks arrive"}}
	kvbm.Rows = [][]string{
		{"G1", "GPU HBM (device pool)", "active and reusable blocks; target of onboarding", "computed by prefill or decode"},
		{"G2", "pinned host DRAM", "receives device offloads; onboards to GPU; offloads to disk", "Device→Host copy of registered (complete) blocks"},
		{"G3", "local NVMe (disk pool)", "receives host offloads; onboards directly to GPU (NIXL, GDS)", "Host→Disk, only for blocks with frequency ≥ 2"},
		{"G4", "remote / object storage", "opaque blob store via NIXL", "remote offload"},
	}
	filter := &scene.Table{Columns: []string{"event", "block used once: frequency", "to disk?", "block reused: frequency", "to disk?"}}
	once, reused := cluster.NewDiskFilter(), cluster.NewDiskFilter()
	yes := func(b bool) string { return map[bool]string{true: "yes", false: "no"}[b] }
	filter.Rows = append(filter.Rows, []string{"offloaded to host", strconv.Itoa(once.Frequency()), yes(once.Offload()), strconv.Itoa(reused.Frequency()), yes(reused.Offload())})
	for _, ev := range []string{"decay", "hit", "decay", "hit", "decay", "decay"} {
		once.Decay()
		if ev == "hit" {
			reused.Hit()
		} else {
			reused.Decay()
		}
		filter.Rows = append(filter.Rows, []string{ev + " (the reused block; the other only decays)", strconv.Itoa(once.Frequency()), yes(once.Offload()), strconv.Itoa(reused.Frequency()), yes(reused.Offload())})
	}

	// Steps.
	objectWins := map[bool]string{true: "fetch it", false: "recompute it"}[fetch[3] < tCompute]
	s.Steps = []Step{{
		Title: "A long prompt with a cached prefix",
		Narration: fmt.Sprintf("A %s-token prompt arrives whose first %s tokens were seen before (say, the history of a conversation). Their KV is %s B per token for %s: %s in all. "+
			"If the GPU still holds it, only the other %s tokens are computed (%s). If it was evicted, that KV may still live further down Dynamo's KVBM hierarchy — or be gone, and then the prefix is recomputed (%s more).",
			comma(prompt), comma(prefix), comma(int(sEntry)), e.model.Name, bytesText(bytes), comma(suffix), msText(tSuffix), msText(tCompute)),
		Scenes: []scene.Scene{setup},
	}, {
		Quiz: numberQuiz(fmt.Sprintf("Fetching the %s of prefix KV from %s: α = %s, BW·η = %s. How many milliseconds?", bytesText(bytes), nvme.Name, msText(nvme.Alpha), gbps(nvme.Effective())),
			round2(1000*fetch[2]), 0.05, "α + bytes/(BW·η): at hundreds of MB the bytes term is nearly all of it."),
		Title: "Each tier's fetch time",
		Narration: fmt.Sprintf("Each tier returns the prefix over its own path: host DRAM over %s (%s), one NVMe drive (%s), object storage (%s) — many parallel streams can outrun a single drive once the 20 ms first byte is paid. "+
			"On %s the prefill of those %s tokens takes %s, so a fetch from G2 is %.1f× faster than recomputing, from G3 %.2f×, from G4 %.2f×.",
			tiers[1].Link.Name, msText(fetch[1]), msText(fetch[2]), msText(fetch[3]), e.gpu.Name, comma(prefix), msText(tCompute),
			tCompute/fetch[1], tCompute/fetch[2], tCompute/fetch[3]),
		Scenes: []scene.Scene{tierScene},
	}, {
		Title: "Formulation 2: expected TTFT",
		Narration: fmt.Sprintf("With these hit rates (%s in G1, %s in G2, %s in G3, %s in G4, %s miss), the article's formula gives %s: the rest of the prompt (%s) is paid every time, the prefix is fetched or recomputed. "+
			"A miss costs %s; a G1 hit %s.",
			pct(p[0]), pct(p[1]), pct(p[2]), pct(p[3]), pct(max(0, 1-hitSum)), msText(eTTFT), msText(tSuffix), msText(ttftMiss), msText(tSuffix)),
		Scenes: []scene.Scene{formula},
	}, {
		Quiz: choiceQuiz(fmt.Sprintf("For this %s-token prefix, is it faster to fetch it from %s or to recompute it?", comma(prefix), object.Name),
			[]string{"fetch it", "recompute it"}, objectWins,
			fmt.Sprintf("Fetching takes %s (20 ms to the first byte, then %s); recomputing takes %s.", msText(fetch[3]), gbps(object.Effective()), msText(tCompute))),
		Title: "When is a fetch slower than recomputing?",
		Narration: fmt.Sprintf("Both costs grow with the prefix. Recomputing starts at one forward pass (%s: every weight is read once) and grows by the model's FLOPs per token; a fetch starts at α and grows by S_entry/(BW·η) per token. "+
			"For this prefix each extra token costs %.1f µs to recompute and %.1f µs to read from %s. Here: host DRAM — %s; NVMe — %s; object storage — %s. "+
			"A short prefix is not worth a 20 ms first byte; a model with many KV bytes per FLOP (no grouped-query attention, e.g. Llama-2-7B) can make a slow tier lose on long prefixes too.",
			msText(compute(1)), 1e6*computePerToken, 1e6*fetchPerToken, nvme.Name,
			breakEvenText(bes[1].cs, bes[1].fetchFirst, maxN), breakEvenText(bes[2].cs, bes[2].fetchFirst, maxN), breakEvenText(bes[3].cs, bes[3].fetchFirst, maxN)),
		Scenes: []scene.Scene{chartScene},
	}, {
		Title: "How KVBM fills the tiers",
		Narration: "Dynamo's KV Block Manager copies complete, registered blocks from the GPU to pinned host memory, and from host to disk; every tier deduplicates by sequence hash. " +
			"Disk writes are filtered to spare the SSD: a host block's frequency starts at 1, doubles on each hit and decays by 1 per step, and only blocks at frequency 2 or more are written. A block used once never reaches G3, so G3 hits come from prefixes reused at least twice.",
		Scenes: []scene.Scene{{Kind: scene.KindTable, ID: "kvbm", Title: "KVBM tiers (engines.md §5.5)", Table: kvbm},
			{Kind: scene.KindTable, ID: "filter", Title: "The disk offload filter, step by step", Table: filter}},
	}, {
		Title: "The article's tier table",
		Narration: fmt.Sprintf("The article lists a latency per tier: ~0.150 ms for host memory, ~1.2 ms for NVMe, ~8.5 ms for S3. Those are times to the first byte; this prefix is %s, and at the article's own bandwidths it takes %s, %s and %s. "+
			"The model's measured rates give %s, %s and %s.",
			bytesText(bytes), msText(articleFetch(1)), msText(articleFetch(2)), msText(articleFetch(3)), msText(fetch[1]), msText(fetch[2]), msText(fetch[3])),
		Scenes: []scene.Scene{artScene},
	}, {
		Title:     "Article claim vs this model",
		Narration: "The article's and Dynamo's figures beside this model's for the chosen prompt.",
		Scenes:    []scene.Scene{claimsTable(s.Claims)},
	}}
	indexCursors(s.Steps)
	return s, nil
}
