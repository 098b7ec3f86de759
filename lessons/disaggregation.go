package lessons

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/inferlab/inferlab/core/cluster"
	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/scene"
)

// disaggregation: Part 12 §3.1 and formulation 3. The same stream of long
// prompts served by monolithic workers, where every prefill shares steps
// with the running decodes, and by Dynamo's separate prefill and decode
// pools, where each prompt's KV crosses a link: T = α + B·S_block/BW.
var disaggregation = &Lesson{
	Slug:    "disaggregation",
	Title:   "Disaggregation: separate prefill and decode pools",
	Part:    "Part 12 §3.1, formulation 3",
	Summary: "Monolithic workers stall their decodes whenever they prefill a long prompt; separate prefill and decode pools keep ITL smooth but move every prompt's KV over a link: T = α + B·S_block/(BW·η).",
	Engine: "NVIDIA Dynamo disaggregated serving (docs/architecture/disagg_serving.md and docs/router/kv_cache_routing.md @ 391befc: prefill worker → NIXL KV transfer → decode worker; DisaggRouterConf's conditional rule) over vLLM v1 workers with chunked prefill (core/cluster, core/scheduler), steps priced by core/hardware with CUDA graphs. " +
		"Simplified: both pools use the same GPUs and TP degree, and the decode worker receives the KV through its prefix cache, recomputing the prompt's last partial block.",
	Params: []Param{
		gpuParam,
		{Key: "model", Label: "Model", Help: "Sets the layer shapes, weights and KV bytes per token.", Kind: Choice, Choices: choicesFirst(modelIDs(), "llama-3.1-70b")},
		{Key: "tp", Label: "GPUs per worker (TP)", Unit: "GPUs", Help: "Each worker is a tensor-parallel group; each GPU holds and sends its share of the KV.", Kind: Int, Default: 4, Min: 1, Max: 8, Step: 1},
		{Key: "prefill_workers", Label: "Prefill workers", Help: "The monolithic run uses prefill + decode workers.", Kind: Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "decode_workers", Label: "Decode workers", Kind: Int, Default: 1, Min: 1, Max: 8, Step: 1},
		{Key: "link", Label: "Prefill → decode link", Help: "Measured GPU-to-GPU paths (profiles.md §2); NVLink only within one node.", Kind: Choice, Choices: []string{"ib-ndr", "nvlink4", "rdma-8x400", "tcpxo"}},
		{Key: "requests", Label: "Requests", Kind: Int, Default: 60, Min: 4, Max: 200, Step: 1},
		{Key: "rate", Label: "Arrival rate", Unit: "req/s", Kind: Float, Default: 3, Min: 0.1, Max: 100, Step: 0.1},
		{Key: "prompt_min", Label: "Prompt min", Unit: "tokens", Kind: Int, Default: 2048, Min: 16, Max: 32768, Step: 16},
		{Key: "prompt_max", Label: "Prompt max", Unit: "tokens", Kind: Int, Default: 4096, Min: 16, Max: 32768, Step: 16},
		{Key: "output_min", Label: "Output min", Unit: "tokens", Kind: Int, Default: 100, Min: 2, Max: 2048, Step: 1},
		{Key: "output_max", Label: "Output max", Unit: "tokens", Kind: Int, Default: 200, Min: 2, Max: 2048, Step: 1},
		{Key: "budget", Label: "Token budget per step", Unit: "tokens", Help: "vLLM's max_num_batched_tokens (8,192 for the API server on H100-class GPUs); a prompt longer than what is left is chunked.", Kind: Int, Default: 8192, Min: 256, Max: 32768, Step: 256},
		{Key: "conditional", Label: "Conditional disaggregation", Help: "Dynamo's rule: prefill on the decode worker unless the uncached prompt is long and the prefill queue short.", Kind: Choice, Choices: []string{"off", "on"}},
		{Key: "max_local_prefill_length", Label: "max_local_prefill_length", Unit: "tokens", Kind: Int, Default: 1000, Min: 0, Max: 32768, Step: 1},
		{Key: "max_prefill_queue_size", Label: "max_prefill_queue_size", Unit: "requests", Kind: Int, Default: 2, Min: 0, Max: 1000, Step: 1},
		{Key: "slo_ttft_ms", Label: "SLO: TTFT", Unit: "ms", Help: "A request counts toward goodput when it meets both targets; the defaults are MLPerf's interactive Llama-2-70B limits (profiles.md [MLP-L2README]).", Kind: Float, Default: 450, Min: 1, Max: 60000, Step: 1},
		{Key: "slo_tpot_ms", Label: "SLO: time per output token", Unit: "ms", Kind: Float, Default: 40, Min: 1, Max: 1000, Step: 1},
		seedParam,
	},
	Check: func(v Values) error { return checkOrdered(v, lengthPairs...) },
	Build: buildDisaggregation,
}

func init() { register(disaggregation) }

// The article's figures (Part 12 §3, §5 formulation 3) and the Dynamo
// documentation's, as the comparison report quotes them.
const (
	articleAlphaRDMA     = 2.5e-6 // s, "GPUDirect base protocol handshake overhead (≈ 2.5 µs)"
	articleFabricBW      = 50e9   // B/s, "400 Gbps = 50 GB/s"
	articleStallTokens   = 4000   // "a new 4,000-token prompt … for 100 milliseconds"
	articleStallMSDisagg = 100
	dynamoGainOneNode    = 1.30 // "+30% throughput/GPU in single-node tests"
	dynamoGainTwoNodes   = 2    // "over 2× gains in two-node setups"
)

