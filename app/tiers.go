package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The tiers are drawn as a stack, fastest on top: each tier's name and
// medium, its capacity, the path its blocks take back to the GPU with its
// rate, the share of requests that find the prefix there (a bar with its
// percentage) and the prefix's fetch time. Under the stack the race: one
// lane per way of getting the prefix (fetch from a tier, or recompute it),
// each followed by the rest of the prompt, on one time scale, so the lane
// that reaches the first token first ends leftmost. When the figure first
// appears the bars grow in time order, each in a share of 600 ms
// proportional to its duration: the race is run, not just drawn.

// Tiers layout, in viewBox units.
const (
	// tiW fits a laptop's figure column (about 800 px) at the 0.92 scale
	// that keeps 11-unit labels at 10 px (web/lab.css), so it does not pan.
	tiW      = 860.0
	tiRowH   = 56.0
	tiLaneH  = 27.0
	tiLabelW = 250.0
	tiPx     = 13.0
	tiSmall  = 11.0
	tiRaceMs = 600.0 // the race's whole animation
)

// tiersGeom is one layout of the picture: the wide one (a laptop) or the
// narrow one (a phone: every tier's facts stacked, each race lane's label
// above its bars), so a phone reads it without panning.
type tiersGeom struct {
	w, rowH float64
	narrow  bool
	// laneX is where a race lane's bars start, laneH a lane's height and
	// totalW the room its total takes after its bars.
	laneX, laneH, totalW float64
}

var (
	tiersWide   = tiersGeom{w: tiW, rowH: tiRowH, laneX: tiLabelW, laneH: tiLaneH}
	tiersNarrow = tiersGeom{w: tiNarrowW, rowH: 100, narrow: true, laneX: 0, laneH: tiLaneH + 20}
)

// tiMarkRoom is the room above a marked lane for its callout.
const tiMarkRoom = 22.0

// raceTotal is a lane's total as it is written after its bars.
func raceTotal(t *scene.Tiers, r scene.Race) string {
	sum := 0.0
	for _, b := range r.Bars {
		sum += max(b.Value, 0)
	}
	total := formatNumber(sum) + " " + t.Unit
	if r.Winner {
		total += " · first"
	}
	return total
}

// tiNarrowW is the narrow layout's width: a phone's figure is about 320
// px wide, so its 12-unit labels show at 12 px.
const tiNarrowW = 320.0

// renderTiers draws a scene.Tiers.
func renderTiers(sc scene.Scene) app.UI {
	t := sc.Tiers
	wide, narrow := tiersPic(sc, tiersWide), tiersPic(sc, tiersNarrow)
	return sysFigureFor(sc, "scene-tiers", t.Subject, wide, &narrow, tiersLegend(t))
}

// tiersPic lays the stack and the race out in geometry g.
func tiersPic(sc scene.Scene, g tiersGeom) sysPic {
	t := sc.Tiers
	marks := newMarkSet(sc.Marks)
	var body []app.UI
	y := 4.0
	for _, tier := range t.Tiers {
		if _, marked := marks.label[tierRef(tier)]; marked {
			y += tiMarkRoom // room for its callout, above it (at the top too)
		}
		if g.narrow {
			body = append(body, tierRowNarrow(tier, y, g, marks))
		} else {
			body = append(body, tierRow(tier, y, marks))
		}
		y += g.rowH + 8
	}
	if len(t.Races) > 0 {
		y += 14
		px := tiPx
		if g.narrow {
			px = tiSmall + 1
		}
		body = append(body, svgText(0, y, "sys-label", fitText("The race to the first token ("+t.Unit+"): "+t.Subject, g.w, px)))
		y += 10
		var lanes []app.UI
		lanes, y = raceLanes(t, y, g, marks)
		body = append(body, svgEl("g").Class("ti-race").Body(lanes...))
	}
	body = append(body, marks.layer(g.w))
	return sysPic{g.w, y + 6, body}
}

// tierTip is a tier's facts in one line, its drawing's tooltip in both layouts.
func tierTip(tier scene.Tier) string {
	return tier.ID + " " + tier.Name + " (" + tier.Medium + "): capacity " + tier.Capacity + "; path to the GPU " + tier.Path + ", " + tier.Bandwidth +
		"; P(hit) " + sharePct(tier.Hit) + "; fetch " + tier.Fetch
}

// tierRef is a tier's reference.
func tierRef(t scene.Tier) string { return "tier:" + t.ID }

