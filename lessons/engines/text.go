package engines

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// The engines lesson's script: the three engines side by side as a
// cluster of three workers on one scale (memory held, queue), at evenly
// spaced moments, then the final figures and where each engine leads.

const engScene = "engines"

func (r *enginesRun) Script() *lessons.Script {
	var steps []lessons.Step
	steps = append(steps, r.introStep())
	for k, t := range r.times {
		steps = append(steps, r.snapshotStep(k, t))
	}
	steps[len(steps)-1].Quiz = r.quiz()
	steps = append(steps, r.resultsStep(), r.leadsStep(), r.claimsStep())
	for i := range steps {
		steps[i].Cursor = float64(i)
	}
	return &lessons.Script{Steps: steps, Metrics: r.metrics(), Claims: r.claims(), Work: r.work}
}

// cluster draws the engines at moment t (t < 0: before any request).
func (r *enginesRun) cluster(t float64, mark int) scene.Scene {
	pool := scene.Pool{Label: "one H100 each, " + kit.Comma(r.kvTokens) + " tokens of KV"}
	queueMax := 1.0
	for _, e := range r.eng {
		for _, st := range e.steps {
			queueMax = max(queueMax, float64(st.Running+st.Waiting))
		}
	}
	var stats []scene.Stat
	for i, e := range r.eng {
		s := engineState{}
		if t >= 0 {
			s = stateAt(e, t)
		}
		w := scene.Worker{ID: e.key, Name: e.name, Queue: float64(s.running + s.waiting), Chosen: i == mark,
			Cache: []scene.Fill{{Group: 0, Value: math.Round(s.held * float64(e.capacity))}},
			// Short enough for a worker's box (about 17 characters).
			Lines: []string{fmt.Sprintf("%d run · %d wait", s.running, s.waiting), fmt.Sprintf("%d done · %d preem.", s.finished, s.preempted)}}
		pool.Workers = append(pool.Workers, w)
		stats = append(stats, scene.Stat{Label: e.name, Value: kit.Pct(s.held) + " of KV held"})
	}
	c := &scene.Cluster{Pools: []scene.Pool{pool}, Groups: []string{"held by running requests"}, CacheLabel: "KV tokens running requests hold", CacheUnit: "tokens",
		QueueLabel: "requests running + waiting", QueueUnit: "in flight", CacheMax: float64(r.kvTokens), QueueMax: queueMax, Stats: stats}
	title := "The three engines, same requests, same KV bytes"
	if t >= 0 {
		title += " — at " + strconv.FormatFloat(t, 'f', 1, 64) + " s"
	}
	sc := scene.Scene{Kind: scene.KindCluster, ID: engScene, Title: title, Cluster: c, Main: true}
	// Every engine is named in the narration, so each is marked; the
	// longest queue gets the callout.
	for i, e := range r.eng {
		m := scene.Mark{Ref: "worker:" + e.key}
		if i == mark {
			m.Label = "most waiting"
		}
		sc.Marks = append(sc.Marks, m)
	}
	return sc
}

// mentions links each engine's name in the narration to its worker.
func (r *enginesRun) mentions() []scene.Mention {
	var out []scene.Mention
	for _, e := range r.eng {
		out = append(out, scene.Mention{Text: e.name, Scene: engScene, Ref: "worker:" + e.key})
	}
	return out
}

func (r *enginesRun) introStep() lessons.Step {
	text := fmt.Sprintf("The stream: %s. Each engine gets %s tokens of KV memory on one H100 serving Llama-3.1-8B. vLLM: %s. SGLang: %s. TensorRT-LLM: %s. "+
		"Out of memory, vLLM preempts the newest request by recompute, SGLang retracts the one with the fewest outputs, and GUARANTEED_NO_EVICT never has to (MAX_UTILIZATION pauses one). "+
		"Simplified: one step-time model prices all three, each scheduling synchronously.",
		r.desc, kit.Comma(r.kvTokens), r.eng[0].config, r.eng[1].config, r.eng[2].config)
	return lessons.Step{Title: "One trace, three engines", Narration: text, Scenes: []scene.Scene{r.cluster(-1, -1)}, Mentions: r.mentions()}
}

