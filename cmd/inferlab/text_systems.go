package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferlab/inferlab/scene"
)

// systemsText summarises the systems pictures in one line each: the radix
// tree as its edges (indented by depth on following lines), the cluster as
// each worker's cache, queue and cost, the tiers with their hit shares and
// fetch times, the journey's zoomed bars.
func systemsText(sc scene.Scene) string {
	switch {
	case sc.Kind == scene.KindRadixTree && sc.Radix != nil:
		return radixText(sc.Radix)
	case sc.Kind == scene.KindCluster && sc.Cluster != nil:
		return clusterText(sc.Cluster)
	case sc.Kind == scene.KindTiers && sc.Tiers != nil:
		return tiersText(sc.Tiers)
	case sc.Kind == scene.KindJourney && sc.Journey != nil:
		return journeyText(sc.Journey)
	}
	return ""
}

func radixText(t *scene.RadixTree) string {
	depth := map[int]int{}
	var b strings.Builder
	if t.Capacity > 0 {
		fmt.Fprintf(&b, "%d of %d %s cached, %d locked", t.Cached, t.Capacity, t.Unit, t.Locked)
	} else {
		fmt.Fprintf(&b, "%d %s cached", t.Cached, t.Unit)
	}
	for _, n := range t.Nodes {
		if n.Parent < 0 {
			continue
		}
		depth[n.ID] = depth[n.Parent] + 1
		state := ""
		if n.State != "" {
			state = " [" + n.State + "]"
		}
		fmt.Fprintf(&b, "\n    %s#%d %q (%d, lock_ref %d, t%d)%s", strings.Repeat("  ", depth[n.ID]-1), n.ID, n.Text, n.Tokens, n.LockRef, n.LastUse, state)
	}
	return b.String()
}

func clusterText(c *scene.Cluster) string {
	var parts []string
	if c.Link != nil {
		parts = append(parts, "link "+c.Link.Label+" "+c.Link.Rate)
	}
	for _, p := range c.Pools {
		var ws []string
		for _, w := range p.Workers {
			name := w.Name
			if name == "" {
				name = w.ID
			}
			cached := 0.0
			for _, f := range w.Cache {
				cached += f.Value
			}
			s := name + " " + strconv.FormatFloat(w.Queue, 'f', -1, 64) + "q"
			if cached > 0 {
				s += " " + strconv.FormatFloat(cached, 'f', -1, 64) + "c"
			}
			if w.Cost != "" {
				s += " " + w.Cost
			}
			if w.Chosen {
				s += " *"
			}
			ws = append(ws, s)
		}
		parts = append(parts, p.Label+": "+strings.Join(ws, ", "))
	}
	if c.Travel != nil {
		parts = append(parts, c.Travel.Label+" "+c.Travel.From+" → "+c.Travel.To)
	}
	return strings.Join(parts, " | ")
}

func tiersText(t *scene.Tiers) string {
	var parts []string
	for _, tier := range t.Tiers {
		parts = append(parts, fmt.Sprintf("%s %s P(hit) %.1f%% fetch %s", tier.ID, tier.Name, 100*tier.Hit, tier.Fetch))
	}
	for _, r := range t.Races {
		sum := 0.0
		for _, b := range r.Bars {
			sum += b.Value
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", r.Label, strconv.FormatFloat(sum, 'f', 2, 64), t.Unit))
	}
	return strings.Join(parts, " | ")
}

func journeyText(j *scene.Journey) string {
	const most = 8 // bars listed per lane
	var parts []string
	for _, l := range j.Lanes {
		var bs []string
		n := 0
		for _, b := range l.Bars {
			if j.Zoom != nil && (b.End < j.Zoom.Start || b.Start > j.Zoom.End) {
				continue
			}
			if n++; n <= most {
				bs = append(bs, fmt.Sprintf("%s %s–%s", b.Label, strconv.FormatFloat(b.Start, 'f', 2, 64), strconv.FormatFloat(b.End, 'f', 2, 64)))
			}
		}
		if n > most {
			bs = append(bs, fmt.Sprintf("… %d more", n-most))
		}
		parts = append(parts, l.Label+": "+strings.Join(bs, ", "))
	}
	return strings.Join(parts, " | ") + " " + j.Unit
}
