package batching

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/inferlab/inferlab/core/scheduler"
	"github.com/inferlab/inferlab/lessons"
	"github.com/inferlab/inferlab/lessons/kit"
	"github.com/inferlab/inferlab/scene"
)

func runBatch(t *testing.T, set map[string]string) batchingRun {
	t.Helper()
	v, err := lesson.ResolveChecked(set)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	r, err := runBatching(v)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	return r
}

// Static ≤ dynamic ≤ continuous throughput on the
// default stream, explained by the waste the runs computed: throughput is
// exactly slots × busy share × useful share ÷ slot-seconds per token, and
// the shares differ the way the narration says.
func TestBatchingOrderExplained(t *testing.T) {
	r := runBatch(t, nil)
	st, dyn, cont := r.static, r.dynamic, r.cont
	if !(st.tokPerS <= dyn.tokPerS && dyn.tokPerS <= cont.tokPerS) {
		t.Fatalf("throughput static %.0f, dynamic %.0f, continuous %.0f tok/s: want static ≤ dynamic ≤ continuous", st.tokPerS, dyn.tokPerS, cont.tokPerS)
	}
	for _, x := range r.servers() {
		f := x.factors()
		if got := float64(x.slots) * f.busyShare * f.usefulShare / f.perToken; math.Abs(got-x.tokPerS) > 1e-6*x.tokPerS {
			t.Errorf("%s: slots × busy × useful ÷ per-token = %v, throughput %v", x.key, got, x.tokPerS)
		}
		if s := f.usefulShare + f.paddingShare + f.idleShare; math.Abs(s-1) > 1e-9 {
			t.Errorf("%s: shares add to %v", x.key, s)
		}
	}
	fs, fd, fc := st.factors(), dyn.factors(), cont.factors()
	if fs.paddingShare < 0.2 || fd.paddingShare < 0.2 || fc.paddingShare != 0 {
		t.Errorf("padding shares static %v, dynamic %v, continuous %v: request-level batches should pad a fifth or more of their slot time, continuous none", fs.paddingShare, fd.paddingShare, fc.paddingShare)
	}
	if fc.usefulShare <= fs.usefulShare || fc.usefulShare <= fd.usefulShare {
		t.Errorf("useful shares static %v, dynamic %v, continuous %v", fs.usefulShare, fd.usefulShare, fc.usefulShare)
	}
	// The dynamic batcher's edge over static batching here is the GPU time
	// static batching spends waiting for full batches.
	if st.waste.WaitingIdle <= dyn.waste.WaitingIdle || fs.busyShare >= fd.busyShare {
		t.Errorf("waiting idle static %v s, dynamic %v s; busy shares %v, %v", st.waste.WaitingIdle, dyn.waste.WaitingIdle, fs.busyShare, fd.busyShare)
	}
	if r.wide.tokPerS < cont.tokPerS {
		t.Errorf("max_num_seqs %d: %v tok/s, below %d slots' %v", r.wide.slots, r.wide.tokPerS, r.slots, cont.tokPerS)
	}
}

// Continuous batching gains more over static batching as outputs spread:
// a request-level batch lasts its longest output.
func TestBatchingSpread(t *testing.T) {
	r := runBatch(t, nil)
	first, last := r.sweep[0], r.sweep[len(r.sweep)-1]
	if last.cont/last.static <= first.cont/first.static+0.2 {
		t.Errorf("continuous/static %.2f at spread %v and %.2f at %v: the gap should grow", first.cont/first.static, first.spread, last.cont/last.static, last.spread)
	}
	for _, p := range r.sweep {
		if p.cont < p.static || p.cont < p.dynamic {
			t.Errorf("spread %v: continuous %v tok/s below static %v or dynamic %v", p.spread, p.cont, p.static, p.dynamic)
		}
	}
}