func (r *enginesRun) snapshotStep(k int, t float64) lessons.Step {
	states := make([]engineState, len(r.eng))
	most := 0
	for i, e := range r.eng {
		states[i] = stateAt(e, t)
		if states[i].waiting > states[most].waiting {
			most = i
		}
	}
	var parts []string
	for i, e := range r.eng {
		s := states[i]
		parts = append(parts, fmt.Sprintf("%s has %d running and %d waiting, %s of its KV held, %d done, %d preempted so far", e.name, s.running, s.waiting, kit.Pct(s.held), s.finished, s.preempted))
	}
	text := fmt.Sprintf("At %.1f s: %s. ", t, strings.Join(parts, "; ")) + r.whyQueues(states, most)
	if states[most].waiting == 0 {
		most = -1 // no queue to point at
	}
	return lessons.Step{Title: fmt.Sprintf("At %.1f s", t), Narration: text, Scenes: []scene.Scene{r.cluster(t, most)}, Mentions: r.mentions()}
}

// whyQueues explains the snapshot's longest queue by the engine's policy.
func (r *enginesRun) whyQueues(states []engineState, most int) string {
	if states[most].waiting == 0 {
		return "Nobody waits: every engine keeps up with the stream here."
	}
	switch r.eng[most].key {
	case "trtllm":
		if r.trtPolicy == "guaranteed-no-evict" {
			return "TensorRT-LLM's queue is longest: GUARANTEED_NO_EVICT starts a request only when the blocks for its whole prompt and output are free beside every running request's, so memory that will be needed later sits unused now."
		}
		return "TensorRT-LLM's queue is longest: without chunked prefill a whole prompt must fit one step's max_num_tokens, and MAX_UTILIZATION pauses the last request started when blocks run out."
	case "sglang":
		return "SGLang's queue is longest: its PrefillAdder keeps room for what running requests will still write (their remaining outputs × new_token_ratio) and for each new request's whole output, so it admits less at once."
	}
	return "vLLM's queue is longest: it admits as long as this step's blocks fit, and when decodes outgrow memory it preempts the newest request, which waits again at the head of the queue."
}

func (r *enginesRun) quiz() *lessons.Quiz {
	for _, key := range []string{"hit_rate", "preemptions", "ttft_p50", "throughput"} {
		l := r.lead(key)
		if l.best >= 0 {
			return lessons.ChoiceQuiz("Which engine will end with the best "+l.label+"?", []string{"vLLM", "SGLang", "TensorRT-LLM"}, r.eng[l.best].name,
				r.leadWhy(l, map[string]bool{}))
		}
	}
	return lessons.ChoiceQuiz("Which engine preempts by recompute when memory runs out?", []string{"vLLM", "SGLang", "TensorRT-LLM"}, "vLLM",
		"vLLM v1 preempts the newest request by recompute; SGLang retracts; TensorRT-LLM under GUARANTEED_NO_EVICT never needs to.")
}

func (r *enginesRun) lead(key string) engineLead {
	for _, l := range r.leads {
		if l.metric == key {
			return l
		}
	}
	return engineLead{best: -1}
}

func fig(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if v >= 1000 {
		s = kit.Comma(int(v + 0.5))
	}
	if unit == "" {
		return s
	}
	if unit == "%" {
		return s + "%"
	}
	return s + " " + unit
}

