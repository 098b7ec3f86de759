package sandbox

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/workload"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
)

// The sandbox's real traces (core/workload's presets): the first requests
// of Azure's first PresetWindow seconds, or of Mooncake's sample of whole
// conversations over its hour (mooncake.go), their prompt and output
// lengths (and Mooncake's shared blocks) as published, and their arrival
// times scaled so that they come at the rate knob's mean rate: the
// trace's burstiness stays, and the capacity search replays the same
// requests faster or slower, as it replays a generated stream.
//
// Check runs in the page's main WebAssembly, which links none of the
// presets' files, so it bounds an Azure preset's first n requests by the
// preset's own bounds (workload.PresetBounds) instead of loading them,
// and Mooncake's by its sample's lengths (mooncakeSampleLengths).

// sandboxBounds are the bounds of the requests preset id replays: the
// preset's window, or Mooncake's sample; false for no preset.
func sandboxBounds(id string) (workload.PresetBounds, bool) {
	if id == mooncakeID {
		return mooncakeSampleBounds, true
	}
	return workload.BoundsOf(id)
}

// checkSandboxPreset holds the first requests of preset b to what its
// window has, to the model's context and KV pool, and to the work bound.
func checkSandboxPreset(v lessons.Values, b workload.PresetBounds) error {
	n, id := v.Int("requests"), v.Choice("workload")
	longest := b.Longest
	if m, err := hardware.ModelByID(v.Choice("model")); err == nil {
		longest = min(longest, kit.ContextLimit(m.MaxPositions)-contextMargin)
	}
	if err := sandboxFit(v, longest); err != nil {
		return err
	}
	w := sandboxPresetWork(v, b, n)
	if n <= b.Requests && w <= kit.ServingCheckWork {
		return nil
	}
	most := sort.Search(min(n, b.Requests), func(k int) bool { return sandboxPresetWork(v, b, k+1) > kit.ServingCheckWork })
	why := fmt.Sprintf("the first %d s of the %s trace hold %s requests", workload.PresetWindow, id, kit.Comma(b.Requests))
	if id == mooncakeID {
		why = fmt.Sprintf("the sandbox's sample of the %s trace, one conversation in %d over its hour, holds %s requests", id, mooncakeThinning, kit.Comma(b.Requests))
	}
	switch {
	case most < b.Requests && id == mooncakeID:
		why = fmt.Sprintf("the work of the sample's first requests (2 × prompt + 16 × output tokens, and %s) must be at most %s; %s need %s. The bound keeps every setting to about a second of simulation",
			pricedRule(v), kit.Comma64(kit.ServingCheckWork), kit.Comma(n), kit.Comma64(w))
	case most < b.Requests:
		why = fmt.Sprintf("the work of the %s trace's first requests (2 × prompt + 16 × output tokens, bounded by the trace's longest mean prompt and output over its first requests, %s and %s tokens, and %s) must be at most %s; %s need up to %s. The bound keeps every setting to about a second of simulation",
			id, kit.Comma(int(b.MeanPrompt+0.5)), kit.Comma(int(b.MeanOutput+0.5)), pricedRule(v), kit.Comma64(kit.ServingCheckWork), kit.Comma(n), kit.Comma64(w))
	}
	return lessons.Relation("requests", strconv.Itoa(n), fmt.Sprintf("at most %s with these knobs: %s", kit.Comma(most), why), "workload")
}

// sandboxPresetWork bounds sandboxWork over a preset's first n requests:
// RequestWork of n requests at the preset's bounding means, and the
// priced steps of n requests one token budget longer (each prompt's last,
// partial chunk counted whole).
func sandboxPresetWork(v lessons.Values, b workload.PresetBounds, n int) int64 {
	if v.Choice("workload") == mooncakeID {
		return sandboxWork(v, mooncakeLeading(n)) // its lengths are known exactly
	}
	w := kit.RequestWork(b.Leading(n, 0))
	if m, err := hardware.ModelByID(v.Choice("model")); err == nil {
		budget := v.Int("max_num_batched_tokens")
		w += kit.PricedRequestWork(b.Leading(n, budget-1), kit.GraphMode(v), m, kit.WorkerTP(v), v.Int("max_num_seqs"), budget)
	}
	return w
}

// sandboxReplay is the first requests of the knobs' preset, their arrival
// times scaled to the rate knob's mean rate.
func sandboxReplay(v lessons.Values) []workload.Request {
	id := v.Choice("workload")
	b, _ := sandboxBounds(id)
	var all []workload.Request
	if id == mooncakeID {
		all = mooncakeRequests()
	} else {
		var err error
		if all, err = workload.LoadPreset(id, workload.PresetWindow); err != nil {
			panic(err) // the presets are tested to load
		}
	}
	w := all[:min(len(all), v.Int("requests"))]
	scale := b.Rate / v.Float("rate")
	for i := range w {
		w[i].Arrival *= scale
	}
	return w
}

// sandboxDraw is the knobs' workload before it is fitted to the model.
func sandboxDraw(v lessons.Values) []workload.Request {
	if _, ok := sandboxBounds(v.Choice("workload")); ok {
		return sandboxReplay(v)
	}
	return sandboxGeneratedDraw(v)
}

// presetNote says what a preset's replay simplifies, "" for none.
func presetNote(id string) string {
	if id != mooncakeID {
		return ""
	}
	return fmt.Sprintf(" Thinning the trace to one conversation in %d keeps the prefix reuse within conversations (%.0f%% of the sample's prompt tokens are in blocks an earlier prompt had, %.0f%% of the whole trace's) but loses most of what different conversations share beyond the common system prompt, and the many users at once.",
		mooncakeThinning, 100*kit.PrefixReuse(mooncakeRequests()), 100*mooncakeTraceReuse)
}

// presetText describes a replayed preset for the setup's narration: what
// it is, the window its requests span, the scaling and the attribution.
func presetText(id string, w []workload.Request, rate float64) string {
	p, _ := workload.PresetByID(id)
	b, _ := sandboxBounds(id)
	last := 0.0
	if len(w) > 0 {
		last = w[len(w)-1].Arrival * rate / b.Rate
	}
	if id == mooncakeID {
		return fmt.Sprintf("the first %s of the %s requests of the %s trace that the sandbox keeps: one conversation in %d over the trace's hour, every turn of each, so that each prompt finds its history as in the trace (%s, %s, licensed %s); "+
			"their arrival times scaled from the sample's own %.3g req/s to %g req/s, which shortens the time between a conversation's turns as much",
			kit.Comma(len(w)), kit.Comma(b.Requests), p.Title, mooncakeThinning, p.Source, p.Attribution, p.Licence, b.Rate, rate)
	}
	return fmt.Sprintf("the first %s requests of the %s trace (its first %.0f s; %s, %s, licensed %s), their arrival times scaled from the trace's own %.3g req/s to %g req/s",
		kit.Comma(len(w)), p.Title, last, p.Source, p.Attribution, p.Licence, b.Rate, rate)
}