// tierRow is one tier of the stack.
func tierRow(tier scene.Tier, y float64, marks *markSet) app.UI {
	ref := tierRef(tier)
	b := box{0, y, tiW, tiRowH}
	g := marks.tag(svgEl("g").Class("ti-tier ti-"+safeClass(tier.ID)), ref, b)
	hitX, hitW := 570.0, 110.0
	body := []app.UI{
		svgTitle(tierTip(tier)),
		svgRect(0, y, tiW, tiRowH, "ti-box").Attr("rx", "6"),
		svgText(12, y+23, "ti-id", tier.ID),
		svgText(52, y+20, "ti-name", fitText(tier.Name, 190, tiPx+1)),
		svgText(52, y+36, "ti-small", fitText(tier.Medium, 190, tiSmall)),
		svgText(52, y+50, "ti-small", fitText("capacity: "+tier.Capacity, 190, tiSmall)),
		svgText(256, y+18, "ti-small", fitText("path to the GPU: "+tier.Path, 300, tiSmall)),
		svgText(256, y+35, "ti-strong", fitText(tier.Bandwidth, 300, tiPx)),
	}
	if tier.Note != "" {
		body = append(body, svgText(256, y+50, "ti-small ti-note", fitText(tier.Note, 300, tiSmall)))
	}
	hw := hitW * min(max(tier.Hit, 0), 1)
	body = append(body,
		svgText(hitX, y+18, "ti-small", "P(hit): prefix found here"),
		svgRect(hitX, y+26, hitW, 14, "sys-free"),
		svgRect(hitX, y+26, hw, 14, "ti-hit").Style("width", num(hw)+"px"),
		svgText(hitX+hitW+6, y+38, "ti-strong", sharePct(tier.Hit)),
		svgText(tiW-12, y+18, "ti-small ti-end", "fetch this prefix"),
	)
	// A fetch that is a phrase, not a time, takes the row's last line,
	// under the hit bar, where it has room.
	if fw := tiW - 12 - hitX; float64(len(tier.Fetch))*charWidth(16) > tiW-hitX-hitW-70 {
		body = append(body, svgText(tiW-12, y+52, "ti-strong ti-end", fitText(tier.Fetch, fw, tiSmall+1)))
	} else {
		body = append(body, svgText(tiW-12, y+40, "ti-fetch ti-end", tier.Fetch))
	}
	return g.Body(body...)
}

// tierRowNarrow is one tier of the narrow stack: its name and fetch time,
// then its medium and capacity, its path and rate, and its hit bar, each
// on a line of its own.
func tierRowNarrow(tier scene.Tier, y float64, g tiersGeom, marks *markSet) app.UI {
	ref := tierRef(tier)
	w := g.w
	el := marks.tag(svgEl("g").Class("ti-tier ti-"+safeClass(tier.ID)), ref, box{0, y, w, g.rowH})
	fetchW := float64(len(tier.Fetch))*charWidth(16) + 4
	// A fetch that is a phrase, not a time, goes on the rate's line, so
	// the name keeps its room.
	long := fetchW > w/3
	if long {
		fetchW = 0
	}
	const small = tiSmall + 1
	hitW := 130.0
	hw := hitW * min(max(tier.Hit, 0), 1)
	body := []app.UI{
		svgTitle(tierTip(tier)),
		svgRect(0, y, w, g.rowH, "ti-box").Attr("rx", "6"),
		svgText(10, y+22, "ti-id", tier.ID),
		svgText(44, y+21, "ti-name", fitText(tier.Name, w-54-fetchW, tiPx+1)),
		app.If(!long, func() app.UI { return svgText(w-10, y+22, "ti-fetch ti-end", tier.Fetch) }),
		app.If(long, func() app.UI { return svgText(w-10, y+73, "ti-strong ti-end", fitText(tier.Fetch, w/2, tiPx)) }),
		svgText(10, y+40, "ti-small", fitText(tier.Medium+" · capacity "+tier.Capacity, w-20, small)),
		svgText(10, y+56, "ti-small", fitText("path to the GPU: "+tier.Path, w-20, small)),
		svgText(10, y+73, "ti-strong", fitText(tier.Bandwidth, map[bool]float64{false: w - 20, true: w/2 - 16}[long], tiPx)),
		svgText(10, y+91, "ti-small", "P(hit)"),
		svgRect(56, y+81, hitW, 12, "sys-free"),
		svgRect(56, y+81, hw, 12, "ti-hit").Style("width", num(hw)+"px"),
		svgText(56+hitW+6, y+92, "ti-strong", sharePct(tier.Hit)),
	}
	return el.Body(body...)
}