// leadWhy is one sentence: who leads on l, with the figures, and the
// policy that makes it so.
// A reason already given (vLLM's chunking behind both its TTFT leads) is
// not repeated: said holds the reasons given so far.
func (r *enginesRun) leadWhy(l engineLead, said map[string]bool) string {
	if l.best < 0 {
		return fmt.Sprintf("On %s two engines tie at %s.", l.label, fig(l.value, l.unit))
	}
	head := fmt.Sprintf("%s leads on %s: %s (next best %s).", r.eng[l.best].name, l.label, fig(l.value, l.unit), fig(l.next, l.unit))
	why := engineReason(r.eng[l.best].key, l.metric, r.trtPolicy, r.shared)
	if said[why] {
		return head
	}
	said[why] = true
	return head + " " + why
}

// engineReason is the mechanism behind an engine's lead on a metric.
func engineReason(key, metric, trtPolicy string, shared int) string {
	switch key + "/" + metric {
	case "sglang/hit_rate":
		if shared%16 != 0 {
			return fmt.Sprintf("Its radix cache matches to the token: all %s tokens of a shared prompt are found, where 16- and 32-token blocks only reuse whole blocks.", kit.Comma(shared))
		}
		return "Its radix cache matches to the token, and caches each prompt as soon as its prefill batch ends."
	case "vllm/hit_rate":
		return "vLLM registers a block's hash when it is scheduled, before its KV is written, so requests in the same step already share it; SGLang caches after the prefill batch."
	case "trtllm/hit_rate":
		return "Its 32-token blocks are cached as soon as they are scheduled, like vLLM's."
	case "sglang/ttft_p50", "sglang/ttft_p99":
		return "SGLang runs a new prefill batch whenever one can be formed, ahead of the decodes, so a new request's first token comes at the end of its own prefill batch."
	case "vllm/ttft_p50", "vllm/ttft_p99":
		return "vLLM chunks prompts into the token budget beside the decodes, so a long prompt never holds the others back and memory is used as soon as it frees."
	case "trtllm/preemptions":
		if trtPolicy == "guaranteed-no-evict" {
			return "GUARANTEED_NO_EVICT reserves each request's whole length before starting it, so it never has to evict one; it pays in requests waiting."
		}
		return "MAX_UTILIZATION's 32-token blocks leave fewer partial blocks to grow."
	case "vllm/throughput", "trtllm/throughput", "sglang/throughput":
		return "More requests decode in each step, so each step's weight reads serve more tokens."
	case "sglang/itl_p99", "vllm/itl_p99", "trtllm/itl_p99":
		return "Its decodes are interrupted least by other requests' prompts."
	}
	return "Its policy frees or admits memory at the right moment for this stream."
}

func (r *enginesRun) resultsStep() lessons.Step {
	c := &scene.Chart{Type: scene.Bar, XLabel: "time to first token", YLabel: "TTFT", YUnit: "ms", Note: "median and p99 TTFT of each engine", XNames: []string{"median", "p99"}}
	for _, e := range r.eng {
		c.Series = append(c.Series, scene.Series{Name: e.name, X: []float64{1, 2}, Y: []float64{kit.Ms(e.sum.TTFT.P50), kit.Ms(e.sum.TTFT.P99)}})
	}
	var cards []scene.Card
	var parts []string
	for _, e := range r.eng {
		cards = append(cards,
			scene.Card{Label: e.name + " throughput", Value: kit.Round1(e.sum.OutputTokensPerS), Unit: "tok/s"},
			scene.Card{Label: e.name + " hit rate", Value: kit.Round1(100 * e.sum.PrefixHitRate), Unit: "%"},
			scene.Card{Label: e.name + " preemptions", Value: float64(e.sum.Preemptions)},
			scene.Card{Label: e.name + " peak KV held", Value: kit.Round1(100 * e.peakHeld), Unit: "%"})
		parts = append(parts, fmt.Sprintf("%s: median TTFT %s, p99 %s, %s output tokens a second, %s of prompt tokens found cached, %d preemptions, at most %s of its KV held",
			e.name, kit.MsText(e.sum.TTFT.P50), kit.MsText(e.sum.TTFT.P99), kit.Comma(int(e.sum.OutputTokensPerS+0.5)), kit.Pct(e.sum.PrefixHitRate), e.sum.Preemptions, kit.Pct(e.peakHeld)))
	}
	ttft := scene.Scene{Kind: scene.KindChart, ID: "ttft", Title: "Time to first token by engine", Chart: c}
	ttft.Main = true
	ttft.Marks = []scene.Mark{{Ref: "point:" + r.eng[0].name + ":0", Label: "vLLM median"}}
	return lessons.Step{Title: "The final figures", Narration: strings.Join(parts, ". ") + ".",
		Scenes:   []scene.Scene{ttft, {Kind: scene.KindCards, ID: "figures", Title: "Throughput, hit rate, preemptions, memory", Cards: cards}},
		Mentions: []scene.Mention{{Text: "median TTFT", Scene: "ttft", Ref: "point:" + r.eng[0].name + ":0"}}}
}

