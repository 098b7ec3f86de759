package conversations

import (
	"fmt"

	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

// The conversations lesson's script: the stream on G1 alone, the quiz,
// the host tier's reloads, TTFT by turn for both, and the claim.

func (r *conversationsRun) Script() *lessons.Script {
	s := &lessons.Script{Work: r.work}
	s.Steps = []lessons.Step{r.streamStep(), r.g1Step(), r.reloadStep(), r.byTurnStep(), r.claimStep()}
	s.Metrics = []lessons.Metric{
		{Key: "requests", Label: "Requests served", Unit: "requests", Value: float64(len(r.reqs))},
		{Key: "ttft_later_g1", Label: "Mean TTFT of turns ≥ 2, G1 only", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.g1.later)},
		{Key: "ttft_later_g2", Label: "Mean TTFT of turns ≥ 2, with G2", Unit: "ms", Better: lessons.LowerIsBetter, Value: kit.Ms(r.g2.later)},
		{Key: "ttft_gain", Label: "TTFT improvement of turns ≥ 2 with G2", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round1(100 * r.gain)},
		{Key: "g1_hit", Label: "Prompt tokens found in G1 (G1 only)", Unit: "%", Better: lessons.HigherIsBetter, Value: kit.Round1(100 * float64(r.g1.g1) / float64(r.g1.prompt))},
		{Key: "g2_reload", Label: "Prompt tokens reloaded from G2", Unit: "%", Value: kit.Round1(100 * float64(r.g2.g2) / float64(r.g2.prompt))},
		{Key: "offloaded", Label: "Blocks offloaded G1 → G2", Unit: "blocks", Value: float64(r.g2.res.Offloaded)},
		{Key: "onboarded", Label: "Blocks onboarded G2 → G1", Unit: "blocks", Value: float64(r.g2.res.Onboarded)},
	}
	s.Metrics = append(s.Metrics, append(kit.LatencyReportFrom(r.g1.res.Requests).MetricsSuffixed("_g1", "G1 only"), kit.LatencyReportFrom(r.g2.res.Requests).MetricsSuffixed("_g2", "With G2")...)...)
	s.Metrics = append(s.Metrics, append(r.costG1.MetricsSuffixed("_g1", "G1 only"), r.costG2.MetricsSuffixed("_g2", "With G2")...)...)
	s.Claims = r.claims()
	kit.IndexCursors(s.Steps)
	return s
}

// tiers is the G1/G2 picture; served says whose hits it shows.
func (r *conversationsRun) tiers(served convServed, withHost bool, races []scene.Race) *scene.Tiers {
	g1Cap := kit.BytesText(float64(r.g1Blocks) * r.blockBytes)
	host := "off in this run"
	g2Hit := 0.0
	if withHost {
		host = kit.BytesText(float64(r.hostBlocks) * r.blockBytes)
		g2Hit = float64(served.g2) / float64(served.prompt)
	}
	return &scene.Tiers{
		Subject: fmt.Sprintf("%s prompt tokens of %s requests in %s conversations", kit.Comma(served.prompt), kit.Comma(len(r.reqs)), kit.Comma(r.convs)),
		Tiers: []scene.Tier{
			{ID: "G1", Name: "GPU HBM", Medium: r.gpuName, Capacity: g1Cap, Bandwidth: "read in place", Hit: float64(served.g1) / float64(served.prompt),
				Fetch: "0 ms", Note: "vLLM's prefix cache: 16-token blocks, evicted least recently used"},
			{ID: "G2", Name: "Host DRAM", Medium: "pinned host memory", Capacity: host, Path: r.link.Name, Bandwidth: kit.GBps(r.link.Effective()), Hit: g2Hit,
				Fetch: "onboarded before the prefill", Note: "KVBM: every registered block copied here"},
		},
		Races: races, Unit: "ms",
	}
}

func (r *conversationsRun) streamStep() lessons.Step {
	n := fmt.Sprintf("The workload: %s. Every turn resends its conversation's history: turn k's prompt is turn k−1's prompt, its reply and the new user message, so most of a late turn's prompt was computed before. "+
		"First, G1 alone: vLLM's prefix cache in %s of GPU KV memory (%s blocks of 16 tokens). It found %s of the %s prompt tokens (%s); the rest was computed.",
		r.sample, kit.BytesText(float64(r.g1Blocks)*r.blockBytes), kit.Comma(r.g1Blocks), kit.Comma(r.g1.g1), kit.Comma(r.g1.prompt), kit.Pct(float64(r.g1.g1)/float64(r.g1.prompt)))
	sc := scene.Scene{Kind: scene.KindTiers, ID: "conv-tiers", Title: "G1 alone: what the GPU's prefix cache found", Main: true, Tiers: r.tiers(r.g1, false, nil),
		Marks: []scene.Mark{kit.MarkRef("tier:G1", kit.Pct(float64(r.g1.g1)/float64(r.g1.prompt))+" found")}}
	return lessons.Step{Title: "Conversations resend their history", Narration: n, Scenes: []scene.Scene{sc},
		Mentions: kit.Linked(n, "conv-tiers", "prefix cache", "tier:G1")}
}

