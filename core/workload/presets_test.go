package workload

import (
	"math"
	"testing"
)

// TestPresetsReproduceTheirTraces checks each preset against figures
// computed from the full published files (in ../shared/data/traces when
// this was written; the files are named in presets.go), over the same
// window: the first 300 s from the trace's first request. The Azure
// figures came from
//
//	python3 -c "
//	import csv,datetime as d
//	for f in ['azure-2023-conv.csv','azure-2023-code.csv']:
//	  r=list(csv.DictReader(open(f))); t=lambda x:d.datetime.strptime(x['TIMESTAMP'][:26],'%Y-%m-%d %H:%M:%S.%f'); t0=t(r[0])
//	  w=[x for x in r if (t(x)-t0).total_seconds()<300]
//	  print(f,len(w),sum(int(x['ContextTokens']) for x in w)/len(w),sum(int(x['GeneratedTokens']) for x in w)/len(w),len(w)/300)"
//
// and the Mooncake ones from
//
//	python3 -c "
//	import json
//	w=[r for r in map(json.loads,open('mooncake-fast25-conversation.jsonl')) if r['timestamp']<300000]
//	print(len(w),sum(r['input_length'] for r in w)/len(w),sum(r['output_length'] for r in w)/len(w),len(w)/300,sum(len(r['hash_ids']) for r in w))"
func TestPresetsReproduceTheirTraces(t *testing.T) {
	cases := []struct {
		id                   string
		n                    int
		prompt, output, rate float64
		blocks               int // hash ids in all (Mooncake)
	}{
		{"azure-conv", 1445, 1057.278892733564, 254.02768166089965, 4.816666666666666, 0},
		{"azure-code", 781, 2142.404609475032, 28.66709346991037, 2.6033333333333335, 0},
		{"mooncake-conversation", 918, 13557.79302832244, 352.78867102396515, 3.06, 24752},
	}
	for _, c := range cases {
		reqs, err := LoadPreset(c.id, PresetWindow)
		if err != nil {
			t.Fatal(err)
		}
		if len(reqs) != c.n {
			t.Fatalf("%s: %d requests, want %d", c.id, len(reqs), c.n)
		}
		var p, o float64
		blocks := 0
		for i, r := range reqs {
			p += float64(r.Prompt)
			o += float64(r.Output)
			blocks += len(r.Segments)
			if r.ID != i || (i > 0 && r.Arrival < reqs[i-1].Arrival) || r.Arrival >= PresetWindow {
				t.Fatalf("%s: request %d (id %d) at %g s out of order", c.id, i, r.ID, r.Arrival)
			}
		}
		n := float64(len(reqs))
		for _, f := range []struct {
			what      string
			got, want float64
		}{{"mean prompt", p / n, c.prompt}, {"mean output", o / n, c.output}, {"mean rate", n / PresetWindow, c.rate}, {"blocks", float64(blocks), float64(c.blocks)}} {
			if math.Abs(f.got-f.want) > 1e-9*math.Max(1, f.want) {
				t.Errorf("%s: %s %g, want %g", c.id, f.what, f.got, f.want)
			}
		}
	}
}

// A shorter window is a prefix of the longer one.
func TestPresetWindow(t *testing.T) {
	all, _ := LoadPreset("azure-code", PresetWindow)
	some, err := LoadPreset("azure-code", 60)
	if err != nil {
		t.Fatal(err)
	}
	if len(some) == 0 || len(some) >= len(all) || some[len(some)-1].Arrival >= 60 || all[len(some)].Arrival < 60 {
		t.Fatalf("60 s window: %d of %d requests", len(some), len(all))
	}
	for _, w := range []float64{0, -1, PresetWindow + 1, math.NaN()} {
		if _, err := LoadPreset("azure-code", w); err == nil {
			t.Errorf("window %g accepted", w)
		}
	}
	if _, err := LoadPreset("sharegpt", 60); err == nil {
		t.Error("an unknown preset loaded")
	}
}

// Mooncake prompts share token ids exactly as far as their block hashes
// agree, and a later turn resends its previous turn's full blocks.
func TestMooncakePresetSharing(t *testing.T) {
	reqs, err := LoadPreset("mooncake-conversation", PresetWindow)
	if err != nil {
		t.Fatal(err)
	}
	// The trace's first two requests share block 0 only (0-13 and 0,14-27).
	a, b := reqs[0].TokenIDs(), reqs[1].TokenIDs()
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	if k < MooncakeBlock || k > MooncakeBlock+2 {
		t.Fatalf("R0 and R1 share %d leading ids, want one 512-token block", k)
	}
	turns := map[int]int{}
	for _, r := range reqs {
		turns[r.Turn]++
		if r.Prev < 0 {
			continue
		}
		p := reqs[r.Prev]
		full := (p.Prompt / MooncakeBlock) * MooncakeBlock
		if full > r.Prompt || p.Conversation != r.Conversation || r.Turn != p.Turn+1 {
			t.Fatalf("R%d follows R%d but does not extend it", r.ID, p.ID)
		}
		x, y := p.TokenIDs()[:full], r.TokenIDs()[:full]
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("R%d and its previous turn R%d differ at token %d", r.ID, p.ID, i)
			}
		}
	}
	if turns[0] == 0 || turns[1] == 0 || turns[2] == 0 {
		t.Fatalf("turns %v: want first, second and third turns", turns)
	}
	if testing.Verbose() {
		t.Logf("turns in %d s: %v", PresetWindow, turns)
	}
}

// Mooncake's file holds its whole hour: the release's request count and
// means (12,031 requests, 12,035 prompt and 343 output tokens on average,
// kvcache-ai/Mooncake's FAST25-release README), and its first 300 s are
// LoadPreset's window, conversations included.
func TestWholeTrace(t *testing.T) {
	all, err := LoadWholeTrace("mooncake-conversation")
	if err != nil {
		t.Fatal(err)
	}
	var p, o float64
	for _, r := range all {
		p, o = p+float64(r.Prompt), o+float64(r.Output)
	}
	n := float64(len(all))
	if len(all) != 12031 || math.Round(p/n) != 12035 || math.Round(o/n) != 343 {
		t.Errorf("%d requests, means %.1f and %.1f tokens; the release says 12,031, 12,035 and 343", len(all), p/n, o/n)
	}
	window, _ := LoadPreset("mooncake-conversation", PresetWindow)
	for i, r := range window {
		w := all[i]
		if r.Arrival != w.Arrival || r.Prompt != w.Prompt || r.Output != w.Output || len(r.Segments) != len(w.Segments) || r.Prev != w.Prev || r.Conversation != w.Conversation {
			t.Fatalf("request %d: the window's %+v, the whole trace's %+v", i, r, w)
		}
	}
	if _, err := LoadWholeTrace("azure-conv"); err == nil {
		t.Error("azure-conv has a whole trace")
	}
}
