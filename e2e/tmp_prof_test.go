//go:build !wasm

package e2e

import (
	"fmt"
	"sort"
	"testing"

	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

func TestTmpProfileStart(t *testing.T) {
	site := startSite(t)
	b := newBrowser(t)
	lrNavigateIndex(b, site+"/")
	chromedp.Call(b.ctx, profiler.Enable, struct{}{})
	chromedp.Call(b.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200})
	chromedp.Call(b.ctx, profiler.Start, struct{}{})
	b.navigate(site + "/lesson/garage")
	res, err := chromedp.Call(b.ctx, profiler.Stop, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	byID := map[int64]*profiler.ProfileNode{}
	parent := map[int64]int64{}
	for _, n := range p.Nodes {
		byID[n.ID] = n
		for _, c := range n.Children {
			parent[c] = n.ID
		}
	}
	self := map[string]float64{}
	incl := map[string]float64{}
	for i, id := range p.Samples {
		d := float64(p.TimeDeltas[i]) / 1000
		n := byID[id]
		self[n.CallFrame.FunctionName] += d
		seen := map[string]bool{}
		for x := id; x != 0; x = parent[x] {
			nm := byID[x].CallFrame.FunctionName
			if !seen[nm] {
				incl[nm] += d
				seen[nm] = true
			}
		}
	}
	type kv struct {
		k string
		v float64
	}
	dump := func(tag string, m map[string]float64, k int) {
		var all []kv
		for a, v := range m {
			all = append(all, kv{a, v})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
		for i := 0; i < k && i < len(all); i++ {
			fmt.Printf("%s %8.1f ms  %s\n", tag, all[i].v, all[i].k)
		}
	}
	dump("SELF", self, 30)
	dump("INCL", incl, 70)
}
