package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// slotRowPx is the height of one slot's row: readable for a few slots,
// compact for many, so three lanes fit beside the narration (a lane of up
// to 48 slots stays within 200 px).
func slotRowPx(slots int) int {
	switch {
	case slots <= 12:
		return 12
	case slots <= 24:
		return 6
	case slots <= 48:
		return 4
	case slots <= 128:
		return 2
	}
	return 1
}

// slotRef is the data-ref of a bar: a request's work in one lane
// ("slot:static:R7"), its padding there ("pad:static:R7") or the lane's
// idle slots ("idle:static").
func slotRef(lane string, b scene.SlotBar) string {
	switch b.Class {
	case "padding":
		return "pad:" + lane + ":" + b.Label
	case "idle":
		return "idle:" + lane
	}
	return "slot:" + lane + ":" + b.Label
}

// renderSlots draws servers' batch slots over a window of time as small
// multiples on one axis: a lane per server, a row per slot, requests as
// bars (prefill then decode), padding hatched, idle slots grey. Marked
// elements are outlined; a marked bar's callout is drawn once, in its
// lane's head.
func renderSlots(sc scene.Scene) app.UI {
	sl := sc.Slots
	marks := markLabels(sc)
	span := sl.To - sl.From
	if span <= 0 {
		span = 1
	}
	pos := func(x float64) string { return pctOf(x-sl.From, span) }
	called := map[string]bool{}
	return app.Figure().Class("scene", "scene-slots").DataSet("kind", string(scene.KindSlots)).DataSet("scene-id", sc.ID).Body(
		app.FigCaption().Body(
			app.Span().Class("scene-title").Text(sc.Title),
		),
		app.Range(sl.Lanes).Slice(func(i int) app.UI {
			l := sl.Lanes[i]
			row := slotRowPx(l.Slots)
			ref := "lane:" + l.Key
			// A marked bar is a row or two high: its callout goes in the
			// lane's head, after its name, not over the rows above it.
			var notes []app.UI
			for _, b := range l.Bars {
				r := slotRef(l.Key, b)
				if lbl := marks[r]; lbl != "" && !called[r] && b.Class != "prefill" {
					called[r] = true
					notes = append(notes, noteChip(r, lbl))
				}
			}
			return app.Div().Class("slot-lane"+markClass(marks, ref)).DataSet("ref", ref).Body(
				app.Div().Class("slot-lane-head").Body(
					app.Span().Body(append([]app.UI{app.Span().Class("slot-lane-label").Text(l.Label)}, notes...)...),
					app.Span().Class("slot-lane-note").Text(strconv.Itoa(l.Slots)+" slots · "+l.Note),
				),
				app.Div().Class("slot-rows").Role("list").Aria("label", l.Label).Style("height", strconv.Itoa(l.Slots*row)+"px").Body(
					app.Range(l.Bars).Slice(func(j int) app.UI {
						b := l.Bars[j]
						r := slotRef(l.Key, b)
						cls := "slot-bar slot-" + safeClass(b.Class) + markClass(marks, r)
						if b.Highlight {
							cls += " hl"
						}
						return app.Div().Class(cls).Role("listitem").DataSet("ref", r).
							Style("left", pos(b.Start)).Style("width", pctOf(b.End-b.Start, span)).
							Style("top", strconv.Itoa(b.Slot*row)+"px").Style("height", strconv.Itoa(max(1, row-1))+"px").
							Title("%s, slot %d: %s %s–%s %s", barName(b), b.Slot, b.Class, formatNumber(b.Start), formatNumber(b.End), sl.Unit)
					}),
				),
			)
		}),
		app.Div().Class("strip-axis").Aria("hidden", "true").Body(
			app.Span().Text(formatNumber(sl.From)+" "+sl.Unit),
			app.Span().Text(formatNumber(sl.To)+" "+sl.Unit),
		),
		app.P().Class("legend mem-legend").Body(
			app.Span().Class("mem-key").Body(app.Span().Class("key slot-prefill"), app.Text(" prefill")),
			app.Span().Class("mem-key").Body(app.Span().Class("key slot-decode"), app.Text(" decoding")),
			app.Span().Class("mem-key").Body(app.Span().Class("key slot-padding"), app.Text(" padding: done, slot still computing (hatched)")),
			app.Span().Class("mem-key").Body(app.Span().Class("key slot-idle"), app.Text(" idle slot")),
		),
	)
}

func barName(b scene.SlotBar) string {
	if b.Label == "" {
		return "empty slot"
	}
	return b.Label
}
