//go:build !wasm

package e2e

import (
	"fmt"
	"sort"
	"testing"

	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func TestTmpProfile(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	b.navigate(site + "/lesson/garage")
	lrEval[bool](b, `(document.activeElement?.blur(), true)`)
	chromedp.Call(b.ctx, profiler.Enable, struct{}{})
	chromedp.Call(b.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 100})
	chromedp.Call(b.ctx, profiler.Start, struct{}{})
	var ms []float64
	for i := 0; i < 30; i++ {
		before := b.mustState().Step
		lrKeys(b, kb.ArrowRight)
		b.waitFor("next", `document.querySelector("#lab").dataset.step !== `+jsString(before)+` && window.inferlabStepMs >= 0`)
		lrFrame(b)
		ms = append(ms, lrEval[float64](b, `window.inferlabStepMs`))
	}
	res, err := chromedp.Call(b.ctx, profiler.Stop, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("STEP_MS", ms)
	p := res.Profile
	self := map[string]float64{}
	byID := map[int64]*profiler.ProfileNode{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
	}
	for i, id := range p.Samples {
		n := byID[id]
		name := n.CallFrame.FunctionName
		if name == "" {
			name = "(anon " + n.CallFrame.URL + ")"
		}
		self[name] += float64(p.TimeDeltas[i]) / 1000
	}
	type kv struct {
		k string
		v float64
	}
	var all []kv
	for k, v := range self {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	for i := 0; i < 45 && i < len(all); i++ {
		fmt.Printf("SELF %8.1f ms  %s\n", all[i].v, all[i].k)
	}
}
