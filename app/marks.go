package app

import (
	"strconv"

	"github.com/inferlab/inferlab/scene"
)

// Marks: what a step's narration names is outlined on the figure (class
// "marked") and labelled with a short callout. Every element that can be
// named carries its reference in data-ref (scene.Mark), so a mention in the
// narration and the element can find each other.

// marks indexes a scene's marks by reference.
type marks map[string]scene.Mark

func marksOf(sc []scene.Mark) marks {
	if len(sc) == 0 {
		return nil
	}
	m := make(marks, len(sc))
	for _, k := range sc {
		m[k.Ref] = k
	}
	return m
}

// has reports whether ref is marked.
func (m marks) has(ref string) bool {
	_, ok := m[ref]
	return ok
}

// label is the callout of a marked ref: its Mark's label, else fallback.
func (m marks) label(ref, fallback string) string {
	if k, ok := m[ref]; ok && k.Label != "" {
		return k.Label
	}
	return fallback
}

// markedClass appends " marked" to cls when ref is marked.
func (m marks) class(cls, ref string) string {
	if m.has(ref) {
		return cls + " marked"
	}
	return cls
}

// spanRef is the reference of bar j of a timeline lane.
func spanRef(lane scene.Lane, j int) string {
	key := lane.Key
	if key == "" {
		key = lane.Label
	}
	return "span:" + key + ":" + strconv.Itoa(j)
}

// pctText formats a percentage for a style attribute.
func pctText(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) + "%" }

// fitClass says from which width of a timeline's track (or any bar
// drawn across a container) a label of n characters fits a bar covering
// frac of it: fit-0 at the narrowest (200 px), fit-1 from 350 px, fit-2
// from 500, fit-3 from 700, fit-4 from 900, fit-x never. lab.css shows the
// label from that container width on, so a label is drawn whole or not at
// all, never cut to its first letters; the element's title keeps it.
func fitClass(frac float64, label string) string {
	need := 7*float64(len([]rune(label))) + 8 // px: bold 11 px text and padding
	for i, w := range fitWidths {
		if frac*w >= need {
			return "fit-" + strconv.Itoa(i)
		}
	}
	return "fit-x"
}

// fitWidths are the track widths of fitClass, in px.
var fitWidths = []float64{200, 350, 500, 700, 900}