// raceLanes are the race's lanes on one time scale, with an axis.
func raceLanes(t *scene.Tiers, y float64, g tiersGeom, marks *markSet) ([]app.UI, float64) {
	longest := 0.0
	for _, r := range t.Races {
		sum := 0.0
		for _, b := range r.Bars {
			sum += max(b.Value, 0)
		}
		longest = max(longest, sum)
	}
	longest = max(longest, 1e-9)
	// The totals are written after the bars, in bold, and in the wide
	// layout a marked lane's callout after its total: the longest of each
	// sets the room the bars leave.
	callW := 0.0
	for _, r := range t.Races {
		g.totalW = max(g.totalW, float64(len([]rune(raceTotal(t, r))))*boldWidth(tiPx)+10)
		if l := marks.label[r.Ref]; l != "" && !g.narrow {
			callW = max(callW, float64(len([]rune(l)))*boldWidth(12)+24)
		}
	}
	scale := (g.w - g.laneX - g.totalW - callW) / longest
	var out []app.UI
	for _, r := range t.Races {
		_, marked := marks.label[r.Ref]
		ly := y
		if g.narrow {
			ly += 20 // the label's line above the bars
		}
		end := g.laneX
		for _, b := range r.Bars {
			end += max(b.Value, 0) * scale
		}
		// The lane's box takes in its total; its callout goes after it,
		// in the room the scale left (on a phone, below the bars, in room
		// of its own: the lane's label is above).
		marks.note(r.Ref, box{g.laneX, ly, end - g.laneX + float64(len([]rune(raceTotal(t, r))))*boldWidth(tiPx) + 6, tiLaneH - 6})
		marks.place[r.Ref] = "right"
		if g.narrow {
			marks.place[r.Ref] = "below"
		}
		out = append(out, &keyedSVG{Key: "race:" + r.Ref, Build: func() app.UI { return raceLane(t, r, ly, scale, longest, g, marks) }})
		y += g.laneH
		if marked && g.narrow {
			y += tiMarkRoom // its callout, below it
		}
	}
	// The axis: 0 and the longest lane (in one label from 0 when the
	// longest's would reach back over the 0).
	end := formatNumber(longest) + " " + t.Unit
	out = append(out, svgEl("line").Class("ti-axis").Attr("x1", num(g.laneX)).Attr("x2", num(g.laneX+longest*scale)).Attr("y1", num(y)).Attr("y2", num(y)))
	if float64(len([]rune(end))+3)*charWidth(tiSmall) > longest*scale {
		out = append(out, svgText(g.laneX, y+14, "ti-small", "0 to "+end))
	} else {
		out = append(out, svgText(g.laneX, y+14, "ti-small", "0"), svgText(g.laneX+longest*scale, y+14, "ti-small ti-end", end))
	}
	return out, y + 18
}

// raceLane is one lane of the race: its label, its bars in time order
// (each growing in its share of the race's animation) and its total.
func raceLane(t *scene.Tiers, r scene.Race, ly, scale, longest float64, g tiersGeom, marks *markSet) app.UI {
	x := g.laneX
	var bars []app.UI
	sum := 0.0
	for i, b := range r.Bars {
		v := max(b.Value, 0)
		w := v * scale
		delay := tiRaceMs * sum / longest
		dur := tiRaceMs * v / longest
		bars = append(bars, svgEl("g").Body(
			svgTitle(b.Label+": "+formatNumber(b.Value)+" "+t.Unit),
			svgRect(x, ly, w, tiLaneH-6, "ti-bar ti-"+safeClass(b.Class)).
				Style("animation-delay", strconv.Itoa(int(delay))+"ms").Style("animation-duration", strconv.Itoa(int(max(dur, 1)))+"ms"),
			app.If(w > float64(len([]rune(b.Label)))*boldWidth(tiSmall)+8 && i < 3, func() app.UI {
				return svgText(x+4, ly+16, "ti-bar-text", b.Label)
			}),
		))
		x += w
		sum += v
	}
	total := raceTotal(t, r)
	cls := "ti-lane"
	if r.Winner {
		cls += " winner"
	}
	// Right-aligned before the bars, with 22 units to spare: charWidth is
	// the mean of lower-case text, and a name of capitals and digits runs
	// up to a tenth wider.
	label := svgText(tiLabelW-8, ly+16, "ti-lane-label ti-end", fitText(r.Label, tiLabelW-30, tiPx))
	if g.narrow {
		label = svgText(0, ly-7, "ti-lane-label", fitText(r.Label, g.w, tiPx))
	}
	return marks.apply(svgEl("g").Class(cls), r.Ref).Body(
		label,
		svgEl("g").Body(bars...),
		svgText(x+6, ly+16, "ti-strong", total),
	)
}

// sharePct is a share as a percentage.
func sharePct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// tiersLegend says what the race's bars and the hit bars are: a key per
// class of bar the races draw (no key for one it does not, nor for a class
// of the lesson's own, such as a capacity), and the hit bars' when there
// are tiers.
func tiersLegend(t *scene.Tiers) app.UI {
	used := map[string]bool{}
	for _, r := range t.Races {
		for _, b := range r.Bars {
			used[b.Class] = true
		}
	}
	var keys []app.UI
	for _, k := range []struct{ class, key, words string }{
		{"fetch", "key-ti-fetch", " move the KV (in transfer) "},
		{"compute", "key-ti-compute", " compute (prefill) "},
		{"rest", "key-ti-rest", " compute the rest of the prompt "},
	} {
		if used[k.class] {
			keys = append(keys, app.Span().Class("key "+k.key), app.Text(k.words))
		}
	}
	if len(t.Tiers) > 0 {
		keys = append(keys, app.Span().Class("key key-ti-hit"), app.Text(" P(hit): share of requests whose prefix is found in the tier"))
	}
	return app.P().Class("legend").Body(keys...)
}