// ttftChart is TTFT by turn, for one or both runs.
func (r *conversationsRun) ttftChart(both bool) *scene.Chart {
	c := &scene.Chart{Type: scene.Line, XLabel: "turn", YLabel: "mean TTFT", YUnit: "ms", Note: "mean time to first token of each turn; later turns have longer prompts"}
	add := func(name string, s convServed) {
		se := scene.Series{Name: name}
		for t, cnt := range s.count {
			if cnt > 0 {
				se.X = append(se.X, float64(t+1))
				se.Y = append(se.Y, kit.Ms(s.ttft[t]))
			}
		}
		c.Series = append(c.Series, se)
	}
	add("G1 only", r.g1)
	if both {
		add("G1 + G2", r.g2)
	}
	return c
}

func (r *conversationsRun) g1Step() lessons.Step {
	last := r.lastTurn()
	n := fmt.Sprintf("TTFT by turn with G1 alone: turn 1 waits %s on average, turn %d %s. A history G1 still holds is a hit; one it evicted to make room for other conversations is recomputed, and a late turn has the longest history to recompute. Mean TTFT of turns 2 and later: %s.",
		kit.MsText(r.g1.ttft[0]), last+1, kit.MsText(r.g1.ttft[last]), kit.MsText(r.g1.later))
	sc := scene.Scene{Kind: scene.KindChart, ID: "conv-ttft", Title: "TTFT by turn, G1 only", Chart: r.ttftChart(false)}
	sc.Main = true
	sc.Marks = []scene.Mark{kit.MarkRef(fmt.Sprintf("point:G1 only:%d", r.pointOf(r.g1, last)), "turn "+fmt.Sprint(last+1))}
	q := lessons.ChoiceQuiz("Add a host tier (G2) that keeps a copy of every block G1 registered. Will the later turns' mean TTFT go down or up?", []string{"down", "up"}, r.quizAnswer(),
		"Reloading a history over PCIe is faster than recomputing it, as long as the request does not wait behind other reloads and the reloaded blocks do not crowd G1.")
	return lessons.Step{Title: "G1 alone: evicted history is recomputed", Narration: n, Scenes: []scene.Scene{sc}, Quiz: q,
		Mentions: kit.Linked(n, "conv-ttft", fmt.Sprintf("turn %d", last+1), fmt.Sprintf("point:G1 only:%d", r.pointOf(r.g1, last)))}
}

func (r *conversationsRun) quizAnswer() string {
	if r.g2.later < r.g1.later {
		return "down"
	}
	return "up"
}

// lastTurn is the latest turn index (capped) with requests in both runs.
func (r *conversationsRun) lastTurn() int {
	last := 0
	for t, c := range r.g1.count {
		if c > 0 {
			last = t
		}
	}
	return last
}

// pointOf is turn t's index in s's chart series.
func (r *conversationsRun) pointOf(s convServed, t int) int {
	k := 0
	for i := 0; i < t; i++ {
		if s.count[i] > 0 {
			k++
		}
	}
	return k
}