// Each server's slots hold one request at a time, every request appears
// once per lane, and request-level padding follows a request's last token
// to its batch's end.
func TestBatchingSlots(t *testing.T) {
	r := runBatch(t, map[string]string{"requests": "60", "max_batch_size": "8"})
	for _, x := range r.servers() {
		bySlot := map[int][]slotSpan{}
		seen := map[int]int{}
		for _, sp := range x.spans {
			if sp.slot < 0 || sp.slot >= x.slots || sp.end < sp.start {
				t.Fatalf("%s: span %+v outside %d slots", x.key, sp, x.slots)
			}
			bySlot[sp.slot] = append(bySlot[sp.slot], sp)
			if sp.class == "decode" {
				seen[sp.req]++
			}
		}
		for slot, spans := range bySlot {
			slices.SortFunc(spans, func(a, b slotSpan) int { return cmpFloat(a.start, b.start) })
			for i := 1; i < len(spans); i++ {
				if spans[i].start < spans[i-1].end-1e-9 {
					t.Errorf("%s slot %d: %+v overlaps %+v", x.key, slot, spans[i], spans[i-1])
				}
			}
		}
		if len(seen) != len(x.reqs) {
			t.Errorf("%s: %d requests decode in its slots, want %d", x.key, len(seen), len(x.reqs))
		}
	}
	for _, g := range r.static.groups {
		for _, id := range g.members {
			q := r.static.reqs[id]
			if q.returns != g.end || q.lastToken > g.end {
				t.Errorf("static R%d: last token %v, returned %v, batch end %v", id+1, q.lastToken, q.returns, g.end)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Every mark of the slot figure names something the figure draws, and the
// opening steps link their narration to it.
func TestBatchingMarksResolve(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range s.Steps {
		for _, sc := range st.Scenes {
			if sc.Kind != scene.KindSlots {
				continue
			}
			for _, m := range sc.Marks {
				if !slotsDraw(sc.Slots, m.Ref) {
					t.Errorf("step %d: mark %s names nothing the slot chart draws", i, m.Ref)
				}
			}
			if i < 6 && len(st.Mentions) == 0 {
				t.Errorf("step %d (%s) links nothing", i, st.Title)
			}
		}
	}
}

func slotsDraw(sc *scene.SlotChart, ref string) bool {
	parts := strings.Split(ref, ":")
	for _, l := range sc.Lanes {
		for _, b := range l.Bars {
			switch {
			case parts[0] == "lane" && parts[1] == l.Key:
				return true
			case parts[0] == "slot" && len(parts) == 3 && parts[1] == l.Key && b.Label == parts[2] && b.Class != "padding" && b.Class != "idle":
				return true
			case parts[0] == "pad" && len(parts) == 3 && parts[1] == l.Key && b.Class == "padding" && b.Label == parts[2]:
				return true
			case parts[0] == "idle" && parts[1] == l.Key && b.Class == "idle":
				return true
			}
		}
	}
	return false
}

// Bad combinations are refused on the knob that breaks them.
func TestBatchingRefusals(t *testing.T) {
	for _, tt := range []struct {
		set  map[string]string
		key  string
		text string
	}{
		{map[string]string{"preferred_batch_size": "40"}, "preferred_batch_size", "max_batch_size"},
		{map[string]string{"model": "llama-2-7b", "prompt": "4096", "output": "1024"}, "output", "positions"},
		{map[string]string{"gpu": "l4", "max_batch_size": "128", "output": "1024", "prompt": "8192"}, "max_batch_size", "activations"},
		{map[string]string{"gpu": "l4", "max_batch_size": "64", "output": "1024", "prompt": "64"}, "max_batch_size", "KV cache"},
		{map[string]string{"requests": "500", "output": "1024", "max_batch_size": "1", "rate": "0.5"}, "requests", "work"},
	} {
		_, _, err := lesson.Run(tt.set)
		var pe *lessons.ParamError
		if !errors.As(err, &pe) || pe.Key != tt.key || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%v: %v, want a refusal of %s mentioning %q", tt.set, err, tt.key, tt.text)
		}
	}
}

// The work estimate Check bounds stays near or above the work Build
// counts, so the bound holds for what Build does.
func TestBatchingWorkEstimate(t *testing.T) {
	for _, set := range []map[string]string{nil, {"rate": "2"}, {"max_batch_size": "1", "requests": "30"}, {"rate": "500", "max_batch_size": "128"}, {"output_spread": "0"}, {"max_queue_delay_us": "0", "rate": "4"},
		{"max_batch_size": "7", "rate": "500", "requests": "40"}, {"max_batch_size": "7", "requests": "30"}} { // batches of 5-7 stream every step (no graph of 8 within 7)
		v, err := lesson.ResolveChecked(set)
		if err != nil {
			t.Fatal(err)
		}
		e, err := kit.NewEngine(v, 16)
		if err != nil {
			t.Fatal(err)
		}
		r, err := runBatching(v)
		if err != nil {
			t.Fatal(err)
		}
		est := batchingWork(v, e.Timer(v.Int("max_batch_size"), 8192).StepSeconds([]scheduler.Work{{NewTokens: 1, Context: v.Int("prompt")}}), e)
		if float64(est) < 0.9*float64(r.work) {
			t.Errorf("%v: estimate %d, counted %d", set, est, r.work)
		}
		t.Logf("%v: estimate %d, counted %d (%.2f)", set, est, r.work, float64(est)/float64(r.work))
	}
}

// Triton's TensorRT-LLM backend batches in flight: the lesson says so
// beside the request-level dynamic batcher it shows, and a claims row
// compares it with the continuous server.
func TestBatchingTritonInflight(t *testing.T) {
	s, _, err := lesson.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, st := range s.Steps {
		if strings.Contains(st.Narration, "inflight_fused_batching") && strings.Contains(st.Narration, "TensorRT-LLM") {
			said = true
		}
	}
	if !said {
		t.Error("no step says that Triton's TensorRT-LLM backend runs in-flight batching")
	}
	row := false
	for _, c := range s.Claims {
		if strings.Contains(c.Article, "inflight_fused_batching") && strings.Contains(c.Model, "continuous batching") {
			row = true
		}
	}
	if !row {
		t.Error("no claims row for Triton's in-flight batching")
	}
}