func buildDisaggregation(v Values) (*Script, error) {
	const bs = 16
	tp := v.Int("tp")
	e, capa, err := newTPEngine(v, tp, bs)
	if err != nil {
		return nil, err
	}
	link, err := cluster.LinkByID(v.Choice("link"))
	if err != nil {
		return nil, err
	}
	P, D := v.Int("prefill_workers"), v.Int("decode_workers")
	budget := v.Int("budget")
	sc := scheduler.Config{MaxNumBatchedTokens: budget, MaxNumSeqs: 256, ChunkedPrefill: true, BlockSize: bs, NumBlocks: e.kvBlocks}
	timer := e.timer(sc.MaxNumSeqs, sc.MaxNumBatchedTokens)
	if need := (v.Int("prompt_max") + v.Int("output_max") + bs - 1) / bs; need > e.kvBlocks {
		return nil, Relation("prompt_max", strconv.Itoa(v.Int("prompt_max")), fmt.Sprintf("a prompt whose KV fits one worker (%s tokens on %d× %s)", comma(e.kvBlocks*bs), tp, e.gpu.Name))
	}
	seed := uint64(v.Int("seed"))
	wl := workload.Poisson(v.Int("requests"), v.Float("rate"), workload.Uniform{Min: v.Int("prompt_min"), Max: v.Int("prompt_max")},
		workload.Uniform{Min: v.Int("output_min"), Max: v.Int("output_max")}, seed)
	reqs := make([]cluster.Request, len(wl))
	for i, r := range wl {
		reqs[i] = cluster.Request{ID: r.ID, Arrival: r.Arrival, PromptIDs: r.TokenIDs(), Output: r.Output}
	}
	cfg := cluster.DisaggConfig{Prefill: P, Decode: D, Scheduler: sc, Link: link, KVBytesPerToken: float64(capa.BytesPerToken),
		Timer: func(bool, int) scheduler.Timer { return timer }}
	rule := cluster.ConditionalDisagg{MaxLocalPrefillLength: v.Int("max_local_prefill_length"), MaxPrefillQueueSize: v.Int("max_prefill_queue_size")}
	conditional := v.Choice("conditional") == "on"
	if conditional {
		cfg.Conditional = &rule
	}
	slo := scheduler.SLO{TTFT: v.Float("slo_ttft_ms") / 1000, TPOT: v.Float("slo_tpot_ms") / 1000}
	cmp, err := cluster.CompareDisagg(cfg, tp, slo, reqs)
	if err != nil {
		return nil, err
	}
	mono, dis := cmp.Mono, cmp.Dis
	xfers := cmp.Disagg.TransferTimes()
	xfer := scheduler.Summarise(xfers)
	thrMono, thrDis := cmp.ThroughputPerGPU(mono), cmp.ThroughputPerGPU(dis)
	goodMono, goodDis := cmp.GoodputPerGPU(mono), cmp.GoodputPerGPU(dis)
	sEntry := e.model.KVBytesPerToken(2)
	blockBytes := float64(bs) * float64(capa.BytesPerToken)

	// The request to follow: the remote one with the median TTFT.
	var remote []int
	for i, j := range cmp.Disagg.Journeys {
		if j.Remote {
			remote = append(remote, i)
		}
	}
	sort.SliceStable(remote, func(a, b int) bool { return cmp.Disagg.Requests[remote[a]].TTFT < cmp.Disagg.Requests[remote[b]].TTFT })
	var probe cluster.Journey
	probeIdx := -1
	if len(remote) > 0 {
		probeIdx = remote[len(remote)/2]
		probe = cmp.Disagg.Journeys[probeIdx]
	}
	probePrompt := len(reqs[max(probeIdx, 0)].PromptIDs)
	probeBlocks := (probePrompt + bs - 1) / bs
	probeXfer := link.Transfer(float64(probeBlocks) * blockBytes)

	// The monolithic stall: the longest step that carried both a prefill
	// and decodes, on any worker.
	stallW, stallI := 0, -1
	for w, steps := range cmp.Monolithic.DecodeSteps {
		for i, st := range steps {
			if st.PrefillTokens > 0 && st.DecodeTokens > 0 && (stallI < 0 || st.Duration > cmp.Monolithic.DecodeSteps[stallW][stallI].Duration) {
				stallW, stallI = w, i
			}
		}
	}

	s := &Script{}
	s.Metrics = []Metric{
		{Key: "ttft_p50_ms_monolithic", Label: "Monolithic: median TTFT", Unit: "ms", Value: ms(mono.TTFT.P50)},
		{Key: "ttft_p50_ms_disagg", Label: "Disaggregated: median TTFT", Unit: "ms", Value: ms(dis.TTFT.P50)},
		{Key: "ttft_p99_ms_monolithic", Label: "Monolithic: p99 TTFT", Unit: "ms", Value: ms(mono.TTFT.P99)},
		{Key: "ttft_p99_ms_disagg", Label: "Disaggregated: p99 TTFT", Unit: "ms", Value: ms(dis.TTFT.P99)},
		{Key: "itl_p50_ms_monolithic", Label: "Monolithic: median ITL", Unit: "ms", Value: ms(mono.ITL.P50)},
		{Key: "itl_p50_ms_disagg", Label: "Disaggregated: median ITL", Unit: "ms", Value: ms(dis.ITL.P50)},
		{Key: "itl_p99_ms_monolithic", Label: "Monolithic: p99 ITL", Unit: "ms", Value: ms(mono.ITL.P99)},
		{Key: "itl_p99_ms_disagg", Label: "Disaggregated: p99 ITL", Unit: "ms", Value: ms(dis.ITL.P99)},
		{Key: "itl_max_ms_monolithic", Label: "Monolithic: worst ITL", Unit: "ms", Value: ms(mono.ITL.Max)},
		{Key: "itl_max_ms_disagg", Label: "Disaggregated: worst ITL", Unit: "ms", Value: ms(dis.ITL.Max)},
		{Key: "transfer_ms", Label: "Mean KV transfer time per request", Unit: "ms", Value: round4(1000 * xfer.Mean)},
		{Key: "transfer_p99_ms", Label: "p99 KV transfer time", Unit: "ms", Value: round4(1000 * xfer.P99)},
		{Key: "kv_mb_per_gpu", Label: "KV one GPU sends for the followed request", Unit: "MB", Value: round2(float64(probeBlocks) * blockBytes / 1e6)},
		{Key: "throughput_per_gpu_monolithic", Label: "Monolithic: output tokens/s per GPU", Unit: "tok/s", Value: round2(thrMono)},
		{Key: "throughput_per_gpu_disagg", Label: "Disaggregated: output tokens/s per GPU", Unit: "tok/s", Value: round2(thrDis)},
		{Key: "goodput_per_gpu_monolithic", Label: "Monolithic: requests/s per GPU meeting the SLO", Unit: "req/s", Value: round4(goodMono)},
		{Key: "goodput_per_gpu_disagg", Label: "Disaggregated: requests/s per GPU meeting the SLO", Unit: "req/s", Value: round4(goodDis)},
		{Key: "gpus", Label: "GPUs in each deployment", Value: float64(cmp.GPUs)},
		{Key: "local_prefills", Label: "Prompts the decode workers prefilled themselves (conditional)", Value: float64(cmp.Disagg.Local)},
	}

	// Claims.
	m70, _ := hardware.ModelByID("llama-3.1-70b")
	kv70 := float64(4096 * m70.KVBytesPerToken(2))
	articleT70 := articleAlphaRDMA + kv70/articleFabricBW
	ndr, _ := cluster.LinkByID("ib-ndr")
	// The article's stall, priced: a 4,000-token prompt in one step beside
	// the decodes the worst observed step carried, each at the mean context.
	stallDecodes, meanCtx := 0, (v.Int("prompt_min")+v.Int("prompt_max")+v.Int("output_min")+v.Int("output_max"))/2
	if stallI >= 0 {
		stallDecodes = cmp.Monolithic.DecodeSteps[stallW][stallI].DecodeTokens
	}
	stallBatch := []scheduler.Work{{NewTokens: articleStallTokens, Prefill: true}}
	for i := 0; i < stallDecodes; i++ {
		stallBatch = append(stallBatch, scheduler.Work{NewTokens: 1, Context: meanCtx})
	}
	stall4k := timer.StepSeconds(stallBatch)
	ratio := func(a, b float64) string {
		if b == 0 {
			return "—"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
	}
	s.Claims = []Claim{{
		What:    "Formulation 3's constants",
		Article: fmt.Sprintf("α_RDMA ≈ %.1f µs; BW_fabric = 400 Gbps = %.0f GB/s", articleAlphaRDMA*1e6, articleFabricBW/1e9),
		Model:   fmt.Sprintf("%s: α = %.0f µs, BW·η = %s (%.0f%% of %s)", ndr.Name, ndr.Alpha*1e6, gbps(ndr.Effective()), 100*ndr.Eff, gbps(ndr.Bandwidth)),
		Why: fmt.Sprintf("The article takes the line rate and a protocol handshake; the model takes NCCL send/recv measured between two H100 nodes (profiles.md §2.2), where software and protocol overhead cost %.0f%% of the bandwidth and the small-message latency is %.0f µs.",
			100*(1-ndr.Eff), ndr.Alpha*1e6),
	}, {
		What:    "\"Sub-millisecond inter-node KV migration\"",
		Article: "sub-millisecond latency over 400 Gbps RDMA",
		Model: fmt.Sprintf("a 4,096-token Llama-3.1-70B KV is %s: %s by the article's own formula (α + bytes/50 GB/s), %s at the measured NDR rate; here the followed %s-token prompt's %s per GPU takes %s over %s",
			bytesText(kv70), msText(articleT70), msText(ndr.Transfer(kv70)), comma(probePrompt), bytesText(float64(probeBlocks)*blockBytes), msText(probeXfer), link.Name),
		Why: "Sub-millisecond holds only for small transfers (a few blocks) or when the KV is split over many NICs; a whole prompt's KV is hundreds of MB to GB, so the bytes term, not α, sets the time.",
	}, {
		What:    fmt.Sprintf("A %s-token prefill stalls the decodes", comma(articleStallTokens)),
		Article: fmt.Sprintf("%d ms of latency spikes (GPU and model not stated)", articleStallMSDisagg),
		Model: fmt.Sprintf("a %s-token prefill beside %d decodes: a %s step on %d× %s with %s; in the run the worst ITL was %s monolithic vs %s disaggregated",
			comma(articleStallTokens), stallDecodes, msText(stall4k), tp, e.gpu.Name, e.model.Name, msText(mono.ITL.Max), msText(dis.ITL.Max)),
		Why: "The model prices the step from its FLOPs and bytes on the chosen GPUs (core/hardware); the article's 100 ms is a round figure for an unstated GPU and model. In the run a step can carry more than one prompt, up to the token budget, so the worst gap can exceed one prompt's stall.",
	}, {
		What:    "Disaggregation's throughput gain (Dynamo docs)",
		Article: fmt.Sprintf("+%.0f%% throughput/GPU on one node, over %d× on two (R1-Distill-Llama-70B FP8, H100, ISL 3K / OSL 150)", 100*(dynamoGainOneNode-1), dynamoGainTwoNodes),
		Model: fmt.Sprintf("output tokens/s per GPU: %s (%.0f vs %.0f); goodput per GPU under the SLO: %s, on %d GPUs with %d prefill + %d decode %s at %g req/s",
			ratio(thrDis, thrMono), thrDis, thrMono, ratio(goodDis, goodMono), cmp.GPUs, P, D, plural(D, "worker", "workers"), v.Float("rate")),
		Why: "Dynamo's figure is measured at a latency target with each pool's TP and size tuned, in FP8; here both pools share one TP degree in BF16 and serve the offered rate, so per-GPU throughput only moves when one deployment saturates — raise the rate or tune the split to see where each one breaks.",
	}}

	// Scenes.
	setup := scene.Scene{Kind: scene.KindCards, ID: "setup", Title: "Setup", Cards: []scene.Card{
		{Label: "GPUs in each deployment", Value: float64(cmp.GPUs)},
		{Label: "monolithic workers", Value: float64(P + D), Note: fmt.Sprintf("%d× %s each", tp, e.gpu.Name)},
		{Label: "prefill + decode workers", Value: float64(P + D), Note: fmt.Sprintf("%d + %d", P, D)},
		{Label: "S_entry", Value: float64(sEntry), Unit: "B/token", Note: fmt.Sprintf("%s per GPU", comma(int(capa.BytesPerToken)))},
	}}
	window := func() (float64, float64) {
		if stallI < 0 {
			steps := cmp.Monolithic.DecodeSteps[0]
			if len(steps) == 0 {
				return 0, 1
			}
			return steps[0].Start, steps[min(len(steps)-1, 24)].Start + steps[min(len(steps)-1, 24)].Duration
		}
		steps := cmp.Monolithic.DecodeSteps[stallW]
		a, b := max(0, stallI-12), min(len(steps)-1, stallI+12)
		return steps[a].Start, steps[b].Start + steps[b].Duration
	}
	t0, t1 := window()
	lane := func(label string, steps []scheduler.Step, hl int) scene.Lane {
		l := scene.Lane{Label: label}
		for i, st := range steps {
			end := st.Start + st.Duration
			if end <= t0 || st.Start >= t1 || st.Duration == 0 {
				continue
			}
			cls, lbl := "decode", fmt.Sprintf("%d dec", st.DecodeTokens)
			if st.PrefillTokens > 0 {
				cls = "prefill"
				lbl = fmt.Sprintf("%d prefill", st.PrefillTokens)
				if st.DecodeTokens > 0 {
					lbl = fmt.Sprintf("%d dec + %d prefill", st.DecodeTokens, st.PrefillTokens)
				}
			}
			l.Bars = append(l.Bars, scene.Span{Start: ms(max(st.Start, t0) - t0), End: ms(min(end, t1) - t0), Label: lbl, Class: cls,
				Highlight: i == hl})
		}
		return l
	}
	monoTimeline := scene.Scene{Kind: scene.KindTimeline, ID: "steps-mono", Title: "Monolithic worker steps (ms)", Gantt: &scene.Timeline{Unit: "ms",
		Lanes: []scene.Lane{lane(fmt.Sprintf("monolithic W%d", stallW+1), cmp.Monolithic.DecodeSteps[stallW], stallI)}}}
	linkLane := scene.Lane{Label: "KV transfers"}
	for _, j := range cmp.Disagg.Journeys {
		if j.Remote && j.TransferEnd > t0 && j.TransferStart < t1 {
			linkLane.Bars = append(linkLane.Bars, scene.Span{Start: ms(max(j.TransferStart, t0) - t0), End: ms(min(j.TransferEnd, t1) - t0), Label: reqName(j.ID), Class: "transfer"})
		}
	}
	disLanes := []scene.Lane{}
	if len(cmp.Disagg.PrefillSteps) > 0 {
		disLanes = append(disLanes, lane("prefill P1", cmp.Disagg.PrefillSteps[0], -1))
	}
	disLanes = append(disLanes, linkLane, lane("decode D1", cmp.Disagg.DecodeSteps[0], -1))
	disTimeline := scene.Scene{Kind: scene.KindTimeline, ID: "steps-disagg", Title: "Disaggregated pools over the same interval (ms)", Gantt: &scene.Timeline{Unit: "ms", Lanes: disLanes}}

	// ITL over time for the request the worst stall hit hardest.
	worst, worstGap := 0, -1.0
	for i, m := range cmp.Monolithic.Requests {
		for _, g := range m.ITL {
			if g > worstGap {
				worst, worstGap = i, g
			}
		}
	}
	itlChart := &scene.Chart{Type: scene.Line, XLabel: "output token", YLabel: fmt.Sprintf("gap before this token of %s", reqName(reqs[worst].ID)), YUnit: "ms"}
	for _, r := range []struct {
		name string
		m    scheduler.RequestMetrics
	}{{"monolithic", cmp.Monolithic.Requests[worst]}, {"disaggregated", cmp.Disagg.Requests[worst]}} {
		sr := scene.Series{Name: r.name}
		for k, g := range r.m.ITL {
			sr.X, sr.Y = append(sr.X, float64(k+2)), append(sr.Y, ms(g))
		}
		itlChart.Series = append(itlChart.Series, sr)
	}
	itlScene := scene.Scene{Kind: scene.KindChart, ID: "itl", Title: "Gaps between one request's tokens", Chart: itlChart}
	cards := func(title string, sum scheduler.Summary, thr float64) scene.Scene {
		return scene.Scene{Kind: scene.KindCards, ID: "cards", Title: title, Cards: []scene.Card{
			{Label: "median ITL", Value: ms(sum.ITL.P50), Unit: "ms"},
			{Label: "p99 ITL", Value: ms(sum.ITL.P99), Unit: "ms"},
			{Label: "median TTFT", Value: ms(sum.TTFT.P50), Unit: "ms"},
			{Label: "output tokens/s per GPU", Value: round2(thr)},
		}}
	}

	// Formulation 3 for the followed request.
	formula := scene.Scene{Kind: scene.KindFormula, ID: "formula", Title: "Formulation 3: KV migration time", Formula: &scene.Formula{
		Expr: "T = α + B · S_block / (BW · η)",
		Terms: []scene.Term{
			{Symbol: "α", Meaning: "fixed start-up cost of " + link.Name, Value: fmt.Sprintf("%g µs", round2(link.Alpha*1e6))},
			{Symbol: "B", Meaning: fmt.Sprintf("blocks of %s's %s-token prompt (⌈%d / %d⌉)", reqName(probe.ID), comma(probePrompt), probePrompt, bs), Value: comma(probeBlocks)},
			{Symbol: "S_block", Meaning: fmt.Sprintf("bytes one GPU holds per block: %d tokens × S_entry %s B / %d GPUs", bs, comma(int(sEntry)), int(int64(sEntry)/capa.BytesPerToken)), Value: comma(int(blockBytes)) + " B"},
			{Symbol: "BW", Meaning: "nominal rate per direction", Value: gbps(link.Bandwidth)},
			{Symbol: "η", Meaning: "measured share of it: " + link.Note, Value: strconv.FormatFloat(link.Eff, 'f', 3, 64)},
		},
		Result: fmt.Sprintf("%s + %s / %s = %s", msText(link.Alpha), bytesText(float64(probeBlocks)*blockBytes), gbps(link.Effective()), msText(probeXfer)),
	}}

	// The followed request's journey.
	journey := scene.Scene{Kind: scene.KindTimeline, ID: "journey", Title: fmt.Sprintf("%s from arrival to its last token (ms)", reqName(probe.ID))}
	if probeIdx >= 0 {
		at := func(x float64) float64 { return ms(x - probe.Arrival) }
		lanes := []scene.Lane{
			{Label: fmt.Sprintf("prefill P%d", probe.PrefillWorker+1), Bars: []scene.Span{
				{Start: 0, End: at(probe.PrefillStart), Label: "queued", Class: "wait"},
				{Start: at(probe.PrefillStart), End: at(probe.PrefillEnd), Label: fmt.Sprintf("prefill %s tokens", comma(probePrompt)), Class: "prefill"}}},
			{Label: "link", Bars: []scene.Span{
				{Start: at(probe.PrefillEnd), End: at(probe.TransferStart), Label: "link busy", Class: "wait"},
				{Start: at(probe.TransferStart), End: at(probe.TransferEnd), Label: "KV " + bytesText(probe.Bytes) + " per GPU", Class: "transfer", Highlight: true}}},
			{Label: fmt.Sprintf("decode D%d", probe.DecodeWorker+1), Bars: []scene.Span{
				{Start: at(probe.TransferEnd), End: at(probe.KVPlaced), Label: "waits for room", Class: "wait"},
				{Start: at(probe.KVPlaced), End: at(probe.DecodeAdmit), Label: "waits for a step", Class: "wait"},
				{Start: at(probe.DecodeAdmit), End: at(probe.FirstToken), Label: "tail + token 1", Class: "prefill"},
				{Start: at(probe.FirstToken), End: at(probe.LastToken), Label: fmt.Sprintf("%d more tokens", reqs[probeIdx].Output-1), Class: "decode"}}},
		}
		for i := range lanes {
			kept := lanes[i].Bars[:0]
			for _, b := range lanes[i].Bars {
				if b.End > b.Start {
					kept = append(kept, b)
				}
			}
			lanes[i].Bars = kept
		}
		ttft := at(probe.FirstToken)
		journey.Gantt = &scene.Timeline{Unit: "ms", Lanes: lanes, Cursor: &ttft}
	} else {
		journey.Gantt = &scene.Timeline{Unit: "ms"}
	}

	// Percentile table.
	tbl := &scene.Table{Columns: []string{"", "monolithic", "disaggregated"}}
	row := func(name string, a, b float64, unit string) {
		tbl.Rows = append(tbl.Rows, []string{name, strconv.FormatFloat(a, 'f', 1, 64) + unit, strconv.FormatFloat(b, 'f', 1, 64) + unit})
	}
	row("TTFT p50", 1000*mono.TTFT.P50, 1000*dis.TTFT.P50, " ms")
	row("TTFT p90", 1000*mono.TTFT.P90, 1000*dis.TTFT.P90, " ms")
	row("TTFT p99", 1000*mono.TTFT.P99, 1000*dis.TTFT.P99, " ms")
	row("ITL p50", 1000*mono.ITL.P50, 1000*dis.ITL.P50, " ms")
	row("ITL p99", 1000*mono.ITL.P99, 1000*dis.ITL.P99, " ms")
	row("ITL max", 1000*mono.ITL.Max, 1000*dis.ITL.Max, " ms")
	row("TPOT p50", 1000*mono.TPOT.P50, 1000*dis.TPOT.P50, " ms")
	row("output tokens/s per GPU", thrMono, thrDis, "")
	row("SLO attainment", 100*mono.SLOAttainment, 100*dis.SLOAttainment, "%")
	tbl.Rows = append(tbl.Rows, []string{"goodput per GPU", strconv.FormatFloat(goodMono, 'f', 3, 64) + " req/s", strconv.FormatFloat(goodDis, 'f', 3, 64) + " req/s"})
	pctScene := scene.Scene{Kind: scene.KindTable, ID: "percentiles", Title: fmt.Sprintf("Same %d requests, same %d GPUs", len(reqs), cmp.GPUs), Table: tbl}

	// Link sweep: transfer time of a prompt's KV on each link against the
	// prompt's own prefill time.
	sweepLinks := []string{"nvlink4", "rdma-8x400", "ib-ndr", "tcpxo"}
	sweep := &scene.Chart{Type: scene.Line, XLabel: "prompt", XUnit: "tokens", YLabel: "time", YUnit: "ms", XLog: true, YLog: true}
	var lengths []int
	for n := 256; n <= min(contextLimit(e.model.MaxPositions), 131072); n *= 2 {
		if (n+bs-1)/bs <= e.kvBlocks {
			lengths = append(lengths, n)
		}
	}
	pre := scene.Series{Name: "prefill of the prompt (one worker, alone)"}
	for _, n := range lengths {
		pre.X, pre.Y = append(pre.X, float64(n)), append(pre.Y, ms(prefillSeconds(timer, n, budget)))
	}
	sweep.Series = append(sweep.Series, pre)
	linkTbl := &scene.Table{Columns: []string{"link", "α", "BW · η", fmt.Sprintf("%s's KV (%s tokens)", reqName(probe.ID), comma(probePrompt)), "share of its TTFT alone"}}
	probeAlone := prefillSeconds(timer, probePrompt, budget) + timer.StepSeconds([]scheduler.Work{{NewTokens: probePrompt - (probePrompt-1)/bs*bs, Context: (probePrompt - 1) / bs * bs, Prefill: true}})
	for _, id := range sweepLinks {
		l, _ := cluster.LinkByID(id)
		sr := scene.Series{Name: l.Name}
		for _, n := range lengths {
			sr.X, sr.Y = append(sr.X, float64(n)), append(sr.Y, round4(1000*l.Transfer(float64((n+bs-1)/bs)*blockBytes)))
		}
		sweep.Series = append(sweep.Series, sr)
		t := l.Transfer(float64(probeBlocks) * blockBytes)
		name := l.Name
		if id == link.ID {
			name += " (chosen)"
		}
		linkTbl.Rows = append(linkTbl.Rows, []string{name, fmt.Sprintf("%g µs", round2(l.Alpha*1e6)), gbps(l.Effective()), msText(t), pct(t / (probeAlone + t))})
	}

	// Steps.
	s.Steps = append(s.Steps, Step{
		Title: "One stream, two deployments",
		Narration: fmt.Sprintf("%d requests arrive at %g per second, with prompts of %s–%s tokens and %d–%d output tokens. Each worker is %d× %s running %s. "+
			"The monolithic deployment has %d workers that each prefill and decode their own requests; the disaggregated one splits the same %d GPUs into %d prefill and %d decode %s.",
			len(reqs), v.Float("rate"), comma(v.Int("prompt_min")), comma(v.Int("prompt_max")), v.Int("output_min"), v.Int("output_max"), tp, e.gpu.Name, e.model.Name,
			P+D, cmp.GPUs, P, D, plural(D, "worker", "workers")),
		Scenes: []scene.Scene{setup},
	})
	stallText := "No step mixed a prefill with decodes in this run."
	if stallI >= 0 {
		st := cmp.Monolithic.DecodeSteps[stallW][stallI]
		stallText = fmt.Sprintf("The worst such step, on W%d, computed %s prompt tokens beside %d decodes and took %s, while a decode-only step takes about %s (the article: a 4,000-token prompt stalls tables for 100 ms; here such a step takes %s).",
			stallW+1, comma(st.PrefillTokens), st.DecodeTokens, msText(st.Duration), msText(dis.ITL.P50), msText(stall4k))
	}
	s.Steps = append(s.Steps, Step{
		Title: "Monolithic: every prefill stalls the decodes",
		Narration: fmt.Sprintf("vLLM serves running decodes first and gives the rest of its %s-token budget to a new prompt, so a long prompt rides in the same step as every decode on that worker, and no decode gets its next token until the step ends. %s "+
			"Median ITL is %.1f ms but p99 is %.1f ms and the worst gap %.1f ms.",
			comma(budget), stallText, 1000*mono.ITL.P50, 1000*mono.ITL.P99, 1000*mono.ITL.Max),
		Scenes: []scene.Scene{monoTimeline, itlScene, cards("Monolithic", mono, thrMono)},
	})
	s.Steps = append(s.Steps, Step{
		Quiz: choiceQuiz("Now the prompts go to a separate prefill pool. Will the decode worker's p99 ITL be below or above the monolithic p99?",
			[]string{"below", "above"}, map[bool]string{true: "below", false: "above"}[dis.ITL.P99 < mono.ITL.P99],
			"A decode worker's steps carry only decodes (and each arriving prompt's short tail), so no step waits for a long prefill."),
		Title: "Separate pools: smooth decodes",
		Narration: fmt.Sprintf("Each prompt is computed on a prefill worker, its KV crosses the %s, and a decode worker generates the tokens. The decode worker never computes a prompt — only the last partial block of each arriving one — so its steps stay short: "+
			"median ITL %.1f ms, p99 %.1f ms, worst %.1f ms (monolithic: %.1f, %.1f, %.1f ms).",
			link.Name, 1000*dis.ITL.P50, 1000*dis.ITL.P99, 1000*dis.ITL.Max, 1000*mono.ITL.P50, 1000*mono.ITL.P99, 1000*mono.ITL.Max),
		Scenes: []scene.Scene{disTimeline, itlScene, cards("Disaggregated", dis, thrDis)},
	})
	s.Steps = append(s.Steps, Step{
		Quiz: numberQuiz(fmt.Sprintf("%s's prompt has %s tokens. Each of the %d GPUs holds %s B of KV per token. How many milliseconds does its KV take over %s (α %g µs, %s effective)?",
			reqName(probe.ID), comma(probePrompt), tp, comma(int(capa.BytesPerToken)), link.Name, round2(link.Alpha*1e6), gbps(link.Effective())),
			round2(1000*probeXfer), 0.05, "The GPUs of a TP group send their shards at once, so the time is one shard's: α plus its whole blocks at BW·η."),
		Title: "Formulation 3, live",
		Narration: fmt.Sprintf("The article's formula for moving B blocks of S_block bytes: T = α + B·S_block/BW. With the measured efficiency η the chosen link moves %s's %s of KV per GPU in %s. "+
			"Across the run the mean transfer took %s (p99 %s); α is %.2f%% of it — the bytes decide.",
			reqName(probe.ID), bytesText(float64(probeBlocks)*blockBytes), msText(probeXfer), msText(xfer.Mean), msText(xfer.P99), 100*link.Alpha/math.Max(probeXfer, 1e-12)),
		Scenes: []scene.Scene{formula},
	})
	if probeIdx >= 0 {
		s.Steps = append(s.Steps, Step{
			Title: fmt.Sprintf("%s's journey", reqName(probe.ID)),
			Narration: fmt.Sprintf("%s (the median TTFT) %s for prefill worker P%d, was prefilled in %s, crossed the link in %s%s,%s then decode worker D%d computed its last partial block with the running decodes and sampled token 1 at %s: that is its TTFT. "+
				"Its remaining %d tokens came every %s on average.",
				reqName(probe.ID), waited(probe.PrefillStart-probe.Arrival), probe.PrefillWorker+1, msText(probe.PrefillEnd-probe.PrefillStart), msText(probe.TransferEnd-probe.TransferStart),
				map[bool]string{true: fmt.Sprintf(" (after %s waiting for the link)", msText(probe.TransferStart-probe.PrefillEnd)), false: ""}[probe.TransferStart > probe.PrefillEnd],
				map[bool]string{true: fmt.Sprintf(" waited %s for room on the decode worker,", msText(probe.KVPlaced-probe.TransferEnd)), false: ""}[probe.KVPlaced > probe.TransferEnd],
				probe.DecodeWorker+1, msText(probe.FirstToken-probe.Arrival), reqs[probeIdx].Output-1, msText(cmp.Disagg.Requests[probeIdx].TPOT)),
			Scenes: []scene.Scene{journey},
		})
	}
	ttftWinner := map[bool]string{true: "disaggregated", false: "monolithic"}[dis.TTFT.P99 < mono.TTFT.P99]
	s.Steps = append(s.Steps, Step{
		Quiz: choiceQuiz("Which deployment has the lower p99 TTFT on this stream?", []string{"monolithic", "disaggregated"}, ttftWinner,
			"Disaggregation adds the transfer and a decode step to every TTFT and gives prompts fewer GPUs; monolithic workers prefill on every GPU but interleave with decodes. Which wins depends on the split and the load."),
		Title: "The trade: ITL for TTFT and a link",
		Narration: fmt.Sprintf("p99 ITL: %.1f ms monolithic vs %.1f ms disaggregated. Median TTFT: %.1f vs %.1f ms, p99 %.1f vs %.1f ms — each disaggregated TTFT carries a transfer (mean %s) and a decode step, and %d of %d GPUs do all the prefills. "+
			"Output tokens per second per GPU: %.0f vs %.0f; requests meeting the SLO (TTFT ≤ %g ms, TPOT ≤ %g ms): %.0f%% vs %.0f%%.",
			1000*mono.ITL.P99, 1000*dis.ITL.P99, 1000*mono.TTFT.P50, 1000*dis.TTFT.P50, 1000*mono.TTFT.P99, 1000*dis.TTFT.P99, msText(xfer.Mean), P*tp, cmp.GPUs,
			thrMono, thrDis, v.Float("slo_ttft_ms"), v.Float("slo_tpot_ms"), 100*mono.SLOAttainment, 100*dis.SLOAttainment),
		Scenes: []scene.Scene{pctScene},
	})
	s.Steps = append(s.Steps, Step{
		Title: "When does the link matter?",
		Narration: fmt.Sprintf("Transfer time grows with the prompt like prefill does, but far more slowly on a fast fabric: for %s's prompt alone (prefill + first decode step %s), NVLink adds %s, %s, and GPUDirect-TCPXO %s. "+
			"The link matters when its time is a visible share of TTFT: short prompts on slow paths, or models with many KV bytes per FLOP (no grouped-query attention).",
			reqName(probe.ID), msText(probeAlone), linkTbl.Rows[0][3], func() string {
				l, _ := cluster.LinkByID("ib-ndr")
				return "one NDR NIC " + msText(l.Transfer(float64(probeBlocks)*blockBytes))
			}(), linkTbl.Rows[3][3]),
		Scenes: []scene.Scene{{Kind: scene.KindChart, ID: "links", Title: "KV transfer per link vs the prompt's prefill", Chart: sweep},
			{Kind: scene.KindTable, ID: "link-table", Title: "Links (profiles.md §2, §6.6)", Table: linkTbl}},
	})
	longPrompts := 0
	for _, r := range reqs {
		if len(r.PromptIDs) > rule.MaxLocalPrefillLength {
			longPrompts++
		}
	}
	condText := fmt.Sprintf("Dynamo's conditional disaggregation lets a decode worker prefill a prompt itself unless the prompt minus what it already caches exceeds max_local_prefill_length (%d) and fewer than max_prefill_queue_size (%d) requests wait for a prefill worker. "+
		"It is off in this run: every prompt went remote. With it on, %d of these %d prompts are long enough to go remote, as long as the queue stays short.",
		rule.MaxLocalPrefillLength, rule.MaxPrefillQueueSize, longPrompts, len(reqs))
	if conditional {
		condText = fmt.Sprintf("Dynamo's conditional disaggregation is on: a decode worker prefills a prompt itself unless the prompt minus what it already caches exceeds max_local_prefill_length (%d) and fewer than max_prefill_queue_size (%d) requests wait for a prefill worker. "+
			"%d prompts went remote and %d were prefilled locally — each local one is a monolithic-style stall on its decode worker (worst ITL %.1f ms), traded for a shorter wait when the prefill pool is busy.",
			rule.MaxLocalPrefillLength, rule.MaxPrefillQueueSize, cmp.Disagg.Remote, cmp.Disagg.Local, 1000*dis.ITL.Max)
	}
	s.Steps = append(s.Steps, Step{
		Title:     "Conditional disaggregation",
		Narration: condText,
		Scenes: []scene.Scene{{Kind: scene.KindCards, ID: "conditional", Title: "Where prompts were prefilled", Cards: []scene.Card{
			{Label: "remote (prefill pool)", Value: float64(cmp.Disagg.Remote)},
			{Label: "local (decode worker)", Value: float64(cmp.Disagg.Local)},
			{Label: "max_local_prefill_length", Value: float64(rule.MaxLocalPrefillLength), Unit: "tokens"},
			{Label: "max_prefill_queue_size", Value: float64(rule.MaxPrefillQueueSize)},
		}}},
	})
	s.Steps = append(s.Steps, Step{Title: "Article claim vs this model", Narration: "The article's and Dynamo's figures beside this model's for the chosen setup.", Scenes: []scene.Scene{claimsTable(s.Claims)}})
	indexCursors(s.Steps)
	return s, nil
}

// waited says how long something queued, or that it did not.
func waited(s float64) string {
	if s < 1e-4 {
		return "did not wait"
	}
	return "waited " + msText(s)
}