func (r *conversationsRun) reloadStep() lessons.Step {
	n := fmt.Sprintf("Now with G2, %s of host memory: KVBM copied %s blocks there as G1 registered them, and onboarded %s blocks back (%s prompt tokens, %s of all) for prompts whose history G1 had dropped. G1 itself found %s tokens.",
		kit.BytesText(float64(r.hostBlocks)*r.blockBytes), kit.Comma(r.g2.res.Offloaded), kit.Comma(r.g2.res.Onboarded), kit.Comma(r.g2.g2), kit.Pct(float64(r.g2.g2)/float64(r.g2.prompt)), kit.Comma(r.g2.g1))
	var races []scene.Race
	if r.example >= 0 {
		w := r.reqs[r.example]
		ob := r.g2.res.Onboards[r.example]
		n += fmt.Sprintf(" The largest reload: %s, turn %d, reloaded %s tokens in %s over %s; without G2 its first token took %s.",
			kit.ReqName(w.ID), w.Turn+1, kit.Comma(ob.G2Tokens), kit.MsText(r.exampleReload), r.link.Name, kit.MsText(r.exampleRecomp))
		races = []scene.Race{
			{Ref: "race:fetch", Label: "reload from G2", Bars: []scene.RaceBar{{Label: "onboard " + kit.MsText(r.exampleReload), Class: "fetch", Value: kit.Round4(1000 * r.exampleReload)},
				{Label: "then its first token", Class: "rest", Value: kit.Round4(1000 * max(ttftOf(r.g2.res, r.example)-r.exampleReload, 0))}}, Winner: ttftOf(r.g2.res, r.example) <= r.exampleRecomp},
			{Ref: "race:compute", Label: "G1 only", Bars: []scene.RaceBar{{Label: "first token " + kit.MsText(r.exampleRecomp), Class: "compute", Value: kit.Round4(1000 * r.exampleRecomp)}}, Winner: ttftOf(r.g2.res, r.example) > r.exampleRecomp},
		}
	}
	sc := scene.Scene{Kind: scene.KindTiers, ID: "conv-tiers", Title: "G1 + G2: reloads from host memory", Main: true, Tiers: r.tiers(r.g2, true, races),
		Marks: []scene.Mark{kit.MarkRef("tier:G2", kit.Comma(r.g2.res.Onboarded)+" blocks onboarded")}}
	if r.example >= 0 {
		sc.Marks = append(sc.Marks, kit.MarkRef("race:fetch", "largest reload"))
	}
	return lessons.Step{Title: "Offload to host memory, reload instead of recompute", Narration: n, Scenes: []scene.Scene{sc},
		Mentions: kit.Linked(n, "conv-tiers", "host memory", "tier:G2", "largest reload", "race:fetch")}
}

func (r *conversationsRun) byTurnStep() lessons.Step {
	verdict := fmt.Sprintf("%s lower", kit.Pct(r.gain))
	why := "the reloads replaced recomputation of the resent history"
	if r.gain <= 0 {
		verdict = fmt.Sprintf("%s higher", kit.Pct(-r.gain))
		why = "G1 is so small that reloaded blocks crowd out the ones running requests need, and a reload waits for the host link and for the queue to clear, so recomputing is no slower here"
	}
	n := fmt.Sprintf("TTFT by turn, both runs. Turns 2 and later: %s with G1 only, %s with G2 — %s: %s. Turn 1 has no history to reload (%s and %s).",
		kit.MsText(r.g1.later), kit.MsText(r.g2.later), verdict, why, kit.MsText(r.g1.ttft[0]), kit.MsText(r.g2.ttft[0]))
	sc := scene.Scene{Kind: scene.KindChart, ID: "conv-ttft", Title: "TTFT by turn, G1 only and G1 + G2", Chart: r.ttftChart(true)}
	sc.Main = true
	last := r.lastTurn()
	sc.Marks = []scene.Mark{kit.MarkRef(fmt.Sprintf("point:G1 + G2:%d", r.pointOf(r.g2, last)), "with G2")}
	return lessons.Step{Title: "TTFT by turn", Narration: n, Scenes: []scene.Scene{sc},
		Mentions: kit.Linked(n, "conv-ttft", "with G2", fmt.Sprintf("point:G1 + G2:%d", r.pointOf(r.g2, last)))}
}

func (r *conversationsRun) claims() []lessons.Claim {
	return []lessons.Claim{{
		What:    "TTFT with KVBM host-memory offload in multi-turn conversations",
		Article: fmt.Sprintf("%s improvement (NVIDIA Dynamo, docs/architecture/architecture.md: 10 multi-turn conversations, 80 users)", kit.Pct(convSpeedup)),
		Model:   fmt.Sprintf("%s on turns ≥ 2 (%s → %s), %s", kit.Pct(r.gain), kit.MsText(r.g1.later), kit.MsText(r.g2.later), r.workload),
		Why:     "Dynamo's figure is a measured deployment with its own model, GPUs and G1 size; here one Llama-3.1-8B engine, a G1 of the size the knob sets, and offloads that cost nothing. The gain grows as G1 shrinks against the conversations' histories, until reloads crowd G1 itself.",
	}}
}

func (r *conversationsRun) claimStep() lessons.Step {
	n := fmt.Sprintf("Beside Dynamo's claim of a %s TTFT improvement from host-memory offloading in multi-turn conversations, this run gives %s on the later turns. Shrink G1 to see the gain grow, or raise it until the GPU holds every history and G2 has nothing left to add.",
		kit.Pct(convSpeedup), kit.Pct(r.gain))
	return lessons.Step{Title: "Beside the claim", Narration: n, Scenes: []scene.Scene{kit.ClaimsTable(r.claims())}}
}
