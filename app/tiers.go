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
	tiW      = 980.0
	tiRowH   = 56.0
	tiGap    = 26.0 // above a marked tier: room for its callout
	tiLaneH  = 27.0
	tiLabelW = 250.0
	tiPx     = 13.0
	tiSmall  = 11.0
	tiRaceMs = 600.0 // the race's whole animation
)

// renderTiers draws a scene.Tiers.
func renderTiers(sc scene.Scene) app.UI {
	t := sc.Tiers
	marks := newMarkSet(sc.Marks)
	var body []app.UI
	y := 4.0
	for _, tier := range t.Tiers {
		if _, marked := marks.label[tierRef(tier)]; marked {
			y += tiGap - 8 // room for its callout
		}
		body = append(body, tierRow(tier, y, marks))
		y += tiRowH + 8
	}
	if len(t.Races) > 0 {
		y += 14
		body = append(body, svgText(0, y, "sys-label", fitText("The race to the first token ("+t.Unit+"): "+t.Subject, tiW, tiPx)))
		y += 10
		var lanes []app.UI
		lanes, y = raceLanes(t, y, marks)
		body = append(body, svgEl("g").Class("ti-race").Body(lanes...))
	}
	body = append(body, marks.layer(tiW))
	return sysFigure(sc, "scene-tiers", t.Subject, tiW, y+6, body, tiersLegend(len(t.Races) > 0, len(t.Tiers) > 0))
}

// tierRef is a tier's reference.
func tierRef(t scene.Tier) string { return "tier:" + t.ID }

// tierRow is one tier of the stack.
func tierRow(tier scene.Tier, y float64, marks *markSet) app.UI {
	ref := tierRef(tier)
	b := box{0, y, tiW, tiRowH}
	g := marks.tag(svgEl("g").Class("ti-tier ti-"+safeClass(tier.ID)), ref, b)
	hitX, hitW := 650.0, 150.0
	tip := tier.ID + " " + tier.Name + " (" + tier.Medium + "): capacity " + tier.Capacity + "; path to the GPU " + tier.Path + ", " + tier.Bandwidth +
		"; P(hit) " + sharePct(tier.Hit) + "; fetch " + tier.Fetch
	body := []app.UI{
		svgTitle(tip),
		svgRect(0, y, tiW, tiRowH, "ti-box").Attr("rx", "6"),
		svgText(12, y+23, "ti-id", tier.ID),
		svgText(52, y+20, "ti-name", fitText(tier.Name, 190, tiPx+1)),
		svgText(52, y+36, "ti-small", fitText(tier.Medium, 190, tiSmall)),
		svgText(52, y+50, "ti-small", fitText("capacity: "+tier.Capacity, 190, tiSmall)),
		svgText(256, y+18, "ti-small", fitText("path to the GPU: "+tier.Path, 370, tiSmall)),
		svgText(256, y+35, "ti-strong", fitText(tier.Bandwidth, 370, tiPx)),
	}
	if tier.Note != "" {
		body = append(body, svgText(256, y+50, "ti-small ti-note", fitText(tier.Note, 370, tiSmall)))
	}
	hw := hitW * min(max(tier.Hit, 0), 1)
	body = append(body,
		svgText(hitX, y+18, "ti-small", "P(hit): prefix found here"),
		svgRect(hitX, y+26, hitW, 14, "sys-free"),
		svgRect(hitX, y+26, hw, 14, "ti-hit").Style("width", num(hw)+"px"),
		svgText(hitX+hitW+6, y+38, "ti-strong", sharePct(tier.Hit)),
		svgText(tiW-12, y+18, "ti-small ti-end", "fetch this prefix"),
		svgText(tiW-12, y+40, "ti-fetch ti-end", tier.Fetch),
	)
	return g.Body(body...)
}

// raceLanes are the race's lanes on one time scale, with an axis.
func raceLanes(t *scene.Tiers, y float64, marks *markSet) ([]app.UI, float64) {
	longest := 0.0
	for _, r := range t.Races {
		sum := 0.0
		for _, b := range r.Bars {
			sum += max(b.Value, 0)
		}
		longest = max(longest, sum)
	}
	longest = max(longest, 1e-9)
	scale := (tiW - tiLabelW - 90) / longest
	var out []app.UI
	for _, r := range t.Races {
		ly := y
		end := tiLabelW
		for _, b := range r.Bars {
			end += max(b.Value, 0) * scale
		}
		// The lane's box takes in its total, so a callout goes after it.
		marks.note(r.Ref, box{tiLabelW, ly, end - tiLabelW + 130, tiLaneH - 6})
		marks.place[r.Ref] = "right"
		out = append(out, &keyedSVG{Key: "race:" + r.Ref, Build: func() app.UI { return raceLane(t, r, ly, scale, longest, marks) }})
		y += tiLaneH
	}
	// The axis: 0 and the longest lane.
	out = append(out,
		svgEl("line").Class("ti-axis").Attr("x1", num(tiLabelW)).Attr("x2", num(tiLabelW+longest*scale)).Attr("y1", num(y)).Attr("y2", num(y)),
		svgText(tiLabelW, y+14, "ti-small", "0"),
		svgText(tiLabelW+longest*scale, y+14, "ti-small ti-end", formatNumber(longest)+" "+t.Unit),
	)
	return out, y + 18
}

// raceLane is one lane of the race: its label, its bars in time order
// (each growing in its share of the race's animation) and its total.
func raceLane(t *scene.Tiers, r scene.Race, ly, scale, longest float64, marks *markSet) app.UI {
	x := tiLabelW
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
			app.If(w > float64(len(b.Label))*charWidth(tiSmall)+8 && i < 3, func() app.UI {
				return svgText(x+4, ly+16, "ti-bar-text", b.Label)
			}),
		))
		x += w
		sum += v
	}
	total := formatNumber(sum) + " " + t.Unit
	cls := "ti-lane"
	if r.Winner {
		cls += " winner"
		total += " · first"
	}
	return marks.apply(svgEl("g").Class(cls), r.Ref).Body(
		svgText(tiLabelW-8, ly+16, "ti-lane-label ti-end", fitText(r.Label, tiLabelW-10, tiPx)),
		svgEl("g").Body(bars...),
		svgText(x+6, ly+16, "ti-strong", total),
	)
}

// sharePct is a share as a percentage.
func sharePct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// tiersLegend says what the race's bars and the hit bars are.
func tiersLegend(race, tiers bool) app.UI {
	var keys []app.UI
	if race {
		keys = append(keys,
			app.Span().Class("key key-ti-fetch"), app.Text(" move the KV (in transfer) "),
			app.Span().Class("key key-ti-compute"), app.Text(" compute (prefill) "),
			app.Span().Class("key key-ti-rest"), app.Text(" compute the rest of the prompt "))
	}
	if tiers {
		keys = append(keys, app.Span().Class("key key-ti-hit"), app.Text(" P(hit): share of requests whose prefix is found in the tier"))
	}
	return app.P().Class("legend").Body(keys...)
}