func (r *enginesRun) leadsStep() lessons.Step {
	var parts []string
	said := map[string]bool{}
	for _, l := range r.leads {
		parts = append(parts, r.leadWhy(l, said))
	}
	led := map[string]bool{}
	for _, l := range r.leads {
		if l.best >= 0 {
			led[r.eng[l.best].name] = true
		}
	}
	var none []string
	for _, e := range r.eng {
		if !led[e.name] {
			none = append(none, e.name)
		}
	}
	tail := " Every engine leads on something here."
	if len(none) > 0 {
		tail = " On this stream " + strings.Join(none, " and ") + " leads on none of them: try another workload or less KV memory."
	}
	return lessons.Step{Title: "Where each engine wins, and why", Narration: strings.Join(parts, " ") + tail, Scenes: []scene.Scene{r.cluster(r.times[len(r.times)-1], -1)}, Mentions: r.mentions()}
}

func (r *enginesRun) claims() []lessons.Claim {
	sg := r.eng[1].sum.PrefixHitRate
	return []lessons.Claim{{
		What:    "SGLang's RadixAttention cache hit rate on its benchmarks",
		Article: "50%–99% (Zheng et al., SGLang, NeurIPS 2024, §6)",
		Model:   kit.Pct(sg) + " on this stream (vLLM " + kit.Pct(r.eng[0].sum.PrefixHitRate) + ", TensorRT-LLM " + kit.Pct(r.eng[2].sum.PrefixHitRate) + ")",
		Why:     "The paper's benchmarks are few-shot and multi-call programs built to share long prefixes; the hit rate here depends on how much of each prompt the stream shares.",
	}}
}

func (r *enginesRun) claimsStep() lessons.Step {
	return lessons.Step{Title: "Beside the SGLang paper", Narration: "The SGLang paper reports cache hit rates of 50% to 99% on its benchmarks; on this stream the radix cache found " + kit.Pct(r.eng[1].sum.PrefixHitRate) +
		" of prompt tokens. " + r.claims()[0].Why, Scenes: []scene.Scene{kit.ClaimsTable(r.claims())}}
}

func (r *enginesRun) metrics() []lessons.Metric {
	var out []lessons.Metric
	for _, e := range r.eng {
		for _, m := range engineMetrics {
			better := lessons.HigherIsBetter
			if m.lower {
				better = lessons.LowerIsBetter
			}
			out = append(out, lessons.Metric{Key: e.key + "_" + m.key, Label: e.name + " " + m.label, Unit: unitOr(m.unit), Better: better, Value: m.of(e)})
		}
		out = append(out, lessons.Metric{Key: e.key + "_kv_peak", Label: e.name + " peak KV held", Unit: "%", Value: kit.Round1(100 * e.peakHeld)})
		out = append(out, kit.LatencyReportOf(e.sum).MetricsOf(e.key, e.name)...)
		out = append(out, e.cost.MetricsOf(e.key, e.name)...)
	}
	return out
}

func unitOr(u string) string {
	if u == "" {
		return "requests"
	}
	return u
}
